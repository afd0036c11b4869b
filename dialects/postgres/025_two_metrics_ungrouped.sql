-- case: 025_two_metrics_ungrouped
-- dialect: postgres
-- status: success
-- Ungrouped metrics are single rows, cross joined.
WITH "__m0" AS (
  SELECT
    sum("order"."amount") AS "__v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN ($1)
), "__m1" AS (
  SELECT
    sum("order_item"."quantity") AS "__v"
  FROM
    "main"."order_items" AS "order_item"
)
SELECT
  "__m0"."__v" AS "revenue",
  "__m1"."__v" AS "units_sold"
FROM
  "__m0"
  CROSS JOIN "__m1" LIMIT 1000
-- params: ["cancelled"]
