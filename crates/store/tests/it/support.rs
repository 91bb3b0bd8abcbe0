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
