//! A note, outside sled, of the highest position ever acknowledged: it
//! catches sled silently dropping acknowledged appends.
//!
//! sled's recovery reads its log until the first message whose checksum
//! fails and treats that as the torn end of the last write: it truncates
//! the log there and zeroes the rest of the segment. A crash mid-write
//! looks like that, but so does one flipped byte in the middle of the log,
//! and then every later write of every game is gone without an error.
//!
//! So after each group the committer writes the position it made durable
//! to the file `acknowledged` (16 bytes, no fsync of its own: under the
//! default durability it trails what the synced write-ahead log holds, and
//! after a power loss an older value is still a true lower bound; under
//! `Durability::Written` nothing is synced, so a power loss can leave it
//! ahead, and the store then refuses to open, as it should: acknowledged
//! appends were lost). On open, a store whose sled and log together
//! recovered less than that refuses to open with
//! [`StoreError::CorruptIndex`]: the operator restores a backup, or deletes
//! the file to accept the loss.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{Result, StoreError};

pub(super) const FILE_NAME: &str = "acknowledged";

/// Distinguishes a real note from a zeroed or torn file.
const CHECK: u64 = 0x6361_7263_6163_6b31;

fn encode(position: u64) -> [u8; 16] {
    let mut bytes = [0; 16];
    bytes[..8].copy_from_slice(&position.to_le_bytes());
    bytes[8..].copy_from_slice(&(position.rotate_left(17) ^ CHECK).to_le_bytes());
    bytes
}

fn decode(bytes: &[u8]) -> Option<u64> {
    let position = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    let check = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
    (check == position.rotate_left(17) ^ CHECK).then_some(position)
}

/// Compares the note with what sled recovered, and opens the note for
/// writing.
pub(super) fn check(dir: &Path, recovered: u64) -> Result<File> {
    let path = dir.join(FILE_NAME);
    let noted = match std::fs::read(&path) {
        Ok(bytes) => decode(&bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(error.into()),
    };
    if let Some(noted) = noted.filter(|&noted| noted > recovered) {
        return Err(StoreError::CorruptIndex {
            position: recovered + 1,
            detail: format!(
                "events up to position {noted} were acknowledged, but sled recovered only up to \
                 {recovered}: its log is damaged and it dropped everything after the damage. \
                 Restore a backup, or delete {} to accept the loss",
                path.display()
            ),
        });
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)?;
    write_position(&file, recovered)?;
    Ok(file)
}

/// Notes that everything up to `position` is durable.
pub(super) fn write_position(file: &File, position: u64) -> std::io::Result<()> {
    file.write_all_at(&encode(position), 0)
}
