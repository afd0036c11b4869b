-- case: 018_order_by_time_desc
-- dialect: ansi
-- status: success
-- Ordering the time bucket descending.
SELECT
  FLOOR("order"."ordered_at" TO QUARTER) AS "order.ordered_at__quarter",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  FLOOR("order"."ordered_at" TO QUARTER) ORDER BY "order.ordered_at__quarter" DESC NULLS LAST FETCH FIRST 4 ROWS ONLY
-- params: ["cancelled"]
