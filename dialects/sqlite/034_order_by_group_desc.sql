-- case: 034_order_by_group_desc
-- dialect: sqlite
-- status: success
-- Ordering by a group-by column descending, ties broken by the others.
SELECT
  "product"."brand" AS "product.brand",
  "product"."category" AS "product.category",
  sum("order_item"."quantity") AS "units_sold"
FROM
  "main"."order_items" AS "order_item"
  LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
GROUP BY
  "product"."brand", "product"."category" ORDER BY "product.category" DESC NULLS LAST, "product.brand" ASC NULLS LAST LIMIT 20
-- params: []
