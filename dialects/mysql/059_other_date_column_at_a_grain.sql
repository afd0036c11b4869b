-- case: 059_other_date_column_at_a_grain
-- dialect: mysql
-- status: success
-- A date column that is not the metric's time dimension, at a grain, is a group-by key of its own beside the time bucket (a DATE bucket cast back to DATE where the engine widens it).
SELECT
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME) AS `order.ordered_at__quarter`,
  CAST(CAST(MAKEDATE(YEAR(`customer`.`signup_date`), 1) AS DATETIME) AS DATE) AS `customer.signup_date__year`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME), CAST(CAST(MAKEDATE(YEAR(`customer`.`signup_date`), 1) AS DATETIME) AS DATE) ORDER BY CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME) IS NULL ASC, `order.ordered_at__quarter` ASC, CAST(CAST(MAKEDATE(YEAR(`customer`.`signup_date`), 1) AS DATETIME) AS DATE) IS NULL ASC, `customer.signup_date__year` ASC LIMIT 1000
-- params: ["cancelled"]
