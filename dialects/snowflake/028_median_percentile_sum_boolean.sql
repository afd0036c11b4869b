-- case: 028_median_percentile_sum_boolean
-- dialect: snowflake
-- status: success
-- median, percentile and sum_boolean aggregations, per dialect.
SELECT
  "order"."status" AS "order.status",
  median(CAST("order"."amount" AS DOUBLE PRECISION)) AS "median_order_value",
  percentile_cont(0.9) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "p90_order_value",
  count(CASE WHEN "order"."is_gift" THEN 1 END) AS "gift_orders"
FROM
  "main"."orders" AS "order"
GROUP BY
  "order"."status" ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
