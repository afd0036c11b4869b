-- case: 015_inherited_time_dimension
-- dialect: ansi
-- status: success
-- An order_item metric bucketed by the order time dimension named by the caller.
SELECT
  FLOOR("order"."ordered_at" TO MONTH) AS "order.ordered_at__month",
  sum("order_item"."quantity") AS "units_sold"
FROM
  "main"."order_items" AS "order_item"
  LEFT JOIN "main"."orders" AS "order" ON "order_item"."order_id" = "order"."id"
GROUP BY
  FLOOR("order"."ordered_at" TO MONTH) ORDER BY "order.ordered_at__month" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
