//! cargo-fuzz entry point; the body is `../bodies/request_json.rs`.
#![no_main]

#[path = "../bodies/request_json.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
