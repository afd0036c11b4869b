-- case: 020_island_metric
-- dialect: mssql
-- status: success
-- A metric on an entity no join touches, bucketed by its own DATE column.
SELECT TOP (1000)
  DATETRUNC(month, [campaign_spend].[spent_on]) AS [campaign_spend.spent_on__month],
  [campaign_spend].[channel] AS [campaign_spend.channel],
  sum([campaign_spend].[cost]) AS [campaign_cost]
FROM
  [main].[campaign_spend] AS [campaign_spend]
GROUP BY
  DATETRUNC(month, [campaign_spend].[spent_on]), [campaign_spend].[channel] ORDER BY CASE WHEN DATETRUNC(month, [campaign_spend].[spent_on]) IS NULL THEN 1 ELSE 0 END ASC, [campaign_spend.spent_on__month] ASC, CASE WHEN [campaign_spend].[channel] IS NULL THEN 1 ELSE 0 END ASC, [campaign_spend.channel] ASC
-- params: []
