-- In-app messages of an app (proto/herald/v1/in_app_message.proto): made in the admin
-- panel, fetched by each device for itself (src/in-app-message-service.ts). Kept here,
-- beside the devices and segments their audiences are evaluated against; removed with
-- the app (app-deleted-consumer.ts).
CREATE TABLE in_app_messages (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  app_id          uuid NOT NULL,
  name            text NOT NULL,
  -- Language code → {"title", "body"}; always holds "en", the fallback.
  contents        jsonb NOT NULL,
  image_url       text,
  action_url      text,
  audience_kind   text NOT NULL CHECK (audience_kind IN ('all', 'segment', 'external_ids')),
  -- No foreign key: a deleted segment leaves its messages matching no device.
  segment_id      uuid,
  external_ids    text[],
  starts_at       timestamptz,
  ends_at         timestamptz,
  priority        integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 100),
  -- Impressions per device; NULL: unlimited.
  max_impressions integer CHECK (max_impressions >= 1),
  -- Counters, updated with the per-device rows below (src/in-app-message-store.ts).
  impressions     bigint NOT NULL DEFAULT 0,
  clicks          bigint NOT NULL DEFAULT 0,
  dismissals      bigint NOT NULL DEFAULT 0,
  devices         bigint NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT in_app_messages_window CHECK (ends_at > starts_at),
  CONSTRAINT in_app_messages_audience CHECK (
    (audience_kind = 'segment') = (segment_id IS NOT NULL)
    AND (audience_kind = 'external_ids') = (external_ids IS NOT NULL)
  )
);

-- Listing (newest first) and the device fetch, which reads every message of the app.
CREATE INDEX in_app_messages_app_created_idx ON in_app_messages (app_id, created_at, id);

-- What each device did with each message: the max_impressions limit and dismissals are
-- enforced from here. Rows go with their message, and with their device however it is
-- deleted (DeleteDevice, or an app's devices in batches).
CREATE TABLE in_app_message_devices (
  message_id   uuid NOT NULL REFERENCES in_app_messages (id) ON DELETE CASCADE,
  device_id    uuid NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
  impressions  integer NOT NULL DEFAULT 0,
  clicked_at   timestamptz,
  dismissed_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (message_id, device_id)
);

-- The cascade from a deleted device.
CREATE INDEX in_app_message_devices_device_idx ON in_app_message_devices (device_id);
