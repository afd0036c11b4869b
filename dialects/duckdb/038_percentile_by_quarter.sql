-- case: 038_percentile_by_quarter
-- dialect: duckdb
-- status: success
-- A continuous percentile, exact only in some engines (the rest answer why).
SELECT
  date_trunc('quarter', "order"."ordered_at") AS "order.ordered_at__quarter",
  quantile_cont("order"."amount", 0.9) AS "p90_order_value"
FROM
  "main"."orders" AS "order"
GROUP BY
  date_trunc('quarter', "order"."ordered_at") ORDER BY "order.ordered_at__quarter" ASC NULLS LAST LIMIT 1000
-- params: []
