-- Named, stored audience rules of an app. `rule` holds the validated, normalised rule
-- (snake_case lists, platform names as stored on devices); see segment-store.ts.
CREATE TABLE segments (
  id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  app_id     uuid NOT NULL,
  name       text NOT NULL,
  rule       jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT segments_app_name_key UNIQUE (app_id, name)
);

-- Segment listing.
CREATE INDEX segments_app_created_idx ON segments (app_id, created_at, id);
