-- case: 024_two_metrics_time_aligned
-- dialect: postgres
-- status: success
-- Metrics with different time dimensions share a metric_time bucket.
WITH "__m0" AS (
  SELECT
    date_trunc('month', "order"."ordered_at") AS "__k0",
    sum("order"."amount") AS "__v"
  FROM
    "main"."orders" AS "order"
  WHERE
    "order"."status" NOT IN ($1)
  GROUP BY
    date_trunc('month', "order"."ordered_at")
), "__m1" AS (
  SELECT
    CAST(date_trunc('month', "campaign_spend"."spent_on") AS DATE) AS "__k0",
    sum("campaign_spend"."cost") AS "__v"
  FROM
    "main"."campaign_spend" AS "campaign_spend"
  GROUP BY
    CAST(date_trunc('month', "campaign_spend"."spent_on") AS DATE)
)
SELECT
  coalesce("__m0"."__k0", "__m1"."__k0") AS "metric_time__month",
  "__m0"."__v" AS "revenue",
  "__m1"."__v" AS "campaign_cost"
FROM
  "__m0"
  FULL JOIN "__m1" ON "__m0"."__k0" IS NOT DISTINCT FROM "__m1"."__k0" ORDER BY "metric_time__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
