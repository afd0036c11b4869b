-- case: 055_anchor_own_time_dimension
-- dialect: sqlite
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT
  date(datetime("store"."opened_on", 'start of year')) AS "store.opened_on__year",
  count("store"."id") AS "store_count"
FROM
  "main"."stores" AS "store"
GROUP BY
  date(datetime("store"."opened_on", 'start of year')) ORDER BY "store.opened_on__year" ASC NULLS LAST LIMIT 1000
-- params: []
