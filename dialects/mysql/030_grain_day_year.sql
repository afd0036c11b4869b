-- case: 030_grain_day_year
-- dialect: mysql
-- status: success
-- Day buckets, then year buckets with a status group.
SELECT
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) AS DATETIME) AS `order.ordered_at__year`,
  `order`.`status` AS `order.status`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) AS DATETIME), `order`.`status` ORDER BY `order.ordered_at__year` IS NULL ASC, `order.ordered_at__year` ASC, `order.status` IS NULL ASC, `order.status` ASC LIMIT 1000
-- params: ["cancelled"]
