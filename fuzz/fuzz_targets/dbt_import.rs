//! cargo-fuzz entry point; the body is `../bodies/dbt_import.rs`.
#![no_main]

#[path = "../bodies/dbt_import.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
