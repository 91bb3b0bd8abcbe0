//! When the server was last known to be alive: a heartbeat written every
//! second and when it stops. With the sled store it is the file `alive`
//! in the data directory; with PostgreSQL, each node's row of the table
//! `node_heartbeats`, which every node sharing the database reads.
//!
//! After a crash, the next start reads it to tell the games' clocks when
//! the server went down (T-10): the time from then to the restart counts
//! for nobody. The heartbeat is a hint, not a record: the resumption event
//! stored in each game carries the time it names. A heartbeat lost in the
//! crash (or none at all) only makes the downtime look longer, which
//! gives the players time back and never takes any: a seat may gain up to
//! about [`INTERVAL`] per crash, and loses nothing.
//!
//! Several nodes on one database: the service was down only if every node
//! was. A node that starts while another one beats ([`Liveness::others_alive`])
//! stores no resumption (the games' clocks ran on, served by the others);
//! otherwise the downtime counts from the last heartbeat of any node. Both
//! are judged by the database's clock alone, whatever the nodes' clocks
//! say (see [`Liveness::last_alive`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use carcassonne_store::{Clock, PgStore};
use tokio::sync::watch;

/// How often the heartbeat is written.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// A node whose heartbeat is at most this old is taken to be running.
const ALIVE_WITHIN: Duration = Duration::from_secs(3);

const FILE: &str = "alive";

enum Place {
    File(PathBuf),
    Database { store: Arc<PgStore>, node: String },
}

pub struct Liveness {
    place: Place,
    clock: Arc<dyn Clock>,
}

impl Liveness {
    /// The heartbeat file of the data directory `data`.
    pub fn new(data: &Path, clock: Arc<dyn Clock>) -> Liveness {
        Liveness {
            place: Place::File(data.join(FILE)),
            clock,
        }
    }

    /// The heartbeat of node `node` in a PostgreSQL store.
    pub fn in_database(store: Arc<PgStore>, node: String, clock: Arc<dyn Clock>) -> Liveness {
        Liveness {
            place: Place::Database { store, node },
            clock,
        }
    }

    /// When the service was last known alive (the last heartbeat of any
    /// node), in ms since the Unix epoch by this node's clock (the store's,
    /// which stamps the resumptions it is written into), if known.
    ///
    /// On a database the heartbeats are the database's clock's: how long
    /// ago the last one was is a difference of two readings of that clock,
    /// and the service went down that long before this node's now, read
    /// before the database is asked (so the answer can only come out
    /// early: the downtime longer, the players given time, never charged).
    /// The nodes' clocks, which may be far apart, never meet: a node whose
    /// clock ran ahead leaves no heartbeat in the future. The resumption
    /// then counts the downtime from this time or the game's last event,
    /// whichever is later (the events' times are their writers' clocks).
    pub fn last_alive(&self) -> Option<u64> {
        match &self.place {
            Place::File(path) => {
                let text = std::fs::read_to_string(path).ok()?;
                text.trim().parse().ok()
            }
            Place::Database { store, .. } => {
                let now = self.clock.now_millis();
                match store.heartbeat_ages() {
                    Ok(ages) => {
                        let youngest = ages.into_iter().map(|(_, age)| age).min()?;
                        Some(now.saturating_sub(youngest.as_millis() as u64))
                    }
                    Err(error) => {
                        tracing::warn!(%error, "the nodes' heartbeats could not be read");
                        None
                    }
                }
            }
        }
    }

    /// Whether another node on the same database beat within the last few
    /// seconds (by the database's clock): the service ran while this node
    /// was down.
    pub fn others_alive(&self) -> bool {
        let Place::Database { store, node } = &self.place else {
            return false;
        };
        store.heartbeat_ages().is_ok_and(|ages| {
            ages.iter()
                .any(|(other, age)| other != node && *age <= ALIVE_WITHIN)
        })
    }

    /// Writes the clock's time as the last moment the server was alive:
    /// to a new file renamed over the old one, so that a crash leaves the
    /// old heartbeat or the new one, never half of one; or the database's
    /// time to the node's row.
    pub fn beat(&self) -> std::io::Result<()> {
        match &self.place {
            Place::File(path) => {
                let fresh = path.with_extension("new");
                std::fs::write(&fresh, format!("{}\n", self.clock.now_millis()))?;
                std::fs::rename(&fresh, path)
            }
            Place::Database { store, node } => store.beat(node).map_err(std::io::Error::other),
        }
    }

    /// Beats every [`INTERVAL`] until `stopping`, and once more then.
    pub async fn run(self, mut stopping: watch::Receiver<bool>) {
        let this = Arc::new(self);
        let mut failed = false;
        loop {
            let beat = {
                let this = this.clone();
                tokio::task::spawn_blocking(move || this.beat())
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
        if let Err(error) = this.beat() {
            tracing::warn!(%error, "the last heartbeat could not be written");
        }
    }
}
