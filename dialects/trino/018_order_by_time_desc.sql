-- case: 018_order_by_time_desc
-- dialect: trino
-- status: success
-- Ordering the time bucket descending.
SELECT
  date_trunc('quarter', "order"."ordered_at") AS "order.ordered_at__quarter",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  date_trunc('quarter', "order"."ordered_at") ORDER BY "order.ordered_at__quarter" DESC NULLS LAST LIMIT 4
-- params: ["cancelled"]
