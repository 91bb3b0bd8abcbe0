//! Live subscriptions: one broadcast channel for all games and one per
//! watched game.
//!
//! `tokio::sync::broadcast` never blocks a sender: it keeps the last
//! `capacity` events in a ring, and a receiver that falls further behind
//! gets `RecvError::Lagged(n)` and then resumes at the oldest event still
//! held. A subscriber that lagged re-reads what it missed from the store
//! (by sequence number or global position). sled's `watch_prefix` is not
//! used: its watchers make writers wait for slow readers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast;

use crate::event::StoredEvent;
use crate::ids::GameId;

/// What a subscription yields: each event once, in order, shared.
pub type EventReceiver = broadcast::Receiver<Arc<StoredEvent>>;

pub(crate) struct Hub {
    all: broadcast::Sender<Arc<StoredEvent>>,
    games: Mutex<GameChannels>,
    capacity: usize,
}

struct GameChannels {
    senders: HashMap<GameId, broadcast::Sender<Arc<StoredEvent>>>,
    /// The map's size after the last sweep of channels nobody listens to.
    swept_len: usize,
}

impl Hub {
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Hub {
            all: broadcast::channel(capacity).0,
            games: Mutex::new(GameChannels {
                senders: HashMap::new(),
                swept_len: 0,
            }),
            capacity,
        }
    }

    pub(crate) fn subscribe_all(&self) -> EventReceiver {
        self.all.subscribe()
    }

    pub(crate) fn subscribe_game(&self, game: &GameId) -> EventReceiver {
        // The map only holds plain senders: a panic elsewhere cannot leave
        // it half-updated, so a poisoned lock is safe to use.
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        // Channels of games whose subscribers left and that see no more
        // events would stay forever: sweep them whenever the map doubled.
        if games.senders.len() >= 2 * games.swept_len.max(64) {
            games.senders.retain(|_, sender| sender.receiver_count() > 0);
            games.swept_len = games.senders.len();
        }
        let capacity = self.capacity;
        games
            .senders
            .entry(game.clone())
            .or_insert_with(|| broadcast::channel(capacity).0)
            .subscribe()
    }

    /// Sends durable events to their subscribers. Callers publish in
    /// global position order, one batch at a time.
    pub(crate) fn publish(&self, events: impl IntoIterator<Item = Arc<StoredEvent>>) {
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            // An error only means nobody listens right now.
            let _ = self.all.send(Arc::clone(&event));
            if let Some(sender) = games.senders.get(&event.game)
                && sender.send(Arc::clone(&event)).is_err()
            {
                games.senders.remove(&event.game);
            }
        }
    }
}
