-- case: 004_group_by_two_hops_via
-- dialect: trino
-- status: success
-- Two hops to region, disambiguated with via.
SELECT
  "region"."name" AS "region.name",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."stores" AS "store" ON "order"."store_id" = "store"."id"
  LEFT JOIN "main"."regions" AS "region" ON "store"."region_id" = "region"."id"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  "region"."name" ORDER BY "region.name" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
