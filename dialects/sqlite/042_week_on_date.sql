-- case: 042_week_on_date
-- dialect: sqlite
-- status: success
-- ISO weeks on a DATE dimension stay DATEs.
SELECT
  date(datetime("campaign_spend"."spent_on", 'weekday 0', '-6 days', 'start of day')) AS "campaign_spend.spent_on__week",
  sum("campaign_spend"."cost") AS "campaign_cost"
FROM
  "main"."campaign_spend" AS "campaign_spend"
WHERE
  "campaign_spend"."spent_on" >= ?
GROUP BY
  date(datetime("campaign_spend"."spent_on", 'weekday 0', '-6 days', 'start of day')) ORDER BY "campaign_spend.spent_on__week" ASC NULLS LAST LIMIT 1000
-- params: ["2025-06-01"]
