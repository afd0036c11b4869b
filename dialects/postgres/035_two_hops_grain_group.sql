-- case: 035_two_hops_grain_group
-- dialect: postgres
-- status: success
-- Two many_to_one hops, a grain and a group-by together.
SELECT
  date_trunc('quarter', "order"."ordered_at") AS "order.ordered_at__quarter",
  "region"."name" AS "region.name",
  "customer"."segment" AS "customer.segment",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  LEFT JOIN "main"."regions" AS "region" ON "customer"."region_id" = "region"."id"
WHERE
  "order"."status" NOT IN ($1)
GROUP BY
  date_trunc('quarter', "order"."ordered_at"), "region"."name", "customer"."segment" ORDER BY "order.ordered_at__quarter" ASC NULLS LAST, "region.name" ASC NULLS LAST, "customer.segment" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
