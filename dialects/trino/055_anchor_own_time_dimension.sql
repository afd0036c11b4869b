-- case: 055_anchor_own_time_dimension
-- dialect: trino
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT
  date_trunc('year', "store"."opened_on") AS "store.opened_on__year",
  count("store"."id") AS "store_count"
FROM
  "main"."stores" AS "store"
GROUP BY
  date_trunc('year', "store"."opened_on") ORDER BY "store.opened_on__year" ASC NULLS LAST LIMIT 1000
-- params: []
