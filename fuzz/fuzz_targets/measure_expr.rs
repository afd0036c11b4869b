//! cargo-fuzz entry point; the body is `../bodies/measure_expr.rs`.
#![no_main]

#[path = "../bodies/measure_expr.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
