//! An in-memory store for tests: the same envelopes, chain and rules as the
//! sled store, held in a map behind one lock, gone when dropped.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::chain::{self, ChainCheck, Head};
use crate::clock::{Clock, SystemClock};
use crate::error::{Result, StoreError};
use crate::event::{Appended, GamePage, GameSummary, NewEvent, StoredEvent, VerifyReport};
use crate::hub::{EventReceiver, Hub};
use crate::ids::{GameId, RequestId};
use crate::store::{self, EventStore, MAX_READ_LIMIT};
use crate::written::Written;

/// An [`EventStore`] in memory. Appends are "durable" at once.
pub struct MemoryStore {
    inner: Mutex<Inner>,
    clock: Arc<dyn Clock>,
    hub: Hub,
}

#[derive(Default)]
struct Inner {
    games: BTreeMap<GameId, Stream>,
    /// Global position - 1 → (game, seq).
    global: Vec<(GameId, u64)>,
}

struct Stream {
    /// Encoded envelopes; index = seq - 1.
    envelopes: Vec<Vec<u8>>,
    head: Head,
    created_millis: u64,
    requests: HashMap<RequestId, Appended>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(Arc::new(SystemClock))
    }
}

impl MemoryStore {
    /// An empty store taking times from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        MemoryStore {
            inner: Mutex::new(Inner::default()),
            clock,
            hub: Hub::new(1024),
        }
    }

    /// An empty store with `config`'s clock and subscription capacity (the
    /// rest of the configuration is about disks).
    pub fn with_config(config: &crate::StoreConfig) -> Self {
        MemoryStore {
            inner: Mutex::new(Inner::default()),
            clock: Arc::clone(&config.clock),
            hub: Hub::new(config.subscription_capacity),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every mutation below completes before it can panic-free return;
        // a poisoned lock means a bug elsewhere, not a torn state.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn read_stream(game: &GameId, stream: &Stream, from_seq: u64, limit: usize) -> Result<Vec<StoredEvent>> {
    let from_seq = from_seq.max(1);
    let mut check = ChainCheck::new(game.as_str(), from_seq);
    // Numbered from the envelopes, not from an open range starting at
    // `from_seq`: that range would overflow for a `from_seq` near `u64::MAX`.
    stream
        .envelopes
        .iter()
        .zip(1u64..)
        .skip(index_from(from_seq))
        .take(limit)
        .map(|(bytes, seq)| check.next(seq, bytes))
        .collect()
}

/// The 0-based index of the 1-based number `from` (at least 1), saturated.
fn index_from(from: u64) -> usize {
    usize::try_from(from - 1).unwrap_or(usize::MAX)
}

impl EventStore for MemoryStore {
    fn now_millis(&self) -> u64 {
        self.clock.now_millis()
    }

    fn write_at(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<Written> {
        chain::check_batch(game, request_id, events)?;
        let mut inner = self.lock();
        let first_position = inner.global.len() as u64 + 1;
        let stream = inner.games.get(game);
        if let Some(original) = stream.and_then(|s| s.requests.get(request_id)) {
            return Ok(Written::durable(*original));
        }
        let head = stream.map_or(Head::EMPTY, |s| s.head);
        if head.last_seq != expected_seq {
            return Err(StoreError::Conflict {
                game: game.to_string(),
                expected: expected_seq,
                actual: head.last_seq,
            });
        }
        let built = chain::build(game, request_id, head, first_position, time_millis, events);
        let appended = Appended {
            first_seq: head.last_seq + 1,
            last_seq: head.last_seq + built.len() as u64,
            first_position,
            last_position: first_position + built.len() as u64 - 1,
            time_millis,
        };
        let stream = inner.games.entry(game.clone()).or_insert_with(|| Stream {
            envelopes: Vec::new(),
            head: Head::EMPTY,
            created_millis: time_millis,
            requests: HashMap::new(),
        });
        let mut published = Vec::with_capacity(built.len());
        for (event, bytes) in built {
            stream.envelopes.push(bytes);
            stream.head = Head {
                last_seq: event.seq,
                last_hash: event.hash,
            };
            published.push(Arc::new(event));
        }
        if !request_id.is_none() {
            stream.requests.insert(request_id.clone(), appended);
        }
        for event in &published {
            inner.global.push((game.clone(), event.seq));
        }
        self.hub.publish(published);
        Ok(Written::durable(appended))
    }

    fn find_request(&self, game: &GameId, request_id: &RequestId) -> Result<Option<Written>> {
        if request_id.is_none() {
            return Ok(None);
        }
        let inner = self.lock();
        Ok(inner
            .games
            .get(game)
            .and_then(|s| s.requests.get(request_id))
            .map(|&appended| Written::durable(appended)))
    }

    fn read_game(&self, game: &GameId, from_seq: u64) -> Result<Vec<StoredEvent>> {
        let inner = self.lock();
        let stream = inner
            .games
            .get(game)
            .ok_or_else(|| StoreError::NotFound(game.to_string()))?;
        read_stream(game, stream, from_seq, usize::MAX)
    }

    fn read_game_chunk(&self, game: &GameId, from_seq: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let inner = self.lock();
        let stream = inner
            .games
            .get(game)
            .ok_or_else(|| StoreError::NotFound(game.to_string()))?;
        read_stream(game, stream, from_seq, limit)
    }

    fn read_all(&self, from_position: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let inner = self.lock();
        let from = from_position.max(1);
        let limit = limit.min(MAX_READ_LIMIT);
        inner
            .global
            .iter()
            .zip(1u64..)
            .skip(index_from(from))
            .take(limit)
            .map(|((game, seq), position)| {
                let event = inner
                    .games
                    .get(game)
                    .and_then(|stream| stream.envelopes.get((*seq - 1) as usize))
                    .map(|bytes| ChainCheck::new(game.as_str(), *seq).next(*seq, bytes))
                    .ok_or_else(|| StoreError::CorruptIndex {
                        position,
                        detail: "points to no event".into(),
                    })??;
                Ok(event)
            })
            .collect()
    }

    fn game(&self, game: &GameId) -> Result<Option<GameSummary>> {
        Ok(self.lock().games.get(game).map(|stream| GameSummary {
            game: game.clone(),
            last_seq: stream.head.last_seq,
            created_millis: stream.created_millis,
        }))
    }

    fn list_games(&self, page_token: Option<&str>, page_size: usize) -> Result<GamePage> {
        let after = page_token.map(store::parse_page_token).transpose()?;
        let page_size = store::clamp_page_size(page_size);
        let inner = self.lock();
        let start = after.as_ref().map_or(Bound::Unbounded, Bound::Excluded);
        let mut games: Vec<GameSummary> = inner
            .games
            .range((start, Bound::Unbounded))
            .take(page_size + 1)
            .map(|(game, stream)| GameSummary {
                game: game.clone(),
                last_seq: stream.head.last_seq,
                created_millis: stream.created_millis,
            })
            .collect();
        let next_page_token = if games.len() > page_size {
            games.truncate(page_size);
            games.last().map(|last| store::page_token_after(&last.game))
        } else {
            None
        };
        Ok(GamePage {
            games,
            next_page_token,
            damaged: Vec::new(),
        })
    }

    fn last_position(&self) -> u64 {
        self.lock().global.len() as u64
    }

    fn subscribe_game(&self, game: &GameId) -> EventReceiver {
        self.hub.subscribe_game(game)
    }

    fn subscribe_all(&self) -> EventReceiver {
        self.hub.subscribe_all()
    }

    fn verify_game(&self, game: &GameId) -> Result<VerifyReport> {
        let inner = self.lock();
        let stream = inner
            .games
            .get(game)
            .ok_or_else(|| StoreError::NotFound(game.to_string()))?;
        let mut report = VerifyReport {
            games: 1,
            ..VerifyReport::default()
        };
        match read_stream(game, stream, 1, usize::MAX) {
            Ok(events) => report.events = events.len() as u64,
            Err(error) => report.problems.extend(error.corruption()),
        }
        Ok(report)
    }

    fn verify_all(&self) -> Result<VerifyReport> {
        let games: Vec<GameId> = self.lock().games.keys().cloned().collect();
        let mut report = VerifyReport::default();
        for game in games {
            let one = self.verify_game(&game)?;
            report.games += one.games;
            report.events += one.events;
            report.problems.extend(one.problems);
        }
        Ok(report)
    }
}
