-- case: 005_grain_month
-- dialect: ansi
-- status: success
-- Month buckets on the metric time dimension (a TIMESTAMP).
SELECT
  FLOOR("order"."ordered_at" TO MONTH) AS "order.ordered_at__month",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  FLOOR("order"."ordered_at" TO MONTH) ORDER BY "order.ordered_at__month" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled"]
