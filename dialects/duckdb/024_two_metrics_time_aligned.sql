-- case: 024_two_metrics_time_aligned
-- dialect: duckdb
-- status: success
-- Metrics with different time dimensions share a metric_time bucket.
WITH "sb_m0" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "sb_k0",
    sum("order"."amount") AS "sb_v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN ($1)
  GROUP BY
    date_trunc('month', "order"."ordered_at")
), "sb_m1" AS (
  SELECT
    CAST(CAST(date_trunc('month', "campaign_spend"."spent_on") AS DATE) AS TIMESTAMP) AS "sb_k0",
    sum("campaign_spend"."cost") AS "sb_v"
  FROM
    "main"."campaign_spend" AS "campaign_spend"
  GROUP BY
    CAST(CAST(date_trunc('month', "campaign_spend"."spent_on") AS DATE) AS TIMESTAMP)
)
SELECT
  "sb_keys"."sb_k0" AS "metric_time__month",
  "sb_m0"."sb_v" AS "revenue",
  "sb_m1"."sb_v" AS "campaign_cost"
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
  LEFT JOIN "sb_m1" ON ("sb_keys"."sb_k0" IS NOT DISTINCT FROM "sb_m1"."sb_k0") ORDER BY "metric_time__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
