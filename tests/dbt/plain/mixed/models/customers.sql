select 1 as customer_id, 'NZ' as country
