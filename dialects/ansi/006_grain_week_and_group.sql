-- case: 006_grain_week_and_group
-- dialect: ansi
-- status: success
-- ISO week buckets plus a group-by; time first in output and order.
SELECT
  FLOOR("order"."ordered_at" TO WEEK) AS "order.ordered_at__week",
  "order"."status" AS "order.status",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
GROUP BY
  FLOOR("order"."ordered_at" TO WEEK), "order"."status" ORDER BY "order.ordered_at__week" ASC NULLS LAST, "order.status" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
