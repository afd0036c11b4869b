-- case: 038_percentile_by_quarter
-- dialect: ansi
-- status: success
-- A continuous percentile, exact only in some engines (the rest answer why).
SELECT
  FLOOR("order"."ordered_at" TO QUARTER) AS "order.ordered_at__quarter",
  percentile_cont(0.9) WITHIN GROUP (ORDER BY "order"."amount" ASC) AS "p90_order_value"
FROM
  "main"."orders" AS "order"
GROUP BY
  FLOOR("order"."ordered_at" TO QUARTER) ORDER BY "order.ordered_at__quarter" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
