//! What the server nodes sharing a database keep besides events: secrets
//! they must all use (the key that signs archives) and each node's
//! heartbeat. Neither is an event: they are never in a stream, never
//! listed, never in the global order.
//!
//! Heartbeats are times of the database's clock, written and compared by
//! the database: the nodes' own clocks may be far apart (one that ran an
//! hour ahead would otherwise leave a heartbeat in the future, and look
//! alive for an hour), but a question about liveness ("did another node
//! beat within 3 s?", "how long has the service been down?") is then a
//! difference of two readings of one clock.

use std::time::Duration;

use super::{PgStore, blocking, from_db, pg_error};
use crate::error::Result;

impl PgStore {
    /// The secret named `name`, stored with `make()`'s value if there is
    /// none yet. Of several nodes making one at once, the first insert
    /// wins and every node gets its value.
    pub fn secret_or_insert(&self, name: &str, make: impl FnOnce() -> Vec<u8> + Send) -> Result<Vec<u8>> {
        blocking(|| {
            let mut client = self.shared().client()?;
            if let Some(row) = client
                .query_opt("SELECT value FROM server_secrets WHERE name = $1", &[&name])
                .map_err(pg_error)?
            {
                return Ok(row.get(0));
            }
            let value = make();
            client
                .execute(
                    "INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                    &[&name, &value],
                )
                .map_err(pg_error)?;
            let row = client
                .query_one("SELECT value FROM server_secrets WHERE name = $1", &[&name])
                .map_err(pg_error)?;
            Ok(row.get(0))
        })
    }

    /// The secret named `name`, if one is stored.
    pub fn secret(&self, name: &str) -> Result<Option<Vec<u8>>> {
        blocking(|| {
            let row = self
                .shared()
                .client()?
                .query_opt("SELECT value FROM server_secrets WHERE name = $1", &[&name])
                .map_err(pg_error)?;
            Ok(row.map(|row| row.get(0)))
        })
    }

    /// Records that server node `node` is alive now, by the database's
    /// clock: every node's heartbeat is a time of that one clock, however
    /// far the nodes' own clocks are apart. The last beat wins (no
    /// `GREATEST`): a time written by a clock that has since been set back
    /// would otherwise hold the row in the future.
    pub fn beat(&self, node: &str) -> Result<()> {
        blocking(|| {
            self.shared()
                .client()?
                .execute(
                    "INSERT INTO node_heartbeats (node, alive_at) VALUES ($1, clock_timestamp()) \
                     ON CONFLICT (node) DO UPDATE SET alive_at = EXCLUDED.alive_at",
                    &[&node],
                )
                .map_err(pg_error)?;
            Ok(())
        })
    }

    /// How long ago each node last beat, by the database's clock (a
    /// heartbeat ahead of it, which only a database clock set back can
    /// leave, counts as just now), in node order.
    pub fn heartbeat_ages(&self) -> Result<Vec<(String, Duration)>> {
        blocking(|| {
            let rows = self
                .shared()
                .client()?
                .query(
                    "SELECT node, (extract(epoch FROM clock_timestamp() - alive_at) * 1000)::bigint \
                     FROM node_heartbeats ORDER BY node",
                    &[],
                )
                .map_err(pg_error)?;
            Ok(rows
                .iter()
                .map(|row| {
                    let age = Duration::from_millis(from_db(row.get(1)));
                    (row.get::<_, String>(0), age)
                })
                .collect())
        })
    }

    /// The bytes the store's tables take in the database, indexes and
    /// TOAST included (`pg_total_relation_size`): its disk use, besides
    /// PostgreSQL's write-ahead log.
    pub fn size_on_disk(&self) -> Result<u64> {
        blocking(|| {
            let row = self
                .shared()
                .client()?
                .query_one(
                    "SELECT (pg_total_relation_size('events') + pg_total_relation_size('games') \
                     + pg_total_relation_size('requests') \
                     + pg_total_relation_size('server_secrets') \
                     + pg_total_relation_size('node_heartbeats'))::bigint",
                    &[],
                )
                .map_err(pg_error)?;
            Ok(from_db(row.get(0)))
        })
    }
}
