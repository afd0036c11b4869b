-- case: 046_derived_offset_window
-- dialect: sqlite
-- status: success
-- Month-over-month growth; the offset input's rows are moved a month later, time filters read the moved time.
WITH "sb_m0" AS (
  SELECT
    datetime("order"."ordered_at", 'start of month') AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?) AND "order"."ordered_at" >= ?
  GROUP BY
    datetime("order"."ordered_at", 'start of month')
), "sb_m1" AS (
  SELECT
    datetime(min(datetime("order"."ordered_at", '+1 months'), datetime(date("order"."ordered_at", 'start of month', '+2 months', '-1 day') || ' ' || time("order"."ordered_at"))), 'start of month') AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?) AND (min(datetime("order"."ordered_at", '+1 months'), datetime(date("order"."ordered_at", 'start of month', '+2 months', '-1 day') || ' ' || time("order"."ordered_at")))) >= ?
  GROUP BY
    datetime(min(datetime("order"."ordered_at", '+1 months'), datetime(date("order"."ordered_at", 'start of month', '+2 months', '-1 day') || ' ' || time("order"."ordered_at"))), 'start of month')
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__month",
  (CAST(("sb_m0"."sb_v" - "sb_m1"."sb_v") AS REAL) / nullif("sb_m1"."sb_v", 0)) AS "revenue_growth_mom"
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
