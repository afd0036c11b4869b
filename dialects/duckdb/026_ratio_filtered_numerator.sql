-- case: 026_ratio_filtered_numerator
-- dialect: duckdb
-- status: success
-- A ratio whose numerator carries its own filter; division is floating-point and NULL on zero.
WITH "sb_m0" AS (
  SELECT
    "customer"."segment" AS "sb_k0",
    count("order"."id") AS "sb_v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  WHERE
    "order"."status" = $1
  GROUP BY
    "customer"."segment"
), "sb_m1" AS (
  SELECT
    "customer"."segment" AS "sb_k0",
    count("order"."id") AS "sb_v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  GROUP BY
    "customer"."segment"
)
SELECT
  "sb_keys"."sb_k0" AS "customer.segment",
  (CAST(coalesce("sb_m0"."sb_v", 0) AS DOUBLE PRECISION) / nullif(coalesce("sb_m1"."sb_v", 0), 0)) AS "cancellation_rate"
FROM
  (
    SELECT
      "sb_m0"."sb_k0"
    FROM
      "sb_m0"
    UNION
    SELECT
      "sb_m1"."sb_k0"
    FROM
      "sb_m1"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0")
  LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0") ORDER BY "customer.segment" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
