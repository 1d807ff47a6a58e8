-- Deleting an app's rows (app-deleted-consumer.ts) without scans: its events by app, and
-- each deleted event's deliveries, which the foreign key's ON DELETE CASCADE looks up by
-- event_id (the primary key leads with endpoint_id).
CREATE INDEX events_by_app ON events (app_id);
CREATE INDEX deliveries_by_event ON deliveries (event_id);
