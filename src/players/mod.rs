//! Registered players: the registry (a fold of the `@players` stream in
//! the event store), their API keys, the server's admin key, and which
//! games each player sits in (`seats.rs`).
//!
//! A player's API key is their token in every seat that is theirs: a game
//! records, for such a seat, the hash of the key (as it records a guest
//! seat's token hash), so every check of "which seat is this token's" is
//! the same for both. Keys are shown once, at registration, and stored only
//! as SHA-256 hashes; the admin key is never stored at all, only its hash
//! kept in memory.

pub mod seats;

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use carcassonne_competition::{
    PlayerName, PlayerRecord, REGISTRY_SCHEMA, Registry, RegistryError, RegistryEvent,
};
use carcassonne_store::{Actor, EventStore, GameId, NewEvent, RequestId, StoreError};
use subtle::ConstantTimeEq;

use crate::api::status::{ApiError, quote};
use crate::games::auth::{self, TokenHash};
use crate::games::{Account, store_error};

/// The stream that holds the registry's events.
pub const REGISTRY_STREAM: &str = "@players";

/// Streams whose id begins with this are the server's own (players,
/// tournaments, ratings), never games: game ids never begin with it.
pub const SERVER_STREAM_PREFIX: char = '@';

/// Whether a stored stream is a game's (and not the server's own).
pub fn is_game_stream(id: &GameId) -> bool {
    !id.as_str().starts_with(SERVER_STREAM_PREFIX)
}

/// Who may register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Registration {
    /// Anybody.
    Open,
    /// Only the bearer of the admin key.
    Admin,
}

/// The anonymous registrations a server takes a minute unless told
/// otherwise (`serve --registration-rate`).
pub const DEFAULT_REGISTRATION_RATE: NonZeroU32 = NonZeroU32::new(120).unwrap();

/// The registry, and what registration and organisers need.
pub struct Players {
    store: Arc<dyn EventStore>,
    registry: RwLock<Folded>,
    /// Held from a decision to its append, so two registrations never both
    /// decide on the same registry.
    writing: Mutex<()>,
    admin: Option<TokenHash>,
    registration: Registration,
    /// The bound on registrations without the admin key, if any.
    rate: Option<RegistrationRate>,
}

/// At most `per_minute` registrations a minute without the admin key,
/// across the whole server: a bucket of `per_minute`, refilled evenly
/// (GCRA, by `governor`). A flood of them costs the server a bounded
/// amount of disk and work, whoever sends it.
struct RegistrationRate {
    per_minute: NonZeroU32,
    limiter: governor::DefaultDirectRateLimiter,
}

impl RegistrationRate {
    fn new(per_minute: NonZeroU32) -> RegistrationRate {
        RegistrationRate {
            per_minute,
            limiter: governor::RateLimiter::direct(governor::Quota::per_minute(per_minute)),
        }
    }

    /// Takes one registration from the bucket, or says when one comes.
    fn take(&self) -> Result<(), ApiError> {
        use governor::clock::Clock as _;
        self.limiter.check().map_err(|not_until| {
            let wait = not_until.wait_time_from(governor::clock::DefaultClock::default().now());
            ApiError::RegistrationRate {
                per_minute: self.per_minute.get(),
                retry_after_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1),
            }
        })
    }
}

#[derive(Default)]
struct Folded {
    registry: Registry,
    /// The seq of the registry stream's last event.
    version: u64,
}

impl Players {
    /// The registry folded from the store. `admin_key`: the server's admin
    /// credential, if it has one (without one, nobody is admin).
    pub fn open(
        store: Arc<dyn EventStore>,
        admin_key: Option<&str>,
        registration: Registration,
    ) -> Result<Players, ApiError> {
        let players = Players {
            store,
            registry: RwLock::new(Folded::default()),
            writing: Mutex::new(()),
            admin: admin_key.map(auth::hash),
            registration,
            rate: None,
        };
        players.catch_up()?;
        Ok(players)
    }

    /// Bounds registrations without the admin key to `per_minute` a
    /// minute (`None`: no bound).
    pub fn with_registration_rate(mut self, per_minute: Option<NonZeroU32>) -> Players {
        self.rate = per_minute.map(RegistrationRate::new);
        self
    }

    fn stream() -> GameId {
        GameId::new(REGISTRY_STREAM).unwrap_or_else(|_| unreachable!("a valid stream id"))
    }

    /// Folds in the registry's events from `seq` on if this node's fold
    /// stops before it: another node on a shared store wrote them.
    pub fn refresh(&self, seq: u64) -> Result<(), ApiError> {
        if seq > self.version() {
            let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
            // This node's own registration may have folded it meanwhile.
            if seq > self.version() {
                self.catch_up()?;
            }
        }
        Ok(())
    }

    fn version(&self) -> u64 {
        self.registry
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .version
    }

    /// Folds in the registry's stored events after this node's fold, read
    /// from there: as costly whatever the registry's size. Called with
    /// `writing` held (or before anyone else can write), so that no event
    /// is folded twice.
    pub(crate) fn catch_up(&self) -> Result<(), ApiError> {
        let from = self.version() + 1;
        let stored = match self.store.read_game(&Self::stream(), from) {
            Ok(stored) => stored,
            Err(StoreError::NotFound(_)) => Vec::new(),
            Err(error) => return Err(store_error(error)),
        };
        let mut decoded = Vec::with_capacity(stored.len());
        for event in &stored {
            if event.schema != REGISTRY_SCHEMA {
                return Err(ApiError::Corrupt(format!(
                    "{REGISTRY_STREAM} event {}: schema {}",
                    event.seq, event.schema
                )));
            }
            let registry_event = RegistryEvent::decode(&event.payload)
                .map_err(|e| ApiError::Corrupt(format!("{REGISTRY_STREAM} event {}: {e}", event.seq)))?;
            decoded.push((event.seq, registry_event));
        }
        let mut folded = self.registry.write().unwrap_or_else(PoisonError::into_inner);
        for (seq, event) in decoded {
            folded.registry.apply(&event);
            folded.version = seq;
        }
        Ok(())
    }

    fn read<T>(&self, f: impl FnOnce(&Registry) -> T) -> T {
        f(&self
            .registry
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .registry)
    }

    /// Decides an event on the registry and appends it durably; blocking.
    /// A registry another server node moved on (a shared store) is read
    /// again and the event decided again on it.
    fn write(&self, decide: impl Fn(&Registry) -> Result<RegistryEvent, ApiError>) -> Result<(), ApiError> {
        /// How often a decision is made again on a registry that moved.
        const ATTEMPTS: usize = 5;
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (event, version) = {
                let folded = self.registry.read().unwrap_or_else(PoisonError::into_inner);
                (decide(&folded.registry)?, folded.version)
            };
            let new = NewEvent {
                actor: Actor::Server,
                schema: REGISTRY_SCHEMA,
                payload: event.encode(),
            };
            match self
                .store
                .append(&Self::stream(), version, &RequestId::default(), &[new])
            {
                Ok(written) => {
                    let mut folded = self.registry.write().unwrap_or_else(PoisonError::into_inner);
                    folded.registry.apply(&event);
                    folded.version = written.last_seq;
                    return Ok(());
                }
                Err(StoreError::Conflict { .. }) if attempt < ATTEMPTS => self.catch_up()?,
                Err(error) => {
                    // Whatever happened, the next decision starts from the store.
                    let _ = self.catch_up();
                    return Err(store_error(error));
                }
            }
        }
    }

    /// Whether `key` is the server's admin key (compared in constant time).
    pub fn is_admin(&self, key: Option<&str>) -> bool {
        match (self.admin, key) {
            (Some(admin), Some(key)) => bool::from(admin.ct_eq(&auth::hash(key))),
            _ => false,
        }
    }

    /// Registers a player: its record and its new API key, shown once.
    /// `caller`: the request's bearer token, the admin key when
    /// registration is not open.
    pub fn register(&self, caller: Option<&str>, name: &str) -> Result<(PlayerRecord, String), ApiError> {
        let admin = self.is_admin(caller);
        if self.registration == Registration::Admin && !admin {
            return Err(ApiError::RegistrationClosed);
        }
        let name = parse_name("name", name)?;
        if let Some(rate) = self.rate.as_ref().filter(|_| !admin) {
            rate.take()?;
        }
        let key = auth::new_token().map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
        let key_hash = auth::hex(&auth::hash(&key));
        self.write(|registry| {
            registry.register(&name, &key_hash).map_err(|e| match e {
                RegistryError::NameTaken { requested, .. } => ApiError::NameTaken(requested.to_string()),
                other => ApiError::Internal(format!("registering: {other}")),
            })
        })?;
        tracing::info!(player = %name, "player registered");
        let record = self.get(&name)?;
        Ok((record, key))
    }

    /// Makes a player an organiser or not; only the admin may.
    pub fn set_organiser(
        &self,
        caller: Option<&str>,
        name: &str,
        organiser: bool,
    ) -> Result<PlayerRecord, ApiError> {
        if !self.is_admin(caller) {
            return Err(ApiError::NotAdmin);
        }
        let name = parse_name("name", name)?;
        let current = self.get(&name)?;
        if current.organiser != organiser {
            self.write(|registry| {
                let decided = if organiser {
                    registry.promote(&name)
                } else {
                    registry.demote(&name)
                };
                decided.map_err(|e| match e {
                    RegistryError::UnknownPlayer(name) => ApiError::PlayerNotFound(name.to_string()),
                    other => ApiError::Internal(format!("promoting: {other}")),
                })
            })?;
            tracing::info!(player = %name, organiser, "organiser set");
        }
        self.get(&name)
    }

    /// A registered player.
    pub fn get(&self, name: &PlayerName) -> Result<PlayerRecord, ApiError> {
        self.read(|registry| registry.player(name).cloned())
            .ok_or_else(|| ApiError::PlayerNotFound(name.to_string()))
    }

    /// The player whose API key `key` is.
    pub fn player_of_key(&self, key: &str) -> Option<PlayerName> {
        let hash = auth::hash(key);
        self.read(|registry| registry.by_key_hash(&hash).cloned())
    }

    /// The caller's player, from the request's bearer token.
    pub fn caller(&self, key: Option<&str>) -> Result<PlayerName, ApiError> {
        let key = key.ok_or(ApiError::MissingToken)?;
        self.player_of_key(key).ok_or(ApiError::UnknownKey)
    }

    /// The caller's player, who must be an organiser.
    pub fn organiser(&self, key: Option<&str>) -> Result<PlayerName, ApiError> {
        let name = self.caller(key)?;
        match self.get(&name)?.organiser {
            true => Ok(name),
            false => Err(ApiError::NotOrganiser),
        }
    }

    /// A registered player's seat in a new game: their name and key hash.
    pub fn account(&self, name: &PlayerName) -> Result<Account, ApiError> {
        let hash = self.read(|registry| registry.key_hash(name));
        let key_hash = hash.ok_or_else(|| ApiError::PlayerNotFound(name.to_string()))?;
        Ok(Account {
            name: name.to_string(),
            key_hash,
        })
    }
}

/// A player's name from a request: "players/{name}" or the bare name.
pub fn parse_name(field: &str, text: &str) -> Result<PlayerName, ApiError> {
    let bare = text.strip_prefix("players/").unwrap_or(text);
    PlayerName::new(bare).map_err(|e| ApiError::InvalidArgument {
        field: field.to_owned(),
        message: format!("{}: {e}", quote(text)),
    })
}

/// A tournament participant's name from a request: a registered player's
/// as [`parse_name`] takes it, or a house bot's ("players/greedy bot 1").
pub fn parse_participant(field: &str, text: &str) -> Result<PlayerName, ApiError> {
    let bare = text.strip_prefix("players/").unwrap_or(text);
    match PlayerName::any(bare) {
        Ok(name) => Ok(name),
        Err(_) => parse_name(field, text),
    }
}
