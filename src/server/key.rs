//! The server's signing key: an Ed25519 key made at the first start of
//! `serve` (the text form of `carcassonne_archive::SigningKey`). It signs
//! the archives the server exports; its public key is what `GetServerKey`
//! and `carcassonne public-key` give. Where it is kept:
//!
//! - with the sled store, in the data directory, in the file `server.key`
//!   (mode 0600), or in the file `serve --key-file` names;
//! - with PostgreSQL, where every server node must find the same key, in
//!   the database's table `server_secrets` (never in a stream, so never
//!   served, listed or exported), or in the file `--key-file` names, which
//!   the operator then copies to every node.
//!
//! The secret never leaves that place and the key's memory: it is not
//! logged, not in any answer, and not in a sled backup (a restored server
//! makes a key of its own, unless the file is copied along). A dump of the
//! PostgreSQL database holds it: keep dumps as private as the database,
//! or keep the key in a file.

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use carcassonne_archive::{KeyError, SigningKey};

/// The key file's name in the data directory.
pub const FILE: &str = "server.key";

/// Why the key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ServerKeyError {
    #[error(
        "no server key in {}: the server makes {} at its first start (carcassonne serve --data {})",
        dir.display(), path.display(), dir.display()
    )]
    Missing { path: PathBuf, dir: PathBuf },
    #[error("no server key in the PostgreSQL database: the server makes it at its first start on it")]
    MissingInDatabase,
    #[error("the server key in the PostgreSQL database: {0}")]
    Database(carcassonne_store::StoreError),
    #[error(
        "the server key {} is damaged: {error}. Put back a copy of it, or move it aside to make a \
         new key (archives signed by the old one then no longer check against this server's key)",
        path.display()
    )]
    Damaged { path: PathBuf, error: KeyError },
    #[error("the server key {}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
}

/// The path of the key file of the data directory `data`.
pub fn path(data: &Path) -> PathBuf {
    data.join(FILE)
}

/// The key of the data directory `data`, which must have one.
pub fn load(data: &Path) -> Result<SigningKey, ServerKeyError> {
    load_file(&path(data))
}

/// The key in the file `path`, which must exist.
pub fn load_file(path: &Path) -> Result<SigningKey, ServerKeyError> {
    let path = path.to_owned();
    let dir = path.parent().map(Path::to_owned).unwrap_or_default();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ServerKeyError::Missing { path, dir });
        }
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            return Err(ServerKeyError::Damaged {
                path,
                error: KeyError::Malformed("not UTF-8 text".to_owned()),
            });
        }
        Err(error) => return Err(ServerKeyError::Io { path, error }),
    };
    SigningKey::from_file_text(&text).map_err(|error| ServerKeyError::Damaged { path, error })
}

/// The key of the data directory `data`, made (from the operating
/// system's random source) and stored if it has none. Whether it was made
/// comes back with it.
pub fn load_or_create(data: &Path) -> Result<(SigningKey, bool), ServerKeyError> {
    load_or_create_file(&path(data))
}

/// The key in the file `path`, made and stored there if there is none.
pub fn load_or_create_file(path: &Path) -> Result<(SigningKey, bool), ServerKeyError> {
    match load_file(path) {
        Ok(key) => return Ok((key, false)),
        Err(ServerKeyError::Missing { .. }) => {}
        Err(error) => return Err(error),
    }
    let data = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| FILE.to_owned());
    let path = path.to_owned();
    let io = |error: std::io::Error| ServerKeyError::Io {
        path: path.clone(),
        error,
    };
    let key = new_key().map_err(io)?;
    // Written whole to a file of its own, synced, then linked into place:
    // a crash leaves no key or the whole key, never half of one, and of
    // two servers starting at once on a new directory, one key wins and
    // both use it.
    let staged = data.join(format!("{name}.new-{}", std::process::id()));
    let written = (|| {
        let _ = std::fs::remove_file(&staged);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&staged)?;
        // The mode whatever the umask.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(key.to_file_text().as_bytes())?;
        file.sync_all()?;
        std::fs::hard_link(&staged, &path)
    })();
    let _ = std::fs::remove_file(&staged);
    match written {
        Ok(()) => {
            if let Ok(dir) = std::fs::File::open(data) {
                let _ = dir.sync_all();
            }
            Ok((key, true))
        }
        // Another server made it first: its key is the key.
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok((load_file(&path)?, false)),
        Err(error) => Err(io(error)),
    }
}

/// A new key from the operating system's random source.
fn new_key() -> std::io::Result<SigningKey> {
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| std::io::Error::other(e.to_string()))?;
    let key = SigningKey::from_secret_bytes(secret);
    secret.fill(0);
    Ok(key)
}

/// The name of the key in the PostgreSQL table `server_secrets`.
pub const DATABASE_SECRET: &str = "archive-signing-key";

/// The key kept in the PostgreSQL database, made and stored if it has none
/// (of several nodes starting at once, one key wins and all use it).
/// Whether this call made it comes back with it.
pub fn load_or_create_in(store: &carcassonne_store::PgStore) -> Result<(SigningKey, bool), ServerKeyError> {
    let mine =
        new_key().map_err(|error| ServerKeyError::Database(carcassonne_store::StoreError::Io(error)))?;
    let text = mine.to_file_text();
    let stored = store
        .secret_or_insert(DATABASE_SECRET, || text.as_bytes().to_vec())
        .map_err(ServerKeyError::Database)?;
    let key = from_database(stored)?;
    let made = key.to_file_text() == text;
    Ok((key, made))
}

/// The key kept in the PostgreSQL database, which must have one.
pub fn load_in(store: &carcassonne_store::PgStore) -> Result<SigningKey, ServerKeyError> {
    match store.secret(DATABASE_SECRET).map_err(ServerKeyError::Database)? {
        Some(stored) => from_database(stored),
        None => Err(ServerKeyError::MissingInDatabase),
    }
}

fn from_database(stored: Vec<u8>) -> Result<SigningKey, ServerKeyError> {
    let damaged = |error| ServerKeyError::Damaged {
        path: PathBuf::from(format!(
            "(the PostgreSQL table server_secrets, {DATABASE_SECRET})"
        )),
        error,
    };
    let text =
        String::from_utf8(stored).map_err(|_| damaged(KeyError::Malformed("not UTF-8 text".to_owned())))?;
    SigningKey::from_file_text(&text).map_err(damaged)
}
