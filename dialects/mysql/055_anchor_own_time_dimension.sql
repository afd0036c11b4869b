-- case: 055_anchor_own_time_dimension
-- dialect: mysql
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT
  CAST(CAST(MAKEDATE(YEAR(`store`.`opened_on`), 1) AS DATETIME) AS DATE) AS `store.opened_on__year`,
  count(`store`.`id`) AS `store_count`
FROM
  `main`.`stores` AS `store`
GROUP BY
  CAST(CAST(MAKEDATE(YEAR(`store`.`opened_on`), 1) AS DATETIME) AS DATE) ORDER BY CAST(CAST(MAKEDATE(YEAR(`store`.`opened_on`), 1) AS DATETIME) AS DATE) IS NULL ASC, `store.opened_on__year` ASC LIMIT 1000
-- params: []
