-- Campaigns to devices by id (POST /v1/push/send-to-devices, e.g. a test push to one
-- device): the ids are kept as sent, like external_ids, and resolved by the registry at
-- fan-out, so a device that is gone or opted out by then is simply not sent to.
ALTER TABLE campaigns ADD COLUMN device_ids uuid[];
ALTER TABLE campaigns DROP CONSTRAINT campaigns_target_kind_check;
ALTER TABLE campaigns ADD CONSTRAINT campaigns_target_kind_check
  CHECK (target_kind IN ('all', 'external_ids', 'segment', 'device_ids'));
