//! Dialect profiles: data plus a few enums, one per target engine. The
//! emitter asks the profile at each choice point; a dialect never forks the
//! emitter. Names map to profiles in one place, `Dialect::from_name`.
//!
//! Engine-specific expressions (time buckets) are SQL templates over a
//! placeholder column `sb_x`, parsed once with the dialect's own sqlparser
//! dialect; the emitter substitutes the real column into the parsed tree, so
//! no request value ever reaches a template.

use crate::model::{DatePart, Grain, TypeClass};

/// How a bound value is written in the SQL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholders {
    /// `$1`, `$2`, … (DuckDB, Postgres, DataFusion).
    DollarNumbered,
    /// `?` (MySQL, SQLite, Trino, Snowflake, BigQuery, Databricks, ANSI).
    QuestionMark,
    /// `@p1`, `@p2`, … (SQL Server).
    AtNumbered,
}

/// The family of time-bucket templates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buckets {
    /// `date_trunc('month', x)`; `week` truncates to ISO Monday.
    DateTrunc,
    /// `TIMESTAMP_TRUNC(x, MONTH)` / `DATE_TRUNC(x, MONTH)`, `ISOWEEK`.
    BigQuery,
    /// `DATE_FORMAT`/`MAKEDATE`/`WEEKDAY` arithmetic (MySQL has no date_trunc).
    MySql,
    /// `DATETRUNC(month, x)` (SQL Server 2022), `iso_week`.
    SqlServer,
    /// `datetime(x, 'start of month')` modifiers.
    Sqlite,
    /// `FLOOR(x TO MONTH)` (SQL standard, Calcite).
    FloorTo,
}

/// How NULLs are sorted last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullsLast {
    /// `… NULLS LAST`.
    Explicit,
    /// A leading `x IS NULL` key (MySQL sorts NULL first by default).
    IsNullKey,
    /// A leading `CASE WHEN x IS NULL THEN 1 ELSE 0 END` key (SQL Server).
    CaseKey,
}

/// How the row count is limited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitStyle {
    Limit,
    /// `SELECT TOP (n)` (SQL Server).
    Top,
    /// `FETCH FIRST n ROWS ONLY` (SQL standard).
    FetchFirst,
}

/// How a continuous percentile is written, if the engine has an exact one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Percentile {
    /// `quantile_cont(x, p)`; see <https://duckdb.org/docs/stable/sql/functions/aggregates#quantile_contx-pos>.
    QuantileCont,
    /// `percentile_cont(p) WITHIN GROUP (ORDER BY x)` (SQL standard, Postgres, Snowflake).
    WithinGroup,
    /// `percentile(x, p)` (Spark/Databricks, exact).
    PercentileFn,
    /// No exact percentile aggregate (only approximations or window functions).
    Unsupported,
}

/// How the median is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Median {
    /// `median(x)`.
    Function,
    /// As the 0.5 percentile, in the dialect's percentile style.
    AsPercentile,
}

/// NULL-safe equality for joining metric results on their keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NullSafeEq {
    /// `a IS NOT DISTINCT FROM b`.
    IsNotDistinctFrom,
    /// `a <=> b` (MySQL).
    Spaceship,
}

/// How a boolean column is tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BooleanTest {
    /// `CASE WHEN x THEN …`.
    Bare,
    /// `CASE WHEN x = 1 THEN …` (SQL Server `bit`).
    EqualsOne,
}

/// How a span of hours, days or months is added to a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateMath {
    /// `x + INTERVAL '3 month'` (DuckDB, Postgres, DataFusion, Snowflake).
    IntervalString,
    /// `x + INTERVAL '3' MONTH` (SQL standard, Trino, Spark).
    IntervalQualified,
    /// `x + INTERVAL 3 MONTH` (MySQL).
    IntervalBare,
    /// `DATE_ADD(x, INTERVAL 3 MONTH)` / `TIMESTAMP_ADD` (BigQuery).
    BigQuery,
    /// `DATEADD(month, 3, x)` (SQL Server).
    DateAddFn,
    /// `datetime(x, '+3 months')` (SQLite).
    Sqlite,
}

/// How a case-sensitive `LIKE` is written (MetricFlow's engines compare
/// case-sensitively; a case-insensitive LIKE would count other rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Like {
    /// `x LIKE p` compares case-sensitively.
    Plain,
    /// `CAST(x AS BINARY) LIKE p`: MySQL's default collations ignore case,
    /// a binary operand compares bytes.
    BinaryOperand,
    /// Case-insensitive by default, with no portable way out (SQLite's
    /// ASCII folding, SQL Server's default collation).
    Unsupported,
}

/// Whether and how a recursive CTE (the time spine) is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecursiveCte {
    /// `WITH RECURSIVE s (a, b) AS (…)`; Trino requires the column list.
    WithColumns,
    /// `WITH RECURSIVE s AS (…)`: BigQuery refuses a column list.
    WithoutColumns,
    /// SQL Server stops recursion at 100 levels unless the statement ends in
    /// `OPTION (MAXRECURSION 0)`, which we cannot write portably.
    Unsupported,
}

#[derive(Clone, Debug)]
pub struct Dialect {
    pub name: &'static str,
    /// The sqlparser dialect that must parse what this profile emits.
    pub parser: &'static (dyn sqlparser::dialect::Dialect + Sync),
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    /// `"`, `` ` `` or `[`.
    pub quote: char,
    pub placeholders: Placeholders,
    pub buckets: Buckets,
    /// Whether a bucket of a DATE comes back as a timestamp, so it needs a
    /// cast back to DATE to stay typed like its dimension.
    pub buckets_widen_dates: bool,
    /// The template turning a bucket `sb_x` back into a DATE.
    pub date_of: &'static str,
    /// The template turning a DATE `sb_x` into a timestamp at its midnight:
    /// a DATE's bucket beside a TIMESTAMP's in one time column (SQLite
    /// compares them as text, where `2024-01-01` is not `2024-01-01 00:00:00`).
    pub timestamp_of: &'static str,
    /// Dates and timestamps are text compared as text (SQLite): a day
    /// `2024-01-01` sorts before its own midnight `2024-01-01 00:00:00`,
    /// so a DATE meets a timestamp only after one of them is converted.
    pub dates_as_text: bool,
    pub nulls_last: NullsLast,
    pub limit: LimitStyle,
    pub percentile: Percentile,
    pub median: Median,
    pub null_safe_eq: NullSafeEq,
    /// Type name for floating-point division in ratios.
    pub double_type: &'static str,
    /// Type names for date and timestamp parameters (`None`: not cast).
    pub date_param_types: Option<(&'static str, &'static str)>,
    pub boolean_test: BooleanTest,
    pub date_add: DateMath,
    pub recursive_cte: RecursiveCte,
    /// Whether a query inside another (a metric filter's answer, read as a
    /// derived table) may begin with its own WITH. T-SQL allows WITH only
    /// at the start of a statement.
    pub with_in_subquery: bool,
    /// Average DOUBLE PRECISION values: DataFusion's and MySQL's `avg` of a
    /// DECIMAL (MySQL's of an integer too) keeps only four more places than
    /// the column has.
    pub avg_as_double: bool,
    pub like: Like,
    /// The template of a date part of `sb_x` as a whole number (the day of
    /// the week ISO: Monday 1 to Sunday 7).
    pub date_part: fn(DatePart) -> &'static str,
}

/// Profiles are equal when they are the same profile.
impl PartialEq for Dialect {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Dialect {}

const DUCKDB: Dialect = Dialect {
    name: "duckdb",
    parser: &sqlparser::dialect::DuckDbDialect {},
    aliases: &[],
    quote: '"',
    placeholders: Placeholders::DollarNumbered,
    buckets: Buckets::DateTrunc,
    buckets_widen_dates: true,
    date_of: "CAST(sb_x AS DATE)",
    timestamp_of: "CAST(sb_x AS TIMESTAMP)",
    dates_as_text: false,
    nulls_last: NullsLast::Explicit,
    limit: LimitStyle::Limit,
    percentile: Percentile::QuantileCont,
    median: Median::Function,
    null_safe_eq: NullSafeEq::IsNotDistinctFrom,
    double_type: "DOUBLE PRECISION",
    date_param_types: Some(("DATE", "TIMESTAMP")),
    boolean_test: BooleanTest::Bare,
    date_add: DateMath::IntervalString,
    recursive_cte: RecursiveCte::WithColumns,
    with_in_subquery: true,
    avg_as_double: false,
    like: Like::Plain,
    date_part: |p| match p {
        DatePart::Year => "EXTRACT(year FROM sb_x)",
        DatePart::Quarter => "EXTRACT(quarter FROM sb_x)",
        DatePart::Month => "EXTRACT(month FROM sb_x)",
        DatePart::Day => "EXTRACT(day FROM sb_x)",
        DatePart::Dow => "EXTRACT(isodow FROM sb_x)",
        DatePart::Doy => "EXTRACT(doy FROM sb_x)",
    },
};

const POSTGRES: Dialect = Dialect {
    name: "postgres",
    parser: &sqlparser::dialect::PostgreSqlDialect {},
    aliases: &["postgresql", "pg"],
    percentile: Percentile::WithinGroup,
    median: Median::AsPercentile,
    // EXTRACT is NUMERIC in Postgres 14+: whole numbers as integers.
    date_part: |p| match p {
        DatePart::Year => "CAST(EXTRACT(year FROM sb_x) AS INTEGER)",
        DatePart::Quarter => "CAST(EXTRACT(quarter FROM sb_x) AS INTEGER)",
        DatePart::Month => "CAST(EXTRACT(month FROM sb_x) AS INTEGER)",
        DatePart::Day => "CAST(EXTRACT(day FROM sb_x) AS INTEGER)",
        DatePart::Dow => "CAST(EXTRACT(isodow FROM sb_x) AS INTEGER)",
        DatePart::Doy => "CAST(EXTRACT(doy FROM sb_x) AS INTEGER)",
    },
    ..DUCKDB
};

/// <https://datafusion.apache.org/user-guide/sql/scalar_functions.html#date-trunc>.
/// `median` is exact in DataFusion 54. Its `percentile_cont` (alias
/// `quantile_cont`, also `WITHIN GROUP`) is not: it truncates the
/// interpolation weight to millionths, off by up to 1e-6 of the gap between
/// the neighbouring values (verified against DuckDB on the demo by
/// `engines_datafusion::datafusion_median_is_exact_and_its_percentile_is_not`),
/// so percentiles are refused rather than approximated.
const DATAFUSION: Dialect = Dialect {
    name: "datafusion",
    parser: &sqlparser::dialect::GenericDialect {},
    aliases: &[],
    percentile: Percentile::Unsupported,
    avg_as_double: true,
    // Its dow counts from Sunday = 0.
    date_part: |p| match p {
        DatePart::Year => "CAST(EXTRACT(year FROM sb_x) AS INTEGER)",
        DatePart::Quarter => "CAST(EXTRACT(quarter FROM sb_x) AS INTEGER)",
        DatePart::Month => "CAST(EXTRACT(month FROM sb_x) AS INTEGER)",
        DatePart::Day => "CAST(EXTRACT(day FROM sb_x) AS INTEGER)",
        DatePart::Dow => "(CAST(EXTRACT(dow FROM sb_x) AS INTEGER) + 6) % 7 + 1",
        DatePart::Doy => "CAST(EXTRACT(doy FROM sb_x) AS INTEGER)",
    },
    ..DUCKDB
};

/// <https://docs.snowflake.com/en/sql-reference/functions/date_trunc>; DATE_TRUNC keeps DATEs.
const SNOWFLAKE: Dialect = Dialect {
    name: "snowflake",
    parser: &sqlparser::dialect::SnowflakeDialect {},
    aliases: &[],
    placeholders: Placeholders::QuestionMark,
    buckets_widen_dates: false,
    percentile: Percentile::WithinGroup,
    date_part: |p| match p {
        DatePart::Year => "EXTRACT(year FROM sb_x)",
        DatePart::Quarter => "EXTRACT(quarter FROM sb_x)",
        DatePart::Month => "EXTRACT(month FROM sb_x)",
        DatePart::Day => "EXTRACT(day FROM sb_x)",
        DatePart::Dow => "EXTRACT(dayofweekiso FROM sb_x)",
        DatePart::Doy => "EXTRACT(dayofyear FROM sb_x)",
    },
    ..DUCKDB
};

/// <https://cloud.google.com/bigquery/docs/reference/standard-sql/timestamp_functions#timestamp_trunc>
const BIGQUERY: Dialect = Dialect {
    name: "bigquery",
    parser: &sqlparser::dialect::BigQueryDialect {},
    aliases: &[],
    quote: '`',
    placeholders: Placeholders::QuestionMark,
    buckets: Buckets::BigQuery,
    buckets_widen_dates: false,
    percentile: Percentile::Unsupported,
    median: Median::AsPercentile,
    double_type: "FLOAT64",
    date_param_types: Some(("DATE", "DATETIME")),
    date_add: DateMath::BigQuery,
    recursive_cte: RecursiveCte::WithoutColumns,
    // DAYOFWEEK counts from Sunday = 1.
    date_part: |p| match p {
        DatePart::Year => "EXTRACT(YEAR FROM sb_x)",
        DatePart::Quarter => "EXTRACT(QUARTER FROM sb_x)",
        DatePart::Month => "EXTRACT(MONTH FROM sb_x)",
        DatePart::Day => "EXTRACT(DAY FROM sb_x)",
        DatePart::Dow => "MOD(EXTRACT(DAYOFWEEK FROM sb_x) + 5, 7) + 1",
        DatePart::Doy => "EXTRACT(DAYOFYEAR FROM sb_x)",
    },
    ..DUCKDB
};

/// <https://trino.io/docs/current/functions/datetime.html#date_trunc>; no exact percentile aggregate.
const TRINO: Dialect = Dialect {
    name: "trino",
    parser: &sqlparser::dialect::GenericDialect {},
    aliases: &["presto"],
    placeholders: Placeholders::QuestionMark,
    buckets_widen_dates: false,
    percentile: Percentile::Unsupported,
    median: Median::AsPercentile,
    double_type: "DOUBLE",
    date_add: DateMath::IntervalQualified,
    date_part: |p| match p {
        DatePart::Year => "year(sb_x)",
        DatePart::Quarter => "quarter(sb_x)",
        DatePart::Month => "month(sb_x)",
        DatePart::Day => "day(sb_x)",
        DatePart::Dow => "day_of_week(sb_x)",
        DatePart::Doy => "day_of_year(sb_x)",
    },
    ..DUCKDB
};

/// Spark SQL: <https://docs.databricks.com/en/sql/language-manual/functions/date_trunc.html>
const DATABRICKS: Dialect = Dialect {
    name: "databricks",
    parser: &sqlparser::dialect::DatabricksDialect {},
    aliases: &["spark"],
    quote: '`',
    placeholders: Placeholders::QuestionMark,
    percentile: Percentile::PercentileFn,
    double_type: "DOUBLE",
    // Spark's avg of a DECIMAL keeps only four more places than the column.
    avg_as_double: true,
    date_add: DateMath::IntervalQualified,
    date_part: |p| match p {
        DatePart::Year => "EXTRACT(YEAR FROM sb_x)",
        DatePart::Quarter => "EXTRACT(QUARTER FROM sb_x)",
        DatePart::Month => "EXTRACT(MONTH FROM sb_x)",
        DatePart::Day => "EXTRACT(DAY FROM sb_x)",
        // weekday() counts from Monday = 0.
        DatePart::Dow => "weekday(sb_x) + 1",
        DatePart::Doy => "dayofyear(sb_x)",
    },
    ..DUCKDB
};

/// MySQL 8 / MariaDB 10.6: no date_trunc, no NULLS LAST, no FULL JOIN.
const MYSQL: Dialect = Dialect {
    name: "mysql",
    parser: &sqlparser::dialect::MySqlDialect {},
    aliases: &["mariadb"],
    quote: '`',
    placeholders: Placeholders::QuestionMark,
    buckets: Buckets::MySql,
    nulls_last: NullsLast::IsNullKey,
    percentile: Percentile::Unsupported,
    median: Median::AsPercentile,
    null_safe_eq: NullSafeEq::Spaceship,
    double_type: "DOUBLE",
    date_param_types: Some(("DATE", "DATETIME")),
    timestamp_of: "CAST(sb_x AS DATETIME)",
    date_add: DateMath::IntervalBare,
    // MySQL's AVG of integers or DECIMALs is a DECIMAL with only four more
    // places (div_precision_increment): 13/7 came back 1.8571.
    avg_as_double: true,
    like: Like::BinaryOperand,
    // WEEKDAY counts from Monday = 0.
    date_part: |p| match p {
        DatePart::Year => "YEAR(sb_x)",
        DatePart::Quarter => "QUARTER(sb_x)",
        DatePart::Month => "MONTH(sb_x)",
        DatePart::Day => "DAYOFMONTH(sb_x)",
        DatePart::Dow => "WEEKDAY(sb_x) + 1",
        DatePart::Doy => "DAYOFYEAR(sb_x)",
    },
    ..DUCKDB
};

/// SQL Server 2022 (DATETRUNC, IS NOT DISTINCT FROM); PERCENTILE_CONT is window-only there.
const MSSQL: Dialect = Dialect {
    name: "mssql",
    parser: &sqlparser::dialect::MsSqlDialect {},
    aliases: &["sqlserver", "tsql"],
    quote: '[',
    placeholders: Placeholders::AtNumbered,
    buckets: Buckets::SqlServer,
    buckets_widen_dates: false,
    nulls_last: NullsLast::CaseKey,
    limit: LimitStyle::Top,
    percentile: Percentile::Unsupported,
    median: Median::AsPercentile,
    double_type: "FLOAT",
    date_param_types: Some(("DATE", "DATETIME2")),
    timestamp_of: "CAST(sb_x AS DATETIME2)",
    boolean_test: BooleanTest::EqualsOne,
    date_add: DateMath::DateAddFn,
    recursive_cte: RecursiveCte::Unsupported,
    with_in_subquery: false,
    like: Like::Unsupported,
    // Days since a Monday (1900-01-01), not DATEPART(weekday), which follows @@DATEFIRST.
    date_part: |p| match p {
        DatePart::Year => "DATEPART(year, sb_x)",
        DatePart::Quarter => "DATEPART(quarter, sb_x)",
        DatePart::Month => "DATEPART(month, sb_x)",
        DatePart::Day => "DATEPART(day, sb_x)",
        DatePart::Dow => "DATEDIFF(day, '19000101', sb_x) % 7 + 1",
        DatePart::Doy => "DATEPART(dayofyear, sb_x)",
    },
    ..DUCKDB
};

/// SQLite 3.39+: dates are text; datetime() modifiers bucket them.
const SQLITE: Dialect = Dialect {
    name: "sqlite",
    parser: &sqlparser::dialect::SQLiteDialect {},
    aliases: &[],
    placeholders: Placeholders::QuestionMark,
    buckets: Buckets::Sqlite,
    date_of: "date(sb_x)",
    timestamp_of: "datetime(sb_x)",
    dates_as_text: true,
    percentile: Percentile::Unsupported,
    median: Median::AsPercentile,
    double_type: "REAL",
    date_param_types: None,
    date_add: DateMath::Sqlite,
    like: Like::Unsupported,
    // strftime's %w counts from Sunday = 0.
    date_part: |p| match p {
        DatePart::Year => "CAST(strftime('%Y', sb_x) AS INTEGER)",
        DatePart::Quarter => "(CAST(strftime('%m', sb_x) AS INTEGER) + 2) / 3",
        DatePart::Month => "CAST(strftime('%m', sb_x) AS INTEGER)",
        DatePart::Day => "CAST(strftime('%d', sb_x) AS INTEGER)",
        DatePart::Dow => "(CAST(strftime('%w', sb_x) AS INTEGER) + 6) % 7 + 1",
        DatePart::Doy => "CAST(strftime('%j', sb_x) AS INTEGER)",
    },
    ..DUCKDB
};

/// The SQL standard, as Calcite reads it.
const ANSI: Dialect = Dialect {
    name: "ansi",
    parser: &sqlparser::dialect::AnsiDialect {},
    aliases: &["calcite"],
    placeholders: Placeholders::QuestionMark,
    buckets: Buckets::FloorTo,
    buckets_widen_dates: false,
    limit: LimitStyle::FetchFirst,
    percentile: Percentile::WithinGroup,
    median: Median::AsPercentile,
    date_add: DateMath::IntervalQualified,
    date_part: |p| match p {
        DatePart::Year => "EXTRACT(YEAR FROM sb_x)",
        DatePart::Quarter => "EXTRACT(QUARTER FROM sb_x)",
        DatePart::Month => "EXTRACT(MONTH FROM sb_x)",
        DatePart::Day => "EXTRACT(DAY FROM sb_x)",
        DatePart::Dow => "EXTRACT(ISODOW FROM sb_x)",
        DatePart::Doy => "EXTRACT(DOY FROM sb_x)",
    },
    ..DUCKDB
};

const PROFILES: [&Dialect; 11] =
    [&DUCKDB, &POSTGRES, &DATAFUSION, &SNOWFLAKE, &BIGQUERY, &TRINO, &DATABRICKS, &MYSQL, &MSSQL, &SQLITE, &ANSI];

impl Dialect {
    /// Names accepted by `from_name`, for error messages.
    pub fn supported() -> Vec<&'static str> {
        PROFILES.iter().map(|d| d.name).collect()
    }

    pub fn duckdb() -> &'static Dialect {
        &DUCKDB
    }

    pub fn postgres() -> &'static Dialect {
        &POSTGRES
    }

    pub fn mysql() -> &'static Dialect {
        &MYSQL
    }

    pub fn datafusion() -> &'static Dialect {
        &DATAFUSION
    }

    /// The profile for a name or alias, case-insensitively; the error lists
    /// the supported names.
    pub fn from_name(name: &str) -> Result<&'static Dialect, String> {
        let lower = name.to_ascii_lowercase();
        PROFILES
            .iter()
            .copied()
            .find(|d| d.name == lower || d.aliases.contains(&lower.as_str()))
            .ok_or_else(|| format!("unknown dialect `{name}`; supported: {}", Dialect::supported().join(", ")))
    }

    pub fn placeholder(&self, index: usize) -> String {
        match self.placeholders {
            Placeholders::DollarNumbered => format!("${index}"),
            Placeholders::QuestionMark => "?".to_string(),
            Placeholders::AtNumbered => format!("@p{index}"),
        }
    }

    /// The template of a time bucket over `sb_x` at a calendar grain (a
    /// custom grain reads the time spine: `emit` writes it, never a template).
    pub fn bucket_template(&self, grain: Grain, class: TypeClass) -> String {
        let g = grain.as_str();
        match self.buckets {
            Buckets::DateTrunc => format!("date_trunc('{g}', sb_x)"),
            Buckets::BigQuery => {
                let part = if grain == Grain::Week { "ISOWEEK".to_string() } else { g.to_ascii_uppercase() };
                let f = if class == TypeClass::Date { "DATE_TRUNC" } else { "TIMESTAMP_TRUNC" };
                format!("{f}(sb_x, {part})")
            }
            Buckets::MySql => match grain {
                Grain::Hour => "CAST(DATE_FORMAT(sb_x, '%Y-%m-%d %H:00:00') AS DATETIME)".into(),
                Grain::Day => "CAST(DATE(sb_x) AS DATETIME)".into(),
                Grain::Week => "CAST(DATE(sb_x) - INTERVAL WEEKDAY(sb_x) DAY AS DATETIME)".into(),
                Grain::Month => "CAST(DATE_FORMAT(sb_x, '%Y-%m-01') AS DATETIME)".into(),
                Grain::Quarter => "CAST(MAKEDATE(YEAR(sb_x), 1) + INTERVAL (QUARTER(sb_x) - 1) QUARTER AS DATETIME)".into(),
                Grain::Year => "CAST(MAKEDATE(YEAR(sb_x), 1) AS DATETIME)".into(),
                Grain::Custom(_) => "sb_x".into(),
            },
            Buckets::SqlServer => {
                let part = if grain == Grain::Week { "iso_week" } else { g };
                format!("DATETRUNC({part}, sb_x)")
            }
            Buckets::Sqlite => match grain {
                Grain::Hour => "strftime('%Y-%m-%d %H:00:00', sb_x)".into(),
                Grain::Day => "datetime(sb_x, 'start of day')".into(),
                // `weekday 0` moves to the coming Sunday (or stays), six days back is Monday.
                Grain::Week => "datetime(sb_x, 'weekday 0', '-6 days', 'start of day')".into(),
                Grain::Month => "datetime(sb_x, 'start of month')".into(),
                Grain::Quarter => {
                    "datetime(sb_x, 'start of month', '-' || ((CAST(strftime('%m', sb_x) AS INTEGER) - 1) % 3) || ' months')".into()
                }
                Grain::Year => "datetime(sb_x, 'start of year')".into(),
                Grain::Custom(_) => "sb_x".into(),
            },
            Buckets::FloorTo => format!("FLOOR(sb_x TO {})", g.to_ascii_uppercase()),
        }
    }

    /// The template adding `n` hours, days or months (`unit`) to `sb_x`, a
    /// time of `class`; `n` may be negative. Weeks, quarters and years are
    /// converted by `Interval::in_base_units` first.
    pub fn add_template(&self, n: i64, unit: Grain, class: TypeClass) -> String {
        debug_assert!(matches!(unit, Grain::Hour | Grain::Day | Grain::Month));
        let u = unit.as_str();
        let upper = u.to_ascii_uppercase();
        let (sign, abs) = if n < 0 { ("-", -n) } else { ("+", n) };
        match self.date_add {
            // Parenthesised: DataFusion's parser reads an operator after the
            // interval's string as part of the interval (`'1 month' AND …`).
            DateMath::IntervalString => format!("(sb_x {sign} INTERVAL '{abs} {u}')"),
            DateMath::IntervalQualified => format!("sb_x {sign} INTERVAL '{abs}' {upper}"),
            DateMath::IntervalBare => format!("sb_x {sign} INTERVAL {abs} {upper}"),
            // Buckets of timestamps are TIMESTAMPs (TIMESTAMP_TRUNC), which
            // TIMESTAMP_ADD moves by hours and days but not by months.
            DateMath::BigQuery => match (class, unit) {
                (TypeClass::Date, Grain::Day | Grain::Month) => format!("DATE_ADD(sb_x, INTERVAL {n} {upper})"),
                (_, Grain::Month) => format!("TIMESTAMP(DATETIME_ADD(DATETIME(sb_x), INTERVAL {n} MONTH))"),
                _ => format!("TIMESTAMP_ADD(sb_x, INTERVAL {n} {upper})"),
            },
            DateMath::DateAddFn => format!("DATEADD({u}, {n}, sb_x)"),
            // SQLite carries a month's overflow into the next (31 January
            // + 1 month is 3 March); the other engines (and MetricFlow) clamp
            // to the month's last day (28 February). The earlier of the two
            // is the clamped one: its last day, at the same time of day.
            DateMath::Sqlite if unit == Grain::Month => {
                let (end_sign, end_abs) = if n + 1 < 0 { ("-", -(n + 1)) } else { ("+", n + 1) };
                format!(
                    "min(datetime(sb_x, '{sign}{abs} months'), datetime(date(sb_x, 'start of month', '{end_sign}{end_abs} months', '-1 day') || ' ' || time(sb_x)))"
                )
            }
            DateMath::Sqlite => format!("datetime(sb_x, '{sign}{abs} {u}s')"),
        }
    }

    /// The sqlparser dialect that must parse what this profile emits.
    pub fn parser_dialect(&self) -> &'static (dyn sqlparser::dialect::Dialect + Sync) {
        self.parser
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bucket template of every dialect parses with its own parser.
    #[test]
    fn every_template_parses() {
        let x = sqlparser::ast::Expr::Identifier(sqlparser::ast::Ident::new("c"));
        for d in PROFILES {
            for g in Grain::ALL {
                for class in [TypeClass::Date, TypeClass::Timestamp] {
                    let e = crate::sql::build::from_template(&d.bucket_template(g, class), d, &x);
                    assert!(!e.to_string().contains("sb_x"), "{} {g:?}: {e}", d.name);
                    // Our AST writes a template's plain text in every position.
                    assert_eq!(format!("{e:#}"), e.to_string(), "{} {g:?}", d.name);
                }
            }
            for t in [d.date_of, d.timestamp_of] {
                let e = crate::sql::build::from_template(t, d, &x);
                assert!(!e.to_string().contains("sb_x"), "{} {t}: {e}", d.name);
                assert_eq!(format!("{e:#}"), e.to_string(), "{} {t}", d.name);
            }
            // Date parts parse, and what they render reads back the same.
            for part in DatePart::ALL {
                let e = crate::sql::build::from_template((d.date_part)(part), d, &x);
                let text = e.to_string();
                assert!(!text.contains("sb_x"), "{} {part:?}: {text}", d.name);
                assert_eq!(format!("{e:#}"), text, "{} {part:?}", d.name);
                let again = sqlparser::parser::Parser::new(d.parser).try_with_sql(&text).and_then(|mut p| p.parse_expr()).unwrap();
                assert_eq!(again.to_string(), text, "{} {part:?}", d.name);
            }
            for unit in [Grain::Hour, Grain::Day, Grain::Month] {
                for n in [-3, 1] {
                    let t = d.add_template(n, unit, TypeClass::Timestamp);
                    let e = crate::sql::build::from_template(&t, d, &x);
                    assert!(!e.to_string().contains("sb_x"), "{} {t}: {e}", d.name);
                    assert_eq!(format!("{e:#}"), e.to_string(), "{} {t}", d.name);
                }
            }
        }
    }

    #[test]
    fn names_and_aliases_resolve() {
        assert_eq!(Dialect::from_name("calcite").unwrap().name, "ansi");
        assert_eq!(Dialect::from_name("PostgreSQL").unwrap().name, "postgres");
        assert_eq!(Dialect::from_name("mariadb").unwrap().name, "mysql");
        assert_eq!(Dialect::supported().len(), 11);
        assert!(Dialect::from_name("oracle").unwrap_err().contains("supported: duckdb, postgres"));
    }
}
