-- People and sessions (IdentityService): users, their memberships of organizations,
-- invitations, OAuth clients, the authorization server's models and its signing keys.

-- The bootstrap org is found by this flag, not by its name, so that renaming it (UpdateOrg)
-- does not make the next start-up create another "default" org.
ALTER TABLE orgs ADD COLUMN bootstrap boolean NOT NULL DEFAULT false;
UPDATE orgs SET bootstrap = true WHERE name = 'default';
CREATE UNIQUE INDEX orgs_one_bootstrap_key ON orgs (bootstrap) WHERE bootstrap;

-- Emails are stored trimmed and lower-cased; the index makes that case-insensitively unique
-- anyway. password_hash is an argon2id PHC string.
CREATE TABLE users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email         text NOT NULL,
  name          text NOT NULL DEFAULT '',
  password_hash text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
  org_id     uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role       text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (org_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);
CREATE INDEX memberships_org_created_idx ON memberships (org_id, created_at, user_id);

-- Only the SHA-256 of an invitation's token is kept. Accepting is a conditional UPDATE of
-- accepted_at, so a token is used once even when two accepts race.
CREATE TABLE invitations (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id      uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  email       text NOT NULL,
  role        text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
  token_hash  bytea NOT NULL UNIQUE,
  invited_by  uuid REFERENCES users (id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at  timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at  timestamptz
);
CREATE INDEX invitations_org_created_idx ON invitations (org_id, created_at, id);
CREATE INDEX invitations_expires_idx ON invitations (expires_at);

-- Clients registered by an organization; the console's client is gateway configuration.
CREATE TABLE oauth_clients (
  client_id     text PRIMARY KEY,
  org_id        uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
  name          text NOT NULL,
  redirect_uris text[] NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX oauth_clients_org_created_idx ON oauth_clients (org_id, created_at, client_id);

-- The authorization server's models (oidc-provider's adapter): payloads are opaque here.
-- expires_at NULL: the model does not expire.
CREATE TABLE oauth_models (
  kind        text NOT NULL,
  id          text NOT NULL,
  payload     jsonb NOT NULL,
  grant_id    text,
  uid         text,
  user_code   text,
  expires_at  timestamptz,
  consumed_at timestamptz,
  PRIMARY KEY (kind, id)
);
CREATE INDEX oauth_models_grant_idx ON oauth_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_models_uid_idx ON oauth_models (kind, uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_models_user_code_idx ON oauth_models (kind, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oauth_models_expires_idx ON oauth_models (expires_at) WHERE expires_at IS NOT NULL;

-- Token signing keys. sealed = nonce || AES-256-GCM ciphertext || tag of the private JWK
-- under the master key of key_version, with "signing-key:<kid>" as associated data. The
-- partial unique index allows one active (not retired) key at a time.
CREATE TABLE signing_keys (
  kid         text PRIMARY KEY,
  sealed      bytea NOT NULL,
  key_version smallint NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  retired_at  timestamptz
);
CREATE UNIQUE INDEX signing_keys_one_active_key ON signing_keys ((true)) WHERE retired_at IS NULL;
CREATE INDEX signing_keys_retired_idx ON signing_keys (retired_at) WHERE retired_at IS NOT NULL;
