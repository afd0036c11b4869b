-- case: 046_derived_offset_window
-- dialect: mysql
-- status: success
-- Month-over-month growth; the offset input's rows are moved a month later, time filters read the moved time.
WITH `sb_m0` AS (
  SELECT
    CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` NOT IN (?) AND `order`.`ordered_at` >= CAST(? AS DATETIME)
  GROUP BY
    CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME)
), `sb_m1` AS (
  SELECT
    CAST(DATE_FORMAT(`order`.`ordered_at` + INTERVAL 1 MONTH, '%Y-%m-01') AS DATETIME) AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` NOT IN (?) AND (`order`.`ordered_at` + INTERVAL 1 MONTH) >= CAST(? AS DATETIME)
  GROUP BY
    CAST(DATE_FORMAT(`order`.`ordered_at` + INTERVAL 1 MONTH, '%Y-%m-01') AS DATETIME)
)
SELECT
  `sb_keys`.`sb_k0` AS `order.ordered_at__month`,
  (CAST((`sb_m0`.`sb_v` - `sb_m1`.`sb_v`) AS DOUBLE) / nullif(`sb_m1`.`sb_v`, 0)) AS `revenue_growth_mom`
FROM
  (
    SELECT
      `sb_m0`.`sb_k0`
    FROM
      `sb_m0`
  ) AS `sb_keys`
  LEFT JOIN `sb_m0` ON `sb_keys`.`sb_k0` <=> `sb_m0`.`sb_k0`
  LEFT JOIN `sb_m1` ON `sb_keys`.`sb_k0` <=> `sb_m1`.`sb_k0` ORDER BY `sb_keys`.`sb_k0` IS NULL ASC, `order.ordered_at__month` ASC LIMIT 1000
-- params: ["cancelled","2024-01-01 00:00:00","cancelled","2024-01-01 00:00:00"]
