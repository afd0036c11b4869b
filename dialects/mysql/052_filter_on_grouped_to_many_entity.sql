-- case: 052_filter_on_grouped_to_many_entity
-- dialect: mysql
-- status: success
-- A filter on the entity a group-by joins over a to-many hop restricts those joined rows (books and toys only), not a semi-join.
SELECT
  `sb_fan`.`sb_bk0` AS `product.category`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  JOIN (SELECT DISTINCT `order_item`.`order_id` AS `sb_j0`, `product`.`category` AS `sb_bk0` FROM `main`.`order_items` AS `order_item` LEFT JOIN `main`.`products` AS `product` ON `order_item`.`product_id` = `product`.`id` WHERE `product`.`category` IN (?, ?)) AS `sb_fan` ON `order`.`id` = `sb_fan`.`sb_j0`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  `sb_fan`.`sb_bk0` ORDER BY `sb_fan`.`sb_bk0` IS NULL ASC, `product.category` ASC LIMIT 1000
-- params: ["books","toys","cancelled"]
