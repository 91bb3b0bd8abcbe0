//! The server's signing key: an Ed25519 key made at the first start of
//! `serve` and kept in the data directory, in the file `server.key`
//! (mode 0600; the text form of `carcassonne_archive::SigningKey`). It
//! signs the archives the server exports; its public key is what
//! `GetServerKey` and `carcassonne public-key` give.
//!
//! The secret never leaves this file and the key's memory: it is not
//! logged, not in a backup (a restored server makes a key of its own,
//! unless the file is copied along) and not in any answer.

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
    let path = path(data);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ServerKeyError::Missing {
                path,
                dir: data.to_owned(),
            });
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
    match load(data) {
        Ok(key) => return Ok((key, false)),
        Err(ServerKeyError::Missing { .. }) => {}
        Err(error) => return Err(error),
    }
    let path = path(data);
    let io = |error: std::io::Error| ServerKeyError::Io {
        path: path.clone(),
        error,
    };
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| io(std::io::Error::other(e.to_string())))?;
    let key = SigningKey::from_secret_bytes(secret);
    secret.fill(0);
    // Written whole to a file of its own, synced, then linked into place:
    // a crash leaves no key or the whole key, never half of one, and of
    // two servers starting at once on a new directory, one key wins and
    // both use it.
    let staged = data.join(format!("{FILE}.new-{}", std::process::id()));
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
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok((load(data)?, false)),
        Err(error) => Err(io(error)),
    }
}
