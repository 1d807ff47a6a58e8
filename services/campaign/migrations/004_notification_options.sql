-- Per-send presentation options (sound, badge, thread id, silent push, mutable content,
-- web icon/badge/actions, Android channel): the service's NotificationOptions as JSON
-- (services/campaign/src/campaign.ts); NULL when the send sets none.
ALTER TABLE campaigns ADD COLUMN notification jsonb;
