-- case: 022_fan_out_time_and_semi_join
-- dialect: databricks
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
      date_trunc('quarter', `order`.`ordered_at`) AS `sb_k0`,
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
  `sb_rows`.`sb_k0`, `sb_rows`.`sb_k1` ORDER BY `order.ordered_at__quarter` ASC NULLS LAST, `product.brand` ASC NULLS LAST LIMIT 1000
-- params: ["sports","home"]
