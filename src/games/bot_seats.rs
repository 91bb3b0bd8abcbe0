//! Bot seats: the server plays the seats of built-in bots
//! (`CreateGameRequest.bots`) itself.
//!
//! Every new version whose pending decision is a bot seat's is told to one
//! task (as deadlines are to the timekeeper), and at start every running
//! game whose pending seat is a bot's is found. For each such turn a task
//! waits for one of a few workers (about the cores), reads the game, gives
//! the bot its seat's public view (`Game::public`: no seed, no order) and
//! a time budget, searches on a blocking thread, and acts through
//! [`Games::act_as`], the very path of a client's Act: the same checks,
//! events, settling and answers. Its request id names the version and the
//! seat (`~bot/2/57`), so that a second attempt at the same decision is
//! stored at most once.
//!
//! The budget: [`BotConfig::budget`] a decision (about a second), and
//! never more than a share of what the seat's clock has left for it, so
//! that a bot does not lose on time; when it runs out, the search plays
//! its best choice so far. A shutdown stops every search at its next
//! iteration, and nothing more is written after it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use carcassonne_bots::{Bot, Level};
use carcassonne_engine::{Seat, Seed};
use carcassonne_store::{GameId, RequestId};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::JoinSet;

use super::stored::{Loaded, OPENED_SCHEMA, Opened};
use super::{Acting, Games, SERVER_REQUEST_PREFIX, store_error};
use crate::api::status::ApiError;

/// A bot's turn: game `game` at stored version `seq` waits for a bot seat.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Turn {
    pub game: GameId,
    pub seq: u64,
}

impl Turn {
    /// The bot's turn in `loaded`, if its pending decision is a bot seat's.
    pub fn of(id: &GameId, loaded: &Loaded) -> Option<Turn> {
        let carcassonne_engine::Actor::Seat(seat) = loaded.game.pending().actor()? else {
            return None;
        };
        loaded.opened.bot(seat.index())?;
        Some(Turn {
            game: id.clone(),
            seq: loaded.version,
        })
    }
}

pub type TurnSender = mpsc::UnboundedSender<Turn>;

/// The time a bot takes for a decision when its clock allows.
pub const DEFAULT_BUDGET: Duration = Duration::from_secs(1);
/// A bot takes at most this share (1 in N) of the time its seat's clock
/// has left for the decision...
const SHARE_OF_TIME_LEFT: u64 = 4;
/// ... after this much is kept back for reading the game and writing the
/// decision.
const MARGIN_MS: u64 = 50;
/// How long a decision that could not be stored (the storage was
/// unavailable) waits before it is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// How the server plays its bot seats.
#[derive(Debug, Clone)]
pub struct BotConfig {
    /// The time a decision may take when the seat's clock allows.
    pub budget: Duration,
    /// Searches at once (each on a blocking thread).
    pub workers: usize,
}

impl Default for BotConfig {
    fn default() -> BotConfig {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        BotConfig {
            budget: DEFAULT_BUDGET,
            // Half the blocking threads at most: the store's reads need
            // the others.
            workers: cores.clamp(1, crate::server::BLOCKING_THREADS / 2),
        }
    }
}

/// The time a decision may take at `now_ms` when its deadline is
/// `deadline_ms`: `budget`, or less, a share of the time left.
pub fn budget_for(budget: Duration, now_ms: u64, deadline_ms: Option<u64>) -> Duration {
    match deadline_ms {
        None => budget,
        Some(deadline) => {
            let left = deadline.saturating_sub(now_ms).saturating_sub(MARGIN_MS);
            budget.min(Duration::from_millis(left / SHARE_OF_TIME_LEFT))
        }
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
    games.play_bots(turns.clone())?;
    let finding = {
        let games = games.clone();
        async move {
            match tokio::task::spawn_blocking(move || find_turns(&games, &turns)).await {
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

/// Tells `turns` of every running game that waits for a bot seat; returns
/// how many. Reads each game's opening only, and whole only the games
/// with bots.
fn find_turns(games: &Games, turns: &TurnSender) -> Result<usize, ApiError> {
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
            if let Some(turn) = Turn::of(&summary.game, &loaded) {
                found += 1;
                let _ = turns.send(turn);
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
    let workers = Arc::new(Semaphore::new(config.workers.max(1)));
    // The turns being played, so that news of one twice plays it once.
    let mut playing: HashSet<Turn> = HashSet::new();
    let mut tasks = JoinSet::new();
    let for_players = stopping.clone();
    loop {
        tokio::select! {
            _ = stopping.wait_for(|stopping| *stopping) => break,
            turn = news.recv() => match turn {
                Some(turn) => {
                    if playing.insert(turn.clone()) {
                        let player = Player {
                            games: games.clone(),
                            workers: workers.clone(),
                            budget: config.budget,
                            stopping: for_players.clone(),
                        };
                        tasks.spawn(async move {
                            player.play(&turn).await;
                            turn
                        });
                    }
                }
                None => break,
            },
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                if let Ok(turn) = done {
                    playing.remove(&turn);
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
    workers: Arc<Semaphore>,
    budget: Duration,
    stopping: watch::Receiver<bool>,
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
        let permit = tokio::select! {
            permit = self.workers.clone().acquire_owned() => {
                permit.map_err(|e| ApiError::Internal(format!("the bots' workers: {e}")))?
            }
            _ = self.stopping.wait_for(|stopping| *stopping) => return Ok(()),
        };
        let games = self.games.clone();
        let budget = self.budget;
        let stopping = self.stopping.clone();
        let turn_for_search = turn.clone();
        let acting = tokio::task::spawn_blocking(move || {
            let _permit = permit;
            decide(&games, &turn_for_search, budget, &stopping)
        })
        .await
        .map_err(|e| ApiError::Internal(format!("a bot's task failed: {e}")))??;
        let version = crate::api::version::of_seq(turn.seq);
        match acting {
            None => Ok(()),
            Some(Acting::InFlight(written)) => {
                self.games.settle(written).await?;
                tracing::debug!(game = %turn.game, version, "a bot decided");
                Ok(())
            }
            // Another attempt at this very decision stored it first.
            Some(Acting::Retried { first, .. }) => {
                first.acknowledged().await.map(|_| ()).map_err(store_error)
            }
            Some(Acting::Late { timeout, .. }) => {
                tracing::warn!(game = %turn.game, version, "a bot's decision came too late: it timed out");
                self.games.settle(timeout).await.map(|_| ())
            }
        }
    }
}

/// The bot's decision of `turn`, searched within its budget and written;
/// `None` when there is nothing to do (the game moved on, the server is
/// stopping). Blocking: reads the store and searches.
fn decide(
    games: &Games,
    turn: &Turn,
    budget: Duration,
    stopping: &watch::Receiver<bool>,
) -> Result<Option<Acting>, ApiError> {
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
    let now = games.store().now_millis().max(loaded.game.time());
    let budget = budget_for(budget, now, loaded.game.deadline());
    let started = Instant::now();
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
    let decided = bot.decide_within(&public, |_| started.elapsed() >= budget || *stopping.borrow());
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
    let request_id = bot_request(seat, turn.seq)?;
    games
        .act_as(loaded, &turn.game, seat, turn.seq, &request_id, &command)
        .map(Some)
}
