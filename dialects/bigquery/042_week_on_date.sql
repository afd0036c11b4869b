-- case: 042_week_on_date
-- dialect: bigquery
-- status: success
-- ISO weeks on a DATE dimension stay DATEs.
SELECT
  DATE_TRUNC(`campaign_spend`.`spent_on`, ISOWEEK) AS `campaign_spend.spent_on__week`,
  sum(`campaign_spend`.`cost`) AS `campaign_cost`
FROM
  `main`.`campaign_spend` AS `campaign_spend`
WHERE
  `campaign_spend`.`spent_on` >= CAST(? AS DATE)
GROUP BY
  DATE_TRUNC(`campaign_spend`.`spent_on`, ISOWEEK) ORDER BY `campaign_spend.spent_on__week` ASC NULLS LAST LIMIT 1000
-- params: ["2025-06-01"]
