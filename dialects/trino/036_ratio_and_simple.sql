-- case: 036_ratio_and_simple
-- dialect: trino
-- status: success
-- A ratio and a simple metric side by side.
WITH "sb_m0" AS (
  SELECT
    "customer"."country" AS "sb_k0",
    count("order"."id") AS "sb_v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  WHERE
    "order"."status" = ?
  GROUP BY
    "customer"."country"
), "sb_m1" AS (
  SELECT
    "customer"."country" AS "sb_k0",
    count("order"."id") AS "sb_v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  GROUP BY
    "customer"."country"
)
SELECT
  "sb_keys"."sb_k0" AS "customer.country",
  (CAST(coalesce("sb_m0"."sb_v", 0) AS DOUBLE) / nullif(coalesce("sb_m1"."sb_v", 0), 0)) AS "cancellation_rate",
  coalesce("sb_m1"."sb_v", 0) AS "order_count"
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
  LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0") ORDER BY "cancellation_rate" DESC NULLS LAST, "customer.country" ASC NULLS LAST LIMIT 10
-- params: ["cancelled"]
