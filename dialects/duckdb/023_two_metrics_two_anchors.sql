-- case: 023_two_metrics_two_anchors
-- dialect: duckdb
-- status: success
-- Two metrics from different anchors, each aggregated at its own source, full-outer-joined NULL-safely on the group key.
WITH "__m0" AS (
  SELECT
    "customer"."country" AS "__k0",
    count(DISTINCT "customer"."id") AS "__v"
  FROM
    "main"."customers" AS "customer"
  GROUP BY
    "customer"."country"
), "__m1" AS (
  SELECT
    "customer"."country" AS "__k0",
    count("order"."id") AS "__v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  GROUP BY
    "customer"."country"
)
SELECT
  coalesce("__m0"."__k0", "__m1"."__k0") AS "customer.country",
  "__m0"."__v" AS "customer_count",
  "__m1"."__v" AS "order_count"
FROM
  "__m0"
  FULL JOIN "__m1" ON "__m0"."__k0" IS NOT DISTINCT FROM "__m1"."__k0" ORDER BY "order_count" DESC NULLS LAST, "customer.country" ASC NULLS LAST LIMIT 1000
-- params: []
