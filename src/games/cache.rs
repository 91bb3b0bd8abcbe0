//! A bounded cache of folded games, least recently used out first.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use carcassonne_store::GameId;
use lru::LruCache;

use super::stored::Loaded;

pub struct Cache {
    games: Mutex<LruCache<GameId, Arc<Loaded>>>,
}

impl Cache {
    pub fn new(capacity: usize) -> Cache {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        Cache {
            games: Mutex::new(LruCache::new(capacity)),
        }
    }

    pub fn get(&self, id: &GameId) -> Option<Arc<Loaded>> {
        self.games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    /// The cached game, without marking it as used: reads that must not
    /// push out the games being played (listings, the server stream) look
    /// with this.
    pub fn peek(&self, id: &GameId) -> Option<Arc<Loaded>> {
        self.games
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .peek(id)
            .cloned()
    }

    /// Keeps `loaded` unless the cache holds a newer version of the game.
    pub fn put(&self, id: &GameId, loaded: Arc<Loaded>) {
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        if games.peek(id).is_some_and(|held| held.version > loaded.version) {
            return;
        }
        games.put(id.clone(), loaded);
    }
}
