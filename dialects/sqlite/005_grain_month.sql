-- case: 005_grain_month
-- dialect: sqlite
-- status: success
-- Month buckets on the metric time dimension (a TIMESTAMP).
SELECT
  datetime("order"."ordered_at", 'start of month') AS "order.ordered_at__month",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  datetime("order"."ordered_at", 'start of month') ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
