//! Making an archive: its files gathered, the manifest written, signed,
//! and all of it put in a deterministic tar.

use crate::manifest::{FileEntry, Kind, Manifest, check_path};
use crate::{ArchiveError, FORMAT, MANIFEST, SIGNATURE, SigningKey, hex, sha256_hex};

/// The files of an archive to be, in the order they are added.
///
/// ```
/// use carcassonne_archive::{Archive, ArchiveBuilder, Kind, SigningKey};
///
/// let key = SigningKey::from_secret_bytes([7; 32]);
/// let mut builder = ArchiveBuilder::new(Kind::Game, "g1", 1_764_000_000_000);
/// builder.add("games/g1/seed", b"00\n".to_vec())?;
/// let bytes = builder.sign(&key)?;
/// let archive = Archive::open(&bytes, Some(&key.public_key()))?;
/// assert_eq!(archive.file("games/g1/seed"), Some(&b"00\n"[..]));
/// # Ok::<(), carcassonne_archive::ArchiveError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ArchiveBuilder {
    kind: Kind,
    subject: String,
    created_at_ms: u64,
    files: Vec<(String, Vec<u8>)>,
}

impl ArchiveBuilder {
    /// An archive of `kind` about `subject` (a game's or tournament's id),
    /// made at `created_at_ms` (ms since the Unix epoch, the caller's
    /// clock).
    pub fn new(kind: Kind, subject: impl Into<String>, created_at_ms: u64) -> ArchiveBuilder {
        ArchiveBuilder {
            kind,
            subject: subject.into(),
            created_at_ms,
            files: Vec::new(),
        }
    }

    /// Adds a file at `path` (see [`check_path`]); each path once.
    pub fn add(&mut self, path: impl Into<String>, bytes: Vec<u8>) -> Result<&mut Self, ArchiveError> {
        let path = path.into();
        check_path(&path).map_err(|reason| ArchiveError::BadPath {
            path: path.clone(),
            reason,
        })?;
        if self.files.iter().any(|(p, _)| *p == path) {
            return Err(ArchiveError::DuplicatePath(path));
        }
        self.files.push((path, bytes));
        Ok(self)
    }

    /// The paths added so far, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(p, _)| p.as_str())
    }

    /// The manifest of the files added, naming `key`'s public key, signed
    /// by `key`: the archive's bytes.
    pub fn sign(self, key: &SigningKey) -> Result<Vec<u8>, ArchiveError> {
        let manifest = Manifest {
            format: FORMAT.to_owned(),
            kind: self.kind,
            subject: self.subject,
            created_at_ms: self.created_at_ms,
            server_key: key.public_key_hex(),
            files: self
                .files
                .iter()
                .map(|(path, bytes)| FileEntry {
                    path: path.clone(),
                    sha256: sha256_hex(bytes),
                    bytes: bytes.len() as u64,
                })
                .collect(),
        };
        let manifest = manifest.to_bytes()?;
        let signature = format!("{}\n", hex(&key.sign(&manifest))).into_bytes();
        let mut entries = Vec::with_capacity(self.files.len() + 2);
        entries.push((MANIFEST.to_owned(), manifest));
        entries.extend(self.files);
        entries.push((SIGNATURE.to_owned(), signature));
        write_tar(&entries)
    }
}

/// A POSIX (ustar) tar of `entries`, in their order, with deterministic
/// headers: plain files, mode 0644, owner and group 0 without names, time
/// 0. The tar layer of an archive alone: it checks and signs nothing, for
/// tools and tests that must write an archive exactly as they want it.
pub fn write_tar(entries: &[(String, Vec<u8>)]) -> Result<Vec<u8>, ArchiveError> {
    let mut tar = tar::Builder::new(Vec::new());
    for (path, bytes) in entries {
        let mut header = tar::Header::new_ustar();
        header
            .set_path(path)
            .map_err(|e| ArchiveError::Tar(format!("{path}: {e}")))?;
        header.set_entry_type(tar::EntryType::Regular);
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_cksum();
        tar.append(&header, bytes.as_slice())
            .map_err(|e| ArchiveError::Tar(format!("{path}: {e}")))?;
    }
    tar.into_inner().map_err(|e| ArchiveError::Tar(e.to_string()))
}
