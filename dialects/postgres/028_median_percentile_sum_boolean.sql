-- case: 028_median_percentile_sum_boolean
-- dialect: postgres
-- status: success
-- median, percentile and sum_boolean aggregations, per dialect.
SELECT
  "order"."status" AS "order.status",
  percentile_cont(0.5) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "median_order_value",
  percentile_cont(0.9) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "p90_order_value",
  count(CASE WHEN "order"."is_gift" THEN 1 END) AS "gift_orders"
FROM
  "main"."orders" AS "order"
GROUP BY
  "order"."status" ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
