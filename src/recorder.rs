//! What happens when a game ends beyond the game itself: a rated game's
//! result goes to the ratings, a tournament's game to its tournament
//! (which may pair the next round).
//!
//! The recorder follows the store's server-wide stream. Falling behind
//! (or starting) makes it catch up: it learns every game opened so far
//! into the players' seats and checks every open rated or tournament game;
//! between two catch-ups it has seen every event in order, which is what
//! lets it move the seats' index along (`Seats::passed`). Every step is
//! idempotent (a game is rated once, a result recorded once), so a crash
//! at any point loses nothing and doubles nothing.
//!
//! One game, or one tournament, whose step fails (its events do not fold,
//! its store reads fail) holds up no other: the failure is logged, the
//! recorder goes on with the rest, and a catch-up tries what failed again
//! later, less and less often while it keeps failing. Only what every
//! step needs (the registry, the ratings, the seats' index) stops it.

use std::sync::Arc;
use std::time::Duration;

use carcassonne_competition::PlayerName;
use carcassonne_store::{GameId, StoredEvent};
use tokio::sync::broadcast;

use crate::api::status::ApiError;
use crate::games::Games;
use crate::players::is_game_stream;
use crate::players::seats::{GameSeats, Seats};
use crate::ratings::RatingBook;
use crate::tournaments::Tournaments;

/// The most events of the live stream one blocking task handles.
const MAX_BATCH: usize = 256;

/// How long after a failed step the recorder tries again, at first; the
/// wait doubles while steps keep failing, up to [`MAX_RETRY_DELAY`].
const RETRY_DELAY: Duration = Duration::from_secs(1);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

pub struct Recorder {
    pub games: Arc<Games>,
    pub seats: Arc<Seats>,
    pub ratings: Arc<RatingBook>,
    pub tournaments: Arc<Tournaments>,
    pub players: Arc<crate::players::Players>,
    pub challenges: Arc<crate::challenges::Challenges>,
}

impl Recorder {
    /// Records the end of game `id` if it has ended; blocking. Returns
    /// whether it has.
    fn record(&self, id: &GameId, seats: &GameSeats) -> Result<bool, ApiError> {
        let loaded = self.games.current(id)?;
        if !loaded.game.is_finished() {
            return Ok(false);
        }
        if seats.rated
            && let Some(ranks) = loaded.game.ranking()
        {
            let players = seats
                .accounts
                .iter()
                .map(|a| a.as_deref().and_then(|name| PlayerName::new(name).ok()))
                .collect::<Option<Vec<_>>>();
            match players {
                Some(players) => self.ratings.rate(id, players, ranks)?,
                None => tracing::warn!(game = %id, "a rated game with a guest seat is not rated"),
            }
        }
        if let Some(tournament) = &seats.tournament {
            self.drive(tournament)?;
        }
        self.seats.end_recorded(id);
        Ok(true)
    }

    /// Drives a tournament; the resignations it makes settle on their own.
    fn drive(&self, tournament: &str) -> Result<(), ApiError> {
        let resignations = self.tournaments.drive(tournament)?;
        crate::tournaments::settle_in_background(&self.games, resignations);
        Ok(())
    }

    /// Checks every open rated or tournament game, and every tournament.
    /// Returns how many of their steps failed (each logged): a later
    /// catch-up tries them again. An error: what every step needs failed.
    pub fn catch_up(&self) -> Result<usize, ApiError> {
        // What other nodes may have appended while this one fell behind.
        self.players.refresh(u64::MAX)?;
        self.ratings.refresh(u64::MAX)?;
        let mut failed = 0;
        for (tournament, error) in self.tournaments.refresh_all()? {
            failed += noted::<()>(Err(error), "tournament", &tournament);
        }
        for (challenge, error) in self.challenges.refresh_all()? {
            failed += noted::<()>(Err(error), "challenge", &challenge);
        }
        // Every game opened so far, so that none is left out of the ends to
        // record; the live stream then keeps the seats' index current.
        self.seats.learn_through(self.games.store().last_position())?;
        for (id, seats) in self.seats.ends_to_record() {
            failed += noted(self.record(&id, &seats), "game", id.as_str());
        }
        for tournament in self.tournaments.ids() {
            failed += noted(self.drive(&tournament), "tournament", &tournament);
        }
        Ok(failed)
    }

    /// One stored event of the server-wide stream. Returns whether its
    /// game's or tournament's step failed (logged); an error: what every
    /// step needs failed.
    fn on_event(&self, event: &StoredEvent) -> Result<bool, ApiError> {
        self.seats.passed(event);
        let stream = event.game.as_str();
        if stream == crate::players::REGISTRY_STREAM {
            return self.players.refresh(event.seq).map(|()| false);
        }
        if stream == crate::ratings::RATINGS_STREAM {
            return self.ratings.refresh(event.seq).map(|()| false);
        }
        if let Some(id) = stream.strip_prefix(crate::tournaments::TOURNAMENT_STREAM_PREFIX) {
            return Ok(noted(self.tournaments.refresh(id, event.seq), "tournament", id) > 0);
        }
        if let Some(id) = stream.strip_prefix(crate::challenges::CHALLENGE_STREAM_PREFIX) {
            // Another node's change, or this node's own: indexed as stored,
            // and a full challenge's game started if no node has yet.
            return Ok(noted(self.challenges.refresh(id), "challenge", id) > 0);
        }
        if !is_game_stream(&event.game) {
            return Ok(false);
        }
        let game = || -> Result<(), ApiError> {
            self.games.follow(event)?;
            let seats = self.seats.of(&event.game)?;
            if seats.recorded() {
                self.record(&event.game, &seats)?;
            }
            Ok(())
        };
        Ok(noted(game(), "game", event.game.as_str()) > 0)
    }

    /// Follows the store until `stopping`.
    pub async fn run(self: Arc<Self>, mut stopping: tokio::sync::watch::Receiver<bool>) {
        let mut live = self.games.store().subscribe_all();
        let mut behind = true;
        let mut retry = Retry::default();
        loop {
            if behind {
                let this = self.clone();
                match tokio::task::spawn_blocking(move || this.catch_up()).await {
                    Ok(Ok(failed)) => {
                        behind = false;
                        retry.caught_up(failed > 0);
                    }
                    Ok(Err(error)) => tracing::warn!(%error, "recording games' ends; trying again"),
                    Err(error) => tracing::error!(%error, "the recorder's task failed"),
                }
                if behind {
                    tokio::select! {
                        () = tokio::time::sleep(RETRY_DELAY) => continue,
                        _ = stopping.changed() => return,
                    }
                }
            }
            let next = tokio::select! {
                next = live.recv() => next,
                () = retry.due() => {
                    // A catch-up tries every step that failed again.
                    behind = true;
                    continue;
                }
                _ = stopping.changed() => return,
            };
            let mut events = match next {
                Ok(event) => vec![event],
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    behind = true;
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            };
            // What else has come meanwhile, in one blocking task: a task
            // per event cannot keep up with a busy server, and falling
            // behind costs a catch-up.
            while events.len() < MAX_BATCH {
                match live.try_recv() {
                    Ok(event) => events.push(event),
                    Err(broadcast::error::TryRecvError::Lagged(_)) => {
                        behind = true;
                        break;
                    }
                    // Closed: the next `recv` says so.
                    Err(_) => break,
                }
            }
            let this = self.clone();
            let done = tokio::task::spawn_blocking(move || {
                let mut failed = false;
                for event in &events {
                    failed |= this.on_event(event)?;
                }
                Ok::<_, ApiError>(failed)
            })
            .await;
            match done {
                Ok(Ok(true)) => retry.failed(),
                Ok(Ok(false)) => {}
                // Check everything again rather than lose an end.
                _ => behind = true,
            }
        }
    }
}

/// When to catch up again for the steps that failed: later and later
/// while they keep failing.
struct Retry {
    at: Option<tokio::time::Instant>,
    /// The wait after the next failure.
    delay: Duration,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            at: None,
            delay: RETRY_DELAY,
        }
    }
}

impl Retry {
    /// A step failed: a catch-up comes after the current delay (or
    /// earlier, if one is due already), and the next waits longer.
    fn failed(&mut self) {
        let at = tokio::time::Instant::now() + self.delay;
        self.at = Some(self.at.map_or(at, |due| due.min(at)));
        self.delay = (self.delay * 2).min(MAX_RETRY_DELAY);
    }

    /// A catch-up ran: it tried every step; `failed`, some failed again.
    fn caught_up(&mut self, failed: bool) {
        self.at = None;
        if failed {
            self.failed();
        } else {
            self.delay = RETRY_DELAY;
        }
    }

    /// Resolves when a catch-up is due; never without a failure.
    async fn due(&self) {
        match self.at {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    }
}

/// Logs a game's, tournament's or challenge's step that failed; 1 if it did, else 0.
fn noted<T>(outcome: Result<T, ApiError>, what: &str, id: &str) -> usize {
    match outcome {
        Ok(_) => 0,
        Err(error) => {
            tracing::warn!(%error, "recording the end of {what} {id} failed; the others go on, and it is tried again later");
            1
        }
    }
}
