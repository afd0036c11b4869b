-- case: 051_cumulative_and_simple
-- dialect: datafusion
-- status: success
-- A cumulative metric beside a simple one, keys joined null-safely.
WITH RECURSIVE "sb_r0" AS (
  SELECT
    "order"."amount" AS "sb_m",
    "order"."ordered_at" AS "sb_t"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN ($1)
), "sb_s0" ("sb_b", "sb_end") AS (
  SELECT
    date_trunc('quarter', min("sb_r0"."sb_t")) AS "sb_b",
    max("sb_r0"."sb_t") AS "sb_end"
  FROM
    "sb_r0"
  UNION ALL
  SELECT
    ("sb_s0"."sb_b" + INTERVAL '3 month') AS "sb_b",
    "sb_s0"."sb_end" AS "sb_end"
  FROM
    "sb_s0"
  WHERE
    ("sb_s0"."sb_b" + INTERVAL '3 month') <= "sb_s0"."sb_end"
), "sb_m0" AS (
  SELECT
    "sb_s0"."sb_b" AS "sb_k0",
    sum("sb_r0"."sb_m") AS "sb_v"
  FROM
    "sb_s0"
    JOIN "sb_r0" ON "sb_r0"."sb_t" < ("sb_s0"."sb_b" + INTERVAL '3 month')
  GROUP BY
    "sb_s0"."sb_b"
), "sb_m1" AS (
  SELECT
    date_trunc('quarter', "order"."ordered_at") AS "sb_k0",
    count("order"."id") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  GROUP BY
    date_trunc('quarter', "order"."ordered_at")
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
