//! The `schemabrain` binary: logs to stderr, everything else in `cli`.

use std::process::ExitCode;

// Compiling a request is mostly small allocations; mimalloc serves them
// faster than glibc (docs/performance.md). The library does not choose.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SCHEMABRAIN_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .init();
    schemabrain::cli::run()
}
