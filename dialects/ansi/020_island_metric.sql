-- case: 020_island_metric
-- dialect: ansi
-- status: success
-- A metric on an entity no join touches, bucketed by its own DATE column.
SELECT
  FLOOR("campaign_spend"."spent_on" TO MONTH) AS "campaign_spend.spent_on__month",
  "campaign_spend"."channel" AS "campaign_spend.channel",
  sum("campaign_spend"."cost") AS "campaign_cost"
FROM
  "main"."campaign_spend" AS "campaign_spend"
GROUP BY
  FLOOR("campaign_spend"."spent_on" TO MONTH), "campaign_spend"."channel" ORDER BY "campaign_spend.spent_on__month" ASC NULLS LAST, "campaign_spend.channel" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
