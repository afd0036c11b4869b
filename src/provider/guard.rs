//! The free-SQL guard (seed 003, "query_sql safety"): a statement runs only
//! if it parses in the caller's dialect as exactly one read-only query, and
//! reaches no file, network, extension or session state. Everything is
//! decided on the sqlparser AST, never by matching text.
//!
//! Refused: anything but one query (DDL, DML, COPY, ATTACH, INSTALL/LOAD,
//! PRAGMA, SET, EXPORT/IMPORT DATABASE, CALL, ...), `SELECT ... INTO`,
//! locking clauses, functions and table functions that read files or the
//! network or leave the database (`read_csv`, `read_parquet`, `glob`,
//! `pg_read_file`, `lo_import`, `dblink`, `postgres_scan`, ...), and tables
//! named by a file path or URL (DuckDB's `FROM 'data.csv'`).
//!
//! Architecture invariant: depends on sqlparser only.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, ObjectName, SetExpr, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::{
    BigQueryDialect, Dialect, DuckDbDialect, GenericDialect, HiveDialect, MsSqlDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect,
    SnowflakeDialect,
};
use sqlparser::parser::Parser;

/// Dialects a free statement may be written in.
pub const DIALECTS: [&str; 11] = ["duckdb", "postgres", "mysql", "datafusion", "ansi", "snowflake", "bigquery", "trino", "databricks", "sqlserver", "sqlite"];

/// Longest statement accepted, in bytes.
pub const MAX_SQL_BYTES: usize = 100_000;

/// Function names (the last part, lowercase) that reach files, the network,
/// other databases or server state. Prefix entries end with `*`.
/// Spark's `reflect`/`java_method` call any static Java method and
/// `read_files` reads a path.
const DENIED_FUNCTIONS: [&str; 47] = [
    "read_csv*", "read_parquet", "read_json*", "read_ndjson*", "read_text", "read_blob", "read_xlsx", "parquet_scan", "parquet_metadata",
    "parquet_schema", "csv_scan", "json_scan", "glob", "sniff_csv", "iceberg_*", "delta_scan", "sqlite_*", "postgres_*", "mysql_*",
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "lo_import", "lo_export", "lo_get", "dblink*", "http_*",
    "load_file", "sys_exec", "sys_eval", "openrowset", "opendatasource", "openquery", "xp_cmdshell", "query_table", "query",
    "pg_terminate_backend", "pg_cancel_backend", "set_config", "current_setting", "getenv", "getvariable",
    "reflect", "java_method", "try_reflect", "read_files",
];

/// Why a statement is refused: a stable code and one sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `invalid_input` (does not parse, wrong dialect, not one statement,
    /// a table outside the catalog), `policy_blocked` (parses, but does
    /// something free SQL may not) or `pii_blocked` (reads PII the policy
    /// does not let free SQL read; from `columns`).
    pub code: &'static str,
    pub message: String,
    /// For `pii_blocked`: the categories that caused it (blocked ones only
    /// when a blocked column is the cause).
    pub categories: Vec<String>,
}

fn invalid(message: String) -> Refusal {
    Refusal { code: "invalid_input", message, categories: Vec::new() }
}

fn blocked(message: String) -> Refusal {
    Refusal { code: "policy_blocked", message, categories: Vec::new() }
}

pub(super) fn parser_dialect(name: &str) -> Option<Box<dyn Dialect>> {
    Some(match name {
        "duckdb" => Box::new(DuckDbDialect {}),
        "postgres" => Box::new(PostgreSqlDialect {}),
        "mysql" => Box::new(MySqlDialect {}),
        "snowflake" => Box::new(SnowflakeDialect {}),
        "bigquery" => Box::new(BigQueryDialect {}),
        "databricks" => Box::new(HiveDialect {}),
        "sqlserver" => Box::new(MsSqlDialect {}),
        "sqlite" => Box::new(SQLiteDialect {}),
        "datafusion" | "ansi" | "trino" => Box::new(GenericDialect {}),
        _ => return None,
    })
}

/// Checks `sql` in `dialect`; the parsed query when it may run.
pub fn check(sql: &str, dialect: &str) -> Result<Statement, Refusal> {
    let Some(d) = parser_dialect(dialect) else {
        return Err(invalid(format!("dialect `{}` is not supported; use one of {}", crate::model::echo(dialect), DIALECTS.join(", "))));
    };
    check_parsed_by(sql, d.as_ref(), dialect)
}

/// `check` with the parser given: the engines without a read-only session
/// (Spark, ADBC drivers) run this on every statement before it leaves the
/// process, with their dialect profile's own parser (`name` is for messages).
pub fn check_parsed_by(sql: &str, d: &dyn Dialect, dialect: &str) -> Result<Statement, Refusal> {
    if sql.len() > MAX_SQL_BYTES {
        return Err(invalid(format!("the statement is {} bytes, more than the limit of {MAX_SQL_BYTES}", sql.len())));
    }
    let mut statements = Parser::parse_sql(d, sql).map_err(|e| invalid(format!("does not parse as {dialect} SQL: {}", crate::model::echo(&e.to_string()))))?;
    if statements.len() != 1 {
        return Err(invalid(format!("exactly one statement is allowed, got {}", statements.len())));
    }
    let statement = statements.remove(0);
    let Statement::Query(_) = &statement else {
        return Err(blocked(format!("only a read-only query may run, not {}", kind_of(&statement))));
    };
    let mut v = Guard(None);
    let _ = statement.visit(&mut v);
    match v.0 {
        Some(r) => Err(r),
        None => Ok(statement),
    }
}

/// The statement's kind for a message: its first keyword or two.
fn kind_of(s: &Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    crate::model::echo(&words.join(" ").to_uppercase())
}

fn denied(name: &str) -> bool {
    let name = name.to_lowercase();
    DENIED_FUNCTIONS.iter().any(|d| match d.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *d,
    })
}

fn last_part(name: &ObjectName) -> String {
    name.0.last().map(|p| p.to_string().trim_matches('"').trim_matches('`').to_string()).unwrap_or_default()
}

/// A relation named by a path or URL rather than a table.
fn looks_like_a_file(name: &ObjectName) -> bool {
    name.0.iter().any(|p| {
        let s = p.to_string();
        s.starts_with('\'') || s.contains('/') || s.contains("://") || [".csv", ".parquet", ".json", ".tsv", ".txt", ".gz"].iter().any(|e| s.to_lowercase().contains(e))
    })
}

struct Guard(Option<Refusal>);

impl Visitor for Guard {
    type Break = ();

    fn pre_visit_query(&mut self, q: &sqlparser::ast::Query) -> ControlFlow<()> {
        if !q.locks.is_empty() {
            self.0 = Some(blocked("locking clauses (FOR UPDATE, FOR SHARE) are not allowed in a read-only query".into()));
            return ControlFlow::Break(());
        }
        if let Some(message) = unsupported_body(&q.body) {
            self.0 = Some(blocked(message.into()));
            return ControlFlow::Break(());
        }
        if let sqlparser::ast::SetExpr::Select(s) = q.body.as_ref() {
            if s.into.is_some() {
                self.0 = Some(blocked("SELECT ... INTO writes a table; only reading is allowed".into()));
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        let refusal = match t {
            TableFactor::Table { name, args: Some(_), .. } if denied(&last_part(name)) => {
                Some(blocked(format!("table function `{}` reads outside the database", crate::model::echo(&last_part(name)))))
            }
            TableFactor::Table { name, .. } if looks_like_a_file(name) => {
                Some(blocked(format!("`{}` names a file or URL, not a table", crate::model::echo(&name.to_string()))))
            }
            TableFactor::Function { name, .. } if denied(&last_part(name)) => {
                Some(blocked(format!("table function `{}` reads outside the database", crate::model::echo(&last_part(name)))))
            }
            _ => None,
        };
        match refusal {
            Some(r) => {
                self.0 = Some(r);
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        }
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if let Expr::Function(f) = e {
            let name = last_part(&f.name);
            if denied(&name) {
                self.0 = Some(blocked(format!("function `{}` reaches outside the database", crate::model::echo(&name))));
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }
}

/// A query body free SQL may not have, anywhere in its set operations:
/// data-modifying statements (Postgres' `WITH x AS (DELETE ... RETURNING *)`)
/// and `TABLE t`, which reads a whole table without a relation to check.
pub(super) fn unsupported_body(body: &SetExpr) -> Option<&'static str> {
    match body {
        SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) => Some("a query may not modify data"),
        SetExpr::Table(_) => Some("`TABLE name` is not supported by query_sql; write SELECT with the columns you need"),
        SetExpr::SetOperation { left, right, .. } => unsupported_body(left).or_else(|| unsupported_body(right)),
        SetExpr::Select(_) | SetExpr::Query(_) | SetExpr::Values(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_queries_pass_in_their_dialect() {
        for (sql, d) in [
            ("SELECT 1", "duckdb"),
            ("SELECT country, count(*) FROM main.customers GROUP BY 1 ORDER BY 2 DESC LIMIT 5", "duckdb"),
            ("WITH t AS (SELECT * FROM orders) SELECT sum(amount) FROM t", "postgres"),
            ("SELECT `a` FROM `t` WHERE x = 1", "mysql"),
            ("SELECT a FROM t UNION ALL SELECT b FROM u", "ansi"),
            ("SELECT lower(name), row_number() OVER (PARTITION BY a ORDER BY b) FROM t", "duckdb"),
        ] {
            assert!(check(sql, d).is_ok(), "{sql}: {:?}", check(sql, d));
        }
    }

    #[test]
    fn spark_reflection_and_file_reads_are_refused() {
        for sql in ["SELECT reflect('java.lang.System', 'exit', 1)", "SELECT java_method('java.lang.Runtime', 'getRuntime')", "SELECT * FROM read_files('/etc')", "SELECT * FROM parquet.`/data/x`"] {
            let r = check_parsed_by(sql, &sqlparser::dialect::DatabricksDialect {}, "databricks").unwrap_err();
            assert_eq!(r.code, "policy_blocked", "{sql}: {}", r.message);
        }
        assert!(check_parsed_by("SELECT `a` FROM `main`.`t` WHERE x = ?", &sqlparser::dialect::DatabricksDialect {}, "databricks").is_ok());
        assert!(check("SELECT \"a\" FROM \"main\".\"t\" WHERE x = ?", "sqlite").is_ok());
    }

    #[test]
    fn writes_state_files_and_network_are_refused() {
        for (sql, code) in [
            ("DELETE FROM orders", "policy_blocked"),
            ("INSERT INTO t VALUES (1)", "policy_blocked"),
            ("CREATE TABLE x AS SELECT 1", "policy_blocked"),
            ("COPY orders TO '/tmp/x.csv'", "policy_blocked"),
            ("ATTACH 'other.duckdb' AS o", "policy_blocked"),
            ("INSTALL httpfs", "policy_blocked"),
            ("LOAD httpfs", "policy_blocked"),
            ("PRAGMA database_list", "policy_blocked"),
            ("SET memory_limit = '1GB'", "policy_blocked"),
            ("SELECT * FROM read_csv('/etc/passwd')", "policy_blocked"),
            ("SELECT * FROM read_csv_auto('x.csv')", "policy_blocked"),
            ("SELECT * FROM read_parquet('s3://bucket/x.parquet')", "policy_blocked"),
            ("SELECT * FROM 'data.csv'", "policy_blocked"),
            ("SELECT * FROM glob('/home/*')", "policy_blocked"),
            ("SELECT pg_read_file('/etc/passwd')", "policy_blocked"),
            ("SELECT lo_import('/etc/passwd')", "policy_blocked"),
            ("SELECT * FROM t WHERE x IN (SELECT dblink('host=evil', 'select 1'))", "policy_blocked"),
            ("SELECT * INTO new_table FROM orders", "policy_blocked"),
            ("SELECT * FROM orders FOR UPDATE", "policy_blocked"),
            ("SELECT 1; SELECT 2", "invalid_input"),
            ("SELEC 1", "invalid_input"),
            ("", "invalid_input"),
        ] {
            let dialect = if sql.contains("pg_") || sql.contains("lo_") || sql.contains("dblink") || sql.contains("FOR UPDATE") {
                "postgres"
            } else {
                "duckdb"
            };
            match check(sql, dialect) {
                Ok(_) => panic!("{sql} passed"),
                Err(r) => assert_eq!(r.code, code, "{sql}: {}", r.message),
            }
        }
    }

    /// `TABLE t` reads a whole table with no relation to check: refused in
    /// every dialect, by the parser or by the guard.
    #[test]
    fn table_statements_never_pass() {
        let mut parsed_somewhere = false;
        for d in DIALECTS {
            for sql in ["TABLE customers", "SELECT 1 UNION ALL TABLE customers"] {
                match check(sql, d) {
                    Ok(_) => panic!("{sql} passed in {d}"),
                    Err(r) => parsed_somewhere |= r.code == "policy_blocked",
                }
            }
        }
        assert!(parsed_somewhere, "no dialect parses TABLE: the guard's check of it is untested");
    }

    #[test]
    fn an_unknown_dialect_lists_the_supported_ones() {
        let r = check("SELECT 1", "oracle").unwrap_err();
        assert_eq!(r.code, "invalid_input");
        assert!(r.message.contains("duckdb") && r.message.contains("sqlserver"), "{}", r.message);
    }

    #[test]
    fn denied_functions_hide_nowhere() {
        // Nested in expressions, CTEs, subqueries, joins and window clauses.
        for sql in [
            "WITH x AS (SELECT * FROM read_parquet('a.parquet')) SELECT * FROM x",
            "SELECT * FROM t JOIN read_json('u.json') r ON true",
            "SELECT (SELECT count(*) FROM read_csv('b')) FROM t",
            "SELECT coalesce(a, pg_read_file('x')) FROM t",
            "SELECT * FROM t WHERE EXISTS (SELECT 1 FROM main.read_text('f'))",
        ] {
            assert!(check(sql, "duckdb").is_err() || check(sql, "postgres").is_err(), "{sql} passed");
        }
    }
}
