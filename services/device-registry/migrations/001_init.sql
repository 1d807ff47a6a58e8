-- Devices of all apps. The registry does not know apps: app_id is the credential
-- service's id, checked by the gateway before a call reaches us.
CREATE TABLE devices (
  id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  app_id         uuid NOT NULL,
  platform       text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
  push_token     text NOT NULL,
  -- sha256 of the canonical token: web subscriptions are too long to index as text.
  token_hash     bytea NOT NULL CHECK (length(token_hash) = 32),
  external_id    text,
  language       text,
  timezone       text,
  app_version    text,
  tags           text[] NOT NULL DEFAULT '{}',
  opted_in       boolean NOT NULL DEFAULT true,
  invalid        boolean NOT NULL DEFAULT false,
  invalid_reason text,
  invalidated_at timestamptz,
  -- Last (re-)registration: an invalidation observed before it does not apply.
  registered_at  timestamptz NOT NULL DEFAULT now(),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT devices_app_token_key UNIQUE (app_id, token_hash)
);

-- Audience streaming walks this index in id order: only targetable devices are in it.
CREATE INDEX devices_targetable_idx ON devices (app_id, id) WHERE opted_in AND NOT invalid;
-- Send-to-users.
CREATE INDEX devices_app_external_id_idx ON devices (app_id, external_id) WHERE external_id IS NOT NULL;
-- Segment tag rules (&&, @>).
CREATE INDEX devices_tags_idx ON devices USING gin (tags);
-- Device listing.
CREATE INDEX devices_app_created_idx ON devices (app_id, created_at, id);
