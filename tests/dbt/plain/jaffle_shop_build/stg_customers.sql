create view main.stg_customers as
select id as customer_id, first_name, last_name
from main.raw_customers
