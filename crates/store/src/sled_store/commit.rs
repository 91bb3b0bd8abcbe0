//! Group commit: when appends become durable, and visible.
//!
//! Writers queue their append's entry for the write-ahead log (`wal.rs`)
//! under the writer lock, so entries queue in position order, and return a
//! [`Written`](crate::Written). One thread of the store's own, the
//! committer, takes whatever entries queued up, writes them to the log with
//! one `write`, syncs the log with one `fdatasync`, applies them to sled,
//! marks everything up to the last of them durable and wakes their
//! waiters. Writers never touch sled, so the committer can give the global
//! index one item per group (per 32 appends of it) instead of one insert
//! per append. Whatever queued during that sync is the next group: under
//! load one disk sync acknowledges every append written while the previous
//! one ran, and nobody waits for a batch to fill.
//!
//! Waiting costs no thread: a task's waker or a parked thread is woken
//! exactly when its position becomes durable.
//!
//! Visibility follows durability: the durable position is the watermark
//! readers stop at, and the events under it are published to subscribers
//! in position order by the committer as it moves it.
//!
//! A failed write or sync stops the store: after a failed `fdatasync` the
//! kernel may have dropped the dirty pages and report success next time,
//! so nothing written since the last good sync can be trusted to be on
//! disk. Every waiting and later append gets the error; reopening the store
//! recovers what is really there.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::thread::{self, JoinHandle, Thread};

use crate::config::Durability;
use crate::error::{Result, StoreError};
use crate::event::StoredEvent;
use crate::hub::Hub;
use crate::written::Acknowledger;

use super::wal::Apply;

/// What the committer does to the disk; a trait so that tests can inject
/// faults.
pub(crate) trait Disk: Send + 'static {
    /// Adds a group of log entries to the log (not yet durable).
    fn write_log(&mut self, entries: &[u8]) -> std::io::Result<()>;
    /// Puts the appends of a group of log entries into sled's memory.
    fn apply(&mut self, entries: &[u8], how: Apply) -> std::io::Result<()>;
    /// Makes the log durable.
    fn sync(&mut self) -> std::io::Result<()>;
    /// Notes that everything up to `position` was acknowledged.
    fn note_acknowledged(&mut self, position: u64) -> std::io::Result<()>;
    /// Whether the log has grown enough for a checkpoint.
    fn wants_checkpoint(&self) -> bool;
    /// Makes everything written to sled so far durable in sled, lets
    /// the log be written from its start again and notes `position` as acknowledged.
    fn checkpoint(&mut self, position: u64) -> std::io::Result<()>;
}

pub(crate) struct GroupCommit {
    durability: Durability,
    state: Mutex<State>,
    /// Wakes the committer.
    work: Condvar,
    /// Wakes `checkpoint` callers.
    checkpointed: Condvar,
    /// The highest durable position, readable without the lock.
    durable: AtomicU64,
    /// Whether `State::failed` is set, readable without the lock: every
    /// append asks.
    stopped: AtomicBool,
    pub(crate) hub: Hub,
}

struct State {
    /// The highest position queued by a writer.
    written: u64,
    /// The highest position known to be on disk.
    durable: u64,
    /// Log entries queued but not yet handed to the disk.
    pending_log: Vec<u8>,
    /// Written events not yet published, in position order.
    unpublished: VecDeque<Arc<StoredEvent>>,
    /// Appends waiting until their position is durable.
    waiters: Vec<Waiter>,
    /// Why the store stopped taking appends, if it did.
    failed: Option<String>,
    committer_idle: bool,
    checkpoints_requested: u64,
    checkpoints_done: u64,
    /// What the last checkpoint requested must cover: everything queued
    /// when it was requested.
    checkpoint_position: u64,
    stopping: bool,
}

struct Waiter {
    position: u64,
    wake: Wake,
}

enum Wake {
    Thread(Thread),
    Task(Waker),
}

impl Wake {
    fn wake(self) {
        match self {
            Wake::Thread(thread) => thread.unpark(),
            Wake::Task(waker) => waker.wake(),
        }
    }
}

impl GroupCommit {
    /// `recovered`: the last position found on open, durable by definition.
    pub(crate) fn new(durability: Durability, recovered: u64, hub: Hub) -> Arc<Self> {
        Arc::new(GroupCommit {
            durability,
            state: Mutex::new(State {
                written: recovered,
                durable: recovered,
                pending_log: Vec::new(),
                unpublished: VecDeque::new(),
                waiters: Vec::new(),
                failed: None,
                committer_idle: false,
                checkpoints_requested: 0,
                checkpoints_done: 0,
                checkpoint_position: 0,
                stopping: false,
            }),
            work: Condvar::new(),
            checkpointed: Condvar::new(),
            durable: AtomicU64::new(recovered),
            stopped: AtomicBool::new(false),
            hub,
        })
    }

    /// Starts the committer thread, which owns `disk` until [`stop`](Self::stop).
    pub(crate) fn start(self: &Arc<Self>, disk: Box<dyn Disk>) -> std::io::Result<JoinHandle<()>> {
        let commit = Arc::clone(self);
        thread::Builder::new().name("store-commit".into()).spawn(move || {
            // A panic in here (sled has asserts of its own) must not leave
            // waiters asleep forever: it stops the store like a failed
            // write.
            let _stop_on_panic = StopOnPanic(&commit);
            commit.run(disk);
        })
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

    /// Why the store takes no more appends, if it does not.
    pub(crate) fn failure(&self) -> Option<String> {
        if !self.stopped.load(Ordering::Acquire) {
            return None;
        }
        self.lock().failed.clone()
    }

    /// Queues an append: `log_entry` adds its entry to the log. Called
    /// under the writer lock, so positions arrive in order.
    pub(crate) fn written(&self, log_entry: impl FnOnce(&mut Vec<u8>), events: Vec<Arc<StoredEvent>>) {
        let mut state = self.lock();
        let Some(last) = events.last().map(|event| event.position) else {
            return;
        };
        log_entry(&mut state.pending_log);
        state.written = last;
        state.unpublished.extend(events);
        if state.committer_idle {
            state.committer_idle = false;
            self.work.notify_one();
        }
    }

    /// Makes everything written so far durable in sled itself and lets
    /// the log start again; returns once done.
    pub(crate) fn checkpoint(&self) -> Result<()> {
        let mut state = self.lock();
        state.checkpoints_requested += 1;
        state.checkpoint_position = state.written;
        let ticket = state.checkpoints_requested;
        self.work.notify_one();
        while state.checkpoints_done < ticket {
            if let Some(failed) = &state.failed {
                return Err(failure_error(failed));
            }
            state = self
                .checkpointed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Ok(())
    }

    /// Asks the committer to write what is pending, checkpoint and end.
    pub(crate) fn stop(&self) {
        let mut state = self.lock();
        state.stopping = true;
        self.work.notify_one();
    }

    /// After the committer has ended: every later append is refused, and
    /// any waiter left is woken with that.
    pub(crate) fn closed(&self) {
        let mut state = self.lock();
        if state.failed.is_some() {
            return;
        }
        let wake = self.refuse_appends(&mut state, "the store is closed".to_owned());
        drop(state);
        wake_all(wake);
    }

    /// The committer thread.
    fn run(&self, mut disk: Box<dyn Disk>) {
        let mut group = Vec::new();
        let mut state = self.lock();
        // The highest position in sled: what a checkpoint covers. Only this
        // thread moves the durable position, so at its start that is it.
        let mut applied = state.durable;
        loop {
            while state.failed.is_none()
                && state.pending_log.is_empty()
                && state.checkpoints_requested == state.checkpoints_done
                && !state.stopping
            {
                state.committer_idle = true;
                state = self.work.wait(state).unwrap_or_else(PoisonError::into_inner);
                state.committer_idle = false;
            }
            if state.failed.is_some() {
                return;
            }
            if !state.pending_log.is_empty() {
                std::mem::swap(&mut state.pending_log, &mut group);
                let target = state.written;
                drop(state);
                let result = self.commit_group(disk.as_mut(), &group, target);
                group.clear();
                if result.is_ok() {
                    applied = target;
                }
                state = self.lock();
                state = self.settle(
                    state,
                    target,
                    result,
                    "committing to the write-ahead log and sled",
                );
            }
            let wanted = state.checkpoints_requested;
            // A request is served once what was queued before it is in sled,
            // which the group just committed makes true.
            let covers_requests = applied >= state.checkpoint_position;
            let requested = wanted > state.checkpoints_done && covers_requests;
            let closing = state.stopping && state.pending_log.is_empty();
            if state.failed.is_none() && (requested || closing || disk.wants_checkpoint()) {
                drop(state);
                let result = disk.checkpoint(applied);
                let succeeded = result.is_ok();
                state = self.lock();
                state = self.settle(state, applied, result, "checkpointing sled");
                // A failed checkpoint serves nobody: its callers see `failed`.
                if covers_requests && succeeded {
                    state.checkpoints_done = state.checkpoints_done.max(wanted);
                }
                self.checkpointed.notify_all();
            }
            if closing {
                return;
            }
        }
    }

    /// Writes a group to the log, makes it as durable as the policy asks
    /// and applies it to sled.
    fn commit_group(&self, disk: &mut dyn Disk, group: &[u8], target: u64) -> std::io::Result<()> {
        match self.durability {
            Durability::Flush => {
                disk.write_log(group)?;
                disk.sync()?;
                // Durable in the log: a cut in sled is replayed on open.
                disk.apply(group, Apply::InOrder)?;
                disk.note_acknowledged(target)
            }
            Durability::Written => {
                disk.write_log(group)?;
                disk.apply(group, Apply::Atomic)?;
                disk.note_acknowledged(target)
            }
            // Nothing to recover it from after a crash: no note either,
            // or the next open would refuse the loss it was told to expect.
            Durability::None => disk.apply(group, Apply::Atomic),
        }
    }

    /// Marks `target` durable after `result` succeeded, or stops the store.
    fn settle<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        target: u64,
        result: std::io::Result<()>,
        doing: &str,
    ) -> MutexGuard<'a, State> {
        let wake = match result {
            Ok(()) => self.mark_durable(&mut state, target),
            Err(error) => self.fail(&mut state, format!("{doing} failed ({error})")),
        };
        if wake.is_empty() {
            return state;
        }
        drop(state);
        wake_all(wake);
        self.lock()
    }

    /// Stops the store's appends for `reason`; returns the waiters to wake
    /// (with the error).
    fn fail(&self, state: &mut State, reason: String) -> Vec<Waiter> {
        self.refuse_appends(
            state,
            format!("the store stopped taking appends: {reason}; reopen it to recover what is on disk"),
        )
    }

    fn refuse_appends(&self, state: &mut State, failed: String) -> Vec<Waiter> {
        state.failed = Some(failed);
        self.stopped.store(true, Ordering::Release);
        self.checkpointed.notify_all();
        std::mem::take(&mut state.waiters)
    }

    /// Moves the durable position, publishes what it covers and returns the
    /// waiters to wake.
    fn mark_durable(&self, state: &mut State, target: u64) -> Vec<Waiter> {
        if target <= state.durable {
            return Vec::new();
        }
        state.durable = target;
        self.durable.store(target, Ordering::Release);
        let covered = state
            .unpublished
            .iter()
            .take_while(|event| event.position <= target)
            .count();
        self.hub.publish(state.unpublished.drain(..covered));
        let (done, waiting) = std::mem::take(&mut state.waiters)
            .into_iter()
            .partition(|waiter| waiter.position <= target);
        state.waiters = waiting;
        done
    }

    /// `Ready` once `position` is durable or the store failed; otherwise
    /// registers `wake`.
    fn check_or_register(&self, position: u64, wake: impl FnOnce() -> Wake) -> Poll<Result<()>> {
        let mut state = self.lock();
        if state.durable >= position {
            return Poll::Ready(Ok(()));
        }
        if let Some(failed) = &state.failed {
            return Poll::Ready(Err(failure_error(failed)));
        }
        state.waiters.push(Waiter {
            position,
            wake: wake(),
        });
        Poll::Pending
    }
}

impl Acknowledger for GroupCommit {
    fn wait(&self, position: u64) -> Result<()> {
        if self.durable() >= position {
            return Ok(());
        }
        loop {
            if let Poll::Ready(result) = self.check_or_register(position, || Wake::Thread(thread::current()))
            {
                return result;
            }
            thread::park();
        }
    }

    fn poll(&self, position: u64, cx: &mut Context<'_>) -> Poll<Result<()>> {
        if self.durable() >= position {
            return Poll::Ready(Ok(()));
        }
        self.check_or_register(position, || Wake::Task(cx.waker().clone()))
    }
}

/// Stops the store if the committer thread unwinds.
struct StopOnPanic<'a>(&'a GroupCommit);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            let mut state = self.0.lock();
            let wake = self
                .0
                .fail(&mut state, "the committer thread panicked (a bug)".to_owned());
            drop(state);
            wake_all(wake);
        }
    }
}

fn wake_all(waiters: Vec<Waiter>) {
    for waiter in waiters {
        waiter.wake.wake();
    }
}

fn failure_error(failed: &str) -> StoreError {
    StoreError::Unavailable(failed.to_owned())
}
