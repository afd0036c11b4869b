-- case: 061_metric_filter_on_derived
-- dialect: duckdb
-- status: success
-- A metric filter on a derived metric keeps the rows whose customer's revenue per order compares; the inner answer joins its two parts in CTEs, written inside the filter's subquery where the dialect allows a WITH there (SQL Server does not, so it refuses).
SELECT
  "customer"."country" AS "customer.country",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN ($1) AND "customer"."id" IN (SELECT "sb_mf"."customer.id" FROM (WITH "sb_m0" AS (SELECT "customer"."id" AS "sb_k0", sum("order"."amount") AS "sb_v" FROM "main"."orders" AS "order" LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id" WHERE "order"."status" NOT IN ($2) GROUP BY "customer"."id"), "sb_m1" AS (SELECT "customer"."id" AS "sb_k0", count("order"."id") AS "sb_v" FROM "main"."orders" AS "order" LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id" WHERE "order"."status" <> $3 GROUP BY "customer"."id") SELECT "sb_keys"."sb_k0" AS "customer.id", (CAST("sb_m0"."sb_v" AS DOUBLE PRECISION) / nullif(coalesce("sb_m1"."sb_v", 0), 0)) AS "revenue_per_order" FROM (SELECT "sb_m0"."sb_k0" FROM "sb_m0" UNION SELECT "sb_m1"."sb_k0" FROM "sb_m1") AS "sb_keys" LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0") LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0")) AS "sb_mf" WHERE "sb_mf"."revenue_per_order" >= $4)
GROUP BY
  "customer"."country" ORDER BY "customer.country" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled","cancelled",50]
