//! Ratings: a fold of the `@ratings` stream, one event per rated game that
//! ended, in the order they ended. The rating maths is the competition
//! crate's (Glicko-2 for duels, Weng-Lin for 3 to 5 players); this module
//! only stores the results and folds them, so that anyone can recompute
//! the ratings from the stream and get the same numbers.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use carcassonne_competition::{PlayerName, RATINGS_SCHEMA, RatingEvent, Ratings};
use carcassonne_store::{Actor, EventStore, GameId, NewEvent, RequestId, StoreError};

use crate::api::status::ApiError;
use crate::games::store_error;

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
    for event in stored {
        if event.schema != RATINGS_SCHEMA {
            return Err(format!(
                "{RATINGS_STREAM} event {}: schema {}",
                event.seq, event.schema
            ));
        }
        let decoded = RatingEvent::decode(&event.payload)
            .map_err(|e| format!("{RATINGS_STREAM} event {}: {e}", event.seq))?;
        let RatingEvent::Rated { game, .. } = &decoded;
        rated.insert(game.clone());
        ratings.apply(&decoded);
    }
    Ok((ratings, rated))
}

impl RatingBook {
    /// The ratings folded from the store.
    pub fn open(store: Arc<dyn EventStore>) -> Result<RatingBook, ApiError> {
        let stored = match store.read_game(&stream(), 1) {
            Ok(stored) => stored,
            Err(StoreError::NotFound(_)) => Vec::new(),
            Err(error) => return Err(store_error(error)),
        };
        let (ratings, rated) = fold(&stored).map_err(ApiError::Corrupt)?;
        let version = stored.last().map_or(0, |e| e.seq);
        Ok(RatingBook {
            store,
            state: RwLock::new(Folded {
                ratings,
                version,
                rated,
            }),
            writing: Mutex::new(()),
        })
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
        let appended = self
            .store
            .append(&stream(), version, &request, &[new])
            .map_err(store_error)?;
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        state.ratings.apply(&event);
        state.rated.insert(game.as_str().to_owned());
        state.version = appended.last_seq;
        tracing::info!(game = %game, "game rated");
        Ok(())
    }
}
