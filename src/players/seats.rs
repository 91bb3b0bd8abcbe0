//! Which games each registered player sits in, from the games' openings.
//!
//! Built at start from the first event of every game (one small read per
//! game), then kept up to date by whoever meets a game first: a lookup of
//! a game not yet known reads its opening from the store. Every game is
//! known, guests' games too (as having no registered seat), so a stream
//! that meets an event of a guests' game never reads the store again.
//!
//! A question about every game ("which games of this player are open?")
//! needs more: the index also knows a global position it has learned
//! every game's opening up to. The recorder moves it along as it follows
//! the store's stream; [`Seats::learn_through`] reads whatever lies
//! between it and a position from the store, so that a game created a
//! moment ago (here, or on another node) is never missing from an answer.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use carcassonne_store::{EventStore, GameId, MAX_READ_LIMIT, StoredEvent};

use super::is_game_stream;
use crate::api::status::ApiError;
use crate::games::store_error;
use crate::games::stored::{OPENED_SCHEMA, Opened};

/// What a game's opening says of its seats, as far as players go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameSeats {
    /// Per seat, the registered player it belongs to; empty for guests only.
    pub accounts: Vec<Option<String>>,
    pub rated: bool,
    pub tournament: Option<String>,
}

impl GameSeats {
    pub fn of(opened: &Opened) -> GameSeats {
        GameSeats {
            accounts: opened.accounts.clone(),
            rated: opened.rated,
            tournament: opened.tournament.clone(),
        }
    }

    /// The seat of registered player `name`.
    pub fn seat_of(&self, name: &str) -> Option<u8> {
        self.accounts
            .iter()
            .position(|a| a.as_deref() == Some(name))
            .map(|seat| seat as u8)
    }

    /// Whether the game matters beyond its players: rated, or a
    /// tournament's, so its end must be recorded.
    pub fn recorded(&self) -> bool {
        self.rated || self.tournament.is_some()
    }
}

#[derive(Default)]
struct Index {
    games: HashMap<GameId, Arc<GameSeats>>,
    /// Each player's games, in id order.
    by_player: HashMap<String, BTreeSet<GameId>>,
    /// Games known to be over: never a player's pending business again.
    finished: HashSet<GameId>,
    /// Games whose end the recorder has recorded (rated, or given to their
    /// tournament). Not `finished`: a player's stream learns of an end
    /// before the recorder may have recorded it.
    ends_recorded: HashSet<GameId>,
}

/// The index of players' seats.
pub struct Seats {
    store: Arc<dyn EventStore>,
    index: RwLock<Index>,
    /// The global position up to which every game's opening is in the
    /// index. Held while the store is read up to a position, so that
    /// callers wanting the same stretch read it once.
    learned_through: Mutex<u64>,
}

impl Seats {
    /// Reads the opening of every game in the store.
    pub fn build(store: Arc<dyn EventStore>) -> Result<Seats, ApiError> {
        // Read before listing: a game created while the list is read is
        // past this position, and found by `learn_through`.
        let learned_through = store.last_position();
        let seats = Seats {
            store: store.clone(),
            index: RwLock::new(Index::default()),
            learned_through: Mutex::new(learned_through),
        };
        let mut token: Option<String> = None;
        loop {
            let page = store.list_games(token.as_deref(), 0).map_err(store_error)?;
            for summary in &page.games {
                if is_game_stream(&summary.game) {
                    seats.of(&summary.game)?;
                }
            }
            token = page.next_page_token;
            if token.is_none() {
                return Ok(seats);
            }
        }
    }

    /// What the opening of game `id` says, read from the store the first
    /// time.
    pub fn of(&self, id: &GameId) -> Result<Arc<GameSeats>, ApiError> {
        if let Some(known) = self
            .index
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .games
            .get(id)
        {
            return Ok(known.clone());
        }
        let first = self.store.read_game_chunk(id, 1, 1).map_err(store_error)?;
        match first.first() {
            Some(event) if event.schema == OPENED_SCHEMA => self.learn_opening(event),
            _ => Err(ApiError::NotFound(id.to_string())),
        }
    }

    /// Learns the game a game's first event opens.
    fn learn_opening(&self, event: &StoredEvent) -> Result<Arc<GameSeats>, ApiError> {
        let opened = Opened::decode(&event.payload)
            .map_err(|e| ApiError::Corrupt(format!("games/{} event 1: {e}", event.game)))?;
        Ok(self.learn(&event.game, GameSeats::of(&opened)))
    }

    /// Whether `event` opens a game.
    fn opens_a_game(event: &StoredEvent) -> bool {
        event.seq == 1 && event.schema == OPENED_SCHEMA && is_game_stream(&event.game)
    }

    /// Learns the game `event` opens, if it opens one, on the way through
    /// the store: an opening that does not decode is that game's trouble
    /// (`of` reports it for that game), never a reason to stop learning
    /// the others.
    fn pass_over(&self, event: &StoredEvent) {
        if Self::opens_a_game(event)
            && let Err(error) = self.learn_opening(event)
        {
            tracing::warn!(%error, "a game's opening left out of the players' seats");
        }
    }

    /// Makes sure every game opened up to global position `position` is
    /// in the index, reading the store from where the index stands.
    pub fn learn_through(&self, position: u64) -> Result<(), ApiError> {
        let mut through = self
            .learned_through
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        while *through < position {
            let page = self
                .store
                .read_all(*through + 1, MAX_READ_LIMIT)
                .map_err(store_error)?;
            if page.is_empty() {
                return Ok(());
            }
            for event in &page {
                if event.position > position {
                    // Positions up to it that no event has were left
                    // unused (a store may skip some).
                    *through = position;
                    return Ok(());
                }
                self.pass_over(event);
                *through = event.position;
            }
        }
        Ok(())
    }

    /// One event of the store's server-wide stream, from a follower that
    /// has passed every event from the index's position to this one (the
    /// recorder, after `learn_through`): moves the index's position along
    /// without reading the store.
    pub fn passed(&self, event: &StoredEvent) {
        let mut through = self
            .learned_through
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if event.position > *through {
            self.pass_over(event);
            *through = event.position;
        }
    }

    /// Records a game's seats (idempotent).
    pub fn learn(&self, id: &GameId, seats: GameSeats) -> Arc<GameSeats> {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = index.games.get(id) {
            return known.clone();
        }
        for name in seats.accounts.iter().flatten() {
            index
                .by_player
                .entry(name.clone())
                .or_default()
                .insert(id.clone());
        }
        let seats = Arc::new(seats);
        index.games.insert(id.clone(), seats.clone());
        seats
    }

    /// Notes that a game is over.
    pub fn finished(&self, id: &GameId) {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        index.finished.insert(id.clone());
    }

    /// Notes that the recorder has recorded a game's end.
    pub fn end_recorded(&self, id: &GameId) {
        let mut index = self.index.write().unwrap_or_else(PoisonError::into_inner);
        index.finished.insert(id.clone());
        index.ends_recorded.insert(id.clone());
    }

    /// The games of player `name` not known to be over, in id order.
    pub fn open_games_of(&self, name: &str) -> Vec<GameId> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        index
            .by_player
            .get(name)
            .into_iter()
            .flatten()
            .filter(|id| !index.finished.contains(*id))
            .cloned()
            .collect()
    }

    /// Every known game whose end must be recorded (rated or a
    /// tournament's) and is not yet.
    pub fn ends_to_record(&self) -> Vec<(GameId, Arc<GameSeats>)> {
        let index = self.index.read().unwrap_or_else(PoisonError::into_inner);
        let mut games: Vec<_> = index
            .games
            .iter()
            .filter(|(id, seats)| seats.recorded() && !index.ends_recorded.contains(*id))
            .map(|(id, seats)| (id.clone(), seats.clone()))
            .collect();
        games.sort_by(|a, b| a.0.cmp(&b.0));
        games
    }
}
