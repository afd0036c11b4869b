-- case: 042_week_on_date
-- dialect: mysql
-- status: success
-- ISO weeks on a DATE dimension stay DATEs.
SELECT
  CAST(CAST(DATE(`campaign_spend`.`spent_on`) - INTERVAL WEEKDAY(`campaign_spend`.`spent_on`) DAY AS DATETIME) AS DATE) AS `campaign_spend.spent_on__week`,
  sum(`campaign_spend`.`cost`) AS `campaign_cost`
FROM
  `main`.`campaign_spend` AS `campaign_spend`
WHERE
  `campaign_spend`.`spent_on` >= CAST(? AS DATE)
GROUP BY
  CAST(CAST(DATE(`campaign_spend`.`spent_on`) - INTERVAL WEEKDAY(`campaign_spend`.`spent_on`) DAY AS DATETIME) AS DATE) ORDER BY `campaign_spend.spent_on__week` IS NULL ASC, `campaign_spend.spent_on__week` ASC LIMIT 1000
-- params: ["2025-06-01"]
