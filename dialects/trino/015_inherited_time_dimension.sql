-- case: 015_inherited_time_dimension
-- dialect: trino
-- status: success
-- An order_item metric bucketed by the order time dimension named by the caller.
SELECT
  date_trunc('month', "order"."ordered_at") AS "order.ordered_at__month",
  sum("order_item"."quantity") AS "units_sold"
FROM
  "main"."order_items" AS "order_item"
  LEFT JOIN "main"."orders" AS "order" ON "order_item"."order_id" = "order"."id"
GROUP BY
  date_trunc('month', "order"."ordered_at") ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: []
