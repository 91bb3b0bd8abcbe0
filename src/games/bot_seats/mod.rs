//! Bot seats: the server plays the seats of built-in bots
//! (`CreateGameRequest.bots`) itself.
//!
//! Every new version whose pending decision is a bot seat's is told to one
//! task (as deadlines are to the timekeeper), and at start every running
//! game whose pending seat is a bot's is found. For each such turn a task
//! waits for one of a few workers (about the cores), handed out to the
//! turn due first (`schedule.rs`), reads the game, gives the bot its seat's
//! public view (`Game::public`: no seed, no order), searches on a blocking
//! thread until its turn is due, waits for the game's pace if it has one,
//! and acts through [`Games::act_as`], the very path of a client's Act:
//! the same checks, events, settling and answers. Its request id names the
//! version and the seat (`~bot/2/57`), so that a second attempt at the same
//! decision is stored at most once.
//!
//! The budget: [`BotConfig::budget`] a decision (a second), and never more
//! than a quarter of what the seat's clock leaves, both counted on the
//! server's clock from the moment the decision became pending, so that the
//! time a turn waited for a worker is part of it; when it runs out (or a
//! waiting turn is past its due: quick bots go first), the search plays its
//! best choice so far.
//! New games with bots are taken on only while the running ones leave room
//! (`admission.rs`). A shutdown stops every search at its next iteration,
//! and nothing more is written after it.

mod admission;
mod schedule;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use carcassonne_bots::{Bot, Level};
use carcassonne_engine::{Command, Seat, Seed};
use carcassonne_store::{GameId, RequestId};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

pub use self::admission::{Admission, IDLE_MS, decision_cost_ms, game_cost_ms};
pub use self::schedule::{STORE_RESERVE_MS, Timing, Workers, budget_for};
use super::stored::{Loaded, OPENED_SCHEMA, Opened};
use super::{Acting, Games, SERVER_REQUEST_PREFIX, store_error};
use crate::api::status::ApiError;

/// A bot's turn: game `game` at stored version `seq` waits for a bot seat.
#[derive(Debug, Clone)]
pub struct Turn {
    pub game: GameId,
    pub seq: u64,
    pub timing: Timing,
}

impl Turn {
    /// The bot's turn in `loaded`, if its pending decision is a bot seat's.
    pub fn of(id: &GameId, loaded: &Loaded) -> Option<Turn> {
        let carcassonne_engine::Actor::Seat(seat) = loaded.game.pending().actor()? else {
            return None;
        };
        let level = loaded.opened.bot(seat.index())?;
        // An unknown level is the search's to report.
        let usual_ms = Level::from_name(level).map_or(0, |level| decision_cost_ms(level, Duration::MAX));
        Some(Turn {
            game: id.clone(),
            seq: loaded.version,
            timing: Timing {
                pending_since: loaded.game.time(),
                deadline: loaded.game.deadline(),
                pace_ms: u64::from(loaded.opened.bot_pace_ms),
                usual_ms,
            },
        })
    }

    /// What tells one turn from another.
    fn key(&self) -> (GameId, u64) {
        (self.game.clone(), self.seq)
    }
}

/// What the games tell the bot seats' driver: every bot's turn, and every
/// new version of a game with bots (what it commits).
#[derive(Clone)]
pub struct Driver {
    turns: mpsc::UnboundedSender<Turn>,
    admission: Arc<Admission>,
}

impl Driver {
    /// A new version of game `id`, durable.
    pub fn tell(&self, id: &GameId, loaded: &Loaded) {
        self.admission.note(id, loaded);
        if let Some(turn) = Turn::of(id, loaded) {
            let _ = self.turns.send(turn);
        }
    }

    /// Takes on a new game with bots of `levels`, created at `now_ms`,
    /// if there is room for it ([`Admission::admit`]).
    pub fn admit(
        &self,
        id: &GameId,
        levels: impl IntoIterator<Item = Level>,
        now_ms: u64,
        exempt: bool,
    ) -> Result<bool, ApiError> {
        let cost = game_cost_ms(levels, self.admission.budget());
        self.admission.admit(id, cost, now_ms, exempt)
    }

    /// A creation admitted was not stored.
    pub fn withdraw(&self, id: &GameId) {
        self.admission.withdraw(id);
    }
}

/// The time a bot takes for a decision when its clock allows.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(1);
/// The decision time each worker may owe the active games at once.
pub const DEFAULT_QUEUE_PER_WORKER: Duration = Duration::from_secs(4);
/// The longest pace a game may ask for (`CreateGameRequest.bot_pace_ms`).
pub const MAX_PACE_MS: u32 = 10_000;
/// How long a decision that could not be stored (the storage was
/// unavailable) waits before it is tried again.
const RETRY: Duration = Duration::from_secs(1);
/// The longest a pace's wait sleeps before it reads the clock again.
const PACE_POLL: Duration = Duration::from_millis(100);

/// How the server plays its bot seats.
#[derive(Debug, Clone)]
pub struct BotConfig {
    /// The time a decision may take when the seat's clock allows.
    pub budget: Duration,
    /// Searches at once (each on a blocking thread).
    pub workers: usize,
    /// The decision time each worker may owe the active bot games at once:
    /// the capacity past which new games with bots are refused.
    pub queue_per_worker: Duration,
}

impl Default for BotConfig {
    fn default() -> BotConfig {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        BotConfig {
            budget: DEFAULT_BUDGET,
            // Half the blocking threads at most: the store's reads need
            // the others.
            workers: cores.clamp(1, crate::server::BLOCKING_THREADS / 2),
            queue_per_worker: DEFAULT_QUEUE_PER_WORKER,
        }
    }
}

impl BotConfig {
    /// The decision time the active bot games may commit in all.
    pub fn capacity(&self) -> Duration {
        self.queue_per_worker
            .saturating_mul(u32::try_from(self.workers.max(1)).unwrap_or(u32::MAX))
    }
}

/// A bot's seed for its decision at `version` of game `game` (its id):
/// from public data only, so that it says nothing of the bag. The server's
/// bot seats and `carcassonne bot` both take theirs from it.
pub fn bot_seed(game: &str, seat: Seat, version: u64) -> Seed {
    use sha2::Digest as _;
    let mut hash = sha2::Sha256::new();
    hash.update(b"carcassonne bot seat\0");
    hash.update(game.as_bytes());
    hash.update([0, seat.0]);
    hash.update(version.to_be_bytes());
    Seed(hash.finalize().into())
}

/// The request id of the bot's decision at version `seq`: the same for
/// every attempt, so that only one is stored.
fn bot_request(seat: Seat, seq: u64) -> Result<RequestId, ApiError> {
    RequestId::new(format!("{SERVER_REQUEST_PREFIX}bot/{}/{seq}", seat.0))
        .map_err(|e| ApiError::Internal(format!("a bot's request id: {e}")))
}

/// Starts playing the bot seats of `games`; stops when `stopping` turns
/// true, once the decisions being written are durable. Finds the turns of
/// running games at once.
pub fn spawn(
    games: Arc<Games>,
    config: BotConfig,
    stopping: watch::Receiver<bool>,
) -> Result<tokio::task::JoinHandle<()>, ApiError> {
    let (turns, news) = mpsc::unbounded_channel();
    let driver = Driver {
        turns,
        admission: Arc::new(Admission::new(config.capacity(), config.budget)),
    };
    games.play_bots(driver.clone())?;
    let finding = {
        let games = games.clone();
        async move {
            match tokio::task::spawn_blocking(move || find_turns(&games, &driver)).await {
                Ok(Ok(found)) if found > 0 => tracing::info!(games = found, "bots' turns found at start"),
                Ok(Ok(_)) => {}
                Ok(Err(error)) => tracing::error!(%error, "the bots' turns could not be found"),
                Err(error) => tracing::error!(%error, "the search for the bots' turns failed"),
            }
        }
    };
    Ok(tokio::spawn(async move {
        let found = tokio::spawn(finding);
        run(games, config, news, stopping).await;
        let _ = found.await;
    }))
}

/// Tells `driver` of every running game that waits for a bot seat; returns
/// how many. Reads each game's opening only, and whole only the games
/// with bots.
fn find_turns(games: &Games, driver: &Driver) -> Result<usize, ApiError> {
    let store = games.store().clone();
    let mut found = 0;
    let mut token: Option<String> = None;
    loop {
        let page = store.list_games(token.as_deref(), 0).map_err(store_error)?;
        for summary in page
            .games
            .iter()
            .filter(|s| crate::players::is_game_stream(&s.game))
        {
            let opening = store.read_game_chunk(&summary.game, 1, 1).map_err(store_error)?;
            let has_bots = opening.first().is_some_and(|e| {
                e.schema == OPENED_SCHEMA
                    && Opened::decode(&e.payload).is_ok_and(|o| o.bots.iter().any(Option::is_some))
            });
            if !has_bots {
                continue;
            }
            let loaded = games.load(&summary.game)?;
            if Turn::of(&summary.game, &loaded).is_some() {
                found += 1;
                driver.tell(&summary.game, &loaded);
            }
        }
        token = page.next_page_token;
        if token.is_none() {
            return Ok(found);
        }
    }
}

async fn run(
    games: Arc<Games>,
    config: BotConfig,
    mut news: mpsc::UnboundedReceiver<Turn>,
    mut stopping: watch::Receiver<bool>,
) {
    let workers = Workers::new(config.workers);
    // A turn that was pending while the server was down is timed from its
    // start: its budget is not spent on the downtime.
    let started = games.store().now_millis();
    // The turns being played, so that news of one twice plays it once.
    let mut playing: HashSet<(GameId, u64)> = HashSet::new();
    let mut tasks = JoinSet::new();
    let for_players = stopping.clone();
    loop {
        tokio::select! {
            _ = stopping.wait_for(|stopping| *stopping) => break,
            turn = news.recv() => match turn {
                Some(mut turn) => {
                    turn.timing.pending_since = turn.timing.pending_since.max(started);
                    if playing.insert(turn.key()) {
                        let player = Player {
                            games: games.clone(),
                            workers: workers.clone(),
                            budget: config.budget,
                            stopping: for_players.clone(),
                        };
                        tasks.spawn(async move {
                            player.play(&turn).await;
                            turn.key()
                        });
                    }
                }
                None => break,
            },
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Ok(key) = done {
                    playing.remove(&key);
                }
            }
        }
    }
    // The searches stop at their next iteration; what was written is
    // durable before the store closes.
    while tasks.join_next().await.is_some() {}
}

/// What one turn's task needs.
struct Player {
    games: Arc<Games>,
    workers: Arc<Workers>,
    budget: Duration,
    stopping: watch::Receiver<bool>,
}

/// What a bot's search found: its choice for the seat, on the game as read.
struct Decided {
    loaded: Arc<Loaded>,
    seat: Seat,
    command: Command,
}

/// Where a turn's search left it.
enum Step {
    /// Its decision is written.
    Acted(Acting),
    /// Its decision waits for the game's pace.
    Paced(Decided),
}

/// Writes the bot's decision through the path of a client's Act. Blocking.
fn act(games: &Games, turn: &Turn, decided: Decided) -> Result<Acting, ApiError> {
    let request_id = bot_request(decided.seat, turn.seq)?;
    games.act_as(
        decided.loaded,
        &turn.game,
        decided.seat,
        turn.seq,
        &request_id,
        &decided.command,
    )
}

impl Player {
    /// Plays the bot's turn, trying again while the storage is unavailable.
    async fn play(mut self, turn: &Turn) {
        loop {
            let error = match self.try_play(turn).await {
                Ok(()) | Err(ApiError::StaleVersion { .. }) => return,
                Err(error) => error,
            };
            if !matches!(error, ApiError::StorageUnavailable(_)) {
                tracing::error!(game = %turn.game, %error, "a bot's decision failed");
                return;
            }
            tracing::warn!(game = %turn.game, %error, "a bot's decision could not be stored; trying again");
            tokio::select! {
                () = tokio::time::sleep(RETRY) => {}
                _ = self.stopping.wait_for(|stopping| *stopping) => return,
            }
        }
    }

    async fn try_play(&mut self, turn: &Turn) -> Result<(), ApiError> {
        let slot = tokio::select! {
            slot = self.workers.acquire(turn.timing.due(self.budget), turn.timing.quick()) => {
                slot.ok_or_else(|| ApiError::Internal("the bots' workers are gone".to_owned()))?
            }
            _ = self.stopping.wait_for(|stopping| *stopping) => return Ok(()),
        };
        let searching = {
            let (games, workers, stopping) =
                (self.games.clone(), self.workers.clone(), self.stopping.clone());
            let (turn, budget) = (turn.clone(), self.budget);
            tokio::task::spawn_blocking(move || {
                let _slot = slot;
                let Some(decided) = search(&games, &turn, budget, &workers, &stopping)? else {
                    return Ok(None);
                };
                // Without a pace to wait for, stored at once, from this
                // very thread: no handoff between the search and the write.
                if games.store().now_millis() < turn.timing.act_from() {
                    return Ok(Some(Step::Paced(decided)));
                }
                act(&games, &turn, decided).map(|acting| Some(Step::Acted(acting)))
            })
        };
        let step = searching
            .await
            .map_err(|e| ApiError::Internal(format!("a bot's task failed: {e}")))??;
        let acting = match step {
            None => return Ok(()),
            Some(Step::Acted(acting)) => acting,
            Some(Step::Paced(decided)) => {
                if !self.wait_until(turn.timing.act_from()).await {
                    return Ok(());
                }
                let (games, turn) = (self.games.clone(), turn.clone());
                tokio::task::spawn_blocking(move || act(&games, &turn, decided))
                    .await
                    .map_err(|e| ApiError::Internal(format!("a bot's task failed: {e}")))??
            }
        };
        let version = crate::api::version::of_seq(turn.seq);
        match acting {
            Acting::InFlight(written) => {
                self.games.settle(written).await?;
                tracing::debug!(game = %turn.game, version, "a bot decided");
                Ok(())
            }
            // Another attempt at this very decision stored it first.
            Acting::Retried { first, .. } => first.acknowledged().await.map(|_| ()).map_err(store_error),
            Acting::Late { timeout, .. } => {
                tracing::warn!(game = %turn.game, version, "a bot's decision came too late: it timed out");
                self.games.settle(timeout).await.map(|_| ())
            }
        }
    }

    /// Waits until the server's clock reads `at_ms` (a game's pace);
    /// `false` if the server stops first.
    async fn wait_until(&mut self, at_ms: u64) -> bool {
        loop {
            let now = self.games.store().now_millis();
            if now >= at_ms {
                return true;
            }
            let nap = Duration::from_millis(at_ms - now).min(PACE_POLL);
            tokio::select! {
                () = tokio::time::sleep(nap) => {}
                _ = self.stopping.wait_for(|stopping| *stopping) => return false,
            }
        }
    }
}

/// The bot's choice for `turn`, searched until the turn is due (or a
/// waiting turn is past its due); `None` when there is nothing to do (the
/// game moved on, the server is stopping). Blocking: reads the store and
/// searches.
fn search(
    games: &Games,
    turn: &Turn,
    budget: Duration,
    workers: &Workers,
    stopping: &watch::Receiver<bool>,
) -> Result<Option<Decided>, ApiError> {
    let loaded = games.load(&turn.game)?;
    if loaded.version != turn.seq {
        return Ok(None);
    }
    let Some(carcassonne_engine::Actor::Seat(seat)) = loaded.game.pending().actor() else {
        return Ok(None);
    };
    let Some(name) = loaded.opened.bot(seat.index()) else {
        return Ok(None);
    };
    let level = Level::from_name(name)
        .ok_or_else(|| ApiError::Corrupt(format!("games/{}: no bot has the level {name:?}", turn.game)))?;
    let stop_at = turn.timing.stop_at(budget);
    let mut bot = Bot::new(
        level,
        bot_seed(
            turn.game.as_str(),
            seat,
            crate::api::version::of_seq(turn.seq) as u64,
        ),
    );
    // Only what the seat's player sees: no seed, no order.
    let public = loaded.game.public();
    let store = games.store();
    let decided = bot.decide_within(&public, |_| {
        // The server's clock: the one deadlines and budgets are read on.
        let now = store.now_millis();
        now >= stop_at || *stopping.borrow() || workers.should_yield(now)
    });
    if *stopping.borrow() {
        return Ok(None);
    }
    let Some((decider, command)) = decided else {
        return Ok(None);
    };
    if decider != seat {
        return Err(ApiError::Internal(format!(
            "a bot decided for seat {} at seat {}'s turn",
            decider.0, seat.0
        )));
    }
    Ok(Some(Decided {
        loaded,
        seat,
        command,
    }))
}
