-- The W3C trace context (traceparent[;tracestate]) of the request that created the
-- campaign: its fan-out continues that trace, or, once scheduled, links to it.
ALTER TABLE campaigns ADD COLUMN trace_context text;
