-- Webhook endpoints of an app (proto/herald/v1/webhook.proto). The signing secret is
-- sealed with the master key (AES-256-GCM, the endpoint id as associated data) with the
-- version of the key that sealed it; after a rotation the previous secret signs beside
-- the new one until previous_secret_expires_at.
CREATE TABLE endpoints (
  id                          uuid PRIMARY KEY,
  app_id                      uuid NOT NULL,
  url                         text NOT NULL,
  events                      text[] NOT NULL,
  description                 text NOT NULL DEFAULT '',
  enabled                     boolean NOT NULL DEFAULT true,
  disabled_reason             text,
  secret_sealed               bytea NOT NULL,
  secret_key_version          smallint NOT NULL,
  previous_secret_sealed      bytea,
  previous_secret_key_version smallint,
  previous_secret_expires_at  timestamptz,
  -- The first failed attempt since the last success: 5 days of failures disable the endpoint.
  failing_since               timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX endpoints_by_app ON endpoints (app_id, created_at DESC, id);

-- Every event the dispatcher accepted, once (the id is the JetStream dedup id and the
-- webhook-id header). data is the JSON text as published, so every retry signs the same body.
CREATE TABLE events (
  id          text PRIMARY KEY,
  app_id      uuid NOT NULL,
  type        text NOT NULL,
  occurred_at timestamptz NOT NULL,
  data        text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

-- One delivery of an event to an endpoint, with its attempts so far. The delivery loop
-- leases due rows (FOR UPDATE SKIP LOCKED) so replicas never send one twice at once.
CREATE TABLE deliveries (
  endpoint_id     uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  event_id        text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_until     timestamptz,
  last_error      text,
  response_status integer,
  response_body   text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  PRIMARY KEY (endpoint_id, event_id)
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_by_endpoint ON deliveries (endpoint_id, created_at DESC, event_id);
