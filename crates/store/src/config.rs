//! How a store is opened: durability, clock, sled's knobs.

use std::fmt;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};

/// When an append is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// Only once it is on disk: its entry in the write-ahead log is written
    /// and `fdatasync`ed, so that it survives a power loss too. Concurrent
    /// appends share one sync (group commit). The default.
    #[default]
    Flush,
    /// Once its entry in the write-ahead log is written to the operating
    /// system, without waiting for the disk: it survives a crash of the
    /// process, not one of the machine. For storage with a
    /// power-loss-protected cache, or tests.
    Written,
    /// As soon as the committer has put it into sled's memory; no log is
    /// written. A crash of the process loses everything since sled last
    /// flushed (every 500 ms, and on close). Only for tests and benchmarks
    /// that say so.
    None,
}

/// The write-ahead log's default size: 16 MiB, a checkpoint every 12 MiB
/// of appends (about 50,000 events).
pub const DEFAULT_LOG_CAPACITY_BYTES: u64 = 16 << 20;

/// The free space a store leaves on its disk by default: room for sled to
/// write what it holds in memory (at most its flush interval's appends).
pub const DEFAULT_RESERVE_BYTES: u64 = 4 << 20;

/// The configuration of a store.
#[derive(Clone)]
pub struct StoreConfig {
    /// When appends are acknowledged. Durable by default.
    pub durability: Durability,
    /// Where event times come from.
    pub clock: Arc<dyn Clock>,
    /// sled's page cache, in bytes. sled's default is 1 GiB; we default to
    /// 64 MiB, plenty for the hot games, and the OS caches the rest.
    pub cache_capacity_bytes: u64,
    /// How many events a subscriber may fall behind before it is told it
    /// lagged (per channel: the all-games one and each game's).
    pub subscription_capacity: usize,
    /// Whether sled compresses what it writes (zstd, level 3). Measured on
    /// 10-byte events: 3.7 times less disk space, for about twice the CPU
    /// per append. Chosen when a store is created; an existing
    /// store keeps the setting it was created with.
    pub compression: bool,
    /// How many games the writer keeps in memory (head and request ids),
    /// so that an append reads nothing from sled. A game not cached is
    /// loaded by scanning its envelopes once.
    pub game_cache_capacity: usize,
    /// The size of the write-ahead log file, allocated (zero-filled) when
    /// the store is created. A checkpoint makes sled durable whenever the
    /// log is three quarters full: a smaller log means more checkpoints
    /// (each a flush of sled and two syncs), never a lost append.
    pub log_capacity_bytes: u64,
    /// The free space the store leaves on its disk. An append that would
    /// find less is refused with [`StoreError::Unavailable`](crate::StoreError)
    /// until space is freed: sled still has room to write what it holds,
    /// so it never meets a full disk, and reads keep working. Opening a
    /// store needs this much free besides the log.
    pub reserve_bytes: u64,
    /// PostgreSQL only: the most connections the store's pool holds (its
    /// follower takes one more). Appends in flight beyond it wait for a
    /// connection; the database's `max_connections` must allow this many
    /// for every node.
    pub postgres_connections: u32,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            durability: Durability::Flush,
            clock: Arc::new(SystemClock),
            cache_capacity_bytes: 64 << 20,
            subscription_capacity: 1024,
            game_cache_capacity: 10_000,
            compression: false,
            log_capacity_bytes: DEFAULT_LOG_CAPACITY_BYTES,
            reserve_bytes: DEFAULT_RESERVE_BYTES,
            postgres_connections: 16,
        }
    }
}

impl StoreConfig {
    /// The default configuration with another durability.
    pub fn with_durability(durability: Durability) -> Self {
        StoreConfig {
            durability,
            ..StoreConfig::default()
        }
    }

    /// This configuration with another clock.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

impl fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreConfig")
            .field("durability", &self.durability)
            .field("cache_capacity_bytes", &self.cache_capacity_bytes)
            .field("subscription_capacity", &self.subscription_capacity)
            .field("game_cache_capacity", &self.game_cache_capacity)
            .field("compression", &self.compression)
            .field("log_capacity_bytes", &self.log_capacity_bytes)
            .field("postgres_connections", &self.postgres_connections)
            .field("reserve_bytes", &self.reserve_bytes)
            .finish_non_exhaustive()
    }
}
