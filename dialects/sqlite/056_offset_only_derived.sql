-- case: 056_offset_only_derived
-- dialect: sqlite
-- status: success
-- A derived metric whose only input is moved answers its moved buckets up to the last bucket of the unmoved rows (a CTE read only for that end), so no row lies past the data.
WITH "sb_m0" AS (
  SELECT
    datetime(min(datetime("order"."ordered_at", '+1 months'), datetime(date("order"."ordered_at", 'start of month', '+2 months', '-1 day') || ' ' || time("order"."ordered_at"))), 'start of month') AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?)
  GROUP BY
    datetime(min(datetime("order"."ordered_at", '+1 months'), datetime(date("order"."ordered_at", 'start of month', '+2 months', '-1 day') || ' ' || time("order"."ordered_at"))), 'start of month')
), "sb_m1" AS (
  SELECT
    datetime("order"."ordered_at", 'start of month') AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN (?)
  GROUP BY
    datetime("order"."ordered_at", 'start of month')
)
SELECT
  "sb_keys"."sb_k0" AS "order.ordered_at__month",
  "sb_m0"."sb_v" AS "revenue_month_ago"
FROM
  (
    SELECT
      "sb_moved"."sb_k0"
    FROM
      (
        SELECT
          "sb_m0"."sb_k0"
        FROM
          "sb_m0"
      ) AS "sb_moved"
    WHERE
      "sb_moved"."sb_k0" IS NULL OR EXISTS (SELECT 1 FROM "sb_m1" WHERE "sb_m1"."sb_k0" >= "sb_moved"."sb_k0")
  ) AS "sb_keys"
  LEFT JOIN "sb_m0" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m0"."sb_k0") ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled"]
