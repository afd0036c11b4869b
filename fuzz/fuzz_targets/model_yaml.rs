//! cargo-fuzz entry point; the body is `../bodies/model_yaml.rs`.
#![no_main]

#[path = "../bodies/model_yaml.rs"]
mod body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| body::run(data));
