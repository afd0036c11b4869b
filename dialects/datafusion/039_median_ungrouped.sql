-- case: 039_median_ungrouped
-- dialect: datafusion
-- status: success
-- The median of all orders.
SELECT
  median(CAST("order"."amount" AS DOUBLE PRECISION)) AS "median_order_value"
FROM
  "main"."orders" AS "order" LIMIT 1000
-- params: []
