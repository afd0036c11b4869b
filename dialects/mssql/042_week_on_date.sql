-- case: 042_week_on_date
-- dialect: mssql
-- status: success
-- ISO weeks on a DATE dimension stay DATEs.
SELECT TOP (1000)
  DATETRUNC(iso_week, [campaign_spend].[spent_on]) AS [campaign_spend.spent_on__week],
  sum([campaign_spend].[cost]) AS [campaign_cost]
FROM
  [main].[campaign_spend] AS [campaign_spend]
WHERE
  [campaign_spend].[spent_on] >= CAST(@p1 AS DATE)
GROUP BY
  DATETRUNC(iso_week, [campaign_spend].[spent_on]) ORDER BY CASE WHEN DATETRUNC(iso_week, [campaign_spend].[spent_on]) IS NULL THEN 1 ELSE 0 END ASC, [campaign_spend.spent_on__week] ASC
-- params: ["2025-06-01"]
