//! Real servers for the engine tests: where they are, a scratch schema (or
//! database) per test, dropped afterwards, and what to do when a server is
//! not there.
//!
//! `SCHEMABRAIN_TEST_POSTGRES` (default `postgres://postgres@127.0.0.1:5432/test`)
//! and `SCHEMABRAIN_TEST_MYSQL` (default `mysql://root@127.0.0.1:3306/test`)
//! name the servers. An unreachable server fails the test, unless
//! `SCHEMABRAIN_SKIP_SERVERS=1` asks for skipping (not under `CI=true`):
//! see `common::unavailable`.

use std::sync::atomic::{AtomicUsize, Ordering};

use mysql_async::prelude::Queryable;

pub const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";
pub const DEFAULT_MYSQL: &str = "mysql://root@127.0.0.1:3306/test";

pub fn postgres_url() -> String {
    std::env::var("SCHEMABRAIN_TEST_POSTGRES").unwrap_or_else(|_| DEFAULT_POSTGRES.to_string())
}

pub fn mysql_url() -> String {
    std::env::var("SCHEMABRAIN_TEST_MYSQL").unwrap_or_else(|_| DEFAULT_MYSQL.to_string())
}

/// An unreachable server: a failure unless skipping was asked for (returns
/// `None` so the test can return early).
fn unavailable<T>(what: &str, var: &str, url: &str, error: &str) -> Option<T> {
    crate::common::unavailable(&format!("{what} at {url}"), &format!("unreachable ({error}); set {var} to point the tests at a server"))
}

/// A name no other test (or run) uses: `sb_test_<pid>_<n>_<nanos>`.
pub fn unique_name(tag: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("sb_{tag}_{}_{}_{nanos}", std::process::id(), N.fetch_add(1, Ordering::SeqCst))
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// A fresh Postgres schema, dropped (with everything in it) when this is dropped.
pub struct PgSchema {
    pub url: String,
    pub name: String,
    rt: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl PgSchema {
    pub fn create(tag: &str) -> Option<PgSchema> {
        let url = postgres_url();
        let rt = rt();
        let connected = rt.block_on(async {
            let (client, conn) = tokio::time::timeout(std::time::Duration::from_secs(5), tokio_postgres::connect(&url, tokio_postgres::NoTls))
                .await
                .map_err(|_| "timed out".to_string())?
                .map_err(|e| match std::error::Error::source(&e) {
                    Some(cause) => format!("{e}: {cause}"),
                    None => e.to_string(),
                })?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            Ok::<_, String>(client)
        });
        let client = match connected {
            Ok(c) => c,
            Err(e) => return unavailable("PostgreSQL", "SCHEMABRAIN_TEST_POSTGRES", &url, &e),
        };
        let name = unique_name(tag);
        rt.block_on(client.batch_execute(&format!("CREATE SCHEMA \"{name}\""))).expect("create the test schema");
        Some(PgSchema { url, name, rt, client })
    }

    /// Runs statements with write access (test setup only).
    pub fn exec(&self, sql: &str) {
        self.rt.block_on(self.client.batch_execute(sql)).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let _ = self.rt.block_on(self.client.batch_execute(&format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name)));
    }
}

/// A fresh MySQL/MariaDB database, dropped when this is dropped.
pub struct MyDatabase {
    pub url: String,
    pub name: String,
    rt: tokio::runtime::Runtime,
    conn: std::cell::RefCell<Option<mysql_async::Conn>>,
}

impl MyDatabase {
    pub fn create(tag: &str) -> Option<MyDatabase> {
        let url = mysql_url();
        let rt = rt();
        let mysql_form = url.replacen("mariadb://", "mysql://", 1);
        let connected = rt.block_on(async {
            let opts = mysql_async::Opts::from_url(&mysql_form).map_err(|e| e.to_string())?;
            tokio::time::timeout(std::time::Duration::from_secs(5), mysql_async::Conn::new(opts))
                .await
                .map_err(|_| "timed out".to_string())?
                .map_err(|e| e.to_string())
        });
        let mut conn = match connected {
            Ok(c) => c,
            Err(e) => return unavailable("MySQL/MariaDB", "SCHEMABRAIN_TEST_MYSQL", &url, &e),
        };
        let name = unique_name(tag);
        rt.block_on(conn.query_drop(format!("CREATE DATABASE `{name}`"))).expect("create the test database");
        Some(MyDatabase { url, name, rt, conn: std::cell::RefCell::new(Some(conn)) })
    }

    pub fn exec(&self, sql: &str) {
        let mut guard = self.conn.borrow_mut();
        let conn = guard.as_mut().expect("open");
        self.rt.block_on(conn.query_drop(sql)).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    }
}

impl Drop for MyDatabase {
    fn drop(&mut self) {
        if let Some(mut conn) = self.conn.borrow_mut().take() {
            let name = self.name.clone();
            let _ = self.rt.block_on(async move {
                conn.query_drop(format!("DROP DATABASE IF EXISTS `{name}`")).await?;
                conn.disconnect().await
            });
        }
    }
}
