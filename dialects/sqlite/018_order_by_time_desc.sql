-- case: 018_order_by_time_desc
-- dialect: sqlite
-- status: success
-- Ordering the time bucket descending.
SELECT
  datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months') AS "order.ordered_at__quarter",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months') ORDER BY "order.ordered_at__quarter" DESC NULLS LAST LIMIT 4
-- params: ["cancelled"]
