//! Dialect profiles: data plus a few enums, one per target engine. The
//! emitter asks the profile at each choice point; a dialect never forks the
//! emitter. Names map to profiles in one place, `Dialect::from_name`.

/// How a bound value is written in the SQL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholders {
    /// `$1`, `$2`, … (DuckDB, Postgres).
    DollarNumbered,
    /// `?` (MySQL, SQLite, Trino).
    QuestionMark,
}

/// How a timestamp is truncated to the start of its period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateTrunc {
    /// `date_trunc('month', x)`; `week` truncates to ISO Monday.
    /// See <https://duckdb.org/docs/stable/sql/functions/date#date_truncpart-date>.
    DateTruncFunction,
}

/// How a continuous percentile (and the median) is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Percentile {
    /// `quantile_cont(x, p)`; see <https://duckdb.org/docs/stable/sql/functions/aggregates#quantile_contx-pos>.
    QuantileCont,
    /// `percentile_cont(p) WITHIN GROUP (ORDER BY x)` (SQL standard, Postgres).
    WithinGroup,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialect {
    pub name: &'static str,
    pub quote: char,
    pub placeholders: Placeholders,
    pub date_trunc: DateTrunc,
    /// Whether `date_trunc` of a DATE returns a TIMESTAMP, so the bucket needs
    /// a cast back to DATE to stay typed like its dimension.
    pub date_trunc_widens_dates: bool,
    /// Write NULLS LAST explicitly, so NULL groups sort last in every engine.
    pub explicit_nulls_last: bool,
    pub percentile: Percentile,
}

const DUCKDB: Dialect = Dialect {
    name: "duckdb",
    quote: '"',
    placeholders: Placeholders::DollarNumbered,
    date_trunc: DateTrunc::DateTruncFunction,
    date_trunc_widens_dates: true,
    explicit_nulls_last: true,
    percentile: Percentile::QuantileCont,
};

const POSTGRES: Dialect = Dialect {
    name: "postgres",
    quote: '"',
    placeholders: Placeholders::DollarNumbered,
    date_trunc: DateTrunc::DateTruncFunction,
    date_trunc_widens_dates: true,
    explicit_nulls_last: true,
    percentile: Percentile::WithinGroup,
};

const PROFILES: [&Dialect; 2] = [&DUCKDB, &POSTGRES];

impl Dialect {
    /// Names accepted by `from_name`, for error messages.
    pub fn supported() -> Vec<&'static str> {
        PROFILES.iter().map(|d| d.name).collect()
    }

    pub fn duckdb() -> &'static Dialect {
        &DUCKDB
    }

    pub fn from_name(name: &str) -> Result<&'static Dialect, String> {
        let lower = name.to_ascii_lowercase();
        let lower = match lower.as_str() {
            "postgresql" | "pg" => "postgres",
            other => other,
        };
        PROFILES.iter().copied().find(|d| d.name == lower).ok_or_else(|| {
            format!("unknown dialect `{name}`; supported: {}", Dialect::supported().join(", "))
        })
    }

    pub fn placeholder(&self, index: usize) -> String {
        match self.placeholders {
            Placeholders::DollarNumbered => format!("${index}"),
            Placeholders::QuestionMark => "?".to_string(),
        }
    }

    /// The sqlparser dialect that must parse what this profile emits.
    pub fn parser_dialect(&self) -> Box<dyn sqlparser::dialect::Dialect> {
        match self.name {
            "postgres" => Box::new(sqlparser::dialect::PostgreSqlDialect {}),
            _ => Box::new(sqlparser::dialect::DuckDbDialect {}),
        }
    }
}
