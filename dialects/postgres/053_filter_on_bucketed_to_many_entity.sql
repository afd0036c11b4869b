-- case: 053_filter_on_bucketed_to_many_entity
-- dialect: postgres
-- status: success
-- A time bucket on a to-many entity (orders of a store) and a filter on it restrict the same joined rows.
SELECT
  date_trunc('year', "order"."ordered_at") AS "order.ordered_at__year",
  count(DISTINCT "store"."id") AS "store_count"
FROM
  "main"."stores" AS "store"
  LEFT JOIN "main"."orders" AS "order" ON "store"."id" = "order"."store_id"
WHERE
  "order"."ordered_at" >= CAST($1 AS TIMESTAMP)
GROUP BY
  date_trunc('year', "order"."ordered_at") ORDER BY "order.ordered_at__year" ASC NULLS LAST LIMIT 1000
-- params: ["2025-01-01 00:00:00"]
