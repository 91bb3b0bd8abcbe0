//! Backups: every append up to a durable position, copied from a running
//! store, and restored into a new one.
//!
//! Appends are never rewritten, and nothing under the durable position
//! changes, so a backup needs no pause: it reads the index items up to the
//! durable position at its start and copies each append's stored bytes,
//! while the store goes on taking appends past it. What it holds is every
//! append acknowledged before it started.
//!
//! The file (`carcassonne-backup/1`): the magic line, the last position it
//! holds (u64 LE), then one write-ahead log entry per append in position
//! order (`wal.rs`: length, CRC-32, first position, index entry, the
//! envelopes as sled stores them), then an end mark of 8 zero bytes. A cut,
//! damaged or incomplete file is refused whole. Restoring puts the appends
//! into a new store as opening a store replays its log, then checks every
//! envelope, hash chain and the index.

use std::io::{Read, Write};
use std::path::Path;

use crate::config::StoreConfig;
use crate::error::{Result, StoreError};
use crate::event::VerifyReport;
use crate::store::EventStore;

use super::wal::{self, Apply};
use super::{SledStore, layout};

const MAGIC: &[u8] = b"carcassonne-backup/1\n";
const END: [u8; wal::HEADER] = [0; wal::HEADER];

/// Far more than an append's entry can take (appends are bounded by
/// `MAX_APPEND_BYTES` of payload): a damaged length allocates no more.
const MAX_ENTRY_BYTES: usize = 1 << 20;

/// How many appends a restore puts into sled at a time.
const RESTORE_BATCH: usize = 32 * layout::MAX_APPENDS_PER_ITEM;

/// What a backup holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackupReport {
    /// The last global position it holds: every event up to it, none after.
    pub position: u64,
    /// Appends it holds.
    pub appends: u64,
    /// Events it holds.
    pub events: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// A store restored from a backup, and its verification.
#[derive(Debug)]
pub struct Restored {
    /// What the backup held.
    pub backup: BackupReport,
    /// The check of every envelope, chain and the index of the new store.
    pub verified: VerifyReport,
}

/// Writes every append up to `durable` to `out`.
pub(super) fn write(db: &sled::Db, durable: u64, out: &mut dyn Write) -> Result<BackupReport> {
    let bad = |position: u64, detail: &str| StoreError::CorruptIndex {
        position,
        detail: detail.into(),
    };
    let mut report = BackupReport {
        position: durable,
        ..BackupReport::default()
    };
    out.write_all(MAGIC)?;
    out.write_all(&durable.to_le_bytes())?;
    report.bytes = (MAGIC.len() + 8) as u64;
    let mut entry_bytes = Vec::new();
    let mut next = 1;
    for item in db.range(layout::position_key(1).as_slice()..layout::POSITIONS_END) {
        if next > durable {
            // Groups past it are still being put into sled.
            break;
        }
        let (key, value) = item?;
        if layout::parse_position_key(&key) != Some(next) {
            return Err(bad(next, "position missing from the index"));
        }
        let appends = layout::parse_index_item(&value).ok_or_else(|| bad(next, "malformed item"))?;
        for append in appends {
            let game = append.game.as_str();
            let envelopes = db
                .get(layout::events_key(game, append.first_seq))?
                .ok_or_else(|| bad(next, "points to missing events"))?;
            entry_bytes.clear();
            wal::encode(&mut entry_bytes, next, &layout::append_entry(&append), &envelopes);
            out.write_all(&entry_bytes)?;
            report.bytes += entry_bytes.len() as u64;
            report.appends += 1;
            report.events += u64::from(append.count);
            next += u64::from(append.count);
        }
    }
    if next != durable + 1 {
        return Err(bad(next, "the index ends before the durable position"));
    }
    out.write_all(&END)?;
    out.flush()?;
    report.bytes += END.len() as u64;
    Ok(report)
}

/// Reads a backup entry by entry, checking each and that the whole is
/// there.
struct Reader<'a> {
    from: &'a mut dyn Read,
    report: BackupReport,
    /// The position the next append must start at.
    next: u64,
}

/// A backup that cannot be restored: cut, damaged, or not a backup.
fn unusable(detail: impl std::fmt::Display) -> StoreError {
    StoreError::InvalidArgument(format!("not a complete carcassonne backup: {detail}"))
}

impl<'a> Reader<'a> {
    fn open(from: &'a mut dyn Read) -> Result<Reader<'a>> {
        let mut magic = [0; MAGIC.len()];
        read_exact(from, &mut magic, "its header")?;
        if magic != MAGIC {
            return Err(unusable("it does not start with \"carcassonne-backup/1\""));
        }
        let mut position = [0; 8];
        read_exact(from, &mut position, "its header")?;
        let position = u64::from_le_bytes(position);
        // The position after the last is computed as the file is read.
        if position == u64::MAX {
            return Err(unusable(format!(
                "its header says it holds up to position {position}"
            )));
        }
        Ok(Reader {
            from,
            report: BackupReport {
                position,
                bytes: (MAGIC.len() + 8) as u64,
                ..BackupReport::default()
            },
            next: 1,
        })
    }

    /// The next append's log entry body, or `None` at the end mark.
    fn next_body(&mut self) -> Result<Option<Vec<u8>>> {
        let mut header = [0; wal::HEADER];
        read_exact(self.from, &mut header, "an entry")?;
        self.report.bytes += header.len() as u64;
        if header == END {
            if self.next != self.report.position + 1 {
                return Err(unusable(format!(
                    "it ends at position {} but says it holds {}",
                    self.next - 1,
                    self.report.position
                )));
            }
            return Ok(None);
        }
        let [l0, l1, l2, l3, c0, c1, c2, c3] = header;
        let body_len = u32::from_le_bytes([l0, l1, l2, l3]) as usize;
        if !(12..=MAX_ENTRY_BYTES).contains(&body_len) {
            return Err(unusable(format!(
                "an entry of {body_len} bytes at position {}",
                self.next
            )));
        }
        let mut body = vec![0; body_len];
        read_exact(self.from, &mut body, "an entry")?;
        self.report.bytes += body_len as u64;
        if crc32fast::hash(&body) != u32::from_le_bytes([c0, c1, c2, c3]) {
            return Err(unusable(format!(
                "the entry at position {} is damaged",
                self.next
            )));
        }
        let entry = wal::parse_body(&body).ok_or_else(|| unusable("a malformed entry"))?;
        let append =
            layout::parse_append_entry(entry.index_value).ok_or_else(|| unusable("a malformed entry"))?;
        if entry.first_position != self.next || append.count == 0 {
            return Err(unusable(format!(
                "an entry at position {} where {} was due",
                entry.first_position, self.next
            )));
        }
        self.next = match self.next.checked_add(u64::from(append.count)) {
            Some(next) if next <= self.report.position + 1 => next,
            _ => {
                return Err(unusable(format!(
                    "an entry past position {}",
                    self.report.position
                )));
            }
        };
        self.report.appends += 1;
        self.report.events += u64::from(append.count);
        Ok(Some(body))
    }
}

fn read_exact(from: &mut dyn Read, buf: &mut [u8], what: &str) -> Result<()> {
    from.read_exact(buf).map_err(|error| match error.kind() {
        std::io::ErrorKind::UnexpectedEof => unusable(format!("it is cut in {what}")),
        _ => StoreError::Io(error),
    })
}

/// Reads a whole backup and checks its framing, CRCs and completeness.
pub fn check_backup(from: &mut dyn Read) -> Result<BackupReport> {
    let mut reader = Reader::open(from)?;
    while reader.next_body()?.is_some() {}
    Ok(reader.report)
}

/// Restores a backup into `dir`, which must be empty or missing, as a new
/// store opened with `config` (compression included: restoring is how an
/// existing store changes it), and verifies the result.
///
/// The store is made in a sibling directory and renamed to `dir` only once
/// the whole backup is in it: a restore that fails leaves nothing a server
/// could open and serve in part.
pub fn restore(from: &mut dyn Read, dir: &Path, config: StoreConfig) -> Result<Restored> {
    let occupied = match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_some(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => false,
        Err(error) => return Err(error.into()),
    };
    if occupied {
        return Err(StoreError::InvalidArgument(format!(
            "{} is not empty: restore into a new directory",
            dir.display()
        )));
    }
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name()) else {
        return Err(StoreError::InvalidArgument(format!(
            "{} names no directory to restore into",
            dir.display()
        )));
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    std::fs::create_dir_all(parent)?;
    let mut staging_name = std::ffi::OsString::from(".");
    staging_name.push(name);
    staging_name.push(format!(".restoring-{}", std::process::id()));
    let staging = parent.join(staging_name);
    // Fails if another restore of this process is making it.
    std::fs::create_dir(&staging)?;
    let restored = restore_into(from, &staging, config).and_then(|restored| {
        // Over an empty `dir` too: rename replaces an empty directory.
        std::fs::rename(&staging, dir)?;
        Ok(restored)
    });
    if restored.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    restored
}

fn restore_into(from: &mut dyn Read, dir: &Path, config: StoreConfig) -> Result<Restored> {
    let mut reader = Reader::open(from)?;
    let store = SledStore::open(dir, config.clone())?;
    let mut batch = Vec::with_capacity(RESTORE_BATCH);
    loop {
        let body = reader.next_body()?;
        let done = body.is_none();
        batch.extend(body);
        if batch.len() == RESTORE_BATCH || (done && !batch.is_empty()) {
            let entries = batch
                .iter()
                .map(|body| wal::parse_body(body).ok_or_else(|| unusable("a malformed entry")))
                .collect::<Result<Vec<_>>>()?;
            wal::apply(&store.db, &entries, Apply::InOrder)?;
            batch.clear();
        }
        if done {
            break;
        }
    }
    // sled durable on disk, then the store opened again: it finds the last
    // position from the index as after any restart.
    store.flush()?;
    store.close()?;
    drop(store);
    let store = SledStore::open(dir, config)?;
    if store.last_position() != reader.report.position {
        return Err(StoreError::CorruptIndex {
            position: store.last_position(),
            detail: format!(
                "the restored store ends at position {}, the backup at {}",
                store.last_position(),
                reader.report.position
            ),
        });
    }
    let verified = store.verify_all()?;
    store.close()?;
    Ok(Restored {
        backup: reader.report,
        verified,
    })
}
