-- The W3C trace context (traceparent[;tracestate]) the event's message carried: the span
-- that published it, in the trace of the change it announces. Every attempt's span links
-- to it. NULL when the event came without one (not traced, or recorded before this column).
ALTER TABLE events ADD COLUMN trace_context text;
