-- case: 036_ratio_and_simple
-- dialect: datafusion
-- status: success
-- A ratio and a simple metric side by side.
SELECT
  "customer"."country" AS "customer.country",
  (CAST(count(CASE WHEN "order"."status" = $1 THEN "order"."id" END) AS DOUBLE PRECISION) / nullif(count("order"."id"), 0)) AS "cancellation_rate",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
GROUP BY
  "customer"."country" ORDER BY "cancellation_rate" DESC NULLS LAST, "customer.country" ASC NULLS LAST LIMIT 10
-- params: ["cancelled"]
