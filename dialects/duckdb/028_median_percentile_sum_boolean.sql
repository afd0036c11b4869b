-- case: 028_median_percentile_sum_boolean
-- dialect: duckdb
-- status: success
-- median, percentile and sum_boolean aggregations, per dialect.
WITH "sb_m0" AS (
  SELECT
    "order"."status" AS "sb_k0",
    median(CAST("order"."amount" AS DOUBLE PRECISION)) AS "sb_v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    "order"."status"
), "sb_m1" AS (
  SELECT
    "order"."status" AS "sb_k0",
    quantile_cont(CAST("order"."amount" AS DOUBLE PRECISION), 0.9) AS "sb_v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    "order"."status"
), "sb_m2" AS (
  SELECT
    "order"."status" AS "sb_k0",
    count(CASE WHEN "order"."is_gift" THEN 1 END) AS "sb_v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    "order"."status"
)
SELECT
  "sb_keys"."sb_k0" AS "order.status",
  "sb_m0"."sb_v" AS "median_order_value",
  "sb_m1"."sb_v" AS "p90_order_value",
  coalesce("sb_m2"."sb_v", 0) AS "gift_orders"
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
    UNION
    SELECT
      "sb_m2"."sb_k0"
    FROM
      "sb_m2"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0")
  LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0")
  LEFT JOIN "sb_m2" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m2"."sb_k0") ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
