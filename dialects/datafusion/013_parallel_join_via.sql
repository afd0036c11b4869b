-- case: 013_parallel_join_via
-- dialect: datafusion
-- status: success
-- Two parallel joins order→address; via picks the shipping one.
SELECT
  "address"."city" AS "address.city",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."addresses" AS "address" ON "order"."shipping_address_id" = "address"."id"
WHERE
  "order"."status" NOT IN ($1)
GROUP BY
  "address"."city" ORDER BY "address.city" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
