-- case: 020_island_metric
-- dialect: mysql
-- status: success
-- A metric on an entity no join touches, bucketed by its own DATE column.
SELECT
  CAST(CAST(DATE_FORMAT(`campaign_spend`.`spent_on`, '%Y-%m-01') AS DATETIME) AS DATE) AS `campaign_spend.spent_on__month`,
  `campaign_spend`.`channel` AS `campaign_spend.channel`,
  sum(`campaign_spend`.`cost`) AS `campaign_cost`
FROM
  `main`.`campaign_spend` AS `campaign_spend`
GROUP BY
  CAST(CAST(DATE_FORMAT(`campaign_spend`.`spent_on`, '%Y-%m-01') AS DATETIME) AS DATE), `campaign_spend`.`channel` ORDER BY `campaign_spend.spent_on__month` IS NULL ASC, `campaign_spend.spent_on__month` ASC, `campaign_spend.channel` IS NULL ASC, `campaign_spend.channel` ASC LIMIT 1000
-- params: []
