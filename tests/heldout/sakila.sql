-- Sakila (a DVD rental chain), MySQL's sample database as published
-- (dev.mysql.com/doc/sakila/en/, sakila-schema.sql): its sixteen tables
-- with the published names, keys and foreign keys, typed for DuckDB
-- (unsigned integers as INTEGER, ENUM and SET as VARCHAR, YEAR as INTEGER).
-- Left out: address.location (a GEOMETRY, which DuckDB has not built in),
-- the views, triggers and procedures. staff.store_id keeps its column but
-- not its declared foreign key: store.manager_staff_id and staff.store_id
-- reference each other, and DuckDB has no ALTER TABLE ... ADD FOREIGN KEY
-- to close the cycle. The rows are a handful written for this test in the
-- published shape, not the published data.
-- Written for the held-out search set (issue 38, item 5) without reading the
-- search code or its synonym table.

CREATE TABLE actor (
    actor_id INTEGER NOT NULL,
    first_name VARCHAR(45) NOT NULL,
    last_name VARCHAR(45) NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (actor_id)
);

CREATE TABLE country (
    country_id INTEGER NOT NULL,
    country VARCHAR(50) NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (country_id)
);

CREATE TABLE city (
    city_id INTEGER NOT NULL,
    city VARCHAR(50) NOT NULL,
    country_id INTEGER NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (city_id),
    FOREIGN KEY (country_id) REFERENCES country (country_id)
);

CREATE TABLE address (
    address_id INTEGER NOT NULL,
    address VARCHAR(50) NOT NULL,
    address2 VARCHAR(50),
    district VARCHAR(20) NOT NULL,
    city_id INTEGER NOT NULL,
    postal_code VARCHAR(10),
    phone VARCHAR(20) NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (address_id),
    FOREIGN KEY (city_id) REFERENCES city (city_id)
);

CREATE TABLE category (
    category_id INTEGER NOT NULL,
    name VARCHAR(25) NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (category_id)
);

CREATE TABLE language (
    language_id INTEGER NOT NULL,
    name VARCHAR(20) NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (language_id)
);

CREATE TABLE film (
    film_id INTEGER NOT NULL,
    title VARCHAR(128) NOT NULL,
    description VARCHAR,
    release_year INTEGER,
    language_id INTEGER NOT NULL,
    original_language_id INTEGER,
    rental_duration INTEGER NOT NULL DEFAULT 3,
    rental_rate DECIMAL(4, 2) NOT NULL DEFAULT 4.99,
    length INTEGER,
    replacement_cost DECIMAL(5, 2) NOT NULL DEFAULT 19.99,
    rating VARCHAR DEFAULT 'G',
    special_features VARCHAR,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (film_id),
    FOREIGN KEY (language_id) REFERENCES language (language_id),
    FOREIGN KEY (original_language_id) REFERENCES language (language_id)
);

CREATE TABLE film_actor (
    actor_id INTEGER NOT NULL,
    film_id INTEGER NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (actor_id, film_id),
    FOREIGN KEY (actor_id) REFERENCES actor (actor_id),
    FOREIGN KEY (film_id) REFERENCES film (film_id)
);

CREATE TABLE film_category (
    film_id INTEGER NOT NULL,
    category_id INTEGER NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (film_id, category_id),
    FOREIGN KEY (film_id) REFERENCES film (film_id),
    FOREIGN KEY (category_id) REFERENCES category (category_id)
);

CREATE TABLE film_text (
    film_id INTEGER NOT NULL,
    title VARCHAR(255) NOT NULL,
    description VARCHAR,
    PRIMARY KEY (film_id)
);

CREATE TABLE staff (
    staff_id INTEGER NOT NULL,
    first_name VARCHAR(45) NOT NULL,
    last_name VARCHAR(45) NOT NULL,
    address_id INTEGER NOT NULL,
    picture BLOB,
    email VARCHAR(50),
    store_id INTEGER NOT NULL,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    username VARCHAR(16) NOT NULL,
    password VARCHAR(40),
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (staff_id),
    FOREIGN KEY (address_id) REFERENCES address (address_id)
);

CREATE TABLE store (
    store_id INTEGER NOT NULL,
    manager_staff_id INTEGER NOT NULL UNIQUE,
    address_id INTEGER NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (store_id),
    FOREIGN KEY (manager_staff_id) REFERENCES staff (staff_id),
    FOREIGN KEY (address_id) REFERENCES address (address_id)
);

CREATE TABLE customer (
    customer_id INTEGER NOT NULL,
    store_id INTEGER NOT NULL,
    first_name VARCHAR(45) NOT NULL,
    last_name VARCHAR(45) NOT NULL,
    email VARCHAR(50),
    address_id INTEGER NOT NULL,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    create_date TIMESTAMP NOT NULL,
    last_update TIMESTAMP,
    PRIMARY KEY (customer_id),
    FOREIGN KEY (store_id) REFERENCES store (store_id),
    FOREIGN KEY (address_id) REFERENCES address (address_id)
);

CREATE TABLE inventory (
    inventory_id INTEGER NOT NULL,
    film_id INTEGER NOT NULL,
    store_id INTEGER NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (inventory_id),
    FOREIGN KEY (film_id) REFERENCES film (film_id),
    FOREIGN KEY (store_id) REFERENCES store (store_id)
);

CREATE TABLE rental (
    rental_id INTEGER NOT NULL,
    rental_date TIMESTAMP NOT NULL,
    inventory_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    return_date TIMESTAMP,
    staff_id INTEGER NOT NULL,
    last_update TIMESTAMP NOT NULL,
    PRIMARY KEY (rental_id),
    UNIQUE (rental_date, inventory_id, customer_id),
    FOREIGN KEY (staff_id) REFERENCES staff (staff_id),
    FOREIGN KEY (inventory_id) REFERENCES inventory (inventory_id),
    FOREIGN KEY (customer_id) REFERENCES customer (customer_id)
);

CREATE TABLE payment (
    payment_id INTEGER NOT NULL,
    customer_id INTEGER NOT NULL,
    staff_id INTEGER NOT NULL,
    rental_id INTEGER,
    amount DECIMAL(5, 2) NOT NULL,
    payment_date TIMESTAMP NOT NULL,
    last_update TIMESTAMP,
    PRIMARY KEY (payment_id),
    FOREIGN KEY (rental_id) REFERENCES rental (rental_id),
    FOREIGN KEY (customer_id) REFERENCES customer (customer_id),
    FOREIGN KEY (staff_id) REFERENCES staff (staff_id)
);

INSERT INTO actor VALUES
    (1, 'NORA', 'BEKELE', TIMESTAMP '2006-02-15 04:34:33'),
    (2, 'TOMAS', 'RIVAS', TIMESTAMP '2006-02-15 04:34:33'),
    (3, 'ELSA', 'KOWALCZYK', TIMESTAMP '2006-02-15 04:34:33'),
    (4, 'DEV', 'MALHOTRA', TIMESTAMP '2006-02-15 04:34:33');

INSERT INTO country VALUES
    (1, 'Canada', TIMESTAMP '2006-02-15 04:44:00'),
    (2, 'Australia', TIMESTAMP '2006-02-15 04:44:00'),
    (3, 'Portugal', TIMESTAMP '2006-02-15 04:44:00');

INSERT INTO city VALUES
    (1, 'Lethbridge', 1, TIMESTAMP '2006-02-15 04:45:25'),
    (2, 'Woodridge', 2, TIMESTAMP '2006-02-15 04:45:25'),
    (3, 'Braga', 3, TIMESTAMP '2006-02-15 04:45:25');

INSERT INTO address VALUES
    (1, '47 Quarry Drive', NULL, 'Alberta', 1, NULL, '', TIMESTAMP '2006-02-15 04:45:30'),
    (2, '28 Harbour Street', NULL, 'QLD', 2, NULL, '', TIMESTAMP '2006-02-15 04:45:30'),
    (3, '23 Wallaby Way', NULL, 'Alberta', 1, NULL, '', TIMESTAMP '2006-02-15 04:45:30'),
    (4, '1411 Lillydale Drive', NULL, 'QLD', 2, NULL, '6172235589', TIMESTAMP '2006-02-15 04:45:30'),
    (5, '1913 Hanoi Way', '', 'Braga', 3, '35200', '28303384290', TIMESTAMP '2006-02-15 04:45:30'),
    (6, '692 Joliet Street', '', 'Alberta', 1, '83579', '448477190408', TIMESTAMP '2006-02-15 04:45:30'),
    (7, '1795 Santiago Way', '', 'QLD', 2, '18743', '860452626434', TIMESTAMP '2006-02-15 04:45:30');

INSERT INTO category VALUES
    (1, 'Action', TIMESTAMP '2006-02-15 04:46:27'),
    (2, 'Comedy', TIMESTAMP '2006-02-15 04:46:27'),
    (3, 'Documentary', TIMESTAMP '2006-02-15 04:46:27');

INSERT INTO language VALUES
    (1, 'English', TIMESTAMP '2006-02-15 05:02:19'),
    (2, 'Italian', TIMESTAMP '2006-02-15 05:02:19'),
    (3, 'Japanese', TIMESTAMP '2006-02-15 05:02:19');

INSERT INTO film VALUES
    (1, 'HARBOUR LIGHTS', 'A Moving Story of a Lighthouse Keeper And a Cat who must Find a Boat', 2006, 1, NULL, 6, 0.99, 86, 20.99, 'PG', 'Deleted Scenes,Behind the Scenes', TIMESTAMP '2006-02-15 05:03:42'),
    (2, 'QUARRY NIGHTS', 'A Fast-Paced Drama of a Geologist And a Dog who must Escape a Mine', 2006, 1, 2, 3, 4.99, 48, 12.99, 'G', 'Trailers', TIMESTAMP '2006-02-15 05:03:42'),
    (3, 'PAPER TIGERS', 'A Epic Documentary of a Printer And a Tiger who must Meet in a Factory', 2006, 1, 3, 7, 2.99, 50, 18.99, 'NC-17', 'Commentaries,Deleted Scenes', TIMESTAMP '2006-02-15 05:03:42');

INSERT INTO film_actor VALUES
    (1, 1, TIMESTAMP '2006-02-15 05:05:03'),
    (2, 1, TIMESTAMP '2006-02-15 05:05:03'),
    (2, 2, TIMESTAMP '2006-02-15 05:05:03'),
    (3, 3, TIMESTAMP '2006-02-15 05:05:03'),
    (4, 3, TIMESTAMP '2006-02-15 05:05:03');

INSERT INTO film_category VALUES
    (1, 2, TIMESTAMP '2006-02-15 05:07:09'),
    (2, 1, TIMESTAMP '2006-02-15 05:07:09'),
    (3, 3, TIMESTAMP '2006-02-15 05:07:09');

INSERT INTO film_text VALUES
    (1, 'HARBOUR LIGHTS', 'A Moving Story of a Lighthouse Keeper And a Cat who must Find a Boat'),
    (2, 'QUARRY NIGHTS', 'A Fast-Paced Drama of a Geologist And a Dog who must Escape a Mine'),
    (3, 'PAPER TIGERS', 'A Epic Documentary of a Printer And a Tiger who must Meet in a Factory');

INSERT INTO staff VALUES
    (1, 'Ines', 'Almeida', 3, NULL, 'Ines.Almeida@sakilastaff.example', 1, TRUE, 'Ines', '8cb2237d0679ca88db6464eac60da96345513964', TIMESTAMP '2006-02-15 04:57:16'),
    (2, 'Jonah', 'Price', 4, NULL, 'Jonah.Price@sakilastaff.example', 2, TRUE, 'Jonah', NULL, TIMESTAMP '2006-02-15 04:57:16');

INSERT INTO store VALUES
    (1, 1, 1, TIMESTAMP '2006-02-15 04:57:12'),
    (2, 2, 2, TIMESTAMP '2006-02-15 04:57:12');

INSERT INTO customer VALUES
    (1, 1, 'MARIA', 'SOUSA', 'MARIA.SOUSA@sakilacustomer.example', 5, TRUE, TIMESTAMP '2006-02-14 22:04:36', TIMESTAMP '2006-02-15 04:57:20'),
    (2, 1, 'KEVIN', 'OWUSU', 'KEVIN.OWUSU@sakilacustomer.example', 6, TRUE, TIMESTAMP '2006-02-14 22:04:36', TIMESTAMP '2006-02-15 04:57:20'),
    (3, 2, 'LENA', 'HOFFMANN', 'LENA.HOFFMANN@sakilacustomer.example', 7, FALSE, TIMESTAMP '2006-02-14 22:04:37', TIMESTAMP '2006-02-15 04:57:20');

INSERT INTO inventory VALUES
    (1, 1, 1, TIMESTAMP '2006-02-15 05:09:17'),
    (2, 1, 2, TIMESTAMP '2006-02-15 05:09:17'),
    (3, 2, 1, TIMESTAMP '2006-02-15 05:09:17'),
    (4, 3, 2, TIMESTAMP '2006-02-15 05:09:17');

INSERT INTO rental VALUES
    (1, TIMESTAMP '2005-05-24 22:53:30', 1, 1, TIMESTAMP '2005-05-26 22:04:30', 1, TIMESTAMP '2006-02-15 21:30:53'),
    (2, TIMESTAMP '2005-05-24 22:54:33', 3, 2, TIMESTAMP '2005-05-28 19:40:33', 1, TIMESTAMP '2006-02-15 21:30:53'),
    (3, TIMESTAMP '2005-05-25 00:00:40', 4, 3, NULL, 2, TIMESTAMP '2006-02-15 21:30:53'),
    (4, TIMESTAMP '2005-05-25 01:10:47', 2, 1, TIMESTAMP '2005-05-31 06:22:47', 2, TIMESTAMP '2006-02-15 21:30:53');

INSERT INTO payment VALUES
    (1, 1, 1, 1, 2.99, TIMESTAMP '2005-05-25 11:30:37', TIMESTAMP '2006-02-15 22:12:30'),
    (2, 2, 1, 2, 0.99, TIMESTAMP '2005-05-28 10:35:23', TIMESTAMP '2006-02-15 22:12:30'),
    (3, 3, 2, 3, 5.99, TIMESTAMP '2005-06-15 00:54:12', TIMESTAMP '2006-02-15 22:12:30'),
    (4, 1, 2, 4, 0.99, TIMESTAMP '2005-06-15 18:02:53', TIMESTAMP '2006-02-15 22:12:30'),
    (5, 1, 1, NULL, 1.50, TIMESTAMP '2005-06-16 08:01:02', TIMESTAMP '2006-02-15 22:12:30');
