//! Games: the one place that knows both the store and the engine.
//!
//! A game is loaded by reading its events and folding them through the
//! engine; recently used games stay in a bounded cache, and a game not in
//! it is rebuilt on demand. An action is decided on the cached state,
//! appended durably with the version it was decided on (optimistic
//! concurrency), and only then answered (`acting.rs`); the timekeeper
//! stores timeouts the same way (`timekeeper.rs`).

mod acting;
pub mod auth;
pub mod bot_seats;
mod cache;
pub mod stored;
#[cfg(test)]
mod tests;
pub mod timekeeper;

use std::hash::{Hash as _, Hasher as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use carcassonne_engine::{Effect, Event, Game, Seat, Seed, Setup};
use carcassonne_store::{EventStore, GameId, RequestId, StoreError, StoredEvent};

pub use self::acting::{
    ActInFlight, Acted, Acting, Asked, SERVER_REQUEST_PREFIX, Settled, TimeoutOutcome, withdrawal_seat,
};
use self::cache::Cache;
use self::stored::{Loaded, Opened, new_event};
use self::timekeeper::{Deadline, DeadlineSender};
use crate::api::status::ApiError;

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
    /// Per seat, the new token of a guest seat; `None` for a registered
    /// player's seat, which acts with the player's own key.
    pub tokens: Vec<Option<String>>,
}

impl Created {
    /// Seat `seat`'s new token, for a guest seat.
    pub fn token(&self, seat: usize) -> Option<&str> {
        self.tokens.get(seat).and_then(|t| t.as_deref())
    }
}

/// A new game, as `CreateGame` (or a tournament) asks for it.
#[derive(Debug, Clone)]
pub struct NewGame {
    pub setup: Setup,
    pub spectator_delay: u32,
    /// Per seat, the registered player it belongs to, with the hash of
    /// their API key; empty, or `None` for a guest seat.
    pub accounts: Vec<Option<Account>>,
    /// The game updates its players' ratings when it ends.
    pub rated: bool,
    /// The tournament the game belongs to.
    pub tournament: Option<String>,
    /// Its bag is shared with other games still running: see
    /// [`Opened::sealed`].
    pub sealed: bool,
    /// Per seat, the built-in bot the server plays it with; empty, or
    /// `None` for a client's seat. A bot's seat belongs to no account.
    pub bots: Vec<Option<carcassonne_bots::Level>>,
    /// The least time from a bot's decision becoming pending to its
    /// storing (0: as soon as the bot has decided).
    pub bot_pace_ms: u32,
}

impl NewGame {
    /// A game of guests, unrated, of no tournament.
    pub fn guests(setup: Setup, spectator_delay: u32) -> NewGame {
        NewGame {
            setup,
            spectator_delay,
            accounts: Vec::new(),
            rated: false,
            tournament: None,
            sealed: false,
            bots: Vec::new(),
            bot_pace_ms: 0,
        }
    }
}

/// A registered player's seat, as a new game records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub name: String,
    pub key_hash: auth::TokenHash,
}

/// Says when a sealed game ([`Opened::sealed`]) may be seen by everyone:
/// what runs the game's tournament knows.
pub trait Seals: Send + Sync {
    /// Whether the round of game `game` of tournament `tournament` is over.
    fn lifted(&self, tournament: &str, game: &GameId) -> bool;
}

/// Whether a game's seed may be shown once the game is finished: not
/// while another game that shares its bag may still be running (a
/// duplicate-bag tournament's round), whoever asks, its own seats
/// included. Made only by [`Games::seed_reveal`], so that no view shows a
/// seed without that decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedReveal {
    shared_bag_running: bool,
}

impl SeedReveal {
    /// The seed of `game` if it may be shown now: the game is over and no
    /// game that shares its bag may still be running.
    pub fn seed(self, game: &Game) -> Option<Seed> {
        match (game.is_finished(), self.shared_bag_running) {
            (true, false) => game.setup().seed,
            _ => None,
        }
    }

    /// For a game that shares its bag with no other (the views' tests).
    #[cfg(test)]
    pub fn unshared() -> SeedReveal {
        SeedReveal {
            shared_bag_running: false,
        }
    }
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
    /// Where every new version's deadline goes: the timekeeper, once it
    /// runs ([`Games::keep_time`]).
    deadlines: std::sync::OnceLock<DeadlineSender>,
    /// Who lifts seals: the tournaments, once they run (held weakly: they
    /// hold the games). Until then every sealed game stays sealed.
    seals: std::sync::OnceLock<std::sync::Weak<dyn Seals>>,
    /// Where every new version of a game with bots goes (a bot's turn,
    /// the work the game commits): the bot seats' driver, once it runs
    /// ([`Games::play_bots`]).
    bots: std::sync::OnceLock<bot_seats::Driver>,
    /// Whether other server nodes write to the store too (PostgreSQL):
    /// then [`Games::follow`] arms the deadlines of what they append.
    shared: std::sync::atomic::AtomicBool,
    /// The games with a time control this node knows of, while shared.
    clocked: Mutex<std::collections::HashSet<GameId>>,
    /// Where seat tokens come from ([`Games::with_token_secret`]); without
    /// it they are random.
    token_secret: Option<auth::TokenSecret>,
}

/// Who hears of every new version once it is durable: the timekeeper (its
/// deadline) and the bot seats' driver (a bot's turn).
#[derive(Clone, Default)]
struct Listeners {
    deadlines: Option<DeadlineSender>,
    bots: Option<bot_seats::Driver>,
}

impl Listeners {
    fn tell(&self, id: &GameId, loaded: &Loaded) {
        if let Some(deadlines) = &self.deadlines {
            let _ = deadlines.send(Deadline::of(id, loaded));
        }
        if let Some(bots) = &self.bots {
            bots.tell(id, loaded);
        }
    }
}

impl Games {
    pub fn new(store: Arc<dyn EventStore>, cache_capacity: usize) -> Games {
        Games {
            store,
            cache: Arc::new(Cache::new(cache_capacity)),
            folds: AtomicU64::new(0),
            deciding: std::array::from_fn(|_| Mutex::new(())),
            deadlines: std::sync::OnceLock::new(),
            seals: std::sync::OnceLock::new(),
            bots: std::sync::OnceLock::new(),
            shared: std::sync::atomic::AtomicBool::new(false),
            clocked: Mutex::new(std::collections::HashSet::new()),
            token_secret: None,
        }
    }

    /// A creation whose request id is long enough gets seat tokens
    /// derived from it by `secret`, so that its retry, on any node sharing
    /// the secret, gets them again (see [`auth`]).
    pub fn with_token_secret(mut self, secret: auth::TokenSecret) -> Games {
        self.token_secret = Some(secret);
        self
    }

    /// From now on, every new version of a game with bots is told to
    /// `driver`, and new games with bots are taken on only while it has
    /// room for them. Once per `Games`.
    pub fn play_bots(&self, driver: bot_seats::Driver) -> Result<(), ApiError> {
        self.bots
            .set(driver)
            .map_err(|_| ApiError::Internal("a second bot seats' driver".to_owned()))
    }

    fn listeners(&self) -> Listeners {
        Listeners {
            deadlines: self.deadlines.get().cloned(),
            bots: self.bots.get().cloned(),
        }
    }

    /// Other server nodes write to the same store: from now on,
    /// [`Games::follow`] keeps this node's timekeeper told of their
    /// appends to clocked games, so that a deadline falls due on every
    /// node (the timeout is stored once: its request id names the
    /// version it times out).
    pub fn shared_with_other_nodes(&self) {
        self.shared.store(true, Ordering::SeqCst);
    }

    /// Notes games with a time control (found at start).
    pub fn note_clocked(&self, games: &[GameId]) {
        if self.shared.load(Ordering::SeqCst) {
            let mut clocked = self.clocked.lock().unwrap_or_else(PoisonError::into_inner);
            clocked.extend(games.iter().cloned());
        }
    }

    /// An event of a game stream, as the store publishes it (from this
    /// node or another one): on a shared store, the clocked game's new
    /// deadline goes to this node's timekeeper, and a bot seat's turn in
    /// it to this node's bot driver (so that a clocked game's bot plays
    /// on when the node that wrote the last version is gone; every node
    /// searches, the first append wins and the others are stale). Blocking
    /// (it may fold the game). Nothing on a store of one node: its own
    /// settlings arm them.
    pub fn follow(&self, event: &StoredEvent) -> Result<(), ApiError> {
        if !self.shared.load(Ordering::SeqCst) || self.deadlines.get().is_none() {
            return Ok(());
        }
        let id = &event.game;
        {
            let mut clocked = self.clocked.lock().unwrap_or_else(PoisonError::into_inner);
            if event.seq == 2 && timekeeper::is_clocked_creation(event) {
                clocked.insert(id.clone());
            }
            if !clocked.contains(id) {
                return Ok(());
            }
        }
        // The cache may hold this version already (this node wrote it, or
        // a read on this node loaded it before this event came by): it is
        // armed again all the same, as arming is idempotent and a read
        // arms nothing.
        let loaded = match self.cache.peek(id) {
            Some(cached) if cached.version >= event.seq => cached,
            _ => self.load(id)?,
        };
        if loaded.game.deadline().is_none() && loaded.game.is_finished() {
            self.clocked
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(id);
        }
        self.arm(id, &loaded);
        Ok(())
    }

    /// From now on, every new version of a game (a creation, an action, a
    /// timeout) tells `deadlines` its pending deadline. Once per `Games`.
    pub fn keep_time(&self, deadlines: DeadlineSender) -> Result<(), ApiError> {
        self.deadlines
            .set(deadlines)
            .map_err(|_| ApiError::Internal("a second timekeeper".to_owned()))
    }

    /// Tells the timekeeper, if one runs, the deadline of `loaded`, and
    /// the bot seats' driver a bot's turn.
    pub fn arm(&self, id: &GameId, loaded: &Loaded) {
        self.listeners().tell(id, loaded);
    }

    /// Tells the games who lifts seals; once.
    pub fn lift_seals_with(&self, seals: std::sync::Weak<dyn Seals>) {
        let _ = self.seals.set(seals);
    }

    /// Whether game `id` (as `loaded`) is sealed now to everyone but its
    /// seats: it shares its bag with games of its tournament round that
    /// may still be running. Any doubt keeps it sealed.
    pub fn sealed(&self, id: &GameId, loaded: &Loaded) -> bool {
        if !loaded.opened.sealed {
            return false;
        }
        let lifted = loaded.opened.tournament.as_deref().is_some_and(|tournament| {
            self.seals
                .get()
                .and_then(std::sync::Weak::upgrade)
                .is_some_and(|seals| seals.lifted(tournament, id))
        });
        !lifted
    }

    /// Whether game `id`'s seed may be shown at its end ([`SeedReveal`]):
    /// the seed of a sealed game is the seed of every table of its round,
    /// so it stays hidden, from its own seats too, until the seal lifts.
    pub fn seed_reveal(&self, id: &GameId, loaded: &Loaded) -> SeedReveal {
        SeedReveal {
            shared_bag_running: self.sealed(id, loaded),
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
        let seed_given = setup.seed.is_some();
        if !seed_given {
            let seed = auth::random_seed().map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
            setup.seed = Some(Seed(seed));
        }
        Game::check_setup(&setup).map_err(|e| ApiError::InvalidArgument {
            field: e.field().to_owned(),
            message: e.to_string(),
        })?;
        let account = |seat: usize| new.accounts.get(seat).and_then(Option::as_ref);
        let bot = |seat: usize| new.bots.get(seat).copied().flatten();
        if let Some(seat) =
            (0..setup.players.len()).find(|&seat| account(seat).is_some() && bot(seat).is_some())
        {
            return Err(ApiError::InvalidArgument {
                field: "bots".to_owned(),
                message: format!("seat {seat} belongs to a registered player: it cannot be a bot's"),
            });
        }
        // Derived tokens come back on a retry; random ones never do.
        let deriving = self
            .token_secret
            .as_ref()
            .filter(|_| request_id.as_str().len() >= auth::MIN_RETRIED_ID_LEN);
        let tokens = (0..setup.players.len())
            .map(|seat| match (account(seat), deriving) {
                (Some(_), _) => Ok(None),
                (None, Some(secret)) => Ok(Some(secret.seat_token(request_id.as_str(), seat))),
                (None, None) => auth::new_token().map(Some),
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
        let opened = Opened {
            token_hashes: tokens
                .iter()
                .enumerate()
                .map(|(seat, token)| match (token, account(seat)) {
                    (Some(token), _) => auth::hash(token),
                    (None, Some(account)) => account.key_hash,
                    (None, None) => [0; 32],
                })
                .collect(),
            // A bot's seat has a token nobody is shown: only the server
            // acts for it.
            bots: if new.bots.iter().any(Option::is_some) {
                (0..setup.players.len())
                    .map(|seat| bot(seat).map(carcassonne_bots::Level::name))
                    .collect()
            } else {
                Vec::new()
            },
            spectator_delay: new.spectator_delay,
            accounts: if new.accounts.iter().any(Option::is_some) {
                (0..setup.players.len())
                    .map(|seat| account(seat).map(|a| a.name.clone()))
                    .collect()
            } else {
                Vec::new()
            },
            rated: new.rated,
            tournament: new.tournament,
            sealed: new.sealed,
            bot_pace_ms: new.bot_pace_ms,
        };
        let mut game = Game::new(setup.clone());
        let mut events = vec![Event::Created(setup.clone())];
        game.run_automatic(&mut events, &mut ());
        let mut batch = vec![opened.to_new_event()];
        batch.extend(events.iter().map(|e| new_event(None, e)));
        let already = || ApiError::AlreadyExists(format!("games/{id}"));
        let stored_id = if request_id.as_str().is_empty() {
            RequestId::none()
        } else {
            RequestId::new(auth::stored_creation_id(request_id.as_str()))
                .map_err(|e| ApiError::Internal(format!("a creation's stored request id: {e}")))?
        };
        // Bots only while the server has room for their work; a
        // tournament's games are counted, never refused.
        let levels: Vec<_> = new.bots.iter().flatten().copied().collect();
        let admitted = match self.bots.get() {
            Some(bots) if !levels.is_empty() => {
                let now = self.store.now_millis();
                bots.admit(id, levels, now, opened.tournament.is_some())?
                    .then_some(bots)
            }
            _ => None,
        };
        let appended = self.store.append(id, 0, &stored_id, &batch);
        if let (Err(_), Some(bots)) = (&appended, admitted) {
            bots.withdraw(id);
        }
        appended.map_err(|e| match e {
            StoreError::Conflict { .. } => already(),
            other => store_error(other),
        })?;
        // A retried creation gets the first append back from the store. With
        // derived tokens, the same request has the same opening and setup
        // (but for a seed the server drew), and gets the same answer; other
        // fields under the same id are refused. Random tokens were shown
        // once and cannot be again.
        let stored = self.store.read_game(id, 1).map_err(store_error)?;
        let same_opening = stored.first().map(|e| &e.payload) == Some(&batch[0].payload);
        let refused = || match deriving {
            Some(_) => ApiError::RequestIdReused(request_id.as_str().to_owned()),
            None => already(),
        };
        if !same_opening {
            return Err(refused());
        }
        let loaded = self.load(id)?;
        let mut asked = setup;
        if !seed_given {
            asked.seed = loaded.game.setup().seed;
        }
        if &asked != loaded.game.setup() {
            return Err(refused());
        }
        self.arm(id, &loaded);
        let tokens = tokens
            .into_iter()
            .enumerate()
            .map(|(seat, token)| token.filter(|_| bot(seat).is_none()))
            .collect();
        Ok(Created { loaded, tokens })
    }

    /// The game at the store's last durable version, kept in the cache.
    /// The store is the authority, never the cache: an append is published
    /// (and clients may act on it or read it) as soon as it is durable, but
    /// the cache holds it only once the action that made it has settled,
    /// which may come a moment later.
    pub fn load(&self, id: &GameId) -> Result<Arc<Loaded>, ApiError> {
        let loaded = self.current(id)?;
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
            for summary in page
                .games
                .iter()
                .filter(|s| crate::players::is_game_stream(&s.game))
            {
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
            for summary in page
                .games
                .iter()
                .filter(|s| crate::players::is_game_stream(&s.game))
            {
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
}

/// Appends the first events of a new stream (a tournament's, a
/// challenge's) under `request`, once: a retry of that request gets its
/// first append back; a stream made already by another request is
/// AlreadyExists, naming it `name`.
pub fn create_stream(
    store: &dyn EventStore,
    stream: &GameId,
    request: &RequestId,
    batch: &[carcassonne_store::NewEvent],
    name: &str,
) -> Result<(), ApiError> {
    let already = || ApiError::AlreadyExists(name.to_owned());
    let appended = store.append(stream, 0, request, batch).map_err(|e| match e {
        StoreError::Conflict { .. } => already(),
        other => store_error(other),
    })?;
    if appended.first_seq != 1 {
        return Err(already());
    }
    Ok(())
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
