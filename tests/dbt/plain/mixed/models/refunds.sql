select 1 as refund_id, 1 as order_id, 2.5 as amount
