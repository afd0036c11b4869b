-- case: 023_two_metrics_two_anchors
-- dialect: bigquery
-- status: success
-- Two metrics from different anchors, each aggregated at its own source, full-outer-joined NULL-safely on the group key.
WITH `sb_m0` AS (
  SELECT
    `customer`.`country` AS `sb_k0`,
    count(`customer`.`id`) AS `sb_v`
  FROM
    `main`.`customers` AS `customer`
  GROUP BY
    `customer`.`country`
), `sb_m1` AS (
  SELECT
    `customer`.`country` AS `sb_k0`,
    count(`order`.`id`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
    LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
  GROUP BY
    `customer`.`country`
)
SELECT
  `sb_keys`.`sb_k0` AS `customer.country`,
  coalesce(`sb_m0`.`sb_v`, 0) AS `customer_count`,
  coalesce(`sb_m1`.`sb_v`, 0) AS `order_count`
FROM
  (
    SELECT
      `sb_m0`.`sb_k0`
    FROM
      `sb_m0`
    UNION
    SELECT
      `sb_m1`.`sb_k0`
    FROM
      `sb_m1`
  ) AS `sb_keys`
  LEFT JOIN `sb_m0` ON (`sb_keys`.`sb_k0` IS NOT DISTINCT FROM `sb_m0`.`sb_k0`)
  LEFT JOIN `sb_m1` ON (`sb_keys`.`sb_k0` IS NOT DISTINCT FROM `sb_m1`.`sb_k0`) ORDER BY `order_count` DESC NULLS LAST, `customer.country` ASC NULLS LAST LIMIT 1000
-- params: []
