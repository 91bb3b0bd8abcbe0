//! Group commit: when appends become durable, and visible.
//!
//! Writers put their batch into sled under the writer lock and record its
//! last global position here. Then each waits until a flush covers its
//! position. The first waiter to find no flush running becomes the leader:
//! it notes the highest position written so far, flushes (sled's flush
//! plus `fdatasync` of sled's file) without holding any lock, marks
//! everything up to the noted position durable and wakes the others. Those
//! covered return; the rest elect the next leader. Under load one disk
//! sync acknowledges every append that was written while the previous one
//! ran.
//!
//! Visibility follows durability: the durable position is the watermark
//! readers stop at, and the events under it are published to subscribers
//! in position order by whoever moved it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use crate::config::Durability;
use crate::error::Result;
use crate::event::StoredEvent;
use crate::hub::Hub;

/// The longest a leader waits for appends on their way before flushing.
const GATHER_LIMIT: Duration = Duration::from_micros(500);
const GATHER_POLL: Duration = Duration::from_micros(50);

/// An append on its way into sled (see `GroupCommit::gather`).
pub(crate) struct InFlight<'a>(&'a GroupCommit);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

pub(crate) struct GroupCommit {
    durability: Durability,
    state: Mutex<State>,
    /// The highest durable position, readable without the lock.
    durable: AtomicU64,
    /// Appends between `begin_write` and `written` (or their failure).
    in_flight: AtomicUsize,
    pub(crate) hub: Hub,
}

struct State {
    /// The highest position written to sled.
    written: u64,
    /// The highest position known to be on disk.
    durable: u64,
    /// A leader is flushing.
    flushing: bool,
    /// Written events not yet published, in position order.
    unpublished: VecDeque<Arc<StoredEvent>>,
    /// Appends parked until a flush covers them.
    waiters: Vec<Waiter>,
}

struct Waiter {
    position: u64,
    thread: Thread,
}

impl GroupCommit {
    /// `recovered`: the last position found on open, durable by definition.
    pub(crate) fn new(durability: Durability, recovered: u64, hub: Hub) -> Self {
        GroupCommit {
            durability,
            state: Mutex::new(State {
                written: recovered,
                durable: recovered,
                flushing: false,
                unpublished: VecDeque::new(),
                waiters: Vec::new(),
            }),
            durable: AtomicU64::new(recovered),
            in_flight: AtomicUsize::new(0),
            hub,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // State changes are single assignments: a panicking holder cannot
        // leave it torn.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The highest durable position: readers show nothing past it.
    pub(crate) fn durable(&self) -> u64 {
        self.durable.load(Ordering::Acquire)
    }

    /// Records a batch just written to sled. Called under the writer lock,
    /// so positions arrive in order.
    pub(crate) fn written(&self, events: Vec<Arc<StoredEvent>>) {
        let mut state = self.lock();
        if let Some(last) = events.last() {
            state.written = last.position;
        }
        state.unpublished.extend(events);
        if self.durability == Durability::None {
            let written = state.written;
            self.mark_durable(&mut state, written);
        }
    }

    /// The highest position written to sled, durable or not.
    pub(crate) fn written_position(&self) -> u64 {
        self.lock().written
    }

    /// Returns once `position` is durable, flushing as the leader if no
    /// flush is running. `flush()` makes everything written so far durable
    /// and returns the highest position that covers.
    pub(crate) fn wait_durable(&self, position: u64, flush: impl Fn() -> std::io::Result<u64>) -> Result<()> {
        let mut state = self.lock();
        loop {
            if state.durable >= position {
                return Ok(());
            }
            if state.flushing {
                // Parked, not on a condvar: the leader wakes exactly the
                // appends its flush covered and one more to lead the next
                // flush. Waking all of them after every flush would make
                // dozens of threads fight the writer for two cores.
                state.waiters.push(Waiter {
                    position,
                    thread: thread::current(),
                });
                drop(state);
                thread::park();
                state = self.lock();
                let me = thread::current().id();
                state.waiters.retain(|waiter| waiter.thread.id() != me);
                continue;
            }
            state.flushing = true;
            drop(state);
            self.gather();
            let result = flush();
            state = self.lock();
            state.flushing = false;
            if let Ok(target) = result {
                self.mark_durable(&mut state, target);
            }
            let mut next_leader = true;
            for waiter in &state.waiters {
                if waiter.position <= state.durable {
                    waiter.thread.unpark();
                } else if next_leader {
                    waiter.thread.unpark();
                    next_leader = false;
                }
            }
            // On failure the leader reports it; the next leader tries a
            // flush of its own and reports its own outcome.
            result?;
        }
    }

    /// Counts an append on its way to `written`, until the guard drops.
    pub(crate) fn begin_write(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(self)
    }

    /// The leader lets the appends already on their way into sled arrive
    /// before it flushes, for at most `GATHER_LIMIT`: sled's inserts stall
    /// while it flushes, so a flush started the moment the previous one
    /// ended would cover only the few appends written in between. A lone
    /// writer finds nobody on the way and flushes at once.
    fn gather(&self) {
        let started = Instant::now();
        while self.in_flight.load(Ordering::Acquire) > 0 && started.elapsed() < GATHER_LIMIT {
            thread::sleep(GATHER_POLL);
        }
    }

    fn mark_durable(&self, state: &mut State, target: u64) {
        if target <= state.durable {
            return;
        }
        state.durable = target;
        self.durable.store(target, Ordering::Release);
        let covered = state
            .unpublished
            .iter()
            .take_while(|event| event.position <= target)
            .count();
        self.hub.publish(state.unpublished.drain(..covered));
    }
}
