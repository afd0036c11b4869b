-- case: 028_median_percentile_sum_boolean
-- dialect: postgres
-- status: success
-- median, percentile and sum_boolean aggregations, per dialect.
WITH "__m0" AS (
  SELECT
    "order"."status" AS "__k0",
    percentile_cont(0.5) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "__v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    "order"."status"
), "__m1" AS (
  SELECT
    "order"."status" AS "__k0",
    percentile_cont(0.9) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "__v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    "order"."status"
), "__m2" AS (
  SELECT
    "order"."status" AS "__k0",
    count(CASE WHEN "order"."is_gift" THEN 1 END) AS "__v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    "order"."status"
)
SELECT
  coalesce("__m0"."__k0", "__m1"."__k0", "__m2"."__k0") AS "order.status",
  "__m0"."__v" AS "median_order_value",
  "__m1"."__v" AS "p90_order_value",
  "__m2"."__v" AS "gift_orders"
FROM
  "__m0"
  FULL JOIN "__m1" ON "__m0"."__k0" IS NOT DISTINCT FROM "__m1"."__k0"
  FULL JOIN "__m2" ON coalesce("__m0"."__k0", "__m1"."__k0") IS NOT DISTINCT FROM "__m2"."__k0" ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
