-- case: 039_median_ungrouped
-- dialect: ansi
-- status: success
-- The median of all orders.
SELECT
  percentile_cont(0.5) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "median_order_value"
FROM
  "main"."orders" AS "order" FETCH FIRST 1000 ROWS ONLY
-- params: []
