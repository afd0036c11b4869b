//! The measure expression parser on arbitrary text: an expression or a
//! message, never a panic or a stack overflow.
//!
//! The body of `fuzz_targets/measure_expr.rs`; `tests/it/fuzz_regressions.rs`
//! compiles it too and replays the seeds and regressions through it on
//! stable, so a target that stops compiling fails `cargo test`.

use schemabrain::model::MeasureExpr;

pub fn run(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = MeasureExpr::parse(text);
    }
}
