//! Where event times come from. Injected so that tests are deterministic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of wall-clock time in Unix milliseconds.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> u64;
}

/// The system clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> u64 {
        // A clock before 1970 is a misconfigured machine; 0 is recorded
        // rather than failing the append.
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64)
    }
}

/// A clock that only moves when told to, for tests.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock standing at `millis`.
    pub fn new(millis: u64) -> Self {
        ManualClock(AtomicU64::new(millis))
    }

    /// Moves the clock forward.
    pub fn advance(&self, millis: u64) {
        self.0.fetch_add(millis, Ordering::Relaxed);
    }

    /// Sets the clock.
    pub fn set(&self, millis: u64) {
        self.0.store(millis, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
