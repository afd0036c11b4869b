#!/usr/bin/env python3
"""Writes the seed CSVs of tests/fixtures/dbt_shop/seeds deterministically.

The CSVs are committed; this script only documents (and can redo) how they
were made. Run it with any Python 3.8+ (standard library only):

    python3 tests/dbt/make_seeds.py

Data is small but built to hit edge cases: timestamps exactly on month,
ISO-week, quarter and year boundaries, NULL countries / categories / regions /
store ids, customers without orders, orders with several items (fan-out),
purchases inside and outside the conversion window, and balance snapshots
with gaps (non-additive measure).
"""
import csv
import datetime as dt
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "..", "fixtures", "dbt_shop", "seeds")

rng = random.Random(20240101)


def write(name, header, rows):
    path = os.path.join(SEEDS, name + ".csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow(["" if v is None else v for v in r])
    print(f"{name}: {len(rows)} rows")


def ts(d):
    return d.strftime("%Y-%m-%d %H:%M:%S")


def money(x):
    return f"{x:.2f}"


def b(x):
    return "true" if x else "false"


# ---------------------------------------------------------------- customers
COUNTRIES = ["US", "GB", "DE", "FR", None, "US", "GB", "US", "DE", "US",
             "FR", None, "US", "GB", "DE", "US", "FR", "US", None, "GB"]
SEGMENTS = ["consumer", "business", "enterprise"]
customers = []
for cid in range(1, 21):
    signup = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randrange(0, 300))
    customers.append([
        cid, f"Customer {cid:02d}", COUNTRIES[cid - 1], SEGMENTS[cid % 3],
        signup.isoformat(), b(cid % 4 != 0), money(500 + 250 * (cid % 5)),
        # A phone number for two customers in three (a presence test's column).
        None if cid % 3 == 0 else f"+1-555-01{cid:02d}",
    ])
write("raw_customers",
      ["customer_id", "customer_name", "country", "segment", "signup_date", "is_active", "credit_limit", "phone"],
      customers)

# ---------------------------------------------------------------- stores
stores = [
    [1, "North Mall", "north", "2020-03-01", 1200],
    [2, "South Street", "south", "2021-07-15", 800],
    [3, "East Plaza", "east", "2022-11-01", 1500],
    [4, "Pop-up", None, "2023-10-01", 300],
]
write("raw_stores", ["store_id", "store_name", "region", "opened_on", "sqft"], stores)

# store managers: an SCD type 2 table (natural entity store + validity window)
managers = [
    [1, "Alice", "2020-03-01", "2024-01-01"],
    [1, "Bob", "2024-01-01", None],
    [2, "Carol", "2021-07-15", "2023-12-15"],
    [2, "Dan", "2023-12-15", None],
    [3, "Erin", "2022-11-01", None],
    [4, "Frank", "2023-10-01", None],
]
write("raw_store_managers", ["store_id", "manager_name", "valid_from", "valid_to"], managers)

# ---------------------------------------------------------------- products
CATS = ["toys", "books", "games", None, "toys", "books", "games", "toys", None, "books", "games", "toys"]
products = []
for pid in range(1, 13):
    products.append([
        pid, f"Product {pid:02d}", CATS[pid - 1], money(5 + 7.25 * pid), b(pid % 3 == 0),
        (dt.date(2022, 1, 1) + dt.timedelta(days=40 * pid)).isoformat(),
    ])
write("raw_products", ["product_id", "product_name", "category", "unit_price", "is_digital", "launched_on"],
      products)

# ---------------------------------------------------------------- orders
# Boundary timestamps first (each exactly on / just before a boundary).
boundary = [
    dt.datetime(2023, 11, 30, 23, 59, 59),  # month end (Thursday)
    dt.datetime(2023, 12, 1, 0, 0, 0),      # month start (Friday)
    dt.datetime(2023, 12, 31, 23, 59, 59),  # year/quarter/month end, a Sunday (ISO week 52 of 2023)
    dt.datetime(2024, 1, 1, 0, 0, 0),       # year start, a Monday (ISO week 1 of 2024)
    dt.datetime(2024, 1, 1, 0, 0, 0),       # same instant twice
    dt.datetime(2024, 1, 28, 23, 59, 0),    # a Sunday 23:59
    dt.datetime(2024, 1, 29, 0, 0, 0),      # a Monday 00:00
    dt.datetime(2024, 2, 29, 23, 59, 59),   # leap day
    dt.datetime(2024, 3, 31, 23, 59, 59),   # quarter end (Sunday)
    dt.datetime(2024, 4, 1, 0, 0, 0),       # quarter start (Monday)
    dt.datetime(2023, 9, 30, 23, 59, 59),   # quarter end, before the bulk of the data
    dt.datetime(2023, 10, 1, 0, 0, 0),      # quarter start (Sunday)
]
start = dt.datetime(2023, 11, 1)
span = (dt.datetime(2024, 4, 30) - start).total_seconds()
times = list(boundary)
while len(times) < 64:
    t = start + dt.timedelta(seconds=rng.randrange(0, int(span)))
    times.append(t.replace(second=0))
times.sort()

STATUSES = ["completed", "completed", "completed", "returned", "pending"]
orders = []
for oid, t in enumerate(times, start=1):
    # customers 18..20 never order (empty groups); 1..5 order often
    cid = rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 5] + list(range(6, 18)))
    store = rng.choice([1, 1, 2, 2, 3, 4, None])
    status = rng.choice(STATUSES)
    promo = rng.random() < 0.3
    discount = money(rng.choice([0, 0, 0, 2.5, 5, 7.5, 10, 12.25])) if promo or rng.random() < 0.2 else money(0)
    shipping = rng.choice([0.0, 3.99, 4.5, 5.0, 7.25, 9.99, 12.5])
    delivered = None
    if status != "pending":
        delivered = (t.date() + dt.timedelta(days=rng.randrange(1, 9))).isoformat()
    orders.append([oid, cid, store, ts(t), status, b(promo), discount, shipping, delivered])
write("raw_orders",
      ["order_id", "customer_id", "store_id", "ordered_at", "status", "is_promo", "discount_amount",
       "shipping_cost", "delivered_at"],
      orders)

# ---------------------------------------------------------------- order items
items = []
iid = 1
for o in orders:
    n = rng.choice([1, 1, 2, 2, 3, 4])
    pids = rng.sample(range(1, 13), n)
    for pid in pids:
        price = float(products[pid - 1][3])
        if rng.random() < 0.2:
            price = round(price * 0.9, 2)
        items.append([iid, o[0], pid, o[3], rng.choice([1, 1, 1, 2, 3]), money(price), b(rng.random() < 0.15)])
        iid += 1
write("raw_order_items",
      ["order_item_id", "order_id", "product_id", "ordered_at", "quantity", "item_price", "is_gift"],
      items)

# ---------------------------------------------------------------- visits and purchases
CHANNELS = ["web", "app", "email"]
visits = []
purchases = []
vid = 1
pid = 1
vstart = dt.datetime(2024, 1, 1)
for cid in range(1, 21):
    nvis = rng.choice([0, 1, 2, 3, 4]) if cid != 1 else 4
    for _ in range(nvis):
        t = vstart + dt.timedelta(minutes=rng.randrange(0, 60 * 24 * 58))
        ch = rng.choice(CHANNELS)
        visits.append([vid, cid, ts(t), ch, rng.choice(["desktop", "mobile"])])
        vid += 1
        r = rng.random()
        if r < 0.35:   # converts within 7 days, same channel
            pt = t + dt.timedelta(hours=rng.randrange(1, 24 * 6))
            purchases.append([pid, cid, ts(pt), ch, money(rng.choice([19.99, 35.5, 60, 12.75]))])
            pid += 1
        elif r < 0.5:  # converts within 7 days, other channel
            pt = t + dt.timedelta(hours=rng.randrange(1, 24 * 6))
            other = CHANNELS[(CHANNELS.index(ch) + 1) % 3]
            purchases.append([pid, cid, ts(pt), other, money(rng.choice([19.99, 35.5, 60, 12.75]))])
            pid += 1
        elif r < 0.6:  # converts too late (8..20 days)
            pt = t + dt.timedelta(days=rng.randrange(8, 20))
            purchases.append([pid, cid, ts(pt), ch, money(rng.choice([19.99, 35.5, 60, 12.75]))])
            pid += 1
# a purchase before any visit (must not count as a conversion)
purchases.append([pid, 2, "2023-12-20 10:00:00", "web", "15.00"])
visits.sort(key=lambda r: (r[2], r[0]))
purchases.sort(key=lambda r: (r[2], r[0]))
visits = [[i + 1] + r[1:] for i, r in enumerate(visits)]
purchases = [[i + 1] + r[1:] for i, r in enumerate(purchases)]
write("raw_visits", ["visit_id", "customer_id", "visited_at", "channel", "device"], visits)
write("raw_purchases", ["purchase_id", "customer_id", "purchased_at", "channel", "amount"], purchases)

# ---------------------------------------------------------------- accounts and balances
accounts = []
for i, cid in enumerate([1, 2, 3, 4, 5, 6, 7, 8, 12, 19]):
    accounts.append([101 + i, cid, "checking" if i % 3 else "savings",
                     (dt.date(2023, 6, 1) + dt.timedelta(days=13 * i)).isoformat()])
write("raw_accounts", ["account_id", "customer_id", "account_type", "opened_on"], accounts)

balances = []
bid = 1
for a in accounts:
    bal = 100.0 + 50 * (a[0] % 7)
    day = dt.date(2024, 1, 27)
    while day <= dt.date(2024, 2, 4):
        # gaps: some accounts skip some days (so the last snapshot differs per account)
        if rng.random() < 0.75 or day in (dt.date(2024, 1, 31), dt.date(2024, 2, 4)) and a[0] % 2:
            bal = round(bal + rng.choice([-40, -15.5, 0, 10, 25.25, 60]), 2)
            balances.append([bid, a[0], day.isoformat(), money(bal)])
            bid += 1
        day += dt.timedelta(days=1)
write("raw_account_balances", ["balance_id", "account_id", "balance_date", "balance"], balances)

# ---------------------------------------------------------------- time spine
spine = []
d = dt.date(2023, 1, 1)
while d <= dt.date(2024, 6, 30):
    # Fiscal years start on 1 February (a custom granularity of the spine,
    # `metric_time__fiscal_year`): the year's first day.
    fiscal = dt.date(d.year if d.month >= 2 else d.year - 1, 2, 1)
    spine.append([d.isoformat(), fiscal.isoformat()])
    d += dt.timedelta(days=1)
write("raw_time_spine", ["date_day", "fiscal_year"], spine)
