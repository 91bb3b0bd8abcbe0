//! Helpers shared by the integration tests.

use std::path::Path;
use std::sync::Arc;

use carcassonne_store::*;

/// Whether the slow tests run: `CARCASSONNE_SLOW_TESTS` unset, empty or
/// `0` runs the default ones, `1` the slow ones. Any other value stops the
/// test with a message rather than guessing what was meant. The engine's and
/// the store's tests read the variable with this same function.
pub fn slow_tests() -> bool {
    const NAME: &str = "CARCASSONNE_SLOW_TESTS";
    match std::env::var(NAME) {
        Err(std::env::VarError::NotPresent) => false,
        Ok(value) if value.is_empty() || value == "0" => false,
        Ok(value) if value == "1" => true,
        other => panic!(
            "{NAME} is {other:?}: set it to 1 for the slow tests, or to 0 (or leave it unset) for the default ones"
        ),
    }
}

pub fn game(id: &str) -> GameId {
    GameId::new(id).unwrap()
}

pub fn request(id: &str) -> RequestId {
    RequestId::new(id).unwrap()
}

pub fn event(payload: &[u8]) -> NewEvent {
    NewEvent {
        actor: Actor::Seat(1),
        schema: 1,
        payload: payload.to_vec(),
    }
}

/// A store whose clock starts at a fixed time.
pub fn config(durability: Durability) -> StoreConfig {
    StoreConfig::with_durability(durability).clock(Arc::new(ManualClock::new(1_700_000_000_000)))
}

pub fn open(path: &Path, durability: Durability) -> SledStore {
    SledStore::open(path, config(durability)).unwrap()
}

/// A small seeded generator (xorshift64*), so that failures replay.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A backend the generic tests run against: each of them gets a fresh
/// place (an empty store) per [`Backend::place`].
#[derive(Clone, Copy)]
pub enum Backend {
    Memory,
    Sled,
    #[cfg(feature = "postgres")]
    Postgres(&'static crate::pg::Cluster),
}

impl Backend {
    /// Memory, sled, and PostgreSQL when it is installed (required with
    /// `CARCASSONNE_PG_TESTS=1`).
    pub fn all() -> Vec<Backend> {
        #[allow(unused_mut)]
        let mut all = vec![Backend::Memory, Backend::Sled];
        #[cfg(feature = "postgres")]
        if let Some(cluster) = crate::pg::cluster() {
            all.push(Backend::Postgres(cluster));
        }
        all
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Memory => "memory",
            Backend::Sled => "sled",
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => "postgres",
        }
    }

    /// A new, empty place for a store of this backend.
    pub fn place(&self) -> Place {
        Place {
            backend: *self,
            dir: matches!(self, Backend::Sled).then(|| tempfile::tempdir().unwrap()),
            #[cfg(feature = "postgres")]
            url: match self {
                Backend::Postgres(cluster) => Some(cluster.database()),
                _ => None,
            },
            memory: std::sync::Mutex::new(None),
            sled: std::sync::Mutex::new(std::sync::Weak::new()),
        }
    }

    /// A store opened on a fresh place with `config`.
    pub fn open(&self, config: StoreConfig) -> (Place, Arc<dyn EventStore>) {
        let place = self.place();
        let store = place.open(config);
        (place, store)
    }
}

/// Runs `test` once per backend, saying which one runs (shown on failure).
pub fn each_backend(test: impl Fn(Backend)) {
    for backend in Backend::all() {
        eprintln!("backend: {}", backend.name());
        test(backend);
    }
}

/// Where a store lives: a sled directory, a PostgreSQL database, or (for
/// memory) the one store itself, which a reopen gives back as it is.
pub struct Place {
    backend: Backend,
    dir: Option<tempfile::TempDir>,
    #[cfg(feature = "postgres")]
    url: Option<String>,
    memory: std::sync::Mutex<Option<Arc<MemoryStore>>>,
    sled: std::sync::Mutex<std::sync::Weak<SledStore>>,
}

impl Place {
    /// Opens (or reopens) the store here.
    pub fn open(&self, config: StoreConfig) -> Arc<dyn EventStore> {
        match self.backend {
            Backend::Memory => {
                let mut memory = self.memory.lock().unwrap();
                let store = memory.get_or_insert_with(|| Arc::new(MemoryStore::with_config(&config)));
                Arc::clone(store) as Arc<dyn EventStore>
            }
            Backend::Sled => {
                let store = Arc::new(SledStore::open(self.dir.as_ref().unwrap().path(), config).unwrap());
                *self.sled.lock().unwrap() = Arc::downgrade(&store);
                store
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(_) => Arc::new(PgStore::open(self.url.as_deref().unwrap(), config).unwrap()),
        }
    }

    /// The sled store last opened here, if it is still open.
    pub fn sled(&self) -> Option<Arc<SledStore>> {
        self.sled.lock().unwrap().upgrade()
    }
}
