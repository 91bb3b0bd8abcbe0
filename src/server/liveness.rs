//! When the server was last known to be alive: a heartbeat written to the
//! file `alive` in the data directory, every second and when it stops.
//!
//! After a crash, the next start reads it to tell the games' clocks when
//! the server went down (T-10): the time from then to the restart counts
//! for nobody. The file is a hint, not a record: the resumption event
//! stored in each game carries the time it names. A heartbeat lost in the
//! crash (or no file at all) only makes the downtime look longer, which
//! gives the players time back and never takes any: a seat may gain up to
//! about [`INTERVAL`] per crash, and loses nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use carcassonne_store::Clock;
use tokio::sync::watch;

/// How often the heartbeat is written.
pub const INTERVAL: Duration = Duration::from_secs(1);

const FILE: &str = "alive";

pub struct Liveness {
    path: PathBuf,
    clock: Arc<dyn Clock>,
}

impl Liveness {
    pub fn new(data: &Path, clock: Arc<dyn Clock>) -> Liveness {
        Liveness {
            path: data.join(FILE),
            clock,
        }
    }

    /// The last heartbeat, in ms since the Unix epoch, if there is one.
    pub fn last_alive(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.path).ok()?;
        text.trim().parse().ok()
    }

    /// Writes the clock's time as the last moment the server was alive:
    /// to a new file renamed over the old one, so that a crash leaves the
    /// old heartbeat or the new one, never half of one.
    pub fn beat(&self) -> std::io::Result<()> {
        write(&self.path, self.clock.now_millis())
    }

    /// Beats every [`INTERVAL`] until `stopping`, and once more then.
    pub async fn run(self, mut stopping: watch::Receiver<bool>) {
        let mut failed = false;
        loop {
            let beat = {
                let path = self.path.clone();
                let now = self.clock.now_millis();
                tokio::task::spawn_blocking(move || write(&path, now))
                    .await
                    .unwrap_or_else(|e| Err(std::io::Error::other(e)))
            };
            match beat {
                Err(error) if !failed => {
                    // Once: a full disk would say so every second.
                    tracing::warn!(%error, "the heartbeat could not be written; a restart counts the downtime from the last one");
                    failed = true;
                }
                Err(_) => {}
                Ok(()) => failed = false,
            }
            tokio::select! {
                () = tokio::time::sleep(INTERVAL) => {}
                _ = stopping.wait_for(|stopping| *stopping) => break,
            }
        }
        if let Err(error) = self.beat() {
            tracing::warn!(%error, "the last heartbeat could not be written");
        }
    }
}

fn write(path: &Path, now: u64) -> std::io::Result<()> {
    let fresh = path.with_extension("new");
    std::fs::write(&fresh, format!("{now}\n"))?;
    std::fs::rename(&fresh, path)
}
