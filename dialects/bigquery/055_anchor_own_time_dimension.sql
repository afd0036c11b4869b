-- case: 055_anchor_own_time_dimension
-- dialect: bigquery
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT
  DATE_TRUNC(`store`.`opened_on`, YEAR) AS `store.opened_on__year`,
  count(`store`.`id`) AS `store_count`
FROM
  `main`.`stores` AS `store`
GROUP BY
  DATE_TRUNC(`store`.`opened_on`, YEAR) ORDER BY `store.opened_on__year` ASC NULLS LAST LIMIT 1000
-- params: []
