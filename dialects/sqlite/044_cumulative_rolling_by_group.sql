-- case: 044_cumulative_rolling_by_group
-- dialect: sqlite
-- status: success
-- A rolling three-month window per customer segment; rows are re-aggregated for every bucket.
WITH RECURSIVE "sb_r0" AS (
  SELECT
    "customer"."segment" AS "sb_g0",
    "order"."amount" AS "sb_m",
    "order"."ordered_at" AS "sb_t"
  FROM
    "main"."orders" AS "order"
    LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
  WHERE
    "order"."status" NOT IN (?)
), "sb_s0" ("sb_b", "sb_end") AS (
  SELECT
    datetime(min("sb_r0"."sb_t"), 'start of month') AS "sb_b",
    max("sb_r0"."sb_t") AS "sb_end"
  FROM
    "sb_r0"
  UNION ALL
  SELECT
    min(datetime("sb_s0"."sb_b", '+1 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+2 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))) AS "sb_b",
    "sb_s0"."sb_end" AS "sb_end"
  FROM
    "sb_s0"
  WHERE
    min(datetime("sb_s0"."sb_b", '+1 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+2 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))) <= "sb_s0"."sb_end"
), "sb_m0" AS (
  SELECT
    "sb_s0"."sb_b" AS "sb_k0",
    "sb_r0"."sb_g0" AS "sb_k1",
    sum("sb_r0"."sb_m") AS "sb_v"
  FROM
    "sb_s0"
    JOIN "sb_r0" ON "sb_r0"."sb_t" < min(datetime("sb_s0"."sb_b", '+1 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+2 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))) AND "sb_r0"."sb_t" >= min(datetime(min(datetime("sb_s0"."sb_b", '+1 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+2 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))), '-3 months'), datetime(date(min(datetime("sb_s0"."sb_b", '+1 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+2 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))), 'start of month', '-2 months', '-1 day') || ' ' || time(min(datetime("sb_s0"."sb_b", '+1 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+2 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))))))
  GROUP BY
    "sb_s0"."sb_b", "sb_r0"."sb_g0"
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__month",
  "sb_keys"."sb_k1" AS "customer.segment",
  "sb_m0"."sb_v" AS "revenue_rolling_3_months"
FROM
  (
    SELECT
      "sb_m0"."sb_k0",
      "sb_m0"."sb_k1"
    FROM
      "sb_m0"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0") AND ("sb_keys"."sb_k1" IS NOT DISTINCT FROM "sb_m0"."sb_k1") ORDER BY "order.ordered_at__month" ASC NULLS LAST, "customer.segment" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
