-- case: 045_cumulative_grain_to_date
-- dialect: sqlite
-- status: success
-- Month-to-date revenue at day grain, filtered to one quarter.
WITH RECURSIVE "sb_r0" AS (
  SELECT
    "order"."amount" AS "sb_m",
    "order"."ordered_at" AS "sb_t"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?) AND "order"."ordered_at" >= ? AND "order"."ordered_at" < ?
), "sb_s0" ("sb_b", "sb_end") AS (
  SELECT
    datetime(min("sb_r0"."sb_t"), 'start of day') AS "sb_b",
    max("sb_r0"."sb_t") AS "sb_end"
  FROM
    "sb_r0"
  UNION ALL
  SELECT
    datetime("sb_s0"."sb_b", '+1 days') AS "sb_b",
    "sb_s0"."sb_end" AS "sb_end"
  FROM
    "sb_s0"
  WHERE
    datetime("sb_s0"."sb_b", '+1 days') <= "sb_s0"."sb_end"
), "sb_m0" AS (
  SELECT
    "sb_s0"."sb_b" AS "sb_k0",
    sum("sb_r0"."sb_m") AS "sb_v"
  FROM
    "sb_s0"
    JOIN "sb_r0" ON "sb_r0"."sb_t" < datetime("sb_s0"."sb_b", '+1 days') AND "sb_r0"."sb_t" >= datetime("sb_s0"."sb_b", 'start of month')
  GROUP BY
    "sb_s0"."sb_b"
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__day",
  "sb_m0"."sb_v" AS "revenue_month_to_date"
FROM
  (
    SELECT
      "sb_m0"."sb_k0"
    FROM
      "sb_m0"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0") ORDER BY "order.ordered_at__day" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","2024-01-01 00:00:00","2024-04-01 00:00:00"]
