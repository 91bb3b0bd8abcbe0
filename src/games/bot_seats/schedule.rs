//! When a bot decides, and for how long: the turns' timing on the
//! server's clock, and the workers they share, handed out earliest due
//! first.
//!
//! A bot's decision is stored within its budget ([`budget_for`]) of the
//! moment it became pending, so that the time it waited for a worker
//! counts in its budget. A turn is **due** once it has waited half its
//! budget, or the time its bot usually takes if less (a greedy bot's
//! milliseconds, a short search's iterations). Workers go to the waiting
//! turn due first; as each game has at most one turn at a time, and its
//! next one is due later, the games take their turns in order. A search
//! that runs while a waiting turn is past its due stops at its next
//! iteration and plays its best choice so far ([`Workers::should_yield`]):
//! under load searches share the workers and get shorter, and no turn
//! waits behind another's long search until its seat runs out of time.
//! Quick bots (`random`, `greedy`) also have a worker of their own when the
//! others are busy, so that they neither wait for a search nor cut one
//! short.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::oneshot;

/// A bot takes at most this share (1 in N) of the time its seat's clock
/// leaves for the decision when it becomes pending.
const SHARE_OF_TIME_LEFT: u64 = 4;
/// A pace ([`Timing::act_from`]) takes at most this share (1 in N) of the
/// time the clock leaves.
const PACE_SHARE_OF_TIME_LEFT: u64 = 2;
/// A search stops a tenth of its budget, and at most this long, before
/// the budget's end, to leave the time to store the decision (on a busy
/// machine a thread may wait that long for a core).
pub const STORE_RESERVE_MS: u64 = 50;

/// The time a decision may take from `since_ms`, the moment it became
/// pending, when its deadline is `deadline_ms`: `budget`, or a quarter of
/// the time left if that is less (nothing once the deadline has come).
pub fn budget_for(budget: Duration, since_ms: u64, deadline_ms: Option<u64>) -> Duration {
    match deadline_ms {
        None => budget,
        Some(deadline) => {
            let left = deadline.saturating_sub(since_ms);
            budget.min(Duration::from_millis(left / SHARE_OF_TIME_LEFT))
        }
    }
}

/// A bot's turn on the server's clock, in milliseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// When the decision became pending (the time of the game's last event).
    pub pending_since: u64,
    /// The pending decision's deadline, if a clock runs.
    pub deadline: Option<u64>,
    /// The game's pace: the least time from `pending_since` to storing.
    pub pace_ms: u64,
    /// The time the seat's bot usually takes for a decision.
    pub usual_ms: u64,
}

impl Timing {
    /// When the decision must be stored: `budget` after it became
    /// pending, or sooner on a short clock.
    pub fn end(&self, budget: Duration) -> u64 {
        let budget = budget_for(budget, self.pending_since, self.deadline);
        self.pending_since.saturating_add(budget.as_millis() as u64)
    }

    /// When the turn is due, its place among the waiting turns: once it
    /// has waited half its budget, or its bot's usual time if less.
    pub fn due(&self, budget: Duration) -> u64 {
        let half = self.end(budget).saturating_sub(self.pending_since) / 2;
        self.pending_since.saturating_add(half.min(self.usual_ms))
    }

    /// Whether its bot is a quick one (a quick bot's worker may take it).
    pub fn quick(&self) -> bool {
        self.usual_ms <= QUICK_MS
    }

    /// When a search stops: a moment before its end.
    pub fn stop_at(&self, budget: Duration) -> u64 {
        let end = self.end(budget);
        let reserve = STORE_RESERVE_MS.min(end.saturating_sub(self.pending_since) / 10);
        end - reserve
    }

    /// The earliest the decision is stored: the game's pace after it became
    /// pending, but never more than half the time its clock leaves.
    pub fn act_from(&self) -> u64 {
        let pace = match self.deadline {
            None => self.pace_ms,
            Some(deadline) => self
                .pace_ms
                .min(deadline.saturating_sub(self.pending_since) / PACE_SHARE_OF_TIME_LEFT),
        };
        self.pending_since.saturating_add(pace)
    }
}

/// A bot that usually decides within this is a quick one.
pub const QUICK_MS: u64 = 50;

/// A fixed number of workers for the bots' searches, and one more for
/// quick bots, handed out to the waiting turn due first.
pub struct Workers {
    state: Mutex<State>,
    /// The due of the first waiting turn for which no running search has
    /// yielded yet (`u64::MAX`: none), read by every search's iteration
    /// without the lock.
    next_overdue: AtomicU64,
}

struct State {
    free: usize,
    /// The quick bots' own worker is free.
    quick_free: bool,
    /// The waiting turns by due, then by arrival; whether each is quick.
    waiting: BTreeMap<(u64, u64), (oneshot::Sender<Slot>, bool)>,
    arrivals: u64,
    /// Searches that yielded for a waiting turn whose slot has not come
    /// free yet.
    yields_owed: usize,
}

impl State {
    /// The due of the first waiting turn no search has yielded for yet.
    fn next_overdue(&self) -> u64 {
        if self.free > 0 {
            return u64::MAX;
        }
        self.waiting
            .keys()
            .nth(self.yields_owed)
            .map_or(u64::MAX, |&(due, _)| due)
    }
}

/// A worker, held while a bot searches; it goes to the next waiting turn
/// when dropped.
pub struct Slot {
    workers: Option<Arc<Workers>>,
    /// The quick bots' own worker.
    quick: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(workers) = self.workers.take() {
            workers.release(self.quick);
        }
    }
}

impl Workers {
    pub fn new(workers: usize) -> Arc<Workers> {
        Arc::new(Workers {
            state: Mutex::new(State {
                free: workers.max(1),
                quick_free: true,
                waiting: BTreeMap::new(),
                arrivals: 0,
                yields_owed: 0,
            }),
            next_overdue: AtomicU64::new(u64::MAX),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A worker for a turn due at `due` (of a quick bot, or not): at once
    /// if one is free, else when every turn due before it has had one.
    /// `None` only if the workers are gone.
    pub async fn acquire(self: &Arc<Self>, due: u64, quick: bool) -> Option<Slot> {
        let waiting = {
            let mut state = self.lock();
            if state.free > 0 || (quick && state.quick_free) {
                let own = state.free == 0;
                if own {
                    state.quick_free = false;
                } else {
                    state.free -= 1;
                }
                return Some(Slot {
                    workers: Some(self.clone()),
                    quick: own,
                });
            }
            let (sender, receiver) = oneshot::channel();
            let arrival = state.arrivals;
            state.arrivals += 1;
            state.waiting.insert((due, arrival), (sender, quick));
            self.next_overdue.store(state.next_overdue(), Ordering::SeqCst);
            receiver
        };
        waiting.await.ok()
    }

    /// A worker came free: to the first turn still waiting (the quick
    /// bots' own to the first quick one), else free.
    fn release(self: &Arc<Self>, quick: bool) {
        let mut state = self.lock();
        if !quick {
            state.yields_owed = state.yields_owed.saturating_sub(1);
        }
        loop {
            let next = match quick {
                false => state.waiting.keys().next().copied(),
                true => state
                    .waiting
                    .iter()
                    .find(|(_, (_, waiter_quick))| *waiter_quick)
                    .map(|(&key, _)| key),
            };
            let Some((sender, _)) = next.and_then(|key| state.waiting.remove(&key)) else {
                if quick {
                    state.quick_free = true;
                } else {
                    state.free += 1;
                }
                break;
            };
            let slot = Slot {
                workers: Some(self.clone()),
                quick,
            };
            match sender.send(slot) {
                Ok(()) => break,
                // That turn gave up waiting (the server stops): the next.
                Err(mut unsent) => drop(unsent.workers.take()),
            }
        }
        self.next_overdue.store(state.next_overdue(), Ordering::SeqCst);
    }

    /// Whether a running search should stop now (at `now_ms`) to let a
    /// waiting turn that is past its due have its worker. One search
    /// yields for each such turn.
    pub fn should_yield(&self, now_ms: u64) -> bool {
        if now_ms < self.next_overdue.load(Ordering::SeqCst) {
            return false;
        }
        let mut state = self.lock();
        let overdue = state.next_overdue() <= now_ms;
        if overdue {
            state.yields_owed += 1;
        }
        self.next_overdue.store(state.next_overdue(), Ordering::SeqCst);
        overdue
    }

    /// Turns waiting for a worker.
    pub fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }
}
