-- case: 039_median_ungrouped
-- dialect: postgres
-- status: success
-- The median of all orders.
SELECT
  percentile_cont(0.5) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "median_order_value"
FROM
  "main"."orders" AS "order" LIMIT 1000
-- params: []
