//! `Cancel`: how a caller stops a query that is running in an engine (an
//! MCP `notifications/cancelled`, a client that went away). Engines watch it
//! beside their timeout and interrupt the query in the engine itself
//! (DuckDB interrupt, Postgres cancel request, MySQL `KILL QUERY`,
//! DataFusion task abort), never just abandon it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Cheap to clone; every clone sees the same state.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }

    /// A token nobody cancels (the CLI, tests).
    pub fn never() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Why a watch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The work finished first.
    Done,
    TimedOut,
    Cancelled,
}

/// Waits (on a thread of its own) until `done` reports, `timeout` passes or
/// `cancel` fires, checking every few milliseconds; on a timeout or a
/// cancellation it calls `interrupt` once. Returns a handle whose `finish`
/// tells the watcher the work is done and says why the watch ended.
pub fn watch(timeout: Duration, cancel: &Cancel, interrupt: impl FnOnce() + Send + 'static) -> Watch {
    let done = Arc::new(AtomicBool::new(false));
    let cancel = cancel.clone();
    let seen = done.clone();
    let thread = std::thread::spawn(move || {
        let deadline = Instant::now() + timeout;
        loop {
            if seen.load(Ordering::SeqCst) {
                return Stop::Done;
            }
            let stop = if cancel.is_cancelled() {
                Some(Stop::Cancelled)
            } else if Instant::now() >= deadline {
                Some(Stop::TimedOut)
            } else {
                None
            };
            if let Some(stop) = stop {
                interrupt();
                return stop;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            std::thread::park_timeout(left.min(Duration::from_millis(20)));
        }
    });
    Watch { done, thread }
}

pub struct Watch {
    done: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Stop>,
}

impl Watch {
    pub fn finish(self) -> Stop {
        self.done.store(true, Ordering::SeqCst);
        self.thread.thread().unpark();
        self.thread.join().unwrap_or(Stop::Done)
    }
}
