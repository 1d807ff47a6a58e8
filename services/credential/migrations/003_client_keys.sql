-- A key's kind: 'server' keys keep their scope's full rights; 'client' keys are
-- publishable (shipped inside apps), so the gateway lets them register devices and manage
-- a device only with its push token (docs/architecture.md). A client key is always
-- app-scoped: an org-wide publishable key would reach every app of the organization.
ALTER TABLE api_keys
  ADD COLUMN kind text NOT NULL DEFAULT 'server' CHECK (kind IN ('server', 'client')),
  ADD CONSTRAINT api_keys_client_app_scoped CHECK (kind = 'server' OR scope = 'app');
