-- The query_sql adversarial corpus (issue 17), run by tests/it/provider.rs
-- through the query_sql tool on DuckDB and on PostgreSQL (the demo
-- warehouse exported there). Each case starts with a line
--   -- case: EXPECT [duckdb|postgres] [: why]
-- and runs to the next one. `{s}` is the warehouse schema (main on DuckDB).
-- EXPECT: ok (answered), pii (refused pii_blocked), policy (refused
-- policy_blocked), invalid (INVALID_INPUT error), fails (the engine
-- rejected it: nothing ran). Adding a case is adding lines here.
--
-- The demo policy blocks contact (customers.full_name, email, phone) and
-- the floor blocks credential (customers.password_hash); date_of_birth
-- (demographic_protected) and addresses.street/postal_code (location) are
-- PII that may only be counted.

-- case: ok : plain aggregates over clean columns
SELECT status, count(*) AS n FROM {s}.orders GROUP BY status ORDER BY status
-- case: ok
SELECT c.country, sum(o.amount) AS revenue FROM {s}.orders o JOIN {s}.customers c ON c.id = o.customer_id GROUP BY c.country ORDER BY 1
-- case: ok : PII may be counted
SELECT count(DISTINCT date_of_birth) AS birthdays FROM {s}.customers
-- case: ok
SELECT count(a.postal_code) FROM {s}.addresses a
-- case: ok : a CTE over clean columns read through *
WITH t AS (SELECT segment, count(*) AS n FROM {s}.customers GROUP BY segment) SELECT * FROM t ORDER BY n DESC
-- case: ok
SELECT * FROM {s}.orders ORDER BY id LIMIT 5
-- case: ok
SELECT * FROM {s}.products
-- case: ok
SELECT x.* FROM (SELECT country, segment FROM {s}.customers) x LIMIT 3
-- case: ok
SELECT status FROM {s}.orders UNION ALL SELECT country FROM {s}.customers
-- case: ok
SELECT id, row_number() OVER (PARTITION BY segment ORDER BY signup_date) AS r FROM {s}.customers LIMIT 10
-- case: ok
SELECT s.name, count(*) FROM {s}.stores s JOIN {s}.orders o ON o.store_id = s.id GROUP BY s.name
-- case: ok
SELECT (SELECT count(*) FROM {s}.customers) AS customers, (SELECT count(*) FROM {s}.orders) AS orders
-- case: ok
SELECT 1 AS one
-- case: ok
SELECT date_trunc('month', ordered_at) AS m, sum(amount) FROM {s}.orders GROUP BY 1 ORDER BY 1
-- case: ok
SELECT a.city, count(*) FROM {s}.addresses a GROUP BY a.city
-- case: ok
SELECT count(*) FILTER (WHERE is_gift) FROM {s}.orders
-- case: ok
SELECT o.id FROM {s}.orders o WHERE EXISTS (SELECT 1 FROM {s}.order_items i WHERE i.order_id = o.id AND i.quantity > 3) LIMIT 5
-- case: pii : email is blocked: not even counted
SELECT count(email) AS with_email FROM {s}.customers WHERE country IS NOT NULL AND 1 = 0
-- case: ok : COUNT(col) of a guarded column is allowed, of a blocked one (above) not
SELECT count(date_of_birth) FROM {s}.customers
-- case: ok
SELECT * FROM {s}.regions r WHERE r.code IN (SELECT code FROM {s}.regions) ORDER BY r.id
-- case: ok
SELECT segment, count(DISTINCT a.postal_code) FROM {s}.customers c JOIN {s}.addresses a ON a.customer_id = c.id GROUP BY segment
-- case: ok
SELECT brand, max(list_price) FROM {s}.products GROUP BY brand
-- case: ok
SELECT coalesce(store_id, -1) AS store, count(*) FROM {s}.orders GROUP BY 1
-- case: ok
SELECT CASE WHEN amount > 100 THEN 'big' ELSE 'small' END AS size, count(*) FROM {s}.orders GROUP BY 1
-- case: ok : a customer's country is not PII in the demo policy
SELECT DISTINCT country FROM {s}.customers
-- case: ok
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT sum(i) FROM n

-- Blocked columns, directly and through every construct.
-- case: pii
SELECT email FROM {s}.customers
-- case: pii
SELECT full_name FROM {s}.customers
-- case: pii
SELECT phone FROM {s}.customers LIMIT 1
-- case: pii : credential, the catastrophic floor
SELECT password_hash FROM {s}.customers
-- case: pii
SELECT c.email FROM {s}.customers c
-- case: pii
SELECT {s}.customers.email FROM {s}.customers
-- case: pii
SELECT "email" FROM {s}.customers
-- case: pii : quoted, other case (DuckDB folds; conservative everywhere)
SELECT "EMAIL" FROM {s}.customers
-- case: pii
SELECT EMAIL FROM {s}.customers
-- case: pii
SELECT * FROM {s}.customers
-- case: pii
SELECT c.* FROM {s}.customers c
-- case: pii
SELECT c.*, o.amount FROM {s}.customers c JOIN {s}.orders o ON o.customer_id = c.id
-- case: pii
SELECT o.*, c.* FROM {s}.orders o JOIN {s}.customers c ON o.customer_id = c.id
-- case: pii duckdb : EXCLUDE that leaves a blocked column
SELECT * EXCLUDE (email) FROM {s}.customers
-- case: pii duckdb : EXCLUDE that leaves a guarded column
SELECT * EXCLUDE (full_name, email, phone, password_hash) FROM {s}.customers
-- case: pii
SELECT count(email) FROM {s}.customers
-- case: pii
SELECT count(DISTINCT phone) FROM {s}.customers
-- case: pii
SELECT lower(email) FROM {s}.customers
-- case: pii
SELECT length(password_hash) FROM {s}.customers
-- case: pii
SELECT substr(phone, 1, 3) AS prefix, count(*) FROM {s}.customers GROUP BY 1
-- case: pii
SELECT min(email) FROM {s}.customers
-- case: pii
SELECT max(full_name) FROM {s}.customers
-- case: pii
SELECT string_agg(email, ',') FROM {s}.customers
-- case: pii
SELECT count(*) FROM {s}.customers WHERE email = 'a@example.com'
-- case: pii
SELECT count(*) FROM {s}.customers WHERE email LIKE 'a%'
-- case: pii
SELECT count(*) FROM {s}.customers WHERE password_hash > 'm'
-- case: pii
SELECT segment FROM {s}.customers GROUP BY segment, email
-- case: pii
SELECT segment FROM {s}.customers GROUP BY segment HAVING max(email) > 'a'
-- case: pii
SELECT id FROM {s}.customers ORDER BY email LIMIT 1
-- case: pii
SELECT row_number() OVER (PARTITION BY email) FROM {s}.customers
-- case: pii
SELECT row_number() OVER (ORDER BY phone) FROM {s}.customers
-- case: pii
SELECT count(email) FILTER (WHERE email LIKE '%x%') FROM {s}.customers
-- case: pii
WITH t AS (SELECT email AS e FROM {s}.customers) SELECT e FROM t
-- case: pii
WITH t AS (SELECT * FROM {s}.customers) SELECT count(*) FROM t
-- case: pii
WITH t AS (SELECT id, email FROM {s}.customers) SELECT t.id FROM t
-- case: pii
WITH a AS (SELECT email AS x FROM {s}.customers), b AS (SELECT x AS y FROM a) SELECT y FROM b
-- case: pii
SELECT e FROM (SELECT lower(email) AS e FROM {s}.customers) s
-- case: pii
SELECT * FROM (SELECT * FROM {s}.customers) s
-- case: pii
SELECT * FROM (SELECT * FROM (SELECT full_name FROM {s}.customers) a) b
-- case: pii
SELECT status FROM {s}.orders UNION SELECT email FROM {s}.customers
-- case: pii
SELECT status FROM {s}.orders UNION ALL SELECT phone FROM {s}.customers
-- case: pii
SELECT country FROM {s}.customers INTERSECT SELECT full_name FROM {s}.customers
-- case: pii
SELECT country FROM {s}.customers EXCEPT SELECT email FROM {s}.customers
-- case: pii
SELECT (SELECT max(email) FROM {s}.customers) AS x
-- case: pii
SELECT o.id, (SELECT c.email FROM {s}.customers c WHERE c.id = o.customer_id) FROM {s}.orders o
-- case: pii
SELECT o.id FROM {s}.orders o WHERE o.customer_id IN (SELECT id FROM {s}.customers WHERE email LIKE 'a%')
-- case: pii
SELECT o.id FROM {s}.orders o WHERE EXISTS (SELECT 1 FROM {s}.customers c WHERE c.id = o.customer_id AND c.phone LIKE '+1%')
-- case: pii
SELECT * FROM {s}.orders o, LATERAL (SELECT email FROM {s}.customers c WHERE c.id = o.customer_id) l
-- case: pii
SELECT o.id FROM {s}.orders o JOIN {s}.customers c ON c.id = o.customer_id AND c.email LIKE 'a%'
-- case: pii
SELECT 1 FROM {s}.customers a JOIN {s}.customers b USING (email)
-- case: pii
SELECT 1 FROM {s}.customers a JOIN {s}.customers b ON a.email = b.email
-- case: pii : a NATURAL join matches on every common name
SELECT count(*) FROM {s}.customers NATURAL JOIN {s}.customers
-- case: pii
SELECT coalesce(email, 'none') FROM {s}.customers
-- case: pii
SELECT CASE WHEN email LIKE 'a%' THEN 1 ELSE 0 END FROM {s}.customers
-- case: pii
SELECT count(CASE WHEN email LIKE 'a%' THEN 1 END) FROM {s}.customers
-- case: pii
SELECT sum(length(email)) FROM {s}.customers
-- case: pii
SELECT md5(email) FROM {s}.customers
-- case: pii
SELECT cast(email AS VARCHAR) FROM {s}.customers
-- case: pii
SELECT email::VARCHAR FROM {s}.customers
-- case: pii
SELECT email || '' FROM {s}.customers
-- case: pii
SELECT upper(c.full_name) AS n FROM {s}.customers AS c
-- case: pii
SELECT id FROM {s}.customers WHERE full_name IS NOT NULL ORDER BY id LIMIT 1
-- case: pii
SELECT count(*) FROM {s}.customers GROUP BY phone HAVING count(*) > 1
-- case: pii
SELECT DISTINCT email FROM {s}.customers
-- case: pii
SELECT first_value(email) OVER (ORDER BY id) FROM {s}.customers
-- case: pii
SELECT lag(phone) OVER (ORDER BY id) FROM {s}.customers
-- case: pii : guarded (demographic_protected): grouping is listing
SELECT date_of_birth, count(*) FROM {s}.customers GROUP BY date_of_birth
-- case: pii
SELECT min(date_of_birth) FROM {s}.customers
-- case: pii
SELECT extract(year FROM date_of_birth) AS y, count(*) FROM {s}.customers GROUP BY 1
-- case: pii
SELECT count(*) FROM {s}.customers WHERE date_of_birth > DATE '2000-01-01'
-- case: pii
SELECT street FROM {s}.addresses
-- case: pii
SELECT postal_code, count(*) FROM {s}.addresses GROUP BY postal_code
-- case: pii
SELECT * FROM {s}.addresses
-- case: pii
SELECT a.* FROM {s}.orders o JOIN {s}.addresses a ON a.id = o.shipping_address_id
-- case: pii : column alias list renames a blocked column
SELECT e FROM {s}.customers AS c(i, n, e)
-- case: pii
SELECT count(*) FROM (SELECT * FROM {s}.customers) t
-- case: pii duckdb : implicit SELECT * (DuckDB's FROM-first)
FROM {s}.customers
-- case: pii duckdb : whole-row reference
SELECT c FROM {s}.customers c
-- case: pii duckdb
SELECT to_json(c) FROM {s}.customers c
-- case: pii duckdb
SELECT struct_pack(*) FROM {s}.customers
-- case: pii duckdb
SELECT COLUMNS('.*') FROM {s}.customers
-- case: pii duckdb
SELECT COLUMNS(*) FROM {s}.customers
-- case: pii duckdb
SELECT * REPLACE (lower(email) AS email) FROM {s}.customers
-- case: pii duckdb
SELECT list(email) FROM {s}.customers
-- case: pii duckdb
SELECT array_agg(phone) FROM {s}.customers
-- case: pii duckdb
SELECT any_value(email) FROM {s}.customers
-- case: pii duckdb
SELECT arg_max(email, id) FROM {s}.customers
-- case: pii duckdb
SELECT histogram(date_of_birth) FROM {s}.customers
-- case: pii duckdb
SELECT * FROM {s}.customers SAMPLE 1
-- case: pii duckdb
SELECT id FROM {s}.customers QUALIFY row_number() OVER (ORDER BY email) = 1
-- case: invalid duckdb : sqlparser does not parse POSITIONAL JOIN: refused before anything runs
SELECT * FROM {s}.customers c POSITIONAL JOIN {s}.orders o
-- case: pii duckdb
SELECT count(*) FROM {s}.customers GROUP BY ALL HAVING max(email) IS NOT NULL
-- case: pii postgres : whole-row reference
SELECT c FROM {s}.customers c
-- case: pii postgres
SELECT row_to_json(c) FROM {s}.customers c
-- case: pii postgres
SELECT row_to_json(c.*) FROM {s}.customers c
-- case: pii postgres
SELECT to_jsonb(c) FROM {s}.customers c
-- case: pii postgres
SELECT (c).email FROM {s}.customers c
-- case: pii postgres
SELECT json_agg(email) FROM {s}.customers
-- case: pii postgres
SELECT array_agg(phone) FROM {s}.customers
-- case: pii postgres
SELECT DISTINCT ON (email) id FROM {s}.customers
-- case: pii postgres
SELECT string_agg(full_name, ';' ORDER BY id) FROM {s}.customers
-- case: invalid postgres : the EXCLUDE and FROM-first forms are DuckDB's
SELECT * EXCLUDE (email) FROM {s}.customers
-- case: invalid postgres
FROM {s}.customers
-- case: pii : a CTE named like a real table does not hide the table read outside its scope
SELECT * FROM {s}.customers WHERE EXISTS (WITH customers AS (SELECT 1 AS y) SELECT 1 FROM customers)
-- case: pii
WITH customers AS (SELECT 1 AS x) SELECT * FROM {s}.customers
-- case: pii : comments do not hide anything (what runs is the parse, rendered again)
SELECT /* country */ email FROM {s}.customers
-- case: pii
SELECT country -- , email
, email FROM {s}.customers
-- case: pii
SELECT
  email
FROM
  {s}.customers

-- Statements that are not one read-only query.
-- case: invalid
SELECT 1; SELECT 2
-- case: invalid
SELECT 1; DROP TABLE {s}.orders
-- case: invalid
SELECT * FROM {s}.orders; DELETE FROM {s}.orders
-- case: policy
DELETE FROM {s}.orders
-- case: policy
UPDATE {s}.orders SET amount = 0
-- case: policy
INSERT INTO {s}.regions VALUES (99, 'x', 'x')
-- case: policy
DROP TABLE {s}.orders
-- case: policy
TRUNCATE {s}.orders
-- case: policy
CREATE TABLE {s}.leak AS SELECT * FROM {s}.customers
-- case: policy
CREATE VIEW {s}.v AS SELECT 1
-- case: policy
ALTER TABLE {s}.orders ADD COLUMN x INT
-- case: policy
SELECT * INTO {s}.copy FROM {s}.orders
-- case: policy
COPY {s}.orders TO '/tmp/orders.csv'
-- case: policy
COPY (SELECT * FROM {s}.customers) TO '/tmp/c.csv'
-- case: policy
ATTACH '/tmp/other.duckdb' AS other
-- case: policy duckdb
INSTALL httpfs
-- case: policy duckdb
LOAD httpfs
-- case: policy duckdb
PRAGMA database_list
-- case: policy
SET search_path = 'x'
-- case: invalid duckdb : does not parse, so nothing runs
EXPORT DATABASE '/tmp/dump'
-- case: policy
BEGIN
-- case: policy
GRANT SELECT ON {s}.orders TO PUBLIC
-- case: policy postgres
SELECT * FROM {s}.orders FOR UPDATE
-- case: policy postgres
WITH d AS (DELETE FROM {s}.orders RETURNING id) SELECT count(*) FROM d
-- case: invalid postgres : does not parse in the postgres dialect, so nothing runs
TABLE {s}.customers
-- case: policy
CALL pg_sleep(1)
-- case: policy duckdb
DETACH other
-- case: invalid duckdb : does not parse, so nothing runs
CHECKPOINT
-- case: policy
VACUUM

-- Files, network, other databases and server state.
-- case: policy duckdb
SELECT * FROM read_csv('/etc/passwd')
-- case: policy duckdb
SELECT * FROM read_csv_auto('/etc/passwd')
-- case: policy duckdb
SELECT * FROM read_parquet('s3://bucket/x.parquet')
-- case: policy duckdb
SELECT * FROM read_json('https://example.com/x.json')
-- case: policy duckdb
SELECT * FROM read_text('/etc/hostname')
-- case: policy duckdb
SELECT * FROM read_blob('/etc/hostname')
-- case: policy duckdb
SELECT * FROM '/etc/passwd'
-- case: policy duckdb
SELECT * FROM 'data.csv'
-- case: policy duckdb
SELECT * FROM glob('/root/*')
-- case: policy duckdb
SELECT * FROM {s}.orders o JOIN read_csv('/etc/passwd') p ON true
-- case: policy duckdb
SELECT (SELECT count(*) FROM read_csv('/etc/passwd')) AS n
-- case: policy duckdb
WITH x AS (SELECT * FROM read_parquet('a.parquet')) SELECT * FROM x
-- case: policy duckdb
SELECT getenv('HOME')
-- case: policy duckdb
SELECT current_setting('home_directory')
-- case: policy duckdb
SELECT * FROM sqlite_scan('/tmp/x.db', 't')
-- case: policy duckdb
SELECT * FROM postgres_scan('host=127.0.0.1', 'public', 't')
-- case: policy duckdb
SELECT * FROM duckdb_settings()
-- case: policy duckdb
SELECT * FROM duckdb_secrets()
-- case: policy duckdb
SELECT * FROM pragma_table_info('customers')
-- case: policy duckdb
SELECT * FROM iceberg_scan('s3://x')
-- case: policy postgres
SELECT pg_read_file('/etc/passwd')
-- case: policy postgres
SELECT pg_read_binary_file('/etc/passwd')
-- case: policy postgres
SELECT pg_ls_dir('.')
-- case: policy postgres
SELECT lo_import('/etc/passwd')
-- case: policy postgres
SELECT * FROM dblink('host=evil', 'select 1') AS t(x int)
-- case: policy postgres
SELECT set_config('search_path', 'x', false)
-- case: policy postgres
SELECT current_setting('data_directory')
-- case: policy postgres
SELECT pg_terminate_backend(1)
-- case: policy postgres
SELECT * FROM generate_series(1, 3) g, pg_ls_dir('.') d
-- case: policy postgres
SELECT * FROM {s}.orders WHERE 1 = (SELECT count(*) FROM pg_read_file('/etc/passwd'))

-- System catalogs and tables outside the catalog.
-- case: invalid
SELECT * FROM pg_stats
-- case: invalid
SELECT * FROM pg_catalog.pg_statistic
-- case: invalid
SELECT * FROM information_schema.columns
-- case: invalid
SELECT * FROM information_schema.tables
-- case: invalid duckdb
SELECT * FROM duckdb_tables
-- case: invalid
SELECT * FROM nonexistent_table
-- case: invalid
SELECT * FROM {s}.orders o JOIN pg_user u ON true
-- case: invalid
SELECT email FROM other_schema.customers

-- Quote, comment and look-alike tricks: nothing runs that was not checked.
-- case: fails : Cyrillic ѕ in the name is another column, which does not exist
SELECT ѕsn FROM {s}.customers
-- case: fails
SELECT еmail FROM {s}.customers
-- case: invalid : an unterminated comment does not parse
SELECT country FROM {s}.customers /* ; SELECT email FROM {s}.customers
-- case: invalid
SELECT 'abc
-- case: invalid
SELECT country FROM {s}.customers WHERE 1 = 1 ; ; SELECT email FROM {s}.customers
-- case: pii
SELECT "e""mail", email FROM {s}.customers
-- case: invalid

-- case: invalid
   
-- case: invalid
-- only a comment

-- More constructs that reach a PII column without naming it in the select list.
-- case: pii
SELECT row_number() OVER w FROM {s}.customers WINDOW w AS (ORDER BY email)
-- case: pii
SELECT count(*) FROM {s}.customers GROUP BY ROLLUP (segment, email)
-- case: pii
SELECT email FROM {s}.customers email
-- case: pii
SELECT * FROM {s}."Customers"
-- case: pii
SELECT customers.* FROM {s}.customers
-- case: pii
SELECT {s}.customers.* FROM {s}.customers
-- case: pii
SELECT count(*) FROM {s}.customers WHERE (email, 1) = ('x', 1)
-- case: pii
SELECT count(date_of_birth) FILTER (WHERE date_of_birth > DATE '2000-01-01') FROM {s}.customers
-- case: pii
SELECT count(DISTINCT (date_of_birth, id)) FROM {s}.customers
-- case: pii
SELECT 1 FROM {s}.customers WHERE email IN (SELECT 'x')
-- case: pii
SELECT * FROM {s}.customers c1, {s}.customers c2
-- case: pii
SELECT to_json(t) FROM (SELECT * FROM {s}.customers) t
-- case: pii duckdb
SELECT {'a': email} FROM {s}.customers
-- case: pii duckdb
SELECT c.* EXCLUDE (email) FROM {s}.customers c
-- case: pii duckdb
SELECT list_transform([1], x -> x || phone) FROM {s}.customers
-- case: pii duckdb
SELECT * FROM UNNEST((SELECT list(email) FROM {s}.customers))
-- case: pii postgres
SELECT * FROM {s}.customers TABLESAMPLE SYSTEM (10)
-- case: pii postgres
SELECT * FROM unnest((SELECT array_agg(email) FROM {s}.customers))
-- case: policy
EXPLAIN SELECT email FROM {s}.customers
-- case: policy
EXPLAIN ANALYZE SELECT count(*) FROM {s}.orders
-- case: policy duckdb
DESCRIBE {s}.customers
-- case: invalid duckdb : does not parse, so nothing runs
SUMMARIZE {s}.customers
-- case: policy postgres
SHOW search_path
-- case: policy postgres
LISTEN x
-- case: policy postgres
PREPARE q AS SELECT email FROM {s}.customers
-- case: invalid postgres : does not parse, so nothing runs
DO $$ BEGIN PERFORM 1; END $$
