-- case: 037_derived_by_country
-- dialect: duckdb
-- status: success
-- A derived metric grouped by a joined column.
SELECT
  "customer"."country" AS "customer.country",
  (CAST(sum(CASE WHEN "order"."status" NOT IN ($1) THEN "order"."amount" END) AS DOUBLE PRECISION) / nullif(count(CASE WHEN "order"."status" <> $2 THEN "order"."id" END), 0)) AS "revenue_per_order"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  (("order"."status" NOT IN ($3)) OR ("order"."status" <> $4))
GROUP BY
  "customer"."country" ORDER BY "customer.country" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled","cancelled","cancelled"]
