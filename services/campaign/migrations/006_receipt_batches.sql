-- Per-device receipts, one row per delivery batch instead of one per device (issue 31,
-- part 3): the senders' OutcomeBatch for (campaign, platform, sequence) is stored whole,
-- its per-device results in parallel arrays. The key makes a redelivered batch a no-op,
-- so stats stay exact; the counts per kind let stats, totals and paging skip the arrays.
CREATE TYPE uuid_range AS RANGE (subtype = uuid);

CREATE TABLE receipt_batches (
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  -- herald.v1.Platform: 1 ios, 2 android, 3 web; 0 for receipts recorded before this table.
  platform    smallint NOT NULL,
  sequence    bigint NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  -- The smallest and largest device id of the batch (fan-out walks devices in id order):
  -- a device's receipts are found through this range's GiST index, then checked in the array.
  devices     uuid_range NOT NULL,
  device_ids  uuid[] NOT NULL,
  -- herald.v1.DeliveryOutcome: 1 delivered, 2 failed, 3 bounced, 4 throttled.
  outcomes    smallint[] NOT NULL,
  -- The provider's reason; NULL (one bit) where delivered.
  reasons     text[] NOT NULL,
  attempts    smallint[] NOT NULL,
  delivered   integer NOT NULL,
  failed      integer NOT NULL,
  bounced     integer NOT NULL,
  throttled   integer NOT NULL,
  PRIMARY KEY (campaign_id, platform, sequence)
);
CREATE INDEX receipt_batches_devices_idx ON receipt_batches USING gist (devices);
-- Retention prunes by age; rows arrive in time order, so a BRIN index is enough and tiny.
CREATE INDEX receipt_batches_recorded_idx ON receipt_batches USING brin (recorded_at);

-- Receipts of the one-row-per-device table move over in chunks of 1,000 per campaign
-- (platform 0: that table did not know it; negative sequences cannot meet a sender's).
INSERT INTO receipt_batches (campaign_id, platform, sequence, recorded_at, devices, device_ids, outcomes, reasons,
                             attempts, delivered, failed, bounced, throttled)
SELECT campaign_id, 0, -1 - chunk, max(recorded_at),
       uuid_range((array_agg(device_id ORDER BY device_id))[1], (array_agg(device_id ORDER BY device_id DESC))[1], '[]'),
       array_agg(device_id ORDER BY device_id),
       array_agg(CASE kind WHEN 'delivered' THEN 1 WHEN 'failed' THEN 2 WHEN 'bounced' THEN 3 ELSE 4 END::smallint
                 ORDER BY device_id),
       array_agg(CASE WHEN kind = 'delivered' THEN NULL ELSE reason END ORDER BY device_id),
       array_agg(least(attempts, 32767)::smallint ORDER BY device_id),
       count(*) FILTER (WHERE kind = 'delivered'), count(*) FILTER (WHERE kind = 'failed'),
       count(*) FILTER (WHERE kind = 'bounced'), count(*) FILTER (WHERE kind = 'throttled')
FROM (SELECT o.*, (row_number() OVER (PARTITION BY campaign_id ORDER BY device_id) - 1) / 1000 AS chunk FROM outcomes o) o
GROUP BY campaign_id, chunk;

DROP TABLE outcomes;

-- A user's erasure finds the engagement rows of their devices across campaigns; retention
-- finds the old ones (rows arrive in time order: BRIN).
CREATE INDEX engagement_device_idx ON engagement (device_id);
CREATE INDEX engagement_received_idx ON engagement USING brin (received_at);

-- Events written in the same transaction as the change they announce (webhook events:
-- campaign.started/completed/cancelled, deliveries.failed/bounced); the outbox relay
-- (packages/runtime/src/outbox.ts) publishes them and deletes a row once JetStream acked it.
CREATE TABLE outbox (
  id         bigserial PRIMARY KEY,
  kind       text NOT NULL,
  msg_id     text NOT NULL,
  payload    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
