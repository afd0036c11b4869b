//! The data-provider surface of seed 003 (free SQL beside the semantic
//! layer). Today: the `query_sql` guard alone, the check every free
//! statement must pass before anything else looks at it. The tools that
//! will use it (query_sql, explain_sql, ...) are not published yet: free
//! SQL needs column-level PII resolution first, or it would be a side door.
//!
//! Architecture invariant: pure functions over SQL text; no engine, no IO.

pub mod guard;
