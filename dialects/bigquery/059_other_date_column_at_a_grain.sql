-- case: 059_other_date_column_at_a_grain
-- dialect: bigquery
-- status: success
-- A date column that is not the metric's time dimension, at a grain, is a group-by key of its own beside the time bucket (a DATE bucket cast back to DATE where the engine widens it).
SELECT
  TIMESTAMP_TRUNC(`order`.`ordered_at`, QUARTER) AS `order.ordered_at__quarter`,
  DATE_TRUNC(`customer`.`signup_date`, YEAR) AS `customer.signup_date__year`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  TIMESTAMP_TRUNC(`order`.`ordered_at`, QUARTER), DATE_TRUNC(`customer`.`signup_date`, YEAR) ORDER BY `order.ordered_at__quarter` ASC NULLS LAST, `customer.signup_date__year` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
