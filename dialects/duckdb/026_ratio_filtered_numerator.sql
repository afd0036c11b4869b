-- case: 026_ratio_filtered_numerator
-- dialect: duckdb
-- status: success
-- A ratio whose numerator carries its own filter; division is floating-point and NULL on zero.
WITH "__m0" AS (
  SELECT
    "customer"."segment" AS "__k0",
    count("order"."id") AS "__v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  WHERE
    "order"."status" = $1
  GROUP BY
    "customer"."segment"
), "__m1" AS (
  SELECT
    "customer"."segment" AS "__k0",
    count("order"."id") AS "__v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  GROUP BY
    "customer"."segment"
)
SELECT
  coalesce("__m0"."__k0", "__m1"."__k0") AS "customer.segment",
  (CAST("__m0"."__v" AS DOUBLE PRECISION) / nullif("__m1"."__v", 0)) AS "cancellation_rate"
FROM
  "__m0"
  FULL JOIN "__m1" ON "__m0"."__k0" IS NOT DISTINCT FROM "__m1"."__k0" ORDER BY "customer.segment" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
