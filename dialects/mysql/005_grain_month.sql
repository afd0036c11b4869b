-- case: 005_grain_month
-- dialect: mysql
-- status: success
-- Month buckets on the metric time dimension (a TIMESTAMP).
SELECT
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `order.ordered_at__month`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) ORDER BY `order.ordered_at__month` IS NULL ASC, `order.ordered_at__month` ASC LIMIT 1000
-- params: ["cancelled"]
