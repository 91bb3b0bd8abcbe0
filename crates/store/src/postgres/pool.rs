//! The pool's connections: r2d2_postgres's, checked before use only when
//! they sat idle.
//!
//! Checking a connection costs a round trip, as much as an append's own;
//! checking every one before every use made a lone writer a third slower.
//! A connection returned to the pool less than [`CHECK_AFTER_IDLE`] ago
//! was working then, so it goes out unchecked: if the database went away
//! meanwhile (a restart, a failover), its use fails as the use of a
//! checked connection could have, and the caller hears `Unavailable`.
//! From then on, every connection returned before that failure is checked
//! before it goes out, as is any that sat idle longer: so a database gone
//! away costs one failed call per moment of failure, not one per pooled
//! connection. The moment is the process's (`pg_error` records it): a
//! failure seen by one store makes the others check too, which costs a
//! round trip each and nothing else.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use postgres::NoTls;
use postgres::types::Type;
use r2d2_postgres::PostgresConnectionManager;

/// How long a connection may sit in the pool and still go out unchecked.
const CHECK_AFTER_IDLE: Duration = Duration::from_secs(1);

pub(super) type Pool = r2d2::Pool<Manager>;

/// When a call last found its connection lost.
static LOST_AT: Mutex<Option<Instant>> = Mutex::new(None);

fn lost_at() -> std::sync::MutexGuard<'static, Option<Instant>> {
    LOST_AT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Records that a call found its connection lost, now.
pub(super) fn connection_lost() {
    *lost_at() = Some(Instant::now());
}

pub(super) struct Manager(PostgresConnectionManager<NoTls>);

impl Manager {
    pub(super) fn new(config: postgres::Config) -> Manager {
        Manager(PostgresConnectionManager::new(config, NoTls))
    }
}

/// A pooled connection: the client, when it was last returned and last
/// handed out, and the statements prepared on it.
pub(super) struct Connection {
    client: postgres::Client,
    returned: Instant,
    handed_out: Instant,
    prepared: Vec<(&'static str, postgres::Statement)>,
}

impl Connection {
    /// `sql` prepared with parameters of `types`: on this connection's
    /// first use of it a round trip, then kept as long as the connection.
    pub(super) fn prepared(
        &mut self,
        sql: &'static str,
        types: &[Type],
    ) -> Result<postgres::Statement, postgres::Error> {
        if let Some((_, statement)) = self.prepared.iter().find(|(known, _)| *known == sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare_typed(sql, types)?;
        self.prepared.push((sql, statement.clone()));
        Ok(statement)
    }

    /// Forgets the statements prepared so far: the session may no longer
    /// know them, or they may answer in another shape.
    pub(super) fn forget_prepared(&mut self) {
        self.prepared.clear();
    }
}

impl std::ops::Deref for Connection {
    type Target = postgres::Client;
    fn deref(&self) -> &postgres::Client {
        &self.client
    }
}

impl std::ops::DerefMut for Connection {
    fn deref_mut(&mut self) -> &mut postgres::Client {
        &mut self.client
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Connection, postgres::Error> {
        Ok(Connection {
            client: self.0.connect()?,
            returned: Instant::now(),
            handed_out: Instant::now(),
            prepared: Vec::new(),
        })
    }

    /// Called as a connection is handed out.
    fn is_valid(&self, connection: &mut Connection) -> Result<(), postgres::Error> {
        connection.handed_out = Instant::now();
        let returned = connection.returned;
        let after_a_failure = lost_at().is_some_and(|lost| lost >= returned);
        if returned.elapsed() < CHECK_AFTER_IDLE && !after_a_failure {
            return Ok(());
        }
        self.0.is_valid(&mut connection.client)
    }

    /// Called as a connection goes back to the pool: one that may have
    /// been the one lost (a loss was recorded while it was out) is dropped,
    /// even if the driver has not noticed the socket closed yet.
    fn has_broken(&self, connection: &mut Connection) -> bool {
        connection.returned = Instant::now();
        let handed_out = connection.handed_out;
        lost_at().is_some_and(|lost| lost >= handed_out) || self.0.has_broken(&mut connection.client)
    }
}
