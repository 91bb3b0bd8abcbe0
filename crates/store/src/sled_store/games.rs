//! What the writer knows about each game it appends to: where its chain
//! stands and which request ids its appends carried.
//!
//! An append needs both before it is queued: the head to check the
//! expected version and chain on, the request ids to recognise a retry.
//! Reading them from sled on every append cost more than writing, so the
//! writer keeps them for the games it touched, loads a game once by
//! scanning its envelopes (request ids are in the envelopes, so no separate
//! index has to be written), and forgets games when the cache is full.
//!
//! Writers queue appends and the committer puts them into sled later, so
//! for a game with appends still queued this cache is the only up-to-date
//! view: such a game is pinned, never forgotten, until its last append is
//! durable (and so in sled). Only the writer lock's holder uses the cache.

use std::collections::HashMap;
use std::ops::ControlFlow;

use crate::chain::Head;
use crate::error::Result;
use crate::event::Appended;
use crate::ids::{GameId, RequestId};

use super::read;

/// A game as the writer sees it.
#[derive(Clone, Debug, Default)]
pub(super) struct GameState {
    pub head: Head,
    /// Request id → what the append that carried it wrote.
    pub requests: HashMap<RequestId, Appended>,
    /// The position of the game's last event: the game is pinned in the
    /// cache until the durable position reaches it.
    pub last_position: u64,
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

    /// The game's state, loaded from sled if it is not cached. `durable`
    /// is the durable position: games past it are not forgotten.
    pub(super) fn get(&mut self, db: &sled::Db, durable: u64, game: &GameId) -> Result<&mut GameState> {
        if !self.games.contains_key(game) {
            let state = load(db, game)?;
            if self.games.len() >= self.capacity {
                self.evict(durable);
            }
            self.games.insert(game.clone(), state);
        }
        // Present: inserted just above if it was missing.
        Ok(self.games.entry(game.clone()).or_default())
    }

    /// Forgets an eighth of the games, skipping pinned ones. Which ones
    /// does not matter for correctness; `HashMap`'s order is as good a
    /// choice as any. With every game pinned the cache grows past its
    /// capacity, by at most the appends in flight.
    pub(super) fn evict(&mut self, durable: u64) {
        let forget: Vec<GameId> = self
            .games
            .iter()
            .filter(|(_, state)| state.last_position <= durable)
            .map(|(game, _)| game.clone())
            .take(self.capacity.div_ceil(8))
            .collect();
        for game in forget {
            self.games.remove(&game);
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.games.len()
    }

    #[cfg(test)]
    pub(super) fn contains(&self, game: &GameId) -> bool {
        self.games.contains_key(game)
    }
}

/// Reads a game's head and request ids from its envelopes.
fn load(db: &sled::Db, game: &GameId) -> Result<GameState> {
    let mut state = GameState::default();
    read::scan_appends(db, game.as_str(), 1, |_, events| {
        if let (Some(first), Some(last)) = (events.first(), events.last()) {
            if !first.request_id.is_none() {
                let appended = Appended {
                    first_seq: first.seq,
                    last_seq: last.seq,
                    first_position: first.position,
                    last_position: last.position,
                    time_millis: first.time_millis,
                };
                state.requests.insert(first.request_id.clone(), appended);
            }
            state.head = Head {
                last_seq: last.seq,
                last_hash: last.hash,
            };
            state.last_position = last.position;
        }
        ControlFlow::Continue(())
    })?;
    Ok(state)
}
