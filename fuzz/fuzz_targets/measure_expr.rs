//! The measure expression parser on arbitrary text: an expression or a
//! message, never a panic or a stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemabrain::model::MeasureExpr;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = MeasureExpr::parse(text);
    }
});
