-- case: 016_three_group_bys_mixed
-- dialect: trino
-- status: success
-- Group-bys from the anchor and two joined entities keep request order.
SELECT
  "product"."category" AS "product.category",
  "order"."status" AS "order.status",
  "product"."brand" AS "product.brand",
  sum("order_item"."quantity") AS "units_sold"
FROM
  "main"."order_items" AS "order_item"
  LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
  LEFT JOIN "main"."orders" AS "order" ON "order_item"."order_id" = "order"."id"
WHERE
  "order"."status" <> ?
GROUP BY
  "product"."category", "order"."status", "product"."brand" ORDER BY "product.category" ASC NULLS LAST, "order.status" ASC NULLS LAST, "product.brand" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
