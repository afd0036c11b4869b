-- case: 055_anchor_own_time_dimension
-- dialect: postgres
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT
  CAST(date_trunc('year', "store"."opened_on") AS DATE) AS "store.opened_on__year",
  count("store"."id") AS "store_count"
FROM
  "main"."stores" AS "store"
GROUP BY
  CAST(date_trunc('year', "store"."opened_on") AS DATE) ORDER BY "store.opened_on__year" ASC NULLS LAST LIMIT 1000
-- params: []
