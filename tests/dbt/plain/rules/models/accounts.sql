select * from {{ source('raw', 'accounts') }}
