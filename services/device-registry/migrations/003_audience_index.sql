-- Campaign fan-out walks an app's targetable devices one platform at a time, in id order
-- (src/audience-query.ts). With the platform in the key, each page is an index scan that
-- stops after the page's rows; the former (app_id, id) index made the planner read every
-- remaining device of the app and filter them by platform, which, with the statistics a
-- bulk import leaves behind, became a bitmap scan and a sort per page: O(app) per page.
CREATE INDEX devices_audience_idx ON devices (app_id, platform, id) WHERE opted_in AND NOT invalid;
DROP INDEX devices_targetable_idx;
