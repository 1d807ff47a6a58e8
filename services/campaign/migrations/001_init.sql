-- Campaigns of all apps. app_id is the credential service's id, checked by the gateway.
CREATE TABLE campaigns (
  id              uuid PRIMARY KEY,
  app_id          uuid NOT NULL,
  name            text NOT NULL,
  status          text NOT NULL CHECK (status IN ('scheduled', 'queued', 'sending', 'completed', 'cancelled', 'failed')),
  -- {"<lang>": {"title": "…", "body": "…"}}; always holds "en".
  contents        jsonb NOT NULL,
  -- The send's custom data as compact JSON object text; '' when none.
  data_json       text NOT NULL DEFAULT '',
  target_kind     text NOT NULL CHECK (target_kind IN ('all', 'external_ids', 'segment')),
  external_ids    text[],
  segment_id      uuid,
  ttl_seconds     integer NOT NULL DEFAULT 0,
  priority        text NOT NULL DEFAULT 'normal' CHECK (priority IN ('normal', 'high')),
  collapse_id     text,
  image_url       text,
  scheduled_at    timestamptz,

  -- Counters. audience_size is CountAudience's estimate during fan-out and the exact
  -- number of published targets (published_count) once fan-out is done.
  audience_size   bigint NOT NULL DEFAULT 0,
  published_count bigint NOT NULL DEFAULT 0,
  sent            bigint NOT NULL DEFAULT 0,
  delivered       bigint NOT NULL DEFAULT 0,
  failed          bigint NOT NULL DEFAULT 0,
  bounced         bigint NOT NULL DEFAULT 0,
  throttled       bigint NOT NULL DEFAULT 0,

  -- Fan-out progress: platforms are walked in the order ios, android, web; the cursor is
  -- the last device id of the current platform that is safely published.
  fanout_started  boolean NOT NULL DEFAULT false,
  fanout_done     boolean NOT NULL DEFAULT false,
  fanout_platform text NOT NULL DEFAULT 'ios' CHECK (fanout_platform IN ('ios', 'android', 'web')),
  fanout_cursor   uuid,
  next_sequence   bigint NOT NULL DEFAULT 0,
  -- Write-ahead record of the batch being published: {platform, seq, fromCursor, toDeviceId, count}.
  pending_batch   jsonb,
  -- The replica holding the fan-out, and until when; an expired lease may be taken over.
  lease_token     uuid,
  lease_until     timestamptz,

  failure_reason  text,
  sent_at         timestamptz,
  completed_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX campaigns_app_created_idx ON campaigns (app_id, created_at DESC, id DESC);
-- The scheduler's due scan.
CREATE INDEX campaigns_due_idx ON campaigns (scheduled_at) WHERE status = 'scheduled';
-- The fan-out claim: queued, or sending with fan-out unfinished (lease possibly expired).
CREATE INDEX campaigns_fanout_idx ON campaigns (created_at) WHERE status = 'queued' OR (status = 'sending' AND NOT fanout_done);

-- Client idempotency keys, unique per scope (the API key id) for 24 hours.
CREATE TABLE idempotency_keys (
  scope       text NOT NULL,
  key         text NOT NULL,
  -- Deferred: the key is claimed before the campaign row is inserted, in one transaction.
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- One outcome per (campaign, device): a redelivered outcome batch inserts nothing.
CREATE TABLE outcomes (
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  device_id   uuid NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('delivered', 'failed', 'bounced', 'throttled')),
  reason      text NOT NULL DEFAULT '',
  attempts    integer NOT NULL DEFAULT 0,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (campaign_id, device_id)
);
