//! What the server nodes sharing a database keep besides events: secrets
//! they must all use (the key that signs archives) and each node's
//! heartbeat. Neither is an event: they are never in a stream, never
//! listed, never in the global order.

use super::{PgStore, blocking, from_db, pg_error, to_db};
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

    /// Records that server node `node` was alive at `millis` (ms since the
    /// Unix epoch); never moves a node's heartbeat back.
    pub fn beat(&self, node: &str, millis: u64) -> Result<()> {
        blocking(|| {
            self.shared()
                .client()?
                .execute(
                    "INSERT INTO node_heartbeats (node, alive_millis) VALUES ($1, $2) \
                     ON CONFLICT (node) DO UPDATE SET alive_millis = \
                     GREATEST(node_heartbeats.alive_millis, EXCLUDED.alive_millis)",
                    &[&node, &to_db(millis)],
                )
                .map_err(pg_error)?;
            Ok(())
        })
    }

    /// Every node's last heartbeat, in ms since the Unix epoch.
    pub fn heartbeats(&self) -> Result<Vec<(String, u64)>> {
        blocking(|| {
            let rows = self
                .shared()
                .client()?
                .query(
                    "SELECT node, alive_millis FROM node_heartbeats ORDER BY node",
                    &[],
                )
                .map_err(pg_error)?;
            Ok(rows
                .iter()
                .map(|row| (row.get::<_, String>(0), from_db(row.get(1))))
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
