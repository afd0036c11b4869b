-- case: 059_other_date_column_at_a_grain
-- dialect: databricks
-- status: success
-- A date column that is not the metric's time dimension, at a grain, is a group-by key of its own beside the time bucket (a DATE bucket cast back to DATE where the engine widens it).
SELECT
  date_trunc('quarter', `order`.`ordered_at`) AS `order.ordered_at__quarter`,
  CAST(date_trunc('year', `customer`.`signup_date`) AS DATE) AS `customer.signup_date__year`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  date_trunc('quarter', `order`.`ordered_at`), CAST(date_trunc('year', `customer`.`signup_date`) AS DATE) ORDER BY `order.ordered_at__quarter` ASC NULLS LAST, `customer.signup_date__year` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
