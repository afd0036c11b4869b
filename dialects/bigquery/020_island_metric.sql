-- case: 020_island_metric
-- dialect: bigquery
-- status: success
-- A metric on an entity no join touches, bucketed by its own DATE column.
SELECT
  DATE_TRUNC(`campaign_spend`.`spent_on`, MONTH) AS `campaign_spend.spent_on__month`,
  `campaign_spend`.`channel` AS `campaign_spend.channel`,
  sum(`campaign_spend`.`cost`) AS `campaign_cost`
FROM
  `main`.`campaign_spend` AS `campaign_spend`
GROUP BY
  DATE_TRUNC(`campaign_spend`.`spent_on`, MONTH), `campaign_spend`.`channel` ORDER BY `campaign_spend.spent_on__month` ASC NULLS LAST, `campaign_spend.channel` ASC NULLS LAST LIMIT 1000
-- params: []
