-- Device listing with filters (src/device-list.ts, src/device-store.ts): the listing index also
-- carries the filterable columns, so a filtered page is an index-only walk in listing
-- order (the page's rows are then read by id) and a filtered count an index-only scan of
-- the app. With the former (app_id, created_at, id) index, a rare filter (invalid,
-- opted out) read every device row of the app from the table for each page. external_id
-- needs nothing new: devices_app_external_id_idx answers it.
CREATE INDEX devices_app_listing_idx ON devices (app_id, created_at, id) INCLUDE (platform, language, opted_in, invalid);
DROP INDEX devices_app_created_idx;
