//! The embedded backend: one sled database per store, made durable by a
//! write-ahead log of our own (`wal.rs`, `commit.rs`).

mod acknowledged;
mod backup;
pub(crate) mod commit;
mod games;
mod layout;
mod read;
mod space;
pub(crate) mod wal;

#[cfg(test)]
mod tests;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crate::chain::{self, Head};
use crate::config::StoreConfig;
use crate::error::{Result, StoreError};
use crate::event::{Appended, GamePage, GameSummary, NewEvent, StoredEvent, VerifyReport};
use crate::hub::{EventReceiver, Hub};
use crate::ids::{GameId, RequestId};
use crate::store::EventStore;
use crate::written::Written;

pub use backup::{BackupReport, Restored, check_backup};
use commit::{Disk, GroupCommit};
use space::SpaceGuard;

/// The [`EventStore`] on sled, the embedded default.
pub struct SledStore {
    db: sled::Db,
    path: PathBuf,
    config: StoreConfig,
    writer: Mutex<Writer>,
    commit: Arc<GroupCommit>,
    /// Refuses appends while the disk is nearly full.
    space: SpaceGuard,
    /// The committer thread, joined on close or drop.
    committer: Mutex<Option<JoinHandle<()>>>,
}

/// What only the writer lock's holder touches.
struct Writer {
    next_position: u64,
    games: games::GameCache,
}

/// The committer's disk: the log, and sled for checkpoints.
struct SledDisk {
    db: sled::Db,
    /// sled's data file, opened again to `fdatasync` it after sled's own
    /// flush (see the crate docs: sled syncs with `sync_file_range`).
    data_file: File,
    log: wal::Log,
    /// Where the highest acknowledged position is noted (`acknowledged.rs`).
    acknowledged_file: File,
}

impl SledDisk {
    /// Makes sled durable, so that the log can be written from its start.
    fn checkpoint_sled(&mut self) -> std::io::Result<()> {
        sync_sled(&self.db, &self.data_file)?;
        self.log.restart();
        Ok(())
    }
}

impl Disk for SledDisk {
    fn write_log(&mut self, entries: &[u8]) -> std::io::Result<()> {
        if !self.log.fits(entries.len()) {
            // Every earlier group is in sled already: a checkpoint makes room.
            self.checkpoint_sled()?;
        }
        self.log.append(entries)
    }

    fn apply(&mut self, entries: &[u8], how: wal::Apply) -> std::io::Result<()> {
        let entries = wal::decode_group(entries)?;
        wal::apply(&self.db, &entries, how).map_err(std::io::Error::other)
    }

    fn sync(&mut self) -> std::io::Result<()> {
        self.log.sync()
    }

    fn note_acknowledged(&mut self, position: u64) -> std::io::Result<()> {
        acknowledged::write_position(&self.acknowledged_file, position)
    }

    fn wants_checkpoint(&self) -> bool {
        self.log.len() >= self.log.capacity() / 4 * 3
    }

    fn checkpoint(&mut self, position: u64) -> std::io::Result<()> {
        self.checkpoint_sled()?;
        acknowledged::write_position(&self.acknowledged_file, position)
    }
}

/// sled's flush, then `fdatasync` of its file: sled's flush ends in
/// `sync_file_range`, which neither flushes the drive's write cache nor
/// the file's size.
fn sync_sled(db: &sled::Db, data_file: &File) -> std::io::Result<()> {
    db.flush().map_err(std::io::Error::other)?;
    data_file.sync_data()
}

impl SledStore {
    /// Opens (or creates) the store in the directory `path`. Refuses with
    /// [`StoreError::Unavailable`], naming the space needed, when the disk
    /// lacks room for the write-ahead log still to allocate and, for a new
    /// store, sled's files and the reserve (`StoreConfig::reserve_bytes`).
    pub fn open(path: impl AsRef<Path>, config: StoreConfig) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        std::fs::create_dir_all(&path)?;
        let logged = std::fs::metadata(path.join(wal::FILE_NAME)).map_or(0, |m| m.len());
        // A new store needs room to start and take appends; an existing one
        // opens on a full disk too, for its reads (appends wait for space).
        let (sled_start, reserve) = if path.join("db").exists() {
            (0, 0)
        } else {
            (space::SLED_START_BYTES, config.reserve_bytes)
        };
        space::check_start(
            &path,
            config.log_capacity_bytes.saturating_sub(logged),
            sled_start,
            reserve,
        )?;
        let db = open_sled(&path, &config)?;
        match db.get(layout::LAYOUT_KEY)? {
            Some(version) if version.as_ref() == layout::LAYOUT_VERSION => {}
            Some(version) if version.as_ref() == layout::LAYOUT_VERSION_1 => {
                // Its items keep reading; new ones are of layout 2, which
                // older code must not meet.
                db.insert(layout::LAYOUT_KEY, layout::LAYOUT_VERSION)?;
                db.flush()?;
            }
            Some(version) => {
                return Err(StoreError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("unknown store layout version {:?}", version.as_ref()),
                )));
            }
            None if db.is_empty() => {
                db.insert(layout::LAYOUT_KEY, layout::LAYOUT_VERSION)?;
                db.flush()?;
            }
            None => {
                return Err(StoreError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("{} is a sled database but not an event store", path.display()),
                )));
            }
        }
        let data_file = File::open(path.join("db"))?;
        let recovered = recover(&db)?;
        let recovered = wal::replay(&path, &db, recovered)?;
        // Whatever sled recovered may still be only in the page cache: make
        // it durable before the log that also holds it is overwritten.
        sync_sled(&db, &data_file)?;
        let acknowledged_file = acknowledged::check(&path, recovered)?;
        let log = wal::Log::open(&path, config.log_capacity_bytes)?;
        let hub = Hub::new(config.subscription_capacity);
        let commit = GroupCommit::new(config.durability, recovered, hub);
        let committer = commit.start(Box::new(SledDisk {
            db: db.clone(),
            data_file,
            log,
            acknowledged_file,
        }))?;
        Ok(SledStore {
            commit,
            space: SpaceGuard::new(&path, config.reserve_bytes),
            committer: Mutex::new(Some(committer)),
            writer: Mutex::new(Writer {
                next_position: recovered + 1,
                games: games::GameCache::new(config.game_cache_capacity),
            }),
            db,
            path,
            config,
        })
    }

    /// The directory the store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes sled's files take on disk.
    pub fn size_on_disk(&self) -> Result<u64> {
        Ok(self.db.size_on_disk()?)
    }

    /// Makes everything appended so far durable in sled itself, whatever
    /// the durability policy, so that the write-ahead log can start again.
    pub fn flush(&self) -> Result<()> {
        self.commit.checkpoint()
    }

    /// Whether sled compresses this store: chosen when it was created
    /// ([`StoreConfig::compression`]), whatever the configuration it was
    /// opened with says.
    pub fn compression(&self) -> bool {
        stored_compression(&self.path).unwrap_or(self.config.compression)
    }

    /// Writes a backup of every event acknowledged so far to `out`, while
    /// the store goes on taking appends (see `backup.rs` for the format).
    pub fn backup(&self, out: &mut dyn std::io::Write) -> Result<BackupReport> {
        backup::write(&self.db, self.commit.durable(), out)
    }

    /// Restores a backup into `dir` (empty or missing) as a new store made
    /// with `config`, and verifies it. Restoring is also how a store
    /// changes its compression.
    pub fn restore(from: &mut dyn std::io::Read, dir: &Path, config: StoreConfig) -> Result<Restored> {
        backup::restore(from, dir, config)
    }

    /// Closes the store: writes what is pending, makes sled durable and
    /// stops the committer. An error says the close was not clean: the
    /// store had failed, or its final checkpoint did (the next open
    /// replays the write-ahead log). Later appends are refused.
    pub fn close(&self) -> Result<()> {
        self.commit.stop();
        let committer = self
            .committer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(committer) = committer {
            // A panic stopped the store with its reason: reported below.
            let _ = committer.join();
        }
        let failure = self.commit.failure();
        self.commit.closed();
        match failure {
            Some(reason) => Err(StoreError::Unavailable(reason)),
            None => Ok(()),
        }
    }

    /// `appended`, acknowledged once the committer made it durable.
    fn pending(&self, appended: Appended) -> Written {
        Written::pending(appended, self.commit.clone())
    }

    fn lock_writer(&self) -> MutexGuard<'_, Writer> {
        // `Writer` is updated only after the append was built and checked:
        // a panicking holder cannot leave it torn.
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues the append for the committer (not yet durable); returns
    /// what it will write, or the original result of a retried request.
    fn write_append(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<Appended> {
        let mut writer = self.lock_writer();
        if let Some(reason) = self.commit.failure() {
            return Err(StoreError::Unavailable(reason));
        }
        let first_position = writer.next_position;
        let state = writer.games.get(&self.db, self.commit.durable(), game)?;
        if let Some(&original) = state.requests.get(request_id) {
            return Ok(original);
        }
        // A retry writes nothing: answered even on a full disk.
        self.space.check_append()?;
        let head = state.head;
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
        let entry = layout::append_entry(&layout::IndexEntry {
            game: game.clone(),
            first_seq: appended.first_seq,
            // check_batch bounds the count far below u16::MAX.
            count: built.len() as u16,
        });
        let envelopes = layout::join_envelopes(built.iter().map(|(_, bytes)| bytes.as_slice()));
        if let Some(last) = built.last() {
            state.head = Head {
                last_seq: last.0.seq,
                last_hash: last.0.hash,
            };
        }
        if !request_id.is_none() {
            state.requests.insert(request_id.clone(), appended);
        }
        // Until the committer has it in sled, only this cache knows it.
        state.last_position = appended.last_position;
        writer.next_position = appended.last_position + 1;
        self.commit.written(
            |log| wal::encode(log, first_position, &entry, &envelopes),
            built.into_iter().map(|(event, _)| Arc::new(event)).collect(),
        );
        Ok(appended)
    }
}

/// Opens sled, waiting a little for its lock: sled's background threads
/// release a dropped database's file lock a moment after the drop, so a
/// store reopened at once in the same process would find it taken.
fn open_sled(path: &Path, config: &StoreConfig) -> Result<sled::Db> {
    let sled_config = sled::Config::new()
        .path(path)
        .cache_capacity(config.cache_capacity_bytes)
        .use_compression(stored_compression(path).unwrap_or(config.compression))
        .compression_factor(3);
    let mut attempts = 0;
    loop {
        match sled_config.open() {
            Ok(db) => return Ok(db),
            Err(sled::Error::Io(error))
                if attempts < 100 && error.to_string().contains("could not acquire lock") =>
            {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(error @ sled::Error::Corruption { .. }) => {
                return Err(StoreError::Io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "sled cannot recover {}: its log is damaged where it must replay it \
                         ({error}); restore a backup",
                        path.display()
                    ),
                )));
            }
            Err(other) => return Err(other.into()),
        }
    }
}

/// The compression setting an existing store was created with: sled keeps
/// it in its `conf` file and refuses to open with another.
fn stored_compression(path: &Path) -> Option<bool> {
    // Text lines, then a binary checksum.
    let conf = std::fs::read(path.join("conf")).ok()?;
    String::from_utf8_lossy(&conf)
        .lines()
        .find_map(|line| line.strip_prefix("use_compression: "))
        .and_then(|value| value.trim().parse().ok())
}

/// Returns the last stored position, after repairing the one append a
/// crash can leave cut in a store of layout 1.
///
/// Layout 2 inserts an index item after its envelopes (or with them, in one
/// batch): sled recovers a prefix of its log, so an item always has its
/// envelopes, and envelopes a crash left without their item are replayed from
/// the write-ahead log (`wal::replay`). An item without envelopes is damage.
/// Layout 1 inserted an append's index entry, then its envelopes, so its
/// last append could be cut, and it was never acknowledged: such an item
/// is removed.
fn recover(db: &sled::Db) -> Result<u64> {
    loop {
        let Some(item) = db
            .range(layout::position_key(0).as_slice()..layout::POSITIONS_END)
            .next_back()
        else {
            return Ok(0);
        };
        let (key, value) = item?;
        let position = layout::parse_position_key(&key);
        let entries = layout::parse_index_item(&value);
        let (Some(position), Some(entries)) = (position, entries) else {
            return Err(StoreError::CorruptIndex {
                position: position.unwrap_or(0),
                detail: "the last index item is malformed".into(),
            });
        };
        let mut present = 0;
        for entry in &entries {
            if db
                .get(layout::events_key(entry.game.as_str(), entry.first_seq))?
                .is_some()
            {
                present += 1;
            }
        }
        if present == entries.len() {
            return Ok(position + layout::item_events(&entries) - 1);
        }
        if present > 0 || !layout::is_layout_1_item(&value) {
            return Err(StoreError::CorruptIndex {
                position,
                detail: format!(
                    "the last index item names {} appends, {present} of which are stored",
                    entries.len()
                ),
            });
        }
        db.remove(&key)?;
        db.flush()?;
    }
}

impl EventStore for SledStore {
    fn write_at(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<Written> {
        chain::check_batch(game, request_id, events)?;
        // A retried request may find its original append still in flight:
        // it too is acknowledged only once that is durable.
        Ok(self.pending(self.write_append(game, expected_seq, request_id, time_millis, events)?))
    }

    fn now_millis(&self) -> u64 {
        self.config.clock.now_millis()
    }

    fn find_request(&self, game: &GameId, request_id: &RequestId) -> Result<Option<Written>> {
        if request_id.is_none() {
            return Ok(None);
        }
        let original = {
            let mut writer = self.lock_writer();
            let state = writer.games.get(&self.db, self.commit.durable(), game)?;
            state.requests.get(request_id).copied()
        };
        // The original append may still be on its way to the disk.
        Ok(original.map(|original| self.pending(original)))
    }

    fn read_game(&self, game: &GameId, from_seq: u64) -> Result<Vec<StoredEvent>> {
        read::read_game(&self.db, self.commit.durable(), game, from_seq, usize::MAX)
    }

    fn read_game_chunk(&self, game: &GameId, from_seq: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        read::read_game(&self.db, self.commit.durable(), game, from_seq, limit)
    }

    fn read_all(&self, from_position: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        read::read_all(&self.db, self.commit.durable(), from_position, limit)
    }

    fn game(&self, game: &GameId) -> Result<Option<GameSummary>> {
        read::summary(&self.db, self.commit.durable(), game)
    }

    fn list_games(&self, page_token: Option<&str>, page_size: usize) -> Result<GamePage> {
        read::list_games(&self.db, self.commit.durable(), page_token, page_size)
    }

    fn last_position(&self) -> u64 {
        self.commit.durable()
    }

    fn subscribe_game(&self, game: &GameId) -> EventReceiver {
        self.commit.hub.subscribe_game(game)
    }

    fn subscribe_all(&self) -> EventReceiver {
        self.commit.hub.subscribe_all()
    }

    fn verify_game(&self, game: &GameId) -> Result<VerifyReport> {
        read::verify_game(&self.db, self.commit.durable(), game)
    }

    fn verify_all(&self) -> Result<VerifyReport> {
        read::verify_all(&self.db, self.commit.durable())
    }

    fn storage_problem(&self) -> Option<String> {
        self.commit.failure().or_else(|| self.space.current_problem())
    }
}

impl Drop for SledStore {
    /// A clean shutdown leaves everything in sled on disk, whatever the
    /// durability policy: the committer writes what is pending, checkpoints
    /// and ends. An error here has nobody to go to: the next open replays
    /// the log.
    fn drop(&mut self) {
        self.commit.stop();
        let committer = self
            .committer
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(committer) = committer {
            let _ = committer.join();
        }
    }
}

impl std::fmt::Debug for SledStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SledStore")
            .field("path", &self.path)
            .field("durability", &self.config.durability)
            .finish_non_exhaustive()
    }
}
