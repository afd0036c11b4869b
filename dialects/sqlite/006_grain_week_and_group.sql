-- case: 006_grain_week_and_group
-- dialect: sqlite
-- status: success
-- ISO week buckets plus a group-by; time first in output and order.
SELECT
  datetime("order"."ordered_at", 'weekday 0', '-6 days', 'start of day') AS "order.ordered_at__week",
  "order"."status" AS "order.status",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
GROUP BY
  datetime("order"."ordered_at", 'weekday 0', '-6 days', 'start of day'), "order"."status" ORDER BY "order.ordered_at__week" ASC NULLS LAST, "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
