//! The event store: one append-only, hash-chained stream of events per
//! game, durable on disk, plus a store-wide order for following every game
//! at once.
//!
//! The store knows bytes, sequence numbers, hashes and durability, and no
//! rules: payloads are opaque bytes with a schema version, encoded and
//! decoded by the engine's codec elsewhere.
//!
//! ```
//! use carcassonne_store::*;
//!
//! let store = MemoryStore::default();
//! let game = GameId::new("g-1")?;
//! let request = RequestId::new("req-1")?;
//! let event = NewEvent { actor: Actor::Server, schema: 1, payload: b"created".to_vec() };
//! let appended = store.append(&game, 0, &request, &[event.clone()])?;
//! assert_eq!((appended.first_seq, appended.last_seq), (1, 1));
//! // The same request again: the original result, nothing written.
//! assert_eq!(store.append(&game, 0, &request, &[event.clone()])?, appended);
//! // A stale version: a conflict.
//! let other = RequestId::new("req-2")?;
//! assert!(matches!(
//!     store.append(&game, 0, &other, &[event]),
//!     Err(StoreError::Conflict { expected: 0, actual: 1, .. })
//! ));
//! assert_eq!(store.read_game(&game, 1)?[0].payload, b"created");
//! # Ok::<(), StoreError>(())
//! ```
//!
//! # Model
//!
//! - A game's events are numbered 1, 2, 3, … without gaps; the last number
//!   is the game's version. Every event also gets a global position, 1, 2,
//!   3, … across the store in commit order.
//! - [`EventStore::append`] takes the version the caller last saw and fails
//!   with [`StoreError::Conflict`], writing nothing, if another append got
//!   there first. The events of one append are written all or none.
//! - A request id already stored for the game makes the append return the
//!   original result and write nothing: clients retry safely.
//! - Each record carries the hash of the game's previous event and its own
//!   SHA-256 over that and its whole envelope: every record checks itself,
//!   and the chain shows an event removed, replaced or reordered. Reads
//!   check every record they return; [`EventStore::verify_game`] and
//!   [`EventStore::verify_all`] check whole chains and the global index.
//!   Damage is reported as [`StoreError::Corrupt`] with the game and
//!   sequence number, never returned as data and never a panic.
//! - Readers and subscribers see an event only once it is durable.
//!
//! # What sled guarantees, what it does not, and what we do
//!
//! sled 0.34 is the embedded backend. What we rely on and what we add:
//!
//! - **sled calls itself beta.** Its on-disk format may change between
//!   versions and it has had recovery bugs. We pin `0.34.7`, keep the
//!   record format our own (sled only holds opaque bytes under our keys),
//!   and every record is self-checking, so a sled bug that returned wrong
//!   bytes is caught as `Corrupt` instead of served. Moving to another
//!   backend means copying records, which keep verifying as they are.
//! - **Durable only after a flush.** A sled write is in memory until
//!   `flush` (or its background flusher, every 500 ms). An append is
//!   acknowledged only after a flush that covers it
//!   ([`Durability::Flush`], the default); concurrent appends share one
//!   flush (group commit), so the cost is one disk sync per group, not per
//!   event. Readers never see what is not durable yet.
//! - **sled's flush is weaker than it looks.** On Linux it ends with
//!   `sync_file_range`, which writes the pages but neither flushes the
//!   drive's volatile cache nor persists the file's new size; so after
//!   sled's flush we `fdatasync` sled's data file ourselves. Pages larger
//!   than a quarter of a segment go to blob files that sled never syncs:
//!   appends are bounded ([`MAX_APPEND_BYTES`]) so that no page gets there.
//! - **Atomic batches.** `apply_batch` is recovered all or nothing; an
//!   append (events, index entries, request id) is one batch. After a
//!   crash sled recovers a prefix of the flushed batches; the crash test
//!   kills a writer at random moments and checks this.
//! - **Damage on disk.** sled checksums its log and reports a checksum
//!   failure as `Error::Corruption`; we turn it into `Corrupt` for the game
//!   and sequence number being read. Our own hashes catch what sled's
//!   checks miss.
//! - **Disk space.** sled is log-structured: it rewrites pages and reclaims
//!   old segments lazily, so its files can be several times the live data.
//!   The cache is bounded by [`StoreConfig::cache_capacity_bytes`] (64 MiB
//!   by default instead of sled's 1 GiB). See the README for measured
//!   figures (`cargo run --release -p carcassonne-store --example disk_usage`).

mod chain;
mod clock;
mod config;
mod error;
mod event;
mod hub;
mod ids;
mod memory;
pub mod record;
pub(crate) mod sled_store;
mod store;

#[cfg(test)]
mod tests;

pub use chain::{MAX_APPEND_BYTES, MAX_EVENTS_PER_APPEND};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{Durability, StoreConfig};
pub use error::{Corruption, Result, StoreError};
pub use event::{Actor, Appended, GamePage, GameSummary, Hash, NewEvent, StoredEvent, VerifyReport};
pub use hub::EventReceiver;
pub use ids::{GameId, MAX_GAME_ID_LEN, MAX_REQUEST_ID_LEN, RequestId};
pub use memory::MemoryStore;
pub use sled_store::SledStore;
pub use store::{DEFAULT_PAGE_SIZE, EventStore, MAX_PAGE_SIZE, MAX_READ_LIMIT};
/// The channel subscriptions use, for its error types (`RecvError::Lagged`).
pub use tokio::sync::broadcast;
