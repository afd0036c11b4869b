-- case: 040_count_distinct_fan_out
-- dialect: duckdb
-- status: success
-- count_distinct across a fan-out, deduplicated per customer and key.
SELECT
  "sb_rows"."sb_k0" AS "order.status",
  count(DISTINCT "sb_rows"."sb_m") AS "customer_count"
FROM
  (
    SELECT DISTINCT
      "customer"."id" AS "sb_id0",
      "order"."status" AS "sb_k0",
      "customer"."id" AS "sb_m"
    FROM
      "main"."customers" AS "customer"
      LEFT JOIN "main"."orders" AS "order" ON "customer"."id" = "order"."customer_id"
    WHERE
      "order"."ordered_at" >= CAST($1 AS TIMESTAMP)
  ) AS "sb_rows"
GROUP BY
  "sb_rows"."sb_k0" ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: ["2025-01-01 00:00:00"]
