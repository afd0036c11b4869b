select 1 as order_id, 1 as customer_id, 10.0 as amount, current_date as ordered_at
