-- case: 051_cumulative_and_simple
-- dialect: sqlite
-- status: success
-- A cumulative metric beside a simple one, keys joined null-safely.
WITH RECURSIVE "sb_r0" AS (
  SELECT
    "order"."amount" AS "sb_m",
    "order"."ordered_at" AS "sb_t"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?)
), "sb_s0" ("sb_b", "sb_end") AS (
  SELECT
    datetime(min("sb_r0"."sb_t"), 'start of month', '-' || ((CAST(strftime('%m', min("sb_r0"."sb_t")) AS INTEGER) - 1) % 3) || ' months') AS "sb_b",
    max("sb_r0"."sb_t") AS "sb_end"
  FROM
    "sb_r0"
  UNION ALL
  SELECT
    min(datetime("sb_s0"."sb_b", '+3 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+4 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))) AS "sb_b",
    "sb_s0"."sb_end" AS "sb_end"
  FROM
    "sb_s0"
  WHERE
    min(datetime("sb_s0"."sb_b", '+3 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+4 months', '-1 day') || ' ' || time("sb_s0"."sb_b"))) <= "sb_s0"."sb_end"
), "sb_m0" AS (
  SELECT
    "sb_s0"."sb_b" AS "sb_k0",
    sum("sb_r0"."sb_m") AS "sb_v"
  FROM
    "sb_s0"
    JOIN "sb_r0" ON "sb_r0"."sb_t" < min(datetime("sb_s0"."sb_b", '+3 months'), datetime(date("sb_s0"."sb_b", 'start of month', '+4 months', '-1 day') || ' ' || time("sb_s0"."sb_b")))
  GROUP BY
    "sb_s0"."sb_b"
), "sb_m1" AS (
  SELECT
    datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months') AS "sb_k0",
    count("order"."id") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months')
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__quarter",
  "sb_m0"."sb_v" AS "cumulative_revenue",
  coalesce("sb_m1"."sb_v", 0) AS "order_count"
FROM
  (
    SELECT
      "sb_m0"."sb_k0"
    FROM
      "sb_m0"
    UNION
    SELECT
      "sb_m1"."sb_k0"
    FROM
      "sb_m1"
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0")
  LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0") ORDER BY "order.ordered_at__quarter" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
