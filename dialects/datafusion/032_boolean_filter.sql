-- case: 032_boolean_filter
-- dialect: datafusion
-- status: success
-- A boolean filter value.
SELECT
  "store"."name" AS "store.name",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."stores" AS "store" ON "order"."store_id" = "store"."id"
WHERE
  "order"."status" NOT IN ($1) AND "order"."is_gift" = $2
GROUP BY
  "store"."name" ORDER BY "store.name" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled",true]
