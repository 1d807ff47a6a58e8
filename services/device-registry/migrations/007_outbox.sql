-- Webhook events (device.opted_in/opted_out, device.invalidated, user.erased) written in
-- the same transaction as the change they announce; the relay (OutboxRelay,
-- packages/runtime/src/outbox.ts) sends them to JetStream and deletes a row only once the
-- stream acked it.
CREATE TABLE outbox (
  id         bigserial PRIMARY KEY,
  kind       text NOT NULL,
  msg_id     text NOT NULL,
  payload    jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
