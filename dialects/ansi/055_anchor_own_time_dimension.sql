-- case: 055_anchor_own_time_dimension
-- dialect: ansi
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT
  FLOOR("store"."opened_on" TO YEAR) AS "store.opened_on__year",
  count("store"."id") AS "store_count"
FROM
  "main"."stores" AS "store"
GROUP BY
  FLOOR("store"."opened_on" TO YEAR) ORDER BY "store.opened_on__year" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
