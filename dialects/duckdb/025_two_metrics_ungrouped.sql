-- case: 025_two_metrics_ungrouped
-- dialect: duckdb
-- status: success
-- Ungrouped metrics are single rows, cross joined.
WITH "sb_m0" AS (
  SELECT
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN ($1)
), "sb_m1" AS (
  SELECT
    sum("order_item"."quantity") AS "sb_v"
  FROM
    "main"."order_items" AS "order_item"
)
SELECT
  "sb_m0"."sb_v" AS "revenue",
  "sb_m1"."sb_v" AS "units_sold"
FROM
  "sb_m0"
  CROSS JOIN "sb_m1" LIMIT 1000
-- params: ["cancelled"]
