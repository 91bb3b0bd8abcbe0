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
//! - Each envelope carries the hash of the game's previous event and its own
//!   SHA-256 over that and its whole header: every envelope checks itself,
//!   and the chain shows an event removed, replaced or reordered. Reads
//!   check every envelope they return; [`EventStore::verify_game`] and
//!   [`EventStore::verify_all`] check whole chains and the global index.
//!   Damage is reported as [`StoreError::Corrupt`] with the game and
//!   sequence number, never returned as data and never a panic.
//! - Readers and subscribers see an event only once it is durable.
//!
//! # Backends
//!
//! [`SledStore`] (embedded, the default), [`PgStore`] (PostgreSQL, shared
//! by many server nodes; cargo feature `postgres`, on by default: its
//! schema and how it keeps the global order safe to read are in its module,
//! `postgres/mod.rs`) and [`MemoryStore`] (tests). All three write the same
//! envelopes and chains and pass the same integration tests.
//!
//! # What sled guarantees, what it does not, and what we do
//!
//! sled 0.34 is the embedded backend. What we rely on, what we found it
//! does not do, and what the store does about each:
//!
//! - **sled calls itself beta.** Its on-disk format may change between
//!   versions and it has had recovery bugs. We pin `0.34.7`, keep the
//!   envelope format our own (sled only holds opaque bytes under our keys,
//!   `sled_store/layout.rs`), and every envelope checks itself, so wrong
//!   bytes from sled are caught as `Corrupt` instead of served. Moving to
//!   another backend means copying envelopes, which keep verifying as they
//!   are.
//! - **Durable only after a flush, and the flush is costly.** A sled write
//!   is in memory until `flush` (or its background flusher, every 500 ms).
//!   sled's flush ends with `sync_file_range`, which writes the pages but
//!   neither flushes the drive's volatile cache nor persists the file's new
//!   size, so an `fdatasync` of its file must follow: two device round trips
//!   per flush, during which sled's inserts stall. The store therefore makes
//!   appends durable in a write-ahead log of its own (`sled_store/wal.rs`):
//!   an append is acknowledged only once its log entry is written and
//!   `fdatasync`ed ([`Durability::Flush`], the default), and concurrent
//!   appends share one sync (group commit, `sled_store/commit.rs`). sled is
//!   made durable behind it at checkpoints (its flush plus `fdatasync`,
//!   then the log is written from its start again) and opening replays what sled lacks from the
//!   log. Readers and subscribers never see what is not durable yet, so
//!   nothing they saw can vanish in a crash. [`Durability::Written`] skips
//!   the sync, for storage whose cache survives a power loss. Pages larger
//!   than a quarter of a segment go to blob files that sled never syncs at
//!   all: appends are bounded ([`MAX_APPEND_BYTES`]) so that no page gets
//!   there.
//! - **Atomicity.** One sled `insert` is atomic. An append's envelopes share
//!   one value, so an append is never half there. The committer puts a
//!   group into sled only once its log entries are synced: each append's
//!   envelopes, then one global index item for the group (per 32 appends).
//!   sled recovers a prefix of its log, so a crash can leave the last
//!   envelopes without their index item, and opening replays the log over
//!   them, whose entries are whole appends with a CRC (a cut last entry is
//!   dropped: it was never acknowledged). `apply_batch` would make a group
//!   one atomic write, but costs sled a log buffer write per call and
//!   slowed the sync after it: it is used only where the log may not have
//!   the group ([`Durability::Written`] and [`Durability::None`]). The
//!   crash test SIGKILLs a writer at random moments and checks that every
//!   acknowledged event is there and no append is torn.
//! - **Damage on disk.** sled checksums its log. Damage in a part of the
//!   log that sled's recovery does not replay is reported by sled when the
//!   page is read; we turn that into `Corrupt` for the game and sequence
//!   number being read, and the other games are served. Damage in the part
//!   recovery replays is worse: sled takes the first bad checksum for the
//!   torn end of the log, truncates there and drops every later write of
//!   every game, silently, or refuses to open. What the write-ahead log
//!   still holds is replayed; beyond that, the store keeps the highest
//!   acknowledged position in a file beside sled's (`acknowledged`) and
//!   refuses to open when sled and the log together recovered less, naming
//!   the lost positions.
//!   Restoring a backup is then the remedy; deleting the file accepts the
//!   loss.
//! - **Disk space.** sled is log-structured: it rewrites whole pages and
//!   reclaims old segments lazily. Measured with 10,000 games of 75 events
//!   of 10 bytes (`cargo run --release -p carcassonne-store --example
//!   disk_usage`): 100 KB on disk per game, 134 times the payload (133
//!   KB with layout 1's index entry per append). Our own bytes are about
//!   250 per event (33 times the payload: the 151-byte envelope with two
//!   SHA-256 hashes, a 36-byte game id and the envelope of a 10-byte
//!   event, its key, its share of the group's index item); sled
//!   multiplies them by about 5. [`StoreConfig::compression`] (zstd)
//!   brings it to 36 KB per game (49 times the payload), for about twice
//!   the CPU per append. Whole base games played through the server (215
//!   events) take about 76 KB per game, 34 KB compressed. The
//!   page cache is bounded by [`StoreConfig::cache_capacity_bytes`] (64 MiB
//!   by default instead of sled's 1 GiB).
//! - **A full disk.** A failed write of sled's log sets an error that
//!   every later write returns, and reads that finish a pending page split
//!   fail with it too. So appends are refused with
//!   [`StoreError::Unavailable`] while the disk has less than
//!   [`StoreConfig::reserve_bytes`] free (4 MiB), before sled gets them,
//!   and taken again once space is freed; the write-ahead log is
//!   preallocated, so it never needs new space. A new store refuses to
//!   open when the disk lacks room for its log, sled's first files and the
//!   reserve, naming the figures. [`SledStore::close`] says whether the
//!   final flush worked.
//! - **Backups.** Appends are never rewritten, so [`SledStore::backup`]
//!   copies every append up to the durable position while the store goes
//!   on, and [`SledStore::restore`] makes a new store of it and verifies
//!   it (`sled_store/backup.rs`).
//! - **sled's file lock outlives a dropped database for a moment** (its
//!   background threads hold it): reopening waits for it, up to 2 s.

mod chain;
mod clock;
mod config;
pub mod envelope;
mod error;
mod event;
mod hub;
mod ids;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;
pub(crate) mod sled_store;
mod store;
mod written;

#[cfg(test)]
mod tests;

pub use chain::{MAX_APPEND_BYTES, MAX_EVENTS_PER_APPEND};
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{DEFAULT_LOG_CAPACITY_BYTES, DEFAULT_RESERVE_BYTES, Durability, StoreConfig};
pub use error::{Corruption, Result, StoreError};
pub use event::{Actor, Appended, GamePage, GameSummary, Hash, NewEvent, StoredEvent, VerifyReport};
pub use hub::EventReceiver;
pub use ids::{GameId, MAX_GAME_ID_LEN, MAX_REQUEST_ID_LEN, RequestId};
pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
pub use postgres::{ImportReport, PgStore};
pub use sled_store::{BackupReport, Restored, SledStore, check_backup};
pub use store::{
    DEFAULT_PAGE_SIZE, EventStore, MAX_PAGE_SIZE, MAX_READ_LIMIT, page_token_after, streams_with_prefix,
};
/// The channel subscriptions use, for its error types (`RecvError::Lagged`).
pub use tokio::sync::broadcast;
pub use written::{Acknowledged, Written};
