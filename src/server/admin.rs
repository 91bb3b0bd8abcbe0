//! The server's local admin socket: backups of the running store.
//!
//! A running server holds its data directory's lock, so nothing else can
//! open the store. It listens on a Unix socket inside that directory
//! (`admin.sock`, mode 0600: whoever may read the data may back it up,
//! nobody else, and nothing of it is reachable over the network).
//! `carcassonne backup` connects, sends `backup`, and reads the backup the
//! server writes while it goes on serving (`carcassonne_store::SledStore::backup`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use carcassonne_store::SledStore;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;

/// The socket's name in the data directory.
pub const SOCKET_NAME: &str = "admin.sock";

/// The one command: write a backup, then close.
pub const BACKUP_COMMAND: &str = "backup";

/// Where the admin socket of a server on `data` is.
pub fn socket_path(data: &Path) -> PathBuf {
    data.join(SOCKET_NAME)
}

/// Listens on the admin socket until `stopping` turns true. A socket that
/// cannot be made is logged, and the server runs without it.
pub(super) fn start(
    store: Arc<SledStore>,
    data: &Path,
    mut stopping: watch::Receiver<bool>,
) -> Option<tokio::task::JoinHandle<()>> {
    let path = socket_path(data);
    // We hold the store's lock: a socket left here is a dead server's.
    let _ = std::fs::remove_file(&path);
    let listener = match bind(&path) {
        Ok(listener) => listener,
        Err(error) => {
            tracing::warn!(%error, path = %path.display(), "no admin socket: backups need the server stopped");
            return None;
        }
    };
    Some(tokio::spawn(async move {
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        tokio::spawn(answer(store.clone(), stream));
                    }
                    Err(error) => tracing::warn!(%error, "admin socket: accept failed"),
                },
                _ = stopping.wait_for(|stopping| *stopping) => break,
            }
        }
        let _ = std::fs::remove_file(&path);
    }))
}

/// Binds the socket inside a new directory only its owner may enter, sets
/// its mode and only then moves it to `path`: bound in place, it would
/// have the umask's mode until changed.
fn bind(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    let private = path.with_file_name(format!(".{SOCKET_NAME}.{}", std::process::id()));
    // A dead server's, like a socket left at `path`.
    let _ = std::fs::remove_dir_all(&private);
    std::fs::DirBuilder::new().mode(0o700).create(&private)?;
    let staged = private.join(SOCKET_NAME);
    let bound = UnixListener::bind(&staged).and_then(|listener| {
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(&staged, path)?;
        Ok(listener)
    });
    let _ = std::fs::remove_dir_all(&private);
    bound
}

async fn answer(store: Arc<SledStore>, stream: UnixStream) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    // One short line; anything longer is not ours.
    let read = (&mut reader).take(64).read_line(&mut line).await;
    let mut stream = reader.into_inner();
    if read.is_err() || line.trim() != BACKUP_COMMAND {
        let _ = stream.write_all(b"unknown command\n").await;
        return;
    }
    let started = std::time::Instant::now();
    let backup = match stream.into_std() {
        Ok(stream) => {
            tokio::task::spawn_blocking(move || {
                stream.set_nonblocking(false)?;
                let mut out = std::io::BufWriter::with_capacity(256 << 10, stream);
                let report = store.backup(&mut out).map_err(std::io::Error::other)?;
                out.flush()?;
                Ok::<_, std::io::Error>(report)
            })
            .await
        }
        Err(error) => Ok(Err(error)),
    };
    match backup {
        Ok(Ok(report)) => tracing::info!(
            position = report.position,
            events = report.events,
            bytes = report.bytes,
            elapsed = ?started.elapsed(),
            "backup written"
        ),
        Ok(Err(error)) => tracing::warn!(%error, "backup failed"),
        Err(error) => tracing::warn!(%error, "backup task failed"),
    }
}
