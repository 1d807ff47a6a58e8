-- Android notification channels of an app (proto/herald/v1/android_channel.proto): made
-- in the admin panel, synced to devices by the client libraries, named by sends. Kept
-- here, beside the devices that sync them; removed with the app (app-deleted-consumer.ts).
CREATE TABLE android_channels (
  app_id            uuid NOT NULL,
  id                text NOT NULL CHECK (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
  name              text NOT NULL,
  description       text NOT NULL DEFAULT '',
  importance        text NOT NULL DEFAULT 'default' CHECK (importance IN ('min', 'low', 'default', 'high', 'max')),
  sound             text,
  vibration         boolean NOT NULL DEFAULT false,
  vibration_pattern integer[] NOT NULL DEFAULT '{}',
  lights            boolean NOT NULL DEFAULT false,
  light_color       text,
  badge             boolean NOT NULL DEFAULT true,
  group_id          text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, id)
);
