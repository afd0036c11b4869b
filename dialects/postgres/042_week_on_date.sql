-- case: 042_week_on_date
-- dialect: postgres
-- status: success
-- ISO weeks on a DATE dimension stay DATEs.
SELECT
  CAST(date_trunc('week', "campaign_spend"."spent_on") AS DATE) AS "campaign_spend.spent_on__week",
  sum("campaign_spend"."cost") AS "campaign_cost"
FROM
  "main"."campaign_spend" AS "campaign_spend"
WHERE
  "campaign_spend"."spent_on" >= CAST($1 AS DATE)
GROUP BY
  CAST(date_trunc('week', "campaign_spend"."spent_on") AS DATE) ORDER BY "campaign_spend.spent_on__week" ASC NULLS LAST LIMIT 1000
-- params: ["2025-06-01"]
