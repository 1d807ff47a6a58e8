-- The W3C trace context (traceparent[;tracestate]) of the change an outbox event
-- announces, NULL when it was not traced: the relay publishes the event in that trace
-- (packages/runtime/src/outbox.ts). Rows written before this column stay NULL.
ALTER TABLE outbox ADD COLUMN trace_context text;
