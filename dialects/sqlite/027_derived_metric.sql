-- case: 027_derived_metric
-- dialect: sqlite
-- status: success
-- A derived metric over two inputs, one filtered.
SELECT
  datetime("order"."ordered_at", 'start of month') AS "order.ordered_at__month",
  (CAST(sum(CASE WHEN "order"."status" NOT IN (?) THEN "order"."amount" END) AS REAL) / nullif(count(CASE WHEN "order"."status" <> ? THEN "order"."id" END), 0)) AS "revenue_per_order"
FROM
  "main"."orders" AS "order"
WHERE
  (("order"."status" NOT IN (?)) OR ("order"."status" <> ?))
GROUP BY
  datetime("order"."ordered_at", 'start of month') ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled","cancelled","cancelled"]
