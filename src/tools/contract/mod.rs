//! The agent contract every tool answers under, independent of any one
//! tool: how large an answer may be (`shape`), the step after it (`next`),
//! what repeating a failing call does (`escalation`), page tokens
//! (`paging`), how far an answer may be trusted (`trust`), how
//! arguments are read and echoed (`args`), and how often one caller may
//! call (`rate`).
//!
//! Architecture invariant: knows tools only by name; imports nothing from
//! `tools::semantic`, `tools::provider` or `tools::surface`.

pub mod args;
pub mod escalation;
pub mod next;
pub mod paging;
pub mod rate;
pub mod shape;
pub mod trust;
