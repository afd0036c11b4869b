//! The small async runtime a network engine owns: the `Engine` trait is
//! synchronous, the maintained Postgres and MySQL clients are async, so each
//! engine keeps one current-thread tokio runtime and blocks on it per call.
//!
//! Owns only the runtime's construction and the deadline helper; knows
//! nothing of SQL or catalogs.

use std::future::Future;
use std::time::Duration;

use super::EngineError;

/// One current-thread runtime (no worker threads: the engine's calls are
/// sequential, and a spawned connection task runs while a call blocks on it).
pub(crate) fn new(source: &str) -> Result<tokio::runtime::Runtime, EngineError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| EngineError::Connect { source_url: source.to_string(), message: format!("cannot start the async runtime: {e}") })
}

/// Runs `fut` to completion on `rt`. Called from inside another tokio
/// runtime (an async MCP handler, say), where blocking on a runtime would
/// panic, it blocks a short-lived thread of its own instead.
pub(crate) fn block_on<F>(rt: &tokio::runtime::Runtime, fut: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_ok() {
        std::thread::scope(|s| match s.spawn(|| rt.block_on(fut)).join() {
            Ok(out) => out,
            Err(panic) => std::panic::resume_unwind(panic),
        })
    } else {
        rt.block_on(fut)
    }
}

/// Runs `fut` on `rt`, giving up after `limit` (a client-side backstop behind
/// the server's own statement timeout). `None` means the deadline passed.
pub(crate) fn block_on_within<F>(rt: &tokio::runtime::Runtime, limit: Duration, fut: F) -> Option<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    block_on(rt, async { tokio::time::timeout(limit, fut).await.ok() })
}

/// Hides the password of a URL for messages (`postgres://u:secret@h` → `postgres://u:***@h`).
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((userinfo, host)) = rest.rsplit_once('@') else { return url.to_string() };
    match userinfo.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_string(),
    }
}
