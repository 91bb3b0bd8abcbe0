//! Signed archives of Carcassonne games and tournaments
//! (`carcassonne-archive/1`, described in `docs/archive-format.md`).
//!
//! An archive is a POSIX tar holding `manifest.json` first, then the files
//! it lists, then `signature`. The manifest names the archive's kind and
//! subject, the time it was made, the public key of the server that made
//! it and every file with its size and SHA-256; `signature` is the
//! server's Ed25519 signature over the exact bytes of `manifest.json`. So
//! one signature covers every byte of every listed file.
//!
//! This crate knows the format only: it does no IO, reads no clock and
//! makes no randomness of its own (a key is made from 32 random bytes the
//! caller brings), and knows nothing of games. What a file holds is the
//! caller's business: the server puts a game's record, event log and seed
//! in a game archive, and the auditor checks them.
//!
//! - [`ArchiveBuilder`] gathers files and [signs](ArchiveBuilder::sign)
//!   them into the bytes of an archive; the same files, subject and time
//!   always give the same bytes.
//! - [`Archive::open`] checks an archive and names the first thing that
//!   does not hold ([`ArchiveError`]), in a fixed order: a readable tar, the
//!   manifest, its format, the signature, the expected key (if one is
//!   given), then every file; [`Archive::check`] runs every check it can
//!   and tells each one, held or not, for an auditor.
//! - [`SigningKey`] is a server's key, with its text file form;
//!   [`PublicKey`] the key an archive names and an auditor expects.

mod key;
mod manifest;
mod open;
mod write;

pub use key::{KeyError, PublicKey, SigningKey};
pub use manifest::{FileEntry, Kind, Manifest, check_path};
pub use open::{Archive, Opening, read_tar};
pub use write::{ArchiveBuilder, write_tar};

/// The `format` of every manifest this crate writes and reads.
pub const FORMAT: &str = "carcassonne-archive/1";
/// The manifest's path in an archive, its first entry.
pub const MANIFEST: &str = "manifest.json";
/// The signature's path in an archive, its last entry.
pub const SIGNATURE: &str = "signature";

/// Why an archive could not be made or does not hold. The checks of
/// [`Archive::open`] come in the order of the variants below; the first
/// that fails is the answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// Not a tar, or a damaged or cut one.
    #[error("not a readable tar archive: {0}")]
    NotATar(String),
    /// An entry that is no plain file (a directory, a link, ...).
    #[error("{path}: not a plain file (a {kind} entry); an archive holds only files")]
    NotAFile { path: String, kind: String },
    #[error("manifest.json: missing; an archive begins with its manifest")]
    MissingManifest,
    /// `manifest.json` is no JSON, or no manifest of this format.
    #[error("manifest.json: unreadable: {0}")]
    BadManifest(String),
    #[error("manifest.json: format {found:?}, but this build reads only {FORMAT:?}")]
    UnknownFormat { found: String },
    #[error("signature: missing; the archive is not signed")]
    MissingSignature,
    #[error("signature: malformed: {0}")]
    MalformedSignature(String),
    /// The manifest's `server_key` is no Ed25519 public key.
    #[error("manifest.json: server_key: {0}")]
    BadServerKey(String),
    /// The signature is not the named key's over the manifest's bytes: the
    /// manifest was changed, or another key signed it.
    #[error(
        "signature: not valid for the manifest and the key it names ({key}): the manifest was \
         changed after signing, or another key signed it"
    )]
    BadSignature { key: String },
    /// A valid signature, by another key than the one expected.
    #[error("signature: signed by key {signed_by}, expected {expected}")]
    WrongKey { signed_by: String, expected: String },
    /// The same path more than once in the tar.
    #[error("{path}: {count} entries of that name; an archive holds each file once")]
    Duplicate { path: String, count: usize },
    #[error("{0}: listed in the manifest, missing from the archive")]
    MissingFile(String),
    #[error("{path}: {actual} bytes, the manifest lists {listed}")]
    SizeMismatch { path: String, listed: u64, actual: u64 },
    #[error("{path}: its SHA-256 is {actual}, the manifest lists {listed}: the file was changed")]
    HashMismatch {
        path: String,
        listed: String,
        actual: String,
    },
    #[error("{0}: in the archive, not in the manifest")]
    UnlistedFile(String),
    /// A path [`ArchiveBuilder::add`] refuses (see [`check_path`]).
    #[error("{path:?}: not a path of an archive: {reason}")]
    BadPath { path: String, reason: String },
    #[error("{0}: added twice")]
    DuplicatePath(String),
    /// Writing the tar failed (a path or size it cannot hold).
    #[error("writing the tar: {0}")]
    Tar(String),
}

impl ArchiveError {
    /// The archive's file the problem is in, if it is in one.
    pub fn path(&self) -> Option<&str> {
        match self {
            ArchiveError::NotATar(_) | ArchiveError::Tar(_) => None,
            ArchiveError::MissingManifest
            | ArchiveError::BadManifest(_)
            | ArchiveError::UnknownFormat { .. }
            | ArchiveError::BadServerKey(_) => Some(MANIFEST),
            ArchiveError::MissingSignature
            | ArchiveError::MalformedSignature(_)
            | ArchiveError::BadSignature { .. }
            | ArchiveError::WrongKey { .. } => Some(SIGNATURE),
            ArchiveError::NotAFile { path, .. }
            | ArchiveError::Duplicate { path, .. }
            | ArchiveError::SizeMismatch { path, .. }
            | ArchiveError::HashMismatch { path, .. }
            | ArchiveError::BadPath { path, .. } => Some(path),
            ArchiveError::MissingFile(path)
            | ArchiveError::UnlistedFile(path)
            | ArchiveError::DuplicatePath(path) => Some(path),
        }
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    out
}

/// `N` bytes from exactly `2 * N` hex digits (either case).
pub fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let mut out = [0; N];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        *byte = (high * 16 + low) as u8;
    }
    Some(out)
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(bytes))
}

#[cfg(test)]
mod tests;
