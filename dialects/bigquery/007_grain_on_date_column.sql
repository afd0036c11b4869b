-- case: 007_grain_on_date_column
-- dialect: bigquery
-- status: success
-- A DATE time dimension stays DATE after bucketing.
SELECT
  DATE_TRUNC(`customer`.`signup_date`, YEAR) AS `customer.signup_date__year`,
  count(`customer`.`id`) AS `customer_count`
FROM
  `main`.`customers` AS `customer`
GROUP BY
  DATE_TRUNC(`customer`.`signup_date`, YEAR) ORDER BY `customer.signup_date__year` ASC NULLS LAST LIMIT 1000
-- params: []
