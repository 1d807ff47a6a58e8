-- What devices report about the notifications they were sent (RecordEngagement): one row
-- per (campaign, device), so a report repeated by a retrying client counts once. Counted
-- into campaigns.received / clicked in the same transaction as the rows (engagement-store.ts).
CREATE TABLE engagement (
  campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  device_id   uuid NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  clicked_at  timestamptz,
  PRIMARY KEY (campaign_id, device_id)
);

ALTER TABLE campaigns
  ADD COLUMN received bigint NOT NULL DEFAULT 0,
  ADD COLUMN clicked  bigint NOT NULL DEFAULT 0;
