-- case: 040_count_distinct_fan_out
-- dialect: postgres
-- status: success
-- count_distinct across a fan-out, deduplicated per customer and key.
SELECT
  "order"."status" AS "order.status",
  count(DISTINCT "customer"."id") AS "customer_count"
FROM
  "main"."customers" AS "customer"
  LEFT JOIN "main"."orders" AS "order" ON "customer"."id" = "order"."customer_id"
WHERE
  "order"."ordered_at" >= CAST($1 AS TIMESTAMP)
GROUP BY
  "order"."status" ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: ["2025-01-01 00:00:00"]
