-- case: 022_fan_out_time_and_semi_join
-- dialect: mysql
-- status: success
-- Fan-out group-by with a time bucket and a semi-join filter on the same to-many path.
SELECT
  `sb_rows`.`sb_k0` AS `order.ordered_at__quarter`,
  `sb_rows`.`sb_k1` AS `product.brand`,
  avg(CAST(`sb_rows`.`sb_m` AS DOUBLE)) AS `avg_order_value`
FROM
  (
    SELECT DISTINCT
      `order`.`id` AS `sb_id0`,
      CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME) AS `sb_k0`,
      `product`.`brand` AS `sb_k1`,
      `order`.`amount` AS `sb_m`
    FROM
      `main`.`orders` AS `order`
      LEFT JOIN `main`.`order_items` AS `order_item` ON `order`.`id` = `order_item`.`order_id`
      LEFT JOIN `main`.`products` AS `product` ON `order_item`.`product_id` = `product`.`id`
    WHERE
      `product`.`category` IN (?, ?)
  ) AS `sb_rows`
GROUP BY
  `sb_rows`.`sb_k0`, `sb_rows`.`sb_k1` ORDER BY `sb_rows`.`sb_k0` IS NULL ASC, `order.ordered_at__quarter` ASC, `sb_rows`.`sb_k1` IS NULL ASC, `product.brand` ASC LIMIT 1000
-- params: ["sports","home"]
