//! The write-ahead log: what makes an append durable.
//!
//! sled is durable only after its flush, which costs two device round
//! trips (its `sync_file_range`, then our `fdatasync`) and stalls its
//! inserts while it runs. So an append is made durable in a log of our
//! own instead: each append is one entry in the file `wal`, and a group
//! commit is one `write` and one `fdatasync` of it, the cost of the
//! cheapest durable write there is. sled gets the same append in memory at
//! once (readers use it) and on disk when its background flusher or a
//! checkpoint gets to it.
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
//! index value (u32 LE), its index value and its records value, both as
//! `layout.rs` stores them in sled. A crash can cut the last entry: reading
//! stops at the first entry that is short or fails its CRC, or that does
//! not continue the positions of the one before (an entry of an earlier
//! round).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{Result, StoreError};

use super::layout;

pub(super) const FILE_NAME: &str = "wal";

const HEADER: usize = 8;

/// Adds the entry of one append to `out`.
pub(crate) fn encode(out: &mut Vec<u8>, first_position: u64, index_value: &[u8], records: &[u8]) {
    // Appends are bounded by MAX_APPEND_BYTES, far below u32::MAX.
    let body_len = 8 + 4 + index_value.len() + records.len();
    let start = out.len();
    out.reserve(HEADER + body_len);
    out.extend_from_slice(&(body_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&first_position.to_le_bytes());
    out.extend_from_slice(&(index_value.len() as u32).to_le_bytes());
    out.extend_from_slice(index_value);
    out.extend_from_slice(records);
    let crc = crc32fast::hash(&out[start + HEADER..]);
    out[start + 4..start + HEADER].copy_from_slice(&crc.to_le_bytes());
}

/// One append read back from the log.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    pub first_position: u64,
    pub index_value: &'a [u8],
    pub records: &'a [u8],
}

/// The entries of a log, up to the first one that is cut or damaged.
pub(crate) fn decode(mut bytes: &[u8]) -> Vec<Entry<'_>> {
    let mut entries = Vec::new();
    while let Some((header, rest)) = bytes.split_first_chunk::<HEADER>() {
        let body_len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let crc = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if body_len < 12 {
            // Zeros: the part of a preallocated log never written.
            break;
        }
        let Some((body, rest)) = rest.split_at_checked(body_len) else {
            break;
        };
        if crc32fast::hash(body) != crc {
            break;
        }
        let Some(entry) = parse_body(body) else {
            break;
        };
        entries.push(entry);
        bytes = rest;
    }
    entries
}

fn parse_body(body: &[u8]) -> Option<Entry<'_>> {
    let (first_position, rest) = body.split_first_chunk::<8>()?;
    let (index_len, rest) = rest.split_first_chunk::<4>()?;
    let (index_value, records) = rest.split_at_checked(u32::from_le_bytes(*index_len) as usize)?;
    Some(Entry {
        first_position: u64::from_le_bytes(*first_position),
        index_value,
        records,
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
    for entry in decode(&bytes) {
        let Some(index) = layout::parse_index_value(entry.index_value) else {
            return Err(StoreError::CorruptIndex {
                position: entry.first_position,
                detail: "a write-ahead log entry with a malformed index value".into(),
            });
        };
        if logged.is_some_and(|logged| entry.first_position != logged + 1) {
            // An entry from before the last checkpoint: the log ends here.
            break;
        }
        let entry_last = entry.first_position + u64::from(index.count) - 1;
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
        // The order of `write`: the index entry first (see `recover`).
        db.insert(layout::position_key(entry.first_position), entry.index_value)?;
        db.insert(
            layout::events_key(index.game.as_str(), index.first_seq),
            entry.records,
        )?;
        last = entry_last;
    }
    Ok(last)
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
