//! Rate limits per principal (issue 37): calls per minute over a sliding
//! window, and queries running at once. A call over a limit is not run: it
//! is answered `cost_cap_exceeded` (code `RATE_LIMITED`, seed 003) with the
//! time to wait, in the message and in `next_action`.
//!
//! The window keeps at most `per_minute` instants per principal, so memory
//! is bounded by the limit times the principals that called.
//!
//! Architecture invariant: knows principals by a key string and tools not
//! at all; the caller says whether a call is a query.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::envelope::{Envelope, FailureKind, NextAction, Recovery, ToolError};

const WINDOW: Duration = Duration::from_secs(60);

/// The limits of each principal; `None` is unlimited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimits {
    pub per_minute: Option<u32>,
    pub concurrent: Option<u32>,
}

impl RateLimits {
    pub fn is_unlimited(&self) -> bool {
        self.per_minute.is_none() && self.concurrent.is_none()
    }
}

#[derive(Default)]
struct Usage {
    calls: VecDeque<Instant>,
    running: u32,
}

pub struct RateLimiter {
    limits: RateLimits,
    usage: Mutex<HashMap<String, Usage>>,
}

/// A call over a limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Limited {
    PerMinute { limit: u32, retry_after: Duration },
    Concurrent { limit: u32 },
}

impl Limited {
    /// Seconds to wait before the same call can run (at least 1).
    pub fn retry_after_secs(&self) -> u64 {
        match self {
            Limited::PerMinute { retry_after, .. } => retry_after.as_secs_f64().ceil().max(1.0) as u64,
            // A running query frees its slot when it ends; a second is a fair first wait.
            Limited::Concurrent { .. } => 1,
        }
    }

    /// The answer to a call over the limit.
    pub fn envelope(&self, principal: &str, tool: &str) -> Envelope {
        let wait = self.retry_after_secs();
        let message = match self {
            Limited::PerMinute { limit, .. } => {
                format!("Rate limit: {principal} may make {limit} calls per minute and has; this {tool} call was not run. Retry after {wait}s.")
            }
            Limited::Concurrent { limit } => {
                format!("Rate limit: {principal} may run {limit} queries at once and is; this {tool} call was not run. Retry after {wait}s, when one has finished.")
            }
        };
        Envelope::error(ToolError::new(FailureKind::CostCapExceeded, message, Recovery::none()))
            .with_next_action(NextAction::instruct(format!("Wait {wait}s, then send the same call again."), None, false))
    }
}

/// Holds a query's slot while it runs; dropping it frees the slot.
pub struct Permit<'a> {
    limiter: &'a RateLimiter,
    key: String,
    query: bool,
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.query {
            return;
        }
        let mut usage = self.limiter.usage.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(u) = usage.get_mut(&self.key) {
            u.running = u.running.saturating_sub(1);
        }
    }
}

impl RateLimiter {
    pub fn new(limits: RateLimits) -> Self {
        RateLimiter { limits, usage: Mutex::new(HashMap::new()) }
    }

    /// Admits one call by `principal` at `now`; `query`: it runs the engine
    /// and counts against the concurrent limit while its permit lives.
    pub fn admit_at(&self, principal: &str, query: bool, now: Instant) -> Result<Permit<'_>, Limited> {
        let mut usage = self.usage.lock().unwrap_or_else(|p| p.into_inner());
        let u = usage.entry(principal.to_string()).or_default();
        while u.calls.front().is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW) {
            u.calls.pop_front();
        }
        if let Some(limit) = self.limits.per_minute {
            if u.calls.len() >= limit as usize {
                let oldest = u.calls.front().copied().unwrap_or(now);
                return Err(Limited::PerMinute { limit, retry_after: WINDOW.saturating_sub(now.saturating_duration_since(oldest)) });
            }
        }
        if let (true, Some(limit)) = (query, self.limits.concurrent) {
            if u.running >= limit {
                return Err(Limited::Concurrent { limit });
            }
        }
        if self.limits.per_minute.is_some() {
            u.calls.push_back(now);
        }
        if query {
            u.running += 1;
        }
        Ok(Permit { limiter: self, key: principal.to_string(), query })
    }

    pub fn admit(&self, principal: &str, query: bool) -> Result<Permit<'_>, Limited> {
        self.admit_at(principal, query, Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_over_its_minute_waits_and_another_does_not() {
        let r = RateLimiter::new(RateLimits { per_minute: Some(3), concurrent: None });
        let t0 = Instant::now();
        for i in 0..3 {
            assert!(r.admit_at("alice", false, t0 + Duration::from_secs(i)).is_ok());
        }
        let over = r.admit_at("alice", false, t0 + Duration::from_secs(10)).err().unwrap();
        assert_eq!(over, Limited::PerMinute { limit: 3, retry_after: Duration::from_secs(50) });
        assert_eq!(over.retry_after_secs(), 50);
        assert!(r.admit_at("bob", false, t0 + Duration::from_secs(10)).is_ok(), "limits are per principal");
        // The first call leaves the window after a minute.
        assert!(r.admit_at("alice", false, t0 + Duration::from_secs(60)).is_ok());
        let env = over.envelope("alice", "get_metric").into_json();
        assert_eq!(env["error"]["kind"], "cost_cap_exceeded");
        assert_eq!(env["error"]["code"], "RATE_LIMITED");
        assert!(env["error"]["message"].as_str().unwrap().contains("Retry after 50s"), "{env}");
    }

    #[test]
    fn concurrent_queries_hold_a_slot_until_they_end() {
        let r = RateLimiter::new(RateLimits { per_minute: None, concurrent: Some(1) });
        let first = r.admit("alice", true).unwrap();
        assert_eq!(r.admit("alice", true).err(), Some(Limited::Concurrent { limit: 1 }));
        assert!(r.admit("alice", false).is_ok(), "a call that runs no query is not held back");
        drop(first);
        assert!(r.admit("alice", true).is_ok());
    }
}
