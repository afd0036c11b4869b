//! The free-SQL guard on arbitrary text in every dialect: a parsed query or
//! a refusal, never a panic or a stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schemabrain::provider::guard::{check, DIALECTS};

fuzz_target!(|data: &[u8]| {
    let Some((&d, rest)) = data.split_first() else { return };
    if let Ok(sql) = std::str::from_utf8(rest) {
        let _ = check(sql, DIALECTS[d as usize % DIALECTS.len()]);
    }
});
