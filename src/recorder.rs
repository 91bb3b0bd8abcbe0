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

use std::sync::Arc;

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
    pub fn catch_up(&self) -> Result<(), ApiError> {
        // What other nodes may have appended while this one fell behind.
        self.players.refresh(u64::MAX)?;
        self.ratings.refresh(u64::MAX)?;
        self.tournaments.refresh_all()?;
        self.challenges.refresh_all()?;
        // Every game opened so far, so that none is left out of the ends to
        // record; the live stream then keeps the seats' index current.
        self.seats.learn_through(self.games.store().last_position())?;
        for (id, seats) in self.seats.ends_to_record() {
            self.record(&id, &seats)?;
        }
        for tournament in self.tournaments.ids() {
            self.drive(&tournament)?;
        }
        Ok(())
    }

    /// One stored event of the server-wide stream.
    fn on_event(&self, event: &StoredEvent) -> Result<(), ApiError> {
        self.seats.passed(event);
        let stream = event.game.as_str();
        if stream == crate::players::REGISTRY_STREAM {
            return self.players.refresh(event.seq);
        }
        if stream == crate::ratings::RATINGS_STREAM {
            return self.ratings.refresh(event.seq);
        }
        if let Some(id) = stream.strip_prefix(crate::tournaments::TOURNAMENT_STREAM_PREFIX) {
            return self.tournaments.refresh(id, event.seq);
        }
        if let Some(id) = stream.strip_prefix(crate::challenges::CHALLENGE_STREAM_PREFIX) {
            // Another node's change, or this node's own: indexed as stored,
            // and a full challenge's game started if no node has yet.
            return self.challenges.refresh(id).map(drop);
        }
        if !is_game_stream(&event.game) {
            return Ok(());
        }
        self.games.follow(event)?;
        let seats = self.seats.of(&event.game)?;
        if seats.recorded() {
            self.record(&event.game, &seats)?;
        }
        Ok(())
    }

    /// Follows the store until `stopping`.
    pub async fn run(self: Arc<Self>, mut stopping: tokio::sync::watch::Receiver<bool>) {
        let mut live = self.games.store().subscribe_all();
        let mut behind = true;
        loop {
            if behind {
                let this = self.clone();
                match tokio::task::spawn_blocking(move || this.catch_up()).await {
                    Ok(Ok(())) => behind = false,
                    Ok(Err(error)) => tracing::warn!(%error, "recording games' ends; trying again"),
                    Err(error) => tracing::error!(%error, "the recorder's task failed"),
                }
                if behind {
                    tokio::select! {
                        () = tokio::time::sleep(std::time::Duration::from_secs(1)) => continue,
                        _ = stopping.changed() => return,
                    }
                }
            }
            let next = tokio::select! {
                next = live.recv() => next,
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
            let done =
                tokio::task::spawn_blocking(move || events.iter().try_for_each(|event| this.on_event(event)))
                    .await;
            if !matches!(done, Ok(Ok(()))) {
                // Check everything again rather than lose an end.
                behind = true;
            }
        }
    }
}
