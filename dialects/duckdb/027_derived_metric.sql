-- case: 027_derived_metric
-- dialect: duckdb
-- status: success
-- A derived metric over two inputs, one filtered.
WITH "__m0" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "__k0",
    sum("order"."amount") AS "__v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN ($1)
  GROUP BY
    date_trunc('month', "order"."ordered_at")
), "__m1" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "__k0",
    count("order"."id") AS "__v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" <> $2
  GROUP BY
    date_trunc('month', "order"."ordered_at")
)
SELECT
  coalesce("__m0"."__k0", "__m1"."__k0") AS "order.ordered_at__month",
  (CAST("__m0"."__v" AS DOUBLE PRECISION) / nullif("__m1"."__v", 0)) AS "revenue_per_order"
FROM
  "__m0"
  FULL JOIN "__m1" ON "__m0"."__k0" IS NOT DISTINCT FROM "__m1"."__k0" ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled"]
