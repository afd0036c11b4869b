-- case: 006_grain_week_and_group
-- dialect: datafusion
-- status: success
-- ISO week buckets plus a group-by; time first in output and order.
SELECT
  date_trunc('week', "order"."ordered_at") AS "order.ordered_at__week",
  "order"."status" AS "order.status",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
GROUP BY
  date_trunc('week', "order"."ordered_at"), "order"."status" ORDER BY "order.ordered_at__week" ASC NULLS LAST, "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
