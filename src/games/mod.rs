//! Games: the one place that knows both the store and the engine.
//!
//! A game is loaded by reading its events and folding them through the
//! engine; recently used games stay in a bounded cache, and a game not in
//! it is rebuilt on demand. An action is decided on the cached state,
//! appended durably with the version it was decided on (optimistic
//! concurrency), and only then answered. The cache follows the store
//! whatever happens to the caller: once an action is written, its
//! settling (the wait for the disk, the new state put in the cache) runs to
//! its end, as a task of its own if the caller has given up ([`Settling`]).

pub mod auth;
mod cache;
pub mod stored;
#[cfg(test)]
mod tests;

use std::hash::{Hash as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use carcassonne_engine::{Actor, Command, Effect, Event, Game, Seat, Seed, Setup};
use carcassonne_store::{EventStore, GameId, RequestId, StoreError, StoredEvent, Written};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use self::cache::Cache;
use self::stored::{Loaded, Opened, engine_event, new_event};
use crate::api::status::ApiError;
use crate::api::version;

/// Locks that serialise, per game, the check for a retried request id and
/// the write of a new action (striped: a lock covers several games).
const DECIDING_LOCKS: usize = 64;

/// An event of a game with what it caused, as an answer carries it.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub seq: u64,
    pub time_millis: u64,
    /// The seat that acted; `None` for the server (creation, draws).
    pub actor: Option<Seat>,
    pub event: Event,
    pub effects: Vec<Effect>,
}

impl Outcome {
    fn of(stored: &StoredEvent, event: Event, effects: Vec<Effect>) -> Outcome {
        let actor = match stored.actor {
            carcassonne_store::Actor::Seat(s) => Some(Seat(s)),
            carcassonne_store::Actor::Server => None,
        };
        Outcome {
            seq: stored.seq,
            time_millis: stored.time_millis,
            actor,
            event,
            effects,
        }
    }
}

/// What creating a game returns.
#[derive(Debug)]
pub struct Created {
    pub loaded: Arc<Loaded>,
    pub tokens: Vec<String>,
}

/// What an action returns: the events it produced and the game after them.
#[derive(Debug)]
pub struct Acted {
    pub outcomes: Vec<Outcome>,
    pub loaded: Arc<Loaded>,
}

/// An action decided and written, not yet durable (see [`Games::act`]).
pub enum Acting {
    /// A request id this game met before: once its first append is durable,
    /// answer with [`Games::answer`], which also tells an identical retry
    /// from another request with the same id.
    Retried { first: Written, asked: Asked },
    /// A new action: answer it with [`Games::settle`].
    InFlight(Box<ActInFlight>),
}

/// What a seat asked for, to tell an identical retry from another request
/// that reuses its request id.
#[derive(Debug, Clone)]
pub struct Asked {
    pub request_id: RequestId,
    pub seat: Seat,
    /// The version the seat acted on.
    pub expected_version: u64,
    pub command: Command,
}

/// A new action on its way to the disk. Dropping it changes nothing: what
/// is left of its settling (the wait for the disk, the cache update) then
/// runs to its end as a task of its own.
pub struct ActInFlight {
    settling: Settling,
}

impl std::fmt::Debug for ActInFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ActInFlight")
    }
}

type SettleFuture = Pin<Box<dyn Future<Output = Result<Settled, ApiError>> + Send>>;

/// [`settle`], polled by its caller while there is one (no task, no
/// handoff between threads on the way of every action), and spawned to
/// finish on its own when the caller goes away first, so that the cached
/// state follows the store whatever happens to the caller.
struct Settling {
    future: Option<SettleFuture>,
    runtime: tokio::runtime::Handle,
}

impl Future for Settling {
    type Output = Result<Settled, ApiError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(future) = self.future.as_mut() else {
            return Poll::Ready(Err(ApiError::Internal("an action settled twice".to_owned())));
        };
        let done = future.as_mut().poll(cx);
        if done.is_ready() {
            self.future = None;
        }
        done
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        if let Some(future) = self.future.take() {
            // The caller gave up: finish without it.
            drop(self.runtime.spawn(future));
        }
    }
}

/// What [`Games::settle`] found.
#[derive(Debug)]
pub enum Settled {
    /// The action is durable: its answer.
    Acted(Acted),
    /// Another call with the same request id stored its append first:
    /// answer with [`Games::answer`] for these versions.
    Retried { first: u64, last: u64, asked: Asked },
}

/// A new game, as `CreateGame` asks for it.
#[derive(Debug, Clone)]
pub struct NewGame {
    pub setup: Setup,
    pub spectator_delay: u32,
}

/// The most games one filtered ListGames call reads (see [`Games::list`]).
pub const LIST_SCAN_LIMIT: usize = 1000;

pub struct Games {
    store: Arc<dyn EventStore>,
    cache: Arc<Cache>,
    /// How many times a game was read and folded from the store.
    folds: AtomicU64,
    /// Held from the check for a retried request id to the write, so that
    /// two calls with one request id never both decide: the second finds
    /// the first's append (and a write the store deduplicated never passes
    /// for one's own).
    deciding: [Mutex<()>; DECIDING_LOCKS],
}

impl Games {
    pub fn new(store: Arc<dyn EventStore>, cache_capacity: usize) -> Games {
        Games {
            store,
            cache: Arc::new(Cache::new(cache_capacity)),
            folds: AtomicU64::new(0),
            deciding: std::array::from_fn(|_| Mutex::new(())),
        }
    }

    fn deciding(&self, id: &GameId) -> MutexGuard<'_, ()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut hasher);
        let lock = &self.deciding[(hasher.finish() % DECIDING_LOCKS as u64) as usize];
        lock.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn store(&self) -> &Arc<dyn EventStore> {
        &self.store
    }

    /// Creates a game: its opening, its creation and its first draw, in one
    /// atomic append.
    pub fn create(&self, id: &GameId, request_id: &RequestId, new: NewGame) -> Result<Created, ApiError> {
        let mut setup = new.setup;
        if setup.seed.is_none() {
            let seed = auth::random_seed().map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
            setup.seed = Some(Seed(seed));
        }
        Game::check_setup(&setup).map_err(|e| ApiError::InvalidArgument {
            field: e.field().to_owned(),
            message: e.to_string(),
        })?;
        let tokens = (0..setup.players.len())
            .map(|_| auth::new_token())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
        let opened = Opened {
            token_hashes: tokens.iter().map(|t| auth::hash(t)).collect(),
            spectator_delay: new.spectator_delay,
        };
        let mut game = Game::new(setup.clone());
        let mut events = vec![Event::Created(setup)];
        game.run_automatic(&mut events, &mut ());
        let mut batch = vec![opened.to_new_event()];
        batch.extend(events.iter().map(|e| new_event(None, e)));
        let already = || ApiError::AlreadyExists(format!("games/{id}"));
        self.store
            .append(id, 0, request_id, &batch)
            .map_err(|e| match e {
                StoreError::Conflict { .. } => already(),
                other => store_error(other),
            })?;
        // A retried creation gets the first append back from the store, with
        // other tokens than ours: those were shown once and cannot be again.
        let stored = self.store.read_game(id, 1).map_err(store_error)?;
        if stored.first().map(|e| &e.payload) != Some(&batch[0].payload) {
            return Err(already());
        }
        let loaded = self.load(id)?;
        Ok(Created { loaded, tokens })
    }

    /// The game now, from the cache or rebuilt from the store. A cached
    /// game is current: this process is the store's only writer (sled locks
    /// its directory), and every append goes through [`Games`], which puts
    /// the new state in the cache before answering.
    pub fn load(&self, id: &GameId) -> Result<Arc<Loaded>, ApiError> {
        if let Some(loaded) = self.cache.get(id) {
            return Ok(loaded);
        }
        let loaded = Arc::new(self.fold_uncached(id, None, |_, _, _| {})?);
        self.cache.put(id, loaded.clone());
        Ok(loaded)
    }

    /// The game now, from the cache if it holds the store's last version,
    /// else folded from the store; either way without touching the cache,
    /// so that reads of many games (listings, exports, replays) never push
    /// out the games being played.
    pub fn current(&self, id: &GameId) -> Result<Arc<Loaded>, ApiError> {
        if let Some(cached) = self.cache.peek(id) {
            // The store publishes an append before the action that made it
            // updates the cache: read fresh if the cache is behind.
            let head = self.store.game(id).map_err(store_error)?.map(|s| s.last_seq);
            if head.is_some_and(|head| head <= cached.version) {
                return Ok(cached);
            }
        }
        Ok(Arc::new(self.fold_uncached(id, None, |_, _, _| {})?))
    }

    /// Reads a game from the store and folds it up to `until` (a version)
    /// if given, without touching the cache; `each` sees every engine event
    /// with its effects.
    pub fn fold_uncached(
        &self,
        id: &GameId,
        until: Option<u64>,
        each: impl FnMut(&StoredEvent, &Event, &[Effect]),
    ) -> Result<Loaded, ApiError> {
        self.folds.fetch_add(1, Ordering::Relaxed);
        let stored = self.store.read_game(id, 1).map_err(store_error)?;
        Loaded::fold(&stored, until, each).map_err(ApiError::Corrupt)
    }

    /// How many times a game was read and folded from the store: what
    /// tests of read costs count.
    pub fn folds(&self) -> u64 {
        self.folds.load(Ordering::Relaxed)
    }

    /// Games in id order, `finished` filtering by status (`None`: all).
    /// Every page is full but the last, which has no next token: a page is
    /// filled from as many store pages as it takes, and a full page looks
    /// ahead for one more match before it promises another page. With a
    /// filter, one call reads at most [`LIST_SCAN_LIMIT`] games (each may
    /// need a fold): past it, the page is cut short (even empty) and its
    /// token continues the scan, so that no call costs the whole store.
    pub fn list(
        &self,
        finished: Option<bool>,
        page_size: usize,
        page_token: Option<&str>,
    ) -> Result<(Vec<Arc<Loaded>>, Option<String>), ApiError> {
        /// Games scanned per store page while looking ahead.
        const LOOK_AHEAD: usize = 100;
        let matches = |loaded: &Loaded| finished.is_none_or(|f| loaded.game.is_finished() == f);
        let mut found = Vec::with_capacity(page_size);
        let mut token = page_token.map(str::to_owned);
        let mut scanned = 0;
        while found.len() < page_size {
            if finished.is_some() && scanned >= LIST_SCAN_LIMIT {
                return Ok((found, token));
            }
            // Never ask for more than still fits (nor past the scan limit):
            // the store's token then continues right after its last game.
            let size = (page_size - found.len())
                .min(LIST_SCAN_LIMIT.saturating_sub(scanned))
                .max(1);
            let page = self.list_page(token.as_deref(), size)?;
            scanned += page.games.len();
            for summary in &page.games {
                let loaded = self.current(&summary.game)?;
                if matches(&loaded) {
                    found.push(loaded);
                }
            }
            token = page.next_page_token;
            if token.is_none() {
                return Ok((found, None));
            }
        }
        let mut ahead = token.clone();
        while let Some(at) = ahead {
            if finished.is_some() && scanned >= LIST_SCAN_LIMIT {
                // Maybe more: the next call finds out.
                return Ok((found, token));
            }
            let page = self.list_page(
                Some(&at),
                LOOK_AHEAD.min(LIST_SCAN_LIMIT.saturating_sub(scanned)).max(1),
            )?;
            scanned += page.games.len();
            for summary in &page.games {
                if finished.is_none() || matches(&*self.current(&summary.game)?) {
                    return Ok((found, token));
                }
            }
            ahead = page.next_page_token;
        }
        Ok((found, None))
    }

    fn list_page(&self, token: Option<&str>, size: usize) -> Result<carcassonne_store::GamePage, ApiError> {
        self.store.list_games(token, size).map_err(|e| match e {
            StoreError::InvalidArgument(_) => ApiError::InvalidArgument {
                field: "page_token".to_owned(),
                message: "not a token this server gave".to_owned(),
            },
            other => store_error(other),
        })
    }

    /// The game at an earlier version, with every event's outcome up to it.
    pub fn history(&self, id: &GameId, until: Option<u64>) -> Result<(Loaded, Vec<Outcome>), ApiError> {
        let mut outcomes = Vec::new();
        let loaded = self.fold_uncached(id, until, |s, e, fx| {
            outcomes.push(Outcome::of(s, e.clone(), fx.to_vec()));
        })?;
        Ok((loaded, outcomes))
    }

    /// One action of the seat holding `token`: decided on the cached game
    /// and written to the store. A new action is answered by
    /// [`Games::settle`] once durable, a retried request by
    /// [`Games::answer`] once the first one is.
    pub fn act(
        &self,
        id: &GameId,
        token: &str,
        expected_version: u64,
        request_id: &RequestId,
        command: &Command,
    ) -> Result<Acting, ApiError> {
        let loaded = self.load(id)?;
        self.act_on(loaded, id, token, expected_version, request_id, command)
    }

    /// The game if it is in the cache: acting on it reads nothing from the
    /// disk.
    pub fn cached(&self, id: &GameId) -> Option<Arc<Loaded>> {
        self.cache.get(id)
    }

    /// [`Games::act`] on the game as loaded.
    pub fn act_on(
        &self,
        loaded: Arc<Loaded>,
        id: &GameId,
        token: &str,
        expected_version: u64,
        request_id: &RequestId,
        command: &Command,
    ) -> Result<Acting, ApiError> {
        let seat = Seat(auth::seat_of(token, &loaded.opened.token_hashes).ok_or(ApiError::BadToken)?);
        let asked = Asked {
            request_id: request_id.clone(),
            seat,
            expected_version,
            command: *command,
        };
        // A settling whose caller goes away finishes as a task, which needs
        // a runtime: checked before anything is written.
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|e| ApiError::Internal(format!("acting outside a tokio runtime: {e}")))?;
        let _deciding = self.deciding(id);
        if let Some(first) = self.store.find_request(id, request_id).map_err(store_error)? {
            return Ok(Acting::Retried { first, asked });
        }
        if expected_version != loaded.version {
            return Err(ApiError::StaleVersion {
                expected: version::of_seq(expected_version),
                actual: version::of_seq(loaded.version),
            });
        }
        let actor = Actor::Seat(seat);
        let mut game = loaded.game.clone();
        let mut events = game.decide(actor, command).map_err(ApiError::from_play)?;
        // Apply, with the draws that follow, keeping each event's effects.
        let mut effects: Vec<Vec<Effect>> = Vec::new();
        for event in &events {
            let mut fx = Vec::new();
            game.apply_observed(event, &mut fx);
            effects.push(fx);
        }
        while let Some(event) = game.automatic() {
            let mut fx = Vec::new();
            game.apply_observed(&event, &mut fx);
            effects.push(fx);
            events.push(event);
        }
        let batch: Vec<_> = events.iter().map(|e| new_event(actor_of(e, seat), e)).collect();
        let written = self
            .store
            .write(id, loaded.version, request_id, &batch)
            .map_err(|e| match e {
                StoreError::Conflict { actual, .. } => ApiError::StaleVersion {
                    expected: version::of_seq(expected_version),
                    actual: version::of_seq(actual),
                },
                other => store_error(other),
            })?;
        // Not `..(*loaded).clone()`: that would clone the game once more.
        let next = Loaded {
            info: loaded.info.clone(),
            opened: loaded.opened.clone(),
            game,
            version: loaded.version,
        };
        let settling = Settling {
            future: Some(Box::pin(settle(
                self.cache.clone(),
                id.clone(),
                written,
                asked,
                events.into_iter().zip(effects).collect(),
                next,
            ))),
            runtime,
        };
        Ok(Acting::InFlight(Box::new(ActInFlight { settling })))
    }

    /// Waits until a written action is durable and answers it; the cache
    /// holds the new state by then. Holds no thread while the disk syncs.
    pub async fn settle(&self, act: Box<ActInFlight>) -> Result<Settled, ApiError> {
        act.settling.await
    }

    /// Rebuilds the answer of an earlier action (the append of versions
    /// `first..=last`) from the store, for an identical retry of its
    /// request; any other request that carries its request id is refused.
    pub fn answer(&self, id: &GameId, first: u64, last: u64, asked: &Asked) -> Result<Acted, ApiError> {
        let stored = self.store.read_game(id, 1).map_err(store_error)?;
        let [opening, creation, rest @ ..] = stored.as_slice() else {
            return Err(ApiError::Corrupt(format!("games/{id} has fewer than two events")));
        };
        let mut loaded = Loaded::start(opening, creation).map_err(ApiError::Corrupt)?;
        let mut identical = false;
        let mut outcomes = Vec::new();
        for event in rest.iter().take_while(|e| e.seq <= last) {
            if event.seq == first {
                identical = asks_for(&loaded, event, asked).map_err(ApiError::Corrupt)?;
                if !identical {
                    break;
                }
            }
            let (engine_event, effects) = loaded.advance(event).map_err(ApiError::Corrupt)?;
            if event.seq >= first {
                outcomes.push(Outcome::of(event, engine_event, effects));
            }
        }
        // Also the creation's request id: its append starts with the
        // server's opening (version 1), never a seat's action.
        if !identical {
            return Err(ApiError::RequestIdReused(asked.request_id.as_str().to_owned()));
        }
        // The first call's task may not have cached its state yet, and a
        // caller that acts next on this answer's version must find it: when
        // it is the game's last durable version, it is what `load` would
        // cache (the cache keeps a newer one if it has it).
        let loaded = Arc::new(loaded);
        if stored.last().map(|e| e.seq) == Some(last) {
            self.cache.put(id, loaded.clone());
        }
        Ok(Acted { outcomes, loaded })
    }
}

/// Whether `asked`, decided on `before`, is the request that stored
/// `stored` (the first event of its append): the same seat, at the same
/// version, deciding the same event (an action may name a follower's place
/// in several ways that the engine stores as one).
fn asks_for(before: &Loaded, stored: &StoredEvent, asked: &Asked) -> Result<bool, String> {
    if stored.actor != carcassonne_store::Actor::Seat(asked.seat.0)
        || before.version != asked.expected_version
    {
        return Ok(false);
    }
    let event = engine_event(stored)?;
    Ok(before
        .game
        .decide(Actor::Seat(asked.seat), &asked.command)
        .is_ok_and(|events| events.first() == Some(&event)))
}

/// Waits until a written action is durable, then makes its state the cached
/// one and builds its answer. Polled by the caller, or to its end as a
/// task of its own once the caller is gone ([`Settling`]), so that the
/// cache follows the store whatever happens to the caller.
async fn settle(
    cache: Arc<Cache>,
    id: GameId,
    written: Written,
    asked: Asked,
    events: Vec<(Event, Vec<Effect>)>,
    mut next: Loaded,
) -> Result<Settled, ApiError> {
    let decided_on = next.version;
    let appended = written.acknowledged().await.map_err(store_error)?;
    if appended.first_seq != decided_on + 1 {
        // Another call with this request id got there first (a request id
        // is checked before the write under a lock, so not from this
        // process).
        return Ok(Settled::Retried {
            first: appended.first_seq,
            last: appended.last_seq,
            asked,
        });
    }
    // What was stored is what was decided: numbered from the append's first
    // sequence number, all at the append's time.
    let outcomes = events
        .into_iter()
        .zip(appended.first_seq..)
        .map(|((event, effects), seq)| Outcome {
            seq,
            time_millis: appended.time_millis,
            actor: actor_of(&event, asked.seat),
            event,
            effects,
        })
        .collect();
    next.version = appended.last_seq;
    let next = Arc::new(next);
    cache.put(&id, next.clone());
    Ok(Settled::Acted(Acted {
        outcomes,
        loaded: next,
    }))
}

/// Who an event of a seat's action is by: the seat, but the server for
/// the draws that follow it.
fn actor_of(event: &Event, seat: Seat) -> Option<Seat> {
    (!matches!(event, Event::Drawn(_))).then_some(seat)
}

/// Store failures as API errors: the caller's, ours, or damage.
pub fn store_error(error: StoreError) -> ApiError {
    match error {
        StoreError::NotFound(game) => ApiError::NotFound(game),
        error if error.corruption().is_some() => ApiError::Corrupt(error.to_string()),
        StoreError::Io(_) | StoreError::Unavailable(_) => ApiError::StorageUnavailable(error.to_string()),
        error => ApiError::Internal(error.to_string()),
    }
}
