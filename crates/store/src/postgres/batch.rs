//! Appends to different games committed together.
//!
//! An append alone costs a round trip, a commit and the CPU of both ends
//! for each; with many games in flight that cost, not the database's
//! locks, bounds the rate. So appends that arrive while others are being
//! written wait in a queue, and the next free *leader* (one of the calling
//! threads, at most [`Batcher::new`]'s `leaders` at once) writes up to
//! [`MAX_BATCH`] of them in one transaction: one `append_batch` call
//! (`append.rs`), and one flush for all. A lone append finds a free
//! leader slot at once and is written alone: batching costs it nothing.
//!
//! What a batch keeps from appends made one by one:
//! - each append's own outcome: a conflict or a repeated request id is an
//!   answer of `append_events`, not an error, and concerns that append only;
//! - no deadlock between batches: a batch locks its games' rows in the
//!   order of their ids, and never holds one game twice (a second append
//!   to a game waits for the next batch);
//! - an error of one append (the database refusing what it wrote) fails
//!   its batch: the batch's appends are then written again one by one, so
//!   that only that one fails; a lost connection fails them all, with the
//!   commit's outcome unknown, as it would one alone.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crate::error::{Result, StoreError};
use crate::event::{Appended, NewEvent, StoredEvent};
use crate::ids::{GameId, RequestId};

/// The most appends one transaction writes.
pub(super) const MAX_BATCH: usize = 32;

/// One append, owned: a leader may write it for another thread.
pub(super) struct Append {
    pub game: GameId,
    pub expected_seq: u64,
    pub request_id: RequestId,
    pub time_millis: u64,
    pub events: Vec<NewEvent>,
}

/// What an append came to: its place, and its events when it wrote them
/// (none for a repeated request id).
pub(super) type Outcome = Result<(Appended, Vec<StoredEvent>)>;

struct Slot {
    append: Append,
    outcome: Mutex<Option<Outcome>>,
}

#[derive(Default)]
struct Queue {
    waiting: VecDeque<Arc<Slot>>,
    leaders: usize,
}

pub(super) struct Batcher {
    queue: Mutex<Queue>,
    /// Rung when a batch is written, and when a leader's place frees up.
    written: Condvar,
    max_leaders: usize,
}

impl Batcher {
    /// A batcher that lets at most `leaders` batches be written at once.
    pub(super) fn new(leaders: usize) -> Batcher {
        Batcher {
            queue: Mutex::new(Queue::default()),
            written: Condvar::new(),
            max_leaders: leaders.max(1),
        }
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        // Every change under the lock is one push, pop or count: a panic
        // elsewhere leaves it consistent.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `append`, in a batch with others when some are waiting:
    /// `write` writes a batch (appends of distinct games, in id order) and
    /// gives each one's outcome, in order.
    pub(super) fn append(&self, append: Append, write: impl Fn(&[&Append]) -> Vec<Outcome>) -> Outcome {
        let slot = Arc::new(Slot {
            append,
            outcome: Mutex::new(None),
        });
        let mut queue = self.queue();
        queue.waiting.push_back(slot.clone());
        loop {
            if let Some(outcome) = slot.outcome.lock().unwrap_or_else(PoisonError::into_inner).take() {
                return outcome;
            }
            let still_waiting = queue.waiting.iter().any(|waiting| Arc::ptr_eq(waiting, &slot));
            if still_waiting && queue.leaders < self.max_leaders {
                queue.leaders += 1;
                let leading = Leading {
                    batcher: self,
                    batch: take_batch(&mut queue.waiting),
                };
                drop(queue);
                let appends: Vec<&Append> = leading.batch.iter().map(|slot| &slot.append).collect();
                let outcomes = write(&appends);
                for (slot, outcome) in leading.batch.iter().zip(outcomes) {
                    *slot.outcome.lock().unwrap_or_else(PoisonError::into_inner) = Some(outcome);
                }
                drop(leading);
                queue = self.queue();
                continue;
            }
            queue = self.written.wait(queue).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A batch being written. Dropped, even by a panic in the writer, it
/// gives every append still without an outcome an error (so that no
/// caller waits for ever) and frees its leader's place.
struct Leading<'a> {
    batcher: &'a Batcher,
    batch: Vec<Arc<Slot>>,
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        for slot in &self.batch {
            let mut outcome = slot.outcome.lock().unwrap_or_else(PoisonError::into_inner);
            if outcome.is_none() {
                *outcome = Some(Err(StoreError::Io(std::io::Error::other(
                    "PostgreSQL: the append's batch was not written (the writer failed)",
                ))));
            }
        }
        self.batcher.queue().leaders -= 1;
        self.batcher.written.notify_all();
    }
}

/// Takes up to [`MAX_BATCH`] appends of distinct games from the front of
/// `waiting`, in game id order; a second append to a game stays queued.
fn take_batch(waiting: &mut VecDeque<Arc<Slot>>) -> Vec<Arc<Slot>> {
    let mut games = HashSet::new();
    let mut batch = Vec::new();
    let mut kept = VecDeque::with_capacity(waiting.len());
    while let Some(slot) = waiting.pop_front() {
        if batch.len() < MAX_BATCH && games.insert(slot.append.game.clone()) {
            batch.push(slot);
        } else {
            kept.push_back(slot);
        }
    }
    *waiting = kept;
    batch.sort_by(|a, b| a.append.game.cmp(&b.append.game));
    batch
}
