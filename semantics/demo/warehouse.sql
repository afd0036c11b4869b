-- schemabrain demo warehouse: a small shop, built deterministically.
--
-- Run as one batch on an empty DuckDB (1.5) database, e.g.
--   duckdb warehouse.duckdb < warehouse.sql
-- No random(): every value is arithmetic on range() and hash() of integers,
-- so two builds with the same DuckDB version produce identical data.
--
-- Deliberate quirks the semantic model exercises:
--   * ~2% of orders have a NULL store_id (online orders),
--   * ~1% of customers have a NULL country,
--   * a few orders (~0.25%) have a NULL shipping_address_id (digital goods),
--   * orders.amount = sum(order_items.quantity * unit_price) - discount, to the cent,
--   * campaign_spend is an island: no foreign key or join reaches it,
--   * inventory_snapshots is a weekly stock count per store (a balance: it
--     does not add up over time), and ~5% of store-weeks were never counted.

-------------------------------------------------------------------------------
-- Schema
-------------------------------------------------------------------------------

CREATE TABLE main.regions (
    id   INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    code VARCHAR NOT NULL
);

CREATE TABLE main.stores (
    id        INTEGER PRIMARY KEY,
    name      VARCHAR NOT NULL,
    city      VARCHAR NOT NULL,
    region_id INTEGER NOT NULL REFERENCES main.regions (id),
    opened_on DATE    NOT NULL
);

CREATE TABLE main.customers (
    id            INTEGER PRIMARY KEY,
    full_name     VARCHAR NOT NULL,
    email         VARCHAR NOT NULL,
    phone         VARCHAR NOT NULL,
    date_of_birth DATE    NOT NULL,
    password_hash VARCHAR NOT NULL,
    country       VARCHAR,
    segment       VARCHAR NOT NULL,
    signup_date   DATE    NOT NULL,
    region_id     INTEGER NOT NULL REFERENCES main.regions (id)
);

CREATE TABLE main.addresses (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES main.customers (id),
    street      VARCHAR NOT NULL,
    city        VARCHAR NOT NULL,
    postal_code VARCHAR NOT NULL,
    country     VARCHAR NOT NULL
);

CREATE TABLE main.products (
    id         INTEGER PRIMARY KEY,
    name       VARCHAR NOT NULL,
    category   VARCHAR NOT NULL,
    brand      VARCHAR NOT NULL,
    list_price DECIMAL(10, 2) NOT NULL
);

CREATE TABLE main.orders (
    id                  INTEGER PRIMARY KEY,
    customer_id         INTEGER NOT NULL REFERENCES main.customers (id),
    store_id            INTEGER REFERENCES main.stores (id),
    billing_address_id  INTEGER NOT NULL REFERENCES main.addresses (id),
    shipping_address_id INTEGER REFERENCES main.addresses (id),
    status              VARCHAR NOT NULL,
    ordered_at          TIMESTAMP NOT NULL,
    amount              DECIMAL(12, 2) NOT NULL,
    discount            DECIMAL(12, 2) NOT NULL,
    is_gift             BOOLEAN NOT NULL
);

CREATE TABLE main.order_items (
    id         INTEGER PRIMARY KEY,
    order_id   INTEGER NOT NULL REFERENCES main.orders (id),
    product_id INTEGER NOT NULL REFERENCES main.products (id),
    quantity   INTEGER NOT NULL,
    unit_price DECIMAL(10, 2) NOT NULL
);

CREATE TABLE main.campaign_spend (
    id       INTEGER PRIMARY KEY,
    campaign VARCHAR NOT NULL,
    channel  VARCHAR NOT NULL,
    spent_on DATE    NOT NULL,
    cost     DECIMAL(12, 2) NOT NULL
);

CREATE TABLE main.inventory_snapshots (
    store_id      INTEGER NOT NULL REFERENCES main.stores (id),
    snapshot_date DATE    NOT NULL,
    units_on_hand INTEGER NOT NULL,
    PRIMARY KEY (store_id, snapshot_date)
);

-------------------------------------------------------------------------------
-- Lookup lists (temporary; dropped at the end)
-------------------------------------------------------------------------------

CREATE TEMP TABLE lk AS
SELECT
    -- weighted country pool for customers, and the region of each entry
    ['US','US','US','US','CA','GB','GB','GB','IE','DE','DE','AT','CH',
     'FR','FR','ES','PT','IT','NL','BE','AU','JP']                    AS country_pool,
    [1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
     4, 4, 5, 5, 6, 7, 7, 8, 8]                                       AS country_pool_region,
    -- five cities per region, indexed [region_id][k]
    [['New York','Toronto','Chicago','Seattle','Austin'],
     ['London','Manchester','Dublin','Edinburgh','Bristol'],
     ['Berlin','Munich','Vienna','Zurich','Hamburg'],
     ['Paris','Lyon','Marseille','Lille','Bordeaux'],
     ['Madrid','Barcelona','Lisbon','Porto','Valencia'],
     ['Rome','Milan','Naples','Turin','Florence'],
     ['Amsterdam','Rotterdam','Brussels','Antwerp','Utrecht'],
     ['Sydney','Melbourne','Tokyo','Osaka','Auckland']]               AS region_cities,
    ['Alex','Blake','Casey','Dana','Eli','Frankie','Gale','Harper','Indy','Jules',
     'Kai','Lane','Morgan','Noor','Oakley','Parker','Quinn','Riley','Sam','Taylor',
     'Uma','Val','Wren','Xan','Yael','Zion','Ana','Ben','Chloe','Dev',
     'Emma','Femi','Gus','Hana','Ivo','Jana','Kenji','Lea','Malo','Nia']  AS first_names,
    ['Smith','Jones','Garcia','Muller','Rossi','Dubois','Silva','Tanaka','Kowalski','Novak',
     'Jansen','Peeters','Murphy','Schmidt','Bianchi','Martin','Santos','Suzuki','Nielsen','Horvat',
     'Brown','Wilson','Lopez','Weber','Ricci','Bernard','Costa','Sato','Larsen','Kovac',
     'Taylor','Walker','Perez','Wagner','Greco','Petit','Ferreira','Ito','Berg','Popov',
     'Clarke','Hughes','Ramos','Becker','Conti','Moreau','Pereira','Kato','Lund','Ivanov'] AS last_names,
    ['High','Station','Church','Park','Mill','Queen','King','Market','Bridge','River',
     'Oak','Elm','Maple','Harbour','Castle','Garden','Forest','Lake','Hill','Meadow'] AS street_names,
    ['Street','Road','Lane','Avenue','Way','Place']                   AS street_suffixes,
    ['electronics','books','clothing','home','garden','toys','sports','beauty','grocery','office'] AS categories,
    [['Headphones','Charger','Speaker','Monitor'],
     ['Novel','Cookbook','Atlas','Biography'],
     ['Jacket','T-Shirt','Jeans','Scarf'],
     ['Lamp','Cushion','Kettle','Rug'],
     ['Hose','Planter','Shears','Seed Kit'],
     ['Puzzle','Robot','Blocks','Plush Bear'],
     ['Yoga Mat','Football','Racket','Bottle'],
     ['Shampoo','Lotion','Perfume','Lip Balm'],
     ['Coffee','Olive Oil','Tea','Chocolate'],
     ['Notebook','Pen Set','Stapler','Desk Tray']]                    AS category_nouns,
    ['Acme','Northwind','Globex','Initech','Umbrella','Stark','Wayne','Tyrell',
     'Soylent','Hooli','Vandelay','Oceanic']                          AS brands,
    ['Classic','Compact','Deluxe','Eco','Pro','Smart','Travel','Vintage'] AS adjectives;

-------------------------------------------------------------------------------
-- regions (8) and stores (40: five per region)
-------------------------------------------------------------------------------

INSERT INTO main.regions VALUES
    (1, 'North America',  'NA'),
    (2, 'British Isles',  'BI'),
    (3, 'Central Europe', 'CE'),
    (4, 'France',         'FR'),
    (5, 'Iberia',         'IB'),
    (6, 'Italy',          'IT'),
    (7, 'Benelux',        'BX'),
    (8, 'Asia Pacific',   'AP');

INSERT INTO main.stores
SELECT
    i::INTEGER                                                        AS id,
    'Store ' || lpad(i::VARCHAR, 2, '0') || ' '
        || lk.region_cities[((i - 1) % 8 + 1)::INTEGER][((i - 1) // 8 + 1)::INTEGER] AS name,
    lk.region_cities[((i - 1) % 8 + 1)::INTEGER][((i - 1) // 8 + 1)::INTEGER]        AS city,
    ((i - 1) % 8 + 1)::INTEGER                                        AS region_id,
    DATE '2015-01-01' + (hash(i * 7919 + 13) % 2900)::INTEGER         AS opened_on
FROM range(1, 41) t(i), lk
ORDER BY i;

-------------------------------------------------------------------------------
-- customers (20,000)
-------------------------------------------------------------------------------

INSERT INTO main.customers
WITH base AS (
    SELECT
        i::INTEGER                                       AS id,
        (hash(i * 7919 + 13)   % 40)::INTEGER + 1        AS fi,
        (hash(i * 104729 + 7)  % 50)::INTEGER + 1        AS li,
        (hash(i * 31 + 101)    % 100)::INTEGER           AS null_bucket,
        (hash(i * 131 + 17)    % 22)::INTEGER + 1        AS ci,
        (hash(i * 257 + 3)     % 100)::INTEGER           AS seg_bucket,
        (hash(i * 523 + 41)    % 10000000)::INTEGER      AS phone_no,
        (hash(i * 613 + 29)    % 20000)::INTEGER         AS dob_days,
        (hash(i * 877 + 11)    % 2192)::INTEGER          AS signup_days,
        (hash(i * 991 + 5)     % 8)::INTEGER + 1         AS fallback_region
    FROM range(1, 20001) t(i)
)
SELECT
    b.id,
    lk.first_names[b.fi] || ' ' || lk.last_names[b.li]                      AS full_name,
    lower(lk.first_names[b.fi]) || '.' || lower(lk.last_names[b.li])
        || b.id::VARCHAR || '@example.com'                                   AS email,
    '+1-555-' || lpad(b.phone_no::VARCHAR, 7, '0')                           AS phone,
    DATE '1950-01-01' + b.dob_days                                           AS date_of_birth,
    '$md5$' || md5('demo-password-' || b.id::VARCHAR)                        AS password_hash,
    CASE WHEN b.null_bucket = 0 THEN NULL ELSE lk.country_pool[b.ci] END     AS country,
    CASE WHEN b.seg_bucket < 70 THEN 'consumer'
         WHEN b.seg_bucket < 92 THEN 'small_business'
         ELSE 'enterprise' END                                               AS segment,
    DATE '2020-01-01' + b.signup_days                                        AS signup_date,
    CASE WHEN b.null_bucket = 0 THEN b.fallback_region
         ELSE lk.country_pool_region[b.ci] END                               AS region_id
FROM base b, lk
ORDER BY b.id;

-------------------------------------------------------------------------------
-- addresses (30,000): 1..20000 are each customer's home address,
-- 20001..30000 are extra addresses of hash-chosen customers.
-------------------------------------------------------------------------------

INSERT INTO main.addresses
WITH base AS (
    SELECT
        i::INTEGER                                                       AS id,
        CASE WHEN i <= 20000 THEN i
             ELSE (hash(i * 2654435761 + 1) % 20000) + 1 END::INTEGER    AS customer_id,
        (hash(i * 37 + 1)   % 998)::INTEGER + 1                          AS house_no,
        (hash(i * 41 + 3)   % 20)::INTEGER + 1                           AS sn,
        (hash(i * 43 + 5)   % 6)::INTEGER + 1                            AS ss,
        (hash(i * 47 + 7)   % 5)::INTEGER + 1                            AS city_k,
        (hash(i * 53 + 9)   % 99999)::INTEGER + 1                        AS postal,
        (hash(i * 59 + 13)  % 22)::INTEGER + 1                           AS fallback_ci
    FROM range(1, 30001) t(i)
)
SELECT
    b.id,
    b.customer_id,
    b.house_no::VARCHAR || ' ' || lk.street_names[b.sn] || ' ' || lk.street_suffixes[b.ss] AS street,
    lk.region_cities[
        coalesce(lk.country_pool_region[list_position(lk.country_pool, c.country)],
                 lk.country_pool_region[b.fallback_ci])][b.city_k]         AS city,
    lpad(b.postal::VARCHAR, 5, '0')                                       AS postal_code,
    coalesce(c.country, lk.country_pool[b.fallback_ci])                   AS country
FROM base b
JOIN main.customers c ON c.id = b.customer_id
CROSS JOIN lk
ORDER BY b.id;

-------------------------------------------------------------------------------
-- products (500)
-------------------------------------------------------------------------------

INSERT INTO main.products
WITH base AS (
    SELECT
        i::INTEGER                                  AS id,
        (hash(i * 53 + 7)   % 10)::INTEGER + 1      AS cat,
        (hash(i * 59 + 11)  % 12)::INTEGER + 1      AS br,
        (hash(i * 61 + 13)  % 8)::INTEGER + 1       AS adj,
        (hash(i * 67 + 17)  % 4)::INTEGER + 1       AS noun,
        (hash(i * 211 + 5)  % 20000)::INTEGER + 299 AS cents
    FROM range(1, 501) t(i)
)
SELECT
    b.id,
    lk.brands[b.br] || ' ' || lk.adjectives[b.adj] || ' '
        || lk.category_nouns[b.cat][b.noun] || ' ' || upper(substr(md5(b.id::VARCHAR), 1, 4)) AS name,
    lk.categories[b.cat]                                                   AS category,
    lk.brands[b.br]                                                        AS brand,
    CAST(round(b.cents / 100.0, 2) AS DECIMAL(10, 2))                      AS list_price
FROM base b, lk
ORDER BY b.id;

-------------------------------------------------------------------------------
-- orders (120,000) and order_items (1-5 per order)
-------------------------------------------------------------------------------

CREATE TEMP TABLE extra_address AS
SELECT customer_id, min(id)::INTEGER AS address_id
FROM main.addresses
WHERE id > 20000
GROUP BY customer_id;

CREATE TEMP TABLE order_base AS
WITH base AS (
    SELECT
        o::INTEGER                                                        AS id,
        ((hash(o * 2654435761 + 11) % 20000) + 1)::INTEGER                AS customer_id,
        (hash(o * 97 + 3)     % 50)::INTEGER                              AS online_bucket,
        ((hash(o * 193 + 29)  % 40) + 1)::INTEGER                         AS store_pick,
        (hash(o * 389 + 41)   % 100)::INTEGER                             AS status_bucket,
        (hash(o * 7919 + 13)  % 94694400)::BIGINT                         AS second_offset,
        (hash(o * 433 + 23)   % 400)::INTEGER                             AS ship_bucket
    FROM range(1, 120001) t(o)
)
SELECT
    b.id,
    b.customer_id,
    CASE WHEN b.online_bucket = 0 THEN NULL ELSE b.store_pick END         AS store_id,
    b.customer_id                                                         AS billing_address_id,
    CASE WHEN b.ship_bucket = 0 THEN NULL
         WHEN b.ship_bucket % 4 = 1 THEN coalesce(x.address_id, b.customer_id)
         ELSE b.customer_id END                                           AS shipping_address_id,
    CASE WHEN b.status_bucket < 4  THEN 'cancelled'
         WHEN b.status_bucket < 8  THEN 'returned'
         WHEN b.status_bucket < 18 THEN 'placed'
         WHEN b.status_bucket < 38 THEN 'shipped'
         ELSE 'delivered' END                                             AS status,
    TIMESTAMP '2023-01-01 00:00:00' + to_seconds(b.second_offset)         AS ordered_at,
    (hash(b.id * 577 + 19) % 10)::INTEGER                                 AS discount_bucket
FROM base b
LEFT JOIN extra_address x ON x.customer_id = b.customer_id;

CREATE TEMP TABLE item_base AS
WITH lines AS (
    SELECT
        b.id                                                              AS order_id,
        k,
        ((hash(b.id * 1009 + 3) % 500 + k * 97) % 500 + 1)::INTEGER       AS product_id,
        [1, 1, 1, 1, 1, 2, 2, 2, 3, 4][(hash(b.id * 13 + k * 101 + 5) % 10)::INTEGER + 1] AS quantity,
        (hash(b.id * 17 + k * 103 + 7) % 8)::INTEGER                      AS sale_bucket
    FROM order_base b, range(0, 5) r(k)
    WHERE k < (hash(b.id * 31 + 7) % 5) + 1
)
SELECT
    row_number() OVER (ORDER BY l.order_id, l.k)::INTEGER                 AS id,
    l.order_id,
    l.product_id,
    l.quantity::INTEGER                                                   AS quantity,
    CASE WHEN l.sale_bucket = 0 THEN CAST(round(p.list_price * 0.85, 2) AS DECIMAL(10, 2))
         ELSE p.list_price END                                            AS unit_price
FROM lines l
JOIN main.products p ON p.id = l.product_id;

INSERT INTO main.orders
WITH subtotal AS (
    SELECT order_id, sum(quantity * unit_price) AS subtotal
    FROM item_base
    GROUP BY order_id
), priced AS (
    SELECT
        b.*,
        s.subtotal,
        CASE WHEN b.discount_bucket < 2 THEN round(s.subtotal * 0.10, 2)
             WHEN b.discount_bucket = 2 THEN least(5.00, s.subtotal)
             ELSE 0 END                                                   AS discount_raw
    FROM order_base b
    JOIN subtotal s ON s.order_id = b.id
)
SELECT
    id,
    customer_id,
    store_id,
    billing_address_id,
    shipping_address_id,
    status,
    ordered_at,
    CAST(round(subtotal - discount_raw, 2) AS DECIMAL(12, 2))             AS amount,
    CAST(discount_raw AS DECIMAL(12, 2))                                  AS discount,
    hash(CAST(id AS BIGINT) * 104729 + 7) % 13 = 0                        AS is_gift
FROM priced
ORDER BY id;

INSERT INTO main.order_items
SELECT id, order_id, product_id, quantity, unit_price
FROM item_base
ORDER BY id;

-------------------------------------------------------------------------------
-- campaign_spend (island): one row per channel per active day, 2023..2025
-------------------------------------------------------------------------------

INSERT INTO main.campaign_spend
WITH days AS (
    SELECT
        d,
        DATE '2023-01-01' + d::INTEGER AS spent_on,
        ch,
        ci
    FROM range(0, 1096) t(d),
         (VALUES (1, 'search'), (2, 'social'), (3, 'email'), (4, 'display')) c(ci, ch)
    WHERE hash(d * 101 + ci * 7 + 1) % 10 < 8
)
SELECT
    row_number() OVER (ORDER BY spent_on, ch)::INTEGER                    AS id,
    CASE
        WHEN month(spent_on) IN (3, 4, 5)  THEN 'spring_sale_'
        WHEN month(spent_on) IN (6, 7, 8)  THEN 'summer_sale_'
        WHEN month(spent_on) = 9           THEN 'back_to_school_'
        WHEN month(spent_on) = 11          THEN 'black_friday_'
        WHEN month(spent_on) = 12          THEN 'holiday_'
        ELSE 'always_on_'
    END || year(spent_on)::VARCHAR                                        AS campaign,
    ch                                                                    AS channel,
    spent_on,
    CAST(round(((hash(d * 7919 + ci * 13 + 17) % 40000) + 500) / 100.0, 2)
         AS DECIMAL(12, 2))                                               AS cost
FROM days
ORDER BY id;

-------------------------------------------------------------------------------
-- inventory_snapshots: every Monday 2023-01-02 .. 2025-12-29, per store
-------------------------------------------------------------------------------

INSERT INTO main.inventory_snapshots
SELECT
    s::INTEGER                                                            AS store_id,
    DATE '2023-01-02' + (7 * w)::INTEGER                                  AS snapshot_date,
    (200 + hash(s * 31 + w * 7 + 3) % 800)::INTEGER                       AS units_on_hand
FROM range(1, 41) t(s), range(0, 157) u(w)
WHERE hash(s * 1009 + w * 17 + 5) % 20 <> 0
ORDER BY store_id, snapshot_date;

-------------------------------------------------------------------------------
-- Comments (read by catalog introspection)
-------------------------------------------------------------------------------

COMMENT ON TABLE main.regions IS 'Sales regions; stores and customers each belong to one.';
COMMENT ON TABLE main.customers IS 'People who have an account with the shop. Contains PII.';
COMMENT ON COLUMN main.customers.country IS 'ISO 3166-1 alpha-2 country code; NULL when unknown.';
COMMENT ON COLUMN main.customers.region_id IS 'Home region of the customer.';
COMMENT ON TABLE main.orders IS 'One row per order placed by a customer.';
COMMENT ON COLUMN main.orders.amount IS 'Order total after discount: sum of item quantity * unit_price minus discount.';
COMMENT ON COLUMN main.orders.discount IS 'Discount granted on the whole order.';
COMMENT ON COLUMN main.orders.is_gift IS 'Whether the order was sent as a gift.';
COMMENT ON COLUMN main.orders.store_id IS 'Store that took the order; NULL for online orders.';
COMMENT ON COLUMN main.orders.shipping_address_id IS 'Delivery address; NULL when nothing was shipped.';
COMMENT ON TABLE main.order_items IS 'Order lines: one product, a quantity and a unit price.';
COMMENT ON TABLE main.inventory_snapshots IS 'Weekly stock count per store (Mondays); some weeks were not counted.';
COMMENT ON TABLE main.campaign_spend IS 'Daily marketing spend per campaign and channel (not linked to orders).';

DROP TABLE item_base;
DROP TABLE order_base;
DROP TABLE extra_address;
DROP TABLE lk;
