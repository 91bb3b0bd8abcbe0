//! The timekeeper: stores every clocked game's timeout at its deadline
//! (T-5), whether or not anyone is connected; and, when the server starts,
//! resumes the clocks of the running games (T-10).
//!
//! One task holds the pending deadline of every running game with a time
//! control, in the order they fall due, and sleeps until the first. It
//! learns them from [`Games`]: each new version (a creation, an action, a
//! timeout, a resumption) sends its deadline once its events are durable.
//! At a deadline it asks [`Games::time_out`], which decides the timeout at
//! the server's time like any other command, under the game's lock: an
//! action and the timeout racing at the deadline are serialised there, and
//! the store's version check lets exactly one of them in.
//!
//! The time it waits for is the server's clock ([`Clock`]): a timer for
//! the system clock, and every change of a test's clock, which moves only
//! when the test says so.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use carcassonne_store::{Clock, GameId};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use super::stored::{Loaded, engine_event};
use super::{Games, Settled, TimeoutOutcome};
use crate::api::status::ApiError;

/// How long a timeout that could not be stored (the storage was
/// unavailable) waits before it is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// The most resumptions written at once at start: their syncs are shared
/// (group commit), their number bounded.
const RESUMING_AT_ONCE: usize = 256;

/// A game's pending deadline as of one of its versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deadline {
    pub game: GameId,
    /// The stored sequence number the deadline belongs to.
    pub seq: u64,
    /// When its pending decision times out (ms since the Unix epoch);
    /// `None` when no clock runs (the game is over, or has no time control).
    pub at_ms: Option<u64>,
}

impl Deadline {
    pub fn of(game: &GameId, loaded: &Loaded) -> Deadline {
        Deadline {
            game: game.clone(),
            seq: loaded.version,
            at_ms: loaded.game.deadline(),
        }
    }
}

pub type DeadlineSender = mpsc::UnboundedSender<Deadline>;

/// Every armed deadline: by time, to find the next, and by game, to
/// replace a game's deadline with its next version's.
#[derive(Default)]
struct Armed {
    by_time: BTreeSet<(u64, GameId)>,
    by_game: HashMap<GameId, (u64, u64)>,
}

impl Armed {
    fn set(&mut self, deadline: Deadline) {
        if let Some(&(seq, at)) = self.by_game.get(&deadline.game) {
            if seq > deadline.seq {
                return; // news of an older version
            }
            self.by_time.remove(&(at, deadline.game.clone()));
            self.by_game.remove(&deadline.game);
        }
        if let Some(at) = deadline.at_ms {
            self.by_time.insert((at, deadline.game.clone()));
            self.by_game.insert(deadline.game, (deadline.seq, at));
        }
    }

    fn next(&self) -> Option<u64> {
        self.by_time.first().map(|(at, _)| *at)
    }

    /// Takes out every deadline due at `now`: the game, the version and
    /// the deadline.
    fn take_due(&mut self, now: u64) -> Vec<(GameId, u64, u64)> {
        let mut due = Vec::new();
        while let Some((at, _)) = self.by_time.first() {
            if *at > now {
                break;
            }
            let Some((at, game)) = self.by_time.pop_first() else {
                break;
            };
            if let Some((seq, _)) = self.by_game.remove(&game) {
                due.push((game, seq, at));
            }
        }
        due
    }
}

/// Starts the timekeeper of `games` on `clock`; it stops when `stopping`
/// turns true, once the timeouts it is storing are stored.
pub fn spawn(
    games: Arc<Games>,
    clock: Arc<dyn Clock>,
    stopping: watch::Receiver<bool>,
) -> Result<tokio::task::JoinHandle<()>, ApiError> {
    let (deadlines, armed) = mpsc::unbounded_channel();
    games.keep_time(deadlines.clone())?;
    Ok(tokio::spawn(run(games, clock, armed, deadlines, stopping)))
}

async fn run(
    games: Arc<Games>,
    clock: Arc<dyn Clock>,
    mut news: mpsc::UnboundedReceiver<Deadline>,
    retries: DeadlineSender,
    mut stopping: watch::Receiver<bool>,
) {
    let mut armed = Armed::default();
    let mut changes = clock.changes();
    let mut firing = JoinSet::new();
    loop {
        let now = clock.now_millis();
        for (game, seq, deadline) in armed.take_due(now) {
            firing.spawn(fire(
                games.clone(),
                clock.clone(),
                game,
                seq,
                deadline,
                retries.clone(),
            ));
        }
        let next = armed.next();
        tokio::select! {
            _ = stopping.wait_for(|stopping| *stopping) => break,
            deadline = news.recv() => match deadline {
                Some(deadline) => armed.set(deadline),
                None => break,
            },
            () = until(next, now, changes.as_mut()) => {}
            Some(_) = firing.join_next(), if !firing.is_empty() => {}
        }
    }
    // The timeouts being stored are stored before the store closes.
    while firing.join_next().await.is_some() {}
}

/// Resolves when the clock may have reached `next`: after a timer for the
/// system clock, at the next change of a test's clock.
async fn until(next: Option<u64>, now: u64, changes: Option<&mut watch::Receiver<u64>>) {
    match (changes, next) {
        (Some(changes), _) => {
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        (None, Some(at)) => tokio::time::sleep(Duration::from_millis(at.saturating_sub(now))).await,
        (None, None) => std::future::pending().await,
    }
}

/// Times out the decision pending at `seq` of `game`, and makes it durable;
/// a deadline not yet reached, or a timeout that could not be stored, goes
/// back to the timekeeper.
async fn fire(
    games: Arc<Games>,
    clock: Arc<dyn Clock>,
    game: GameId,
    seq: u64,
    deadline: u64,
    retries: DeadlineSender,
) {
    let retry = |at_ms: u64| {
        let _ = retries.send(Deadline {
            game: game.clone(),
            seq,
            at_ms: Some(at_ms),
        });
    };
    // A cached game reads nothing from the disk: decided right here.
    let outcome = if games.cached(&game).is_some() {
        games.time_out(&game, seq)
    } else {
        let (games, id) = (games.clone(), game.clone());
        tokio::task::spawn_blocking(move || games.time_out(&id, seq))
            .await
            .unwrap_or_else(|e| Err(ApiError::Internal(format!("timeout task failed: {e}"))))
    };
    let error = match outcome {
        Ok(TimeoutOutcome::Stored(written)) => match games.settle(written).await {
            Ok(Settled::Acted(acted)) => {
                // How long after its deadline the timeout was durable.
                let late_ms = clock.now_millis().saturating_sub(deadline);
                tracing::info!(game = %game, version = acted.loaded.version - 1, late_ms, "timed out");
                return;
            }
            Ok(_) => return,
            Err(error) => error,
        },
        Ok(TimeoutOutcome::NotDue(at)) => return retry(at),
        Ok(TimeoutOutcome::Moved) | Err(ApiError::StaleVersion { .. }) => return,
        Err(error) => error,
    };
    tracing::warn!(game = %game, %error, "a timeout could not be stored; trying again");
    retry(clock.now_millis() + RETRY.as_millis() as u64);
}

/// T-10: stores a resumption in every running game with a time control,
/// naming `down_since` (when the server was last known alive, if known),
/// so that no clock counts the time the server was down. Each then arms
/// its deadline. Returns how many games were resumed.
pub async fn resume_all(games: &Arc<Games>, down_since: Option<u64>) -> Result<usize, ApiError> {
    let clocked = clocked_games(games).await?;
    games.note_clocked(&clocked);
    let mut resuming = JoinSet::new();
    let mut resumed = 0;
    for game in clocked {
        if resuming.len() >= RESUMING_AT_ONCE
            && let Some(done) = resuming.join_next().await
        {
            resumed += usize::from(matches!(done, Ok(true)));
        }
        let games = games.clone();
        resuming.spawn(async move {
            let result = match games.resume(&game, down_since.unwrap_or(0)) {
                Ok(Some(written)) => games.settle(written).await.map(|_| true),
                Ok(None) => Ok(false),
                Err(error) => Err(error),
            };
            result.unwrap_or_else(|error| {
                tracing::error!(game = %game, %error, "its clocks could not be resumed");
                false
            })
        });
    }
    while let Some(done) = resuming.join_next().await {
        resumed += usize::from(matches!(done, Ok(true)));
    }
    Ok(resumed)
}

/// Every game with a time control in the store (running or not).
async fn clocked_games(games: &Arc<Games>) -> Result<Vec<GameId>, ApiError> {
    let store = games.store().clone();
    tokio::task::spawn_blocking(move || {
        let mut clocked = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let page = store
                .list_games(token.as_deref(), 0)
                .map_err(super::store_error)?;
            for summary in page
                .games
                .into_iter()
                .filter(|s| crate::players::is_game_stream(&s.game))
            {
                // The creation (event 2) says whether a game has a clock:
                // only those are read whole.
                let head = store
                    .read_game_chunk(&summary.game, 2, 1)
                    .map_err(super::store_error)?;
                if head.first().is_some_and(is_clocked_creation) {
                    clocked.push(summary.game);
                }
            }
            token = page.next_page_token;
            if token.is_none() {
                return Ok(clocked);
            }
        }
    })
    .await
    .map_err(|e| ApiError::Internal(format!("listing task failed: {e}")))?
}

/// Whether `stored` is the creation of a game with a time control.
pub(super) fn is_clocked_creation(stored: &carcassonne_store::StoredEvent) -> bool {
    engine_event(stored).is_ok_and(
        |event| matches!(event, carcassonne_engine::Event::Created(setup) if setup.time_control.is_some()),
    )
}

/// Arms the deadline of every running game with a time control, storing
/// nothing: what a node starts with while other nodes on its database run
/// (their clocks never stopped). Returns how many were armed.
pub async fn arm_all(games: &Arc<Games>) -> Result<usize, ApiError> {
    let clocked = clocked_games(games).await?;
    games.note_clocked(&clocked);
    let games = games.clone();
    tokio::task::spawn_blocking(move || {
        let mut armed = 0;
        for game in clocked {
            let loaded = games.load(&game)?;
            if loaded.game.deadline().is_some() {
                games.arm(&game, &loaded);
                armed += 1;
            }
        }
        Ok(armed)
    })
    .await
    .map_err(|e| ApiError::Internal(format!("arming task failed: {e}")))?
}
