-- case: 007_grain_on_date_column
-- dialect: mysql
-- status: success
-- A DATE time dimension stays DATE after bucketing.
SELECT
  CAST(CAST(MAKEDATE(YEAR(`customer`.`signup_date`), 1) AS DATETIME) AS DATE) AS `customer.signup_date__year`,
  count(`customer`.`id`) AS `customer_count`
FROM
  `main`.`customers` AS `customer`
GROUP BY
  CAST(CAST(MAKEDATE(YEAR(`customer`.`signup_date`), 1) AS DATETIME) AS DATE) ORDER BY CAST(CAST(MAKEDATE(YEAR(`customer`.`signup_date`), 1) AS DATETIME) AS DATE) IS NULL ASC, `customer.signup_date__year` ASC LIMIT 1000
-- params: []
