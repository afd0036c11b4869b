//! cargo-fuzz entry point; the body is `../bodies/sql_guard.rs`.
#![no_main]

#[path = "../bodies/sql_guard.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
