-- case: 031_date_range_filter
-- dialect: mysql
-- status: success
-- A half-open date range on a TIMESTAMP column; dates are bound and cast.
SELECT
  CAST(DATE(`order`.`ordered_at`) AS DATETIME) AS `order.ordered_at__day`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?) AND `order`.`ordered_at` >= CAST(? AS DATETIME) AND `order`.`ordered_at` < CAST(? AS DATETIME)
GROUP BY
  CAST(DATE(`order`.`ordered_at`) AS DATETIME) ORDER BY `order.ordered_at__day` IS NULL ASC, `order.ordered_at__day` ASC LIMIT 1000
-- params: ["cancelled","2025-01-01 00:00:00","2025-02-01 00:00:00"]
