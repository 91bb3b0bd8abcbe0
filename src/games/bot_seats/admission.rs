//! Which new games with bot seats the server takes on: only while the
//! bot work its running games commit leaves room for theirs.
//!
//! A game with bots has at most one bot decision pending at a time, so what
//! it commits is the time of its heaviest bot's decision
//! ([`decision_cost_ms`]). The committed work of the active games (a bot's
//! decision pending, or an event in the last [`IDLE_MS`]) is held within
//! the capacity: the workers times the decision time each may owe at once
//! ([`super::BotConfig::queue_per_worker`]). Were every active game's bot
//! to decide at once, the last would start within about that time. A
//! creation past it is refused with `BOTS_BUSY`; a tournament's games are
//! counted but never refused (the organiser planned them, and a refusal
//! would stall the round).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use carcassonne_bots::Level;
use carcassonne_store::GameId;

use super::super::stored::Loaded;
use crate::api::status::ApiError;

/// A game whose players have not acted for this long, and whose pending
/// decision is no bot's, commits nothing until they act again.
pub const IDLE_MS: u64 = 60_000;
/// A `random` decision, with the writing of it, in milliseconds.
const RANDOM_MS: u64 = 2;
/// A `greedy` decision in a full base game (it tries every choice).
const GREEDY_MS: u64 = 20;
/// Search iterations a millisecond (about; fewer with more players).
const ITERATIONS_PER_MS: u64 = 20;

/// The time a decision of `level` usually takes, in milliseconds, on a
/// machine like the development VM: never more than `budget`.
pub fn decision_cost_ms(level: Level, budget: Duration) -> u64 {
    let budget = u64::try_from(budget.as_millis()).unwrap_or(u64::MAX).max(1);
    let cost = match level {
        Level::Random => RANDOM_MS,
        Level::Greedy => GREEDY_MS,
        Level::Search { iterations } => u64::from(iterations).div_ceil(ITERATIONS_PER_MS),
    };
    cost.clamp(1, budget)
}

/// What a game with bot seats commits: its heaviest bot's decision.
pub fn game_cost_ms(levels: impl IntoIterator<Item = Level>, budget: Duration) -> u64 {
    levels
        .into_iter()
        .map(|level| decision_cost_ms(level, budget))
        .max()
        .unwrap_or(0)
}

struct Committed {
    cost_ms: u64,
    /// The time of its last event.
    active_at: u64,
    bot_pending: bool,
}

/// The running games with bot seats this server knows of, and what they
/// commit.
pub struct Admission {
    capacity_ms: u64,
    budget: Duration,
    games: Mutex<HashMap<GameId, Committed>>,
}

impl Admission {
    pub fn new(capacity: Duration, budget: Duration) -> Admission {
        Admission {
            capacity_ms: capacity.as_millis() as u64,
            budget,
            games: Mutex::new(HashMap::new()),
        }
    }

    pub fn budget(&self) -> Duration {
        self.budget
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<GameId, Committed>> {
        self.games.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes on game `id`, created at `now_ms` with bots that commit
    /// `cost_ms`, if the active games leave room for it (or `exempt`: a
    /// tournament's). `Ok(true)` when newly counted, `Ok(false)` when it
    /// was already (a retried creation).
    pub fn admit(&self, id: &GameId, cost_ms: u64, now_ms: u64, exempt: bool) -> Result<bool, ApiError> {
        let mut games = self.lock();
        if games.contains_key(id) {
            return Ok(false);
        }
        games.retain(|_, game| game.bot_pending || now_ms.saturating_sub(game.active_at) < IDLE_MS);
        let committed: u64 = games.values().map(|game| game.cost_ms).sum();
        // An idle server takes any one game, however heavy its bots.
        if !exempt && committed > 0 && committed.saturating_add(cost_ms) > self.capacity_ms {
            return Err(ApiError::BotsBusy {
                committed_ms: committed,
                capacity_ms: self.capacity_ms,
            });
        }
        games.insert(
            id.clone(),
            Committed {
                cost_ms,
                active_at: now_ms,
                // Its first version, told next, says.
                bot_pending: false,
            },
        );
        Ok(true)
    }

    /// A creation that [`Admission::admit`] counted was not stored.
    pub fn withdraw(&self, id: &GameId) {
        self.lock().remove(id);
    }

    /// A new version of game `id`: counted while it runs with bots, from the
    /// time of its last event; dropped once it is over.
    pub fn note(&self, id: &GameId, loaded: &Loaded) {
        if loaded.opened.bots.is_empty() {
            return;
        }
        let mut games = self.lock();
        if loaded.game.is_finished() {
            games.remove(id);
            return;
        }
        let levels = loaded
            .opened
            .bots
            .iter()
            .flatten()
            .filter_map(|name| Level::from_name(name));
        let bot_pending = super::Turn::of(id, loaded).is_some();
        games.insert(
            id.clone(),
            Committed {
                cost_ms: game_cost_ms(levels, self.budget),
                active_at: loaded.game.time(),
                bot_pending,
            },
        );
    }
}
