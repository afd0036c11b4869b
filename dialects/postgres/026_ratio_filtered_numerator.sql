-- case: 026_ratio_filtered_numerator
-- dialect: postgres
-- status: success
-- A ratio whose numerator carries its own filter; division is floating-point and NULL on zero.
SELECT
  "customer"."segment" AS "customer.segment",
  (CAST(count(CASE WHEN "order"."status" = $1 THEN "order"."id" END) AS DOUBLE PRECISION) / nullif(count("order"."id"), 0)) AS "cancellation_rate"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
GROUP BY
  "customer"."segment" ORDER BY "customer.segment" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
