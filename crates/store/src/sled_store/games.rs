//! What the writer knows about each game it appends to: where its chain
//! stands and which request ids its appends carried.
//!
//! An append needs both before it writes: the head to check the expected
//! version and chain on, the request ids to recognise a retry. Reading
//! them from sled on every append cost more than the inserts themselves,
//! so the writer keeps them for the games it touched, loads a game once by
//! scanning its records (request ids are in the records, so no separate
//! index has to be written), and forgets games when the cache is full.
//! Only the writer lock's holder uses it, and it is changed only after a
//! write succeeded, so it never runs ahead of sled.

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::chain::Head;
use crate::error::Result;
use crate::ids::{GameId, RequestId};

use super::read;

/// A game as the writer sees it.
#[derive(Clone, Debug, Default)]
pub(super) struct GameState {
    pub head: Head,
    /// Request id → first sequence number of the append that carried it.
    pub requests: HashMap<RequestId, u64>,
}

pub(super) struct GameCache {
    games: HashMap<GameId, GameState>,
    capacity: usize,
}

impl GameCache {
    pub(super) fn new(capacity: usize) -> Self {
        GameCache {
            games: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// The game's state, loaded from sled if it is not cached.
    pub(super) fn get(&mut self, db: &sled::Db, game: &GameId) -> Result<&mut GameState> {
        if !self.games.contains_key(game) {
            let state = load(db, game)?;
            if self.games.len() >= self.capacity {
                self.evict();
            }
            self.games.insert(game.clone(), state);
        }
        // Present: inserted just above if it was missing.
        Ok(self.games.entry(game.clone()).or_default())
    }

    /// Forgets an eighth of the games. Which ones does not matter for
    /// correctness; `HashMap`'s order is as good a choice as any.
    fn evict(&mut self) {
        let forget: Vec<GameId> = self
            .games
            .keys()
            .take(self.capacity.div_ceil(8))
            .cloned()
            .collect();
        for game in forget {
            self.games.remove(&game);
        }
    }
}

/// Reads a game's head and request ids from its records.
fn load(db: &sled::Db, game: &GameId) -> Result<GameState> {
    let mut state = GameState::default();
    read::scan_appends(db, game.as_str(), 1, |first_seq, events| {
        if let Some(first) = events.first().filter(|first| !first.request_id.is_none()) {
            state.requests.insert(first.request_id.clone(), first_seq);
        }
        if let Some(last) = events.last() {
            state.head = Head {
                last_seq: last.seq,
                last_hash: last.hash,
            };
        }
        ControlFlow::Continue(())
    })?;
    Ok(state)
}
