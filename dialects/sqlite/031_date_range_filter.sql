-- case: 031_date_range_filter
-- dialect: sqlite
-- status: success
-- A half-open date range on a TIMESTAMP column; dates are bound and cast.
SELECT
  datetime("order"."ordered_at", 'start of day') AS "order.ordered_at__day",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?) AND "order"."ordered_at" >= ? AND "order"."ordered_at" < ?
GROUP BY
  datetime("order"."ordered_at", 'start of day') ORDER BY "order.ordered_at__day" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","2025-01-01 00:00:00","2025-02-01 00:00:00"]
