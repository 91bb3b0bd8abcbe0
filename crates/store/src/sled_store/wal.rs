//! The write-ahead log: what makes an append durable.
//!
//! sled is durable only after its flush, which costs two device round
//! trips (its `sync_file_range`, then our `fdatasync`) and stalls its
//! inserts while it runs. So an append is made durable in a log of our
//! own instead: each append is one entry in the file `wal`, and a group
//! commit is one `write` and one `fdatasync` of it, the cost of the
//! cheapest durable write there is. Once the log is synced, the committer
//! applies the same entries to sled's memory ([`apply`]), where readers
//! find them once they are marked durable; sled has them on disk when its
//! background flusher or a checkpoint gets to them. Since sled never holds
//! what the log does not, an append a crash cuts in sled is replayed whole.
//!
//! A checkpoint (when the log is three quarters full, when a group does
//! not fit, and on a clean close) flushes sled and `fdatasync`s its file;
//! then everything in the log is in sled for good and the log is written
//! from its start again (see [`Log`]). On open, the entries sled does not
//! have yet are replayed into it ([`replay`]), in position order; then a
//! checkpoint.
//!
//! An entry: body length (u32 LE), CRC-32 of the body (u32 LE), then the
//! body: the append's first global position (u64 LE), the length of its
//! index entry (u32 LE), its index entry (`layout::append_entry`) and its
//! envelopes value as `layout.rs` stores it in sled. A crash can cut the last entry: reading
//! stops at the first entry that is short or fails its CRC, or that does
//! not continue the positions of the one before (an entry of an earlier
//! round).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{Result, StoreError};

use super::layout;

pub(super) const FILE_NAME: &str = "wal";

pub(super) const HEADER: usize = 8;

/// Adds the entry of one append to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, first_position: u64, index_value: &[u8], envelopes: &[u8]) {
    // Appends are bounded by MAX_APPEND_BYTES, far below u32::MAX.
    let body_len = 8 + 4 + index_value.len() + envelopes.len();
    let start = out.len();
    out.reserve(HEADER + body_len);
    out.extend_from_slice(&(body_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&first_position.to_le_bytes());
    out.extend_from_slice(&(index_value.len() as u32).to_le_bytes());
    out.extend_from_slice(index_value);
    out.extend_from_slice(envelopes);
    let crc = crc32fast::hash(&out[start + HEADER..]);
    out[start + 4..start + HEADER].copy_from_slice(&crc.to_le_bytes());
}

/// One append read back from the log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    pub first_position: u64,
    pub index_value: &'a [u8],
    pub envelopes: &'a [u8],
}

/// The entries of a log, up to the first one that is cut or damaged.
pub(crate) fn decode(bytes: &[u8]) -> Vec<Entry<'_>> {
    decode_prefix(bytes).0
}

/// The entries of a group the writers queued, which must all be whole.
pub(super) fn decode_group(bytes: &[u8]) -> std::io::Result<Vec<Entry<'_>>> {
    let (entries, read) = decode_prefix(bytes);
    if read != bytes.len() {
        return Err(std::io::Error::other(format!(
            "a commit group's log entries end after {read} of {} bytes (a bug)",
            bytes.len()
        )));
    }
    Ok(entries)
}

/// The entries up to the first cut or damaged one, and the bytes they take.
fn decode_prefix(bytes: &[u8]) -> (Vec<Entry<'_>>, usize) {
    let mut entries = Vec::new();
    let mut rest = bytes;
    while let Some((header, after)) = rest.split_first_chunk::<HEADER>() {
        let body_len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if body_len < 12 {
            // Zeros: the part of a preallocated log never written.
            break;
        }
        let Some((body, after)) = after.split_at_checked(body_len) else {
            break;
        };
        if crc32fast::hash(body) != crc {
            break;
        }
        let Some(entry) = parse_body(body) else {
            break;
        };
        entries.push(entry);
        rest = after;
    }
    (entries, bytes.len() - rest.len())
}

pub(super) fn parse_body(body: &[u8]) -> Option<Entry<'_>> {
    let (first_position, rest) = body.split_first_chunk::<8>()?;
    let (index_len, rest) = rest.split_first_chunk::<4>()?;
    let (index_value, envelopes) = rest.split_at_checked(u32::from_le_bytes(*index_len) as usize)?;
    Some(Entry {
        first_position: u64::from_le_bytes(*first_position),
        index_value,
        envelopes,
    })
}

/// Puts into sled every append of the log after `recovered`, the last
/// position sled has, and returns the new last position. The caller makes
/// sled durable before the log is written again.
pub(super) fn replay(dir: &Path, db: &sled::Db, recovered: u64) -> Result<u64> {
    let bytes = match std::fs::read(dir.join(FILE_NAME)) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(recovered),
        Err(error) => return Err(error.into()),
    };
    let mut last = recovered;
    // The last position of the log's previous entry.
    let mut logged: Option<u64> = None;
    let mut missing = Vec::new();
    for entry in decode(&bytes) {
        let append = parse_append(&entry)?;
        if logged.is_some_and(|logged| entry.first_position != logged + 1) {
            // An entry from before the last checkpoint: the log ends here.
            break;
        }
        let entry_last = entry.first_position + u64::from(append.count) - 1;
        logged = Some(entry_last);
        if entry_last <= last {
            continue;
        }
        if entry.first_position != last + 1 {
            return Err(StoreError::CorruptIndex {
                position: last + 1,
                detail: format!(
                    "sled holds events up to position {last} but the write-ahead log goes on from \
                     position {}: the events between are lost. Restore a backup",
                    entry.first_position
                ),
            });
        }
        missing.push(entry);
        last = entry_last;
    }
    // Replayed again if a crash interrupts: in order is enough.
    apply(db, &missing, Apply::InOrder)?;
    Ok(last)
}

fn parse_append(entry: &Entry<'_>) -> Result<layout::IndexEntry> {
    layout::parse_append_entry(entry.index_value).ok_or_else(|| StoreError::CorruptIndex {
        position: entry.first_position,
        detail: "a write-ahead log entry with a malformed index value".into(),
    })
}

/// How [`apply`] stores appends in sled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Apply {
    /// Each append's envelopes, then their index item, as plain inserts.
    /// sled recovers a prefix of its log, so a crash can leave envelopes
    /// without their index item: only for entries already durable in the
    /// log, which opening replays over them.
    InOrder,
    /// One atomic batch per index item and its envelopes, which sled
    /// recovers all or nothing: for entries the log may lose. It costs
    /// sled a log buffer write per batch (measured: 38 µs per append
    /// instead of 21 µs, and a slower sync after it).
    Atomic,
}

/// Stores whole appends (log entries whose positions continue each other)
/// in sled: their envelopes and, per [`layout::MAX_APPENDS_PER_ITEM`]
/// appends, an index item after them.
pub(super) fn apply(db: &sled::Db, entries: &[Entry<'_>], how: Apply) -> Result<()> {
    let mut next_position = entries.first().map(|entry| entry.first_position);
    for chunk in entries.chunks(layout::MAX_APPENDS_PER_ITEM) {
        let Some(first) = chunk.first() else {
            continue;
        };
        // Each append's envelopes, borrowed from the log entry: no copy
        // before sled's own.
        let mut envelopes = Vec::with_capacity(chunk.len());
        let mut appends = Vec::with_capacity(chunk.len());
        for entry in chunk {
            let append = parse_append(entry)?;
            if next_position != Some(entry.first_position) {
                return Err(StoreError::CorruptIndex {
                    position: entry.first_position,
                    detail: format!(
                        "appends to store do not continue each other: position {} after {:?}",
                        entry.first_position, next_position
                    ),
                });
            }
            next_position = Some(entry.first_position + u64::from(append.count));
            envelopes.push((
                layout::events_key(append.game.as_str(), append.first_seq),
                entry.envelopes,
            ));
            appends.push(append);
        }
        let index_value = layout::index_item(&appends);
        let index = (
            layout::position_key(first.first_position).to_vec(),
            index_value.as_slice(),
        );
        // The index item last: see `Apply::InOrder`.
        let writes = envelopes.into_iter().chain([index]);
        match how {
            Apply::InOrder => {
                for (key, value) in writes {
                    db.insert(key, value)?;
                }
            }
            Apply::Atomic => {
                let mut batch = sled::Batch::default();
                for (key, value) in writes {
                    batch.insert(key, value);
                }
                db.apply_batch(batch)?;
            }
        }
    }
    Ok(())
}

/// The log file: preallocated and written in place, from its start again
/// after each checkpoint.
///
/// Appending to a file makes every `fdatasync` commit the file system's
/// journal too (the file's size and blocks change), and on ext4 that
/// commit also writes out every other dirty block the journal orders,
/// sled's among them: a lone sync measured three times slower than the raw
/// baseline. Overwriting blocks that are already allocated and written
/// changes no metadata, so the sync is the data and one cache flush.
///
/// After a checkpoint the old entries stay behind the new ones. Reading
/// tells them apart: an old entry is either cut by a new one (its CRC
/// fails) or does not continue the positions of the entry before it.
pub(super) struct Log {
    file: File,
    offset: u64,
    capacity: u64,
}

impl Log {
    /// Opens the log for writing from its start, creating and zero-filling
    /// it up to `capacity` bytes if it is shorter. Call after [`replay`].
    pub(super) fn open(dir: &Path, capacity: u64) -> std::io::Result<Log> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(FILE_NAME))?;
        let len = file.metadata()?.len();
        if len < capacity {
            static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
            let mut at = len;
            while at < capacity {
                let chunk = (capacity - at).min(ZEROS.len() as u64) as usize;
                file.write_all_at(&ZEROS[..chunk], at)?;
                at += chunk as u64;
            }
            file.sync_all()?;
            if let Ok(dir) = File::open(dir) {
                dir.sync_all()?;
            }
        }
        Ok(Log {
            file,
            offset: 0,
            capacity,
        })
    }

    pub(super) fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.file.write_all_at(bytes, self.offset)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Whether `bytes` more fit without growing the file.
    pub(super) fn fits(&self, bytes: usize) -> bool {
        self.offset + bytes as u64 <= self.capacity
    }

    pub(super) fn sync(&self) -> std::io::Result<()> {
        self.file.sync_data()
    }

    pub(super) fn len(&self) -> u64 {
        self.offset
    }

    pub(super) fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Starts writing from the start again: everything in the log must be
    /// in sled on disk.
    pub(super) fn restart(&mut self) {
        self.offset = 0;
    }
}
