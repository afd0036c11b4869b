-- case: 047_derived_offset_to_grain
-- dialect: trino
-- status: success
-- Each month against the first month of its quarter (offset_to_grain), by store region.
WITH "sb_m0" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "sb_k0",
    "region"."name" AS "sb_k1",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."stores" AS "store" ON "order"."store_id" = "store"."id"
    LEFT JOIN "main"."regions" AS "region" ON "store"."region_id" = "region"."id"
  WHERE
    "order"."status" NOT IN (?)
  GROUP BY
    date_trunc('month', "order"."ordered_at"), "region"."name"
), "sb_m1" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "sb_k0",
    "region"."name" AS "sb_k1",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."stores" AS "store" ON "order"."store_id" = "store"."id"
    LEFT JOIN "main"."regions" AS "region" ON "store"."region_id" = "region"."id"
  WHERE
    "order"."status" NOT IN (?)
  GROUP BY
    date_trunc('month', "order"."ordered_at"), "region"."name"
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__month",
  "sb_keys"."sb_k1" AS "region.name",
  (CAST("sb_m0"."sb_v" AS DOUBLE) / nullif("sb_m1"."sb_v", 0)) AS "revenue_vs_quarter_start"
FROM
  (
    SELECT
      "sb_m0"."sb_k0",
      "sb_m0"."sb_k1"
    FROM
      "sb_m0"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0") AND ("sb_keys"."sb_k1" IS NOT DISTINCT FROM "sb_m0"."sb_k1")
  LEFT JOIN "sb_m1" ON "sb_m1"."sb_k0" = date_trunc('quarter', "sb_keys"."sb_k0") AND ("sb_keys"."sb_k1" IS NOT DISTINCT FROM "sb_m1"."sb_k1") ORDER BY "order.ordered_at__month" ASC NULLS LAST, "region.name" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled"]
