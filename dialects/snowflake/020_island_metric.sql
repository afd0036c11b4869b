-- case: 020_island_metric
-- dialect: snowflake
-- status: success
-- A metric on an entity no join touches, bucketed by its own DATE column.
SELECT
  date_trunc('month', "campaign_spend"."spent_on") AS "campaign_spend.spent_on__month",
  "campaign_spend"."channel" AS "campaign_spend.channel",
  sum("campaign_spend"."cost") AS "campaign_cost"
FROM
  "main"."campaign_spend" AS "campaign_spend"
GROUP BY
  date_trunc('month', "campaign_spend"."spent_on"), "campaign_spend"."channel" ORDER BY "campaign_spend.spent_on__month" ASC NULLS LAST, "campaign_spend.channel" ASC NULLS LAST LIMIT 1000
-- params: []
