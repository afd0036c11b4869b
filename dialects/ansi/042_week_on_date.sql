-- case: 042_week_on_date
-- dialect: ansi
-- status: success
-- ISO weeks on a DATE dimension stay DATEs.
SELECT
  FLOOR("campaign_spend"."spent_on" TO WEEK) AS "campaign_spend.spent_on__week",
  sum("campaign_spend"."cost") AS "campaign_cost"
FROM
  "main"."campaign_spend" AS "campaign_spend"
WHERE
  "campaign_spend"."spent_on" >= CAST(? AS DATE)
GROUP BY
  FLOOR("campaign_spend"."spent_on" TO WEEK) ORDER BY "campaign_spend.spent_on__week" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["2025-06-01"]
