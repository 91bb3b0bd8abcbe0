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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::config::Durability;
use crate::error::Result;
use crate::event::StoredEvent;
use crate::hub::Hub;

pub(crate) struct GroupCommit {
    durability: Durability,
    state: Mutex<State>,
    flushed: Condvar,
    /// The highest durable position, readable without the lock.
    durable: AtomicU64,
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
            }),
            flushed: Condvar::new(),
            durable: AtomicU64::new(recovered),
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
    /// flush is running. `flush(target)` makes everything written so far
    /// durable, `target` being the highest position it covers.
    pub(crate) fn wait_durable(
        &self,
        position: u64,
        flush: impl Fn(u64) -> std::io::Result<()>,
    ) -> Result<()> {
        let mut state = self.lock();
        loop {
            if state.durable >= position {
                return Ok(());
            }
            if state.flushing {
                state = self.flushed.wait(state).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            // Everything up to `target` is in sled before the flush starts,
            // so the flush covers it.
            let target = state.written;
            state.flushing = true;
            drop(state);
            let result = flush(target);
            state = self.lock();
            state.flushing = false;
            if result.is_ok() {
                self.mark_durable(&mut state, target);
            }
            self.flushed.notify_all();
            // On failure the leader reports it; each waiter still uncovered
            // tries a flush of its own and reports its own outcome.
            result?;
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
