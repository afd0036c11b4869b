-- case: 005_grain_month
-- dialect: snowflake
-- status: success
-- Month buckets on the metric time dimension (a TIMESTAMP).
SELECT
  date_trunc('month', "order"."ordered_at") AS "order.ordered_at__month",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  date_trunc('month', "order"."ordered_at") ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
