//! Ratings: a fold of the `@ratings` stream, one event per rated game that
//! ended, in the order they ended. The rating maths is the competition
//! crate's (Glicko-2 for duels, Weng-Lin for 3 to 5 players); this module
//! only stores the results and folds them, so that anyone can recompute
//! the ratings from the stream and get the same numbers.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use carcassonne_competition::{PlayerName, Pool, RATINGS_SCHEMA, Rating, RatingChange, RatingEvent, Ratings};
use carcassonne_store::{Actor, EventStore, GameId, NewEvent, RequestId, StoreError};

use crate::api::status::ApiError;
use crate::games::store_error;
use crate::proto;

/// The stream that holds the rated results.
pub const RATINGS_STREAM: &str = "@ratings";

pub struct RatingBook {
    store: Arc<dyn EventStore>,
    state: RwLock<Folded>,
    writing: Mutex<()>,
}

#[derive(Default)]
struct Folded {
    ratings: Ratings,
    version: u64,
    /// The games already rated: each is rated once.
    rated: HashSet<String>,
}

fn stream() -> GameId {
    GameId::new(RATINGS_STREAM).unwrap_or_else(|_| unreachable!("a valid stream id"))
}

/// The events of the ratings stream, decoded, in order.
pub fn fold(stored: &[carcassonne_store::StoredEvent]) -> Result<(Ratings, HashSet<String>), String> {
    let mut ratings = Ratings::default();
    let mut rated = HashSet::new();
    for event in decode(stored)? {
        let RatingEvent::Rated { game, .. } = &event;
        rated.insert(game.clone());
        ratings.apply(&event);
    }
    Ok((ratings, rated))
}

/// Stored events of the ratings stream, decoded; the first that does not
/// decode is an error.
fn decode(stored: &[carcassonne_store::StoredEvent]) -> Result<Vec<RatingEvent>, String> {
    stored
        .iter()
        .map(|event| {
            if event.schema != RATINGS_SCHEMA {
                return Err(format!(
                    "{RATINGS_STREAM} event {}: schema {}",
                    event.seq, event.schema
                ));
            }
            RatingEvent::decode(&event.payload)
                .map_err(|e| format!("{RATINGS_STREAM} event {}: {e}", event.seq))
        })
        .collect()
}

/// A rating as the API shows it.
pub fn rating_view(rating: Rating) -> proto::Rating {
    proto::Rating {
        value: rating.value,
        deviation: rating.deviation,
        games: rating.games,
    }
}

/// A pool as the API names it.
pub fn pool_view(pool: Pool) -> proto::RatingPool {
    match pool {
        Pool::Duel => proto::RatingPool::Duel,
        Pool::Multiplayer => proto::RatingPool::Multiplayer,
    }
}

/// One rated game's change of a player's rating, as GetRatingHistory
/// shows it.
pub fn change_view(change: &RatingChange) -> proto::RatingChange {
    proto::RatingChange {
        game: format!("games/{}", change.game),
        pool: pool_view(change.pool) as i32,
        before: Some(rating_view(change.before)),
        after: Some(rating_view(change.after)),
    }
}

/// A player's rating changes in some games, as GetRatingHistory shows
/// them: the entries of a tournament archive's `ratings/changes.json`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PlayerChanges {
    /// `players/{name}`.
    pub player: String,
    /// Oldest first.
    pub changes: Vec<proto::RatingChange>,
}

/// The changes of each of `players` (in their order) in the games `games`,
/// as `ratings` folded them.
pub fn changes_in(ratings: &Ratings, players: &[PlayerName], games: &HashSet<String>) -> Vec<PlayerChanges> {
    players
        .iter()
        .map(|player| PlayerChanges {
            player: format!("players/{player}"),
            changes: ratings
                .history(player)
                .iter()
                .filter(|change| games.contains(&change.game))
                .map(change_view)
                .collect(),
        })
        .collect()
}

impl RatingBook {
    /// The ratings folded from the store.
    pub fn open(store: Arc<dyn EventStore>) -> Result<RatingBook, ApiError> {
        let book = RatingBook {
            store,
            state: RwLock::new(Folded::default()),
            writing: Mutex::new(()),
        };
        book.catch_up()?;
        Ok(book)
    }

    fn version(&self) -> u64 {
        self.state.read().unwrap_or_else(PoisonError::into_inner).version
    }

    /// Folds in the ratings' events from `seq` on if this node's fold
    /// stops before it: another node on a shared store wrote them.
    pub fn refresh(&self, seq: u64) -> Result<(), ApiError> {
        if seq > self.version() {
            let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
            // This node's own rating may have folded it meanwhile.
            if seq > self.version() {
                self.catch_up()?;
            }
        }
        Ok(())
    }

    /// Folds in the stored events after this node's fold, read from
    /// there: as costly whatever the stream's length. Called with
    /// `writing` held (or before anyone else can write), so that no event
    /// is folded twice.
    fn catch_up(&self) -> Result<(), ApiError> {
        let from = self.version() + 1;
        let stored = match self.store.read_game(&stream(), from) {
            Ok(stored) => stored,
            Err(StoreError::NotFound(_)) => Vec::new(),
            Err(error) => return Err(store_error(error)),
        };
        let events = decode(&stored).map_err(ApiError::Corrupt)?;
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        for (stored, event) in stored.iter().zip(&events) {
            let RatingEvent::Rated { game, .. } = event;
            state.rated.insert(game.clone());
            state.ratings.apply(event);
            state.version = stored.seq;
        }
        Ok(())
    }

    /// Reads the ratings.
    pub fn read<T>(&self, f: impl FnOnce(&Ratings) -> T) -> T {
        f(&self.state.read().unwrap_or_else(PoisonError::into_inner).ratings)
    }

    pub fn is_rated(&self, game: &GameId) -> bool {
        let state = self.state.read().unwrap_or_else(PoisonError::into_inner);
        state.rated.contains(game.as_str())
    }

    /// Rates a finished game once (a second call does nothing); blocking.
    pub fn rate(&self, game: &GameId, players: Vec<PlayerName>, ranks: Vec<u8>) -> Result<(), ApiError> {
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if self.is_rated(game) {
            return Ok(());
        }
        let event = RatingEvent::Rated {
            game: game.as_str().to_owned(),
            players,
            ranks,
        };
        let version = self.state.read().unwrap_or_else(PoisonError::into_inner).version;
        let new = NewEvent {
            actor: Actor::Server,
            schema: RATINGS_SCHEMA,
            payload: event.encode(),
        };
        let request =
            RequestId::new(format!("~rated/{game}")).map_err(|e| ApiError::Internal(e.to_string()))?;
        let appended = match self.store.append(&stream(), version, &request, &[new]) {
            Ok(appended) if appended.first_seq == version + 1 => appended,
            // Another node rated it (the request id names the game), or
            // rated another game first: the store's ratings are the truth.
            Ok(_) | Err(StoreError::Conflict { .. }) => {
                self.catch_up()?;
                if self.is_rated(game) {
                    return Ok(());
                }
                return Err(ApiError::StorageUnavailable(
                    "the ratings moved on meanwhile (another server node); rated at the next try".to_owned(),
                ));
            }
            Err(error) => return Err(store_error(error)),
        };
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        state.ratings.apply(&event);
        state.rated.insert(game.as_str().to_owned());
        state.version = appended.last_seq;
        tracing::info!(game = %game, "game rated");
        Ok(())
    }
}
