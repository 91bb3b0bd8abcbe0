//! Where event times come from. Injected so that tests are deterministic.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::watch;

/// A source of wall-clock time in Unix milliseconds.
pub trait Clock: Send + Sync {
    /// Milliseconds since the Unix epoch.
    fn now_millis(&self) -> u64;

    /// For a clock whose time does not pass by itself (a test's): a
    /// receiver that sees every change of its time, so that whoever waits
    /// for a moment of this clock wakes when it is set. `None` for a clock
    /// that follows real time: wait for it with a timer.
    fn changes(&self) -> Option<watch::Receiver<u64>> {
        None
    }
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
#[derive(Debug)]
pub struct ManualClock(watch::Sender<u64>);

impl ManualClock {
    /// A clock standing at `millis`.
    pub fn new(millis: u64) -> Self {
        ManualClock(watch::Sender::new(millis))
    }

    /// Moves the clock forward.
    pub fn advance(&self, millis: u64) {
        self.0.send_modify(|now| *now += millis);
    }

    /// Sets the clock.
    pub fn set(&self, millis: u64) {
        self.0.send_replace(millis);
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new(0)
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> u64 {
        *self.0.borrow()
    }

    fn changes(&self) -> Option<watch::Receiver<u64>> {
        Some(self.0.subscribe())
    }
}
