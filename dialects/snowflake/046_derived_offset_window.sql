-- case: 046_derived_offset_window
-- dialect: snowflake
-- status: success
-- Month-over-month growth; the offset input's rows are moved a month later, time filters read the moved time.
WITH "sb_m0" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?) AND "order"."ordered_at" >= CAST(? AS TIMESTAMP)
  GROUP BY
    date_trunc('month', "order"."ordered_at")
), "sb_m1" AS (
  SELECT
    date_trunc('month', ("order"."ordered_at" + INTERVAL '1 month')) AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?) AND (("order"."ordered_at" + INTERVAL '1 month')) >= CAST(? AS TIMESTAMP)
  GROUP BY
    date_trunc('month', ("order"."ordered_at" + INTERVAL '1 month'))
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__month",
  (CAST(("sb_m0"."sb_v" - "sb_m1"."sb_v") AS DOUBLE PRECISION) / nullif("sb_m1"."sb_v", 0)) AS "revenue_growth_mom"
FROM
  (
    SELECT
      "sb_m0"."sb_k0"
    FROM
      "sb_m0"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0")
  LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0") ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","2024-01-01 00:00:00","cancelled","2024-01-01 00:00:00"]
