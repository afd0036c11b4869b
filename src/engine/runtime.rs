//! The small async runtime a network engine owns: the `Engine` trait is
//! synchronous, the maintained Postgres and MySQL clients are async, so each
//! engine keeps one tokio runtime and blocks on it per call, from as many
//! threads as there are calls running.
//!
//! Owns only the runtime's construction and the deadline helper; knows
//! nothing of SQL or catalogs.

use std::future::Future;
use std::time::Duration;

use super::EngineError;

/// A runtime with one worker: it drives the connection tasks and cancel
/// requests while any number of callers block on their own queries (the work
/// is waiting on sockets, so one worker is enough).
pub(crate) fn new(source: &str) -> Result<Runtime, EngineError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("schemabrain-net")
        .enable_all()
        .build()
        .map(|rt| Runtime(Some(rt)))
        .map_err(|e| EngineError::Connect { source_url: source.to_string(), message: format!("cannot start the async runtime: {e}") })
}

/// A runtime that shuts down without waiting when dropped: dropping a tokio
/// runtime the ordinary way panics inside another runtime (an MCP server
/// dropping its session), and waiting would hang on an unanswered socket.
pub(crate) struct Runtime(Option<tokio::runtime::Runtime>);

impl std::ops::Deref for Runtime {
    type Target = tokio::runtime::Runtime;

    // `None` only inside `drop`, after which nothing derefs it.
    #[allow(clippy::expect_used)]
    fn deref(&self) -> &tokio::runtime::Runtime {
        self.0.as_ref().expect("the runtime lives as long as its engine")
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
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
