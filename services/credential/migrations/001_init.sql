-- Organizations own apps and API keys. There is no org management RPC yet: the bootstrap
-- creates the "default" org, so names are unique to make that creation idempotent.
CREATE TABLE orgs (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE apps (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id     uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name       text NOT NULL,
  platform   text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
  bundle_id  text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT apps_org_bundle_id_key UNIQUE (org_id, bundle_id)
);
CREATE INDEX apps_org_created_idx ON apps (org_id, created_at, id);

-- Only the SHA-256 of a secret is kept. app_id is the app a key was created under:
-- deleting the app deletes its app-scoped keys (explicitly, in DeleteApp) and clears
-- app_id on org-scoped ones; the CHECK makes an app-scoped key without an app impossible.
CREATE TABLE api_keys (
  id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id                uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  app_id                uuid REFERENCES apps (id) ON DELETE SET NULL,
  scope                 text NOT NULL CHECK (scope IN ('org', 'app')),
  name                  text NOT NULL,
  prefix                text NOT NULL,
  secret_hash           bytea NOT NULL UNIQUE,
  -- NULL: the service default (HERALD_DEFAULT_RATE_LIMIT), so changing it affects such keys.
  rate_limit_per_minute integer CHECK (rate_limit_per_minute BETWEEN 1 AND 1000000),
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  revoked_at            timestamptz,
  CHECK (scope = 'org' OR app_id IS NOT NULL)
);
CREATE INDEX api_keys_app_created_idx ON api_keys (app_id, created_at, id) WHERE revoked_at IS NULL;

-- One row per (app, platform). sealed = nonce || AES-256-GCM ciphertext || tag under the
-- master key of key_version, with "<app_id>:<platform>" as associated data.
CREATE TABLE platform_configs (
  app_id      uuid NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
  platform    text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
  public_data jsonb NOT NULL,
  sealed      bytea NOT NULL,
  key_version smallint NOT NULL,
  fingerprint text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, platform)
);

-- Events written in the same transaction as the change they announce; the outbox
-- publisher sends them to JetStream and deletes a row only once the stream acked it.
CREATE TABLE outbox (
  id         bigserial PRIMARY KEY,
  kind       text NOT NULL,
  msg_id     text NOT NULL,
  payload    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
