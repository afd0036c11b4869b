-- case: 002_group_by_anchor_column
-- dialect: bigquery
-- status: success
-- Group by a column of the anchor; no join.
SELECT
  `order`.`status` AS `order.status`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  `order`.`status` ORDER BY `order.status` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
