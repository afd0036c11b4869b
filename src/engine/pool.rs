//! `Pool`: the idle connections of a network engine (Postgres, MySQL), so
//! that calls run side by side, each on a connection of its own, with no
//! engine-wide lock: a metadata query never waits behind a long one.
//!
//! Owns only the idle list. Connecting, health and session set-up belong to
//! the engine; a connection whose state is in doubt is simply not given back.

use std::sync::Mutex;

pub(crate) struct Pool<C> {
    idle: Mutex<Vec<C>>,
    max_idle: usize,
}

impl<C> Pool<C> {
    /// Keeps at most `max_idle` connections between calls; more may be open
    /// while calls run, and the surplus is closed when they end.
    pub fn new(max_idle: usize) -> Self {
        Pool { idle: Mutex::new(Vec::new()), max_idle }
    }

    /// An idle connection, if there is one.
    pub fn take(&self) -> Option<C> {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop()
    }

    /// Returns a healthy connection for the next call.
    pub fn give(&self, conn: C) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < self.max_idle {
            idle.push(conn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;

    #[test]
    fn keeps_at_most_max_idle_and_hands_them_out_again() {
        let pool = Pool::new(2);
        assert!(pool.take().is_none());
        for c in [1, 2, 3] {
            pool.give(c);
        }
        let mut got = vec![pool.take().unwrap(), pool.take().unwrap()];
        got.sort();
        assert_eq!(got, [1, 2]);
        assert!(pool.take().is_none());
    }
}
