//! The PostgreSQL backend: the same envelopes, chains and rules as the
//! sled store, in tables that many server nodes share.
//!
//! # Schema (`schema.rs`, versioned migrations applied at open)
//!
//! - `events (global_position PRIMARY KEY, game, seq, envelope)`, unique on
//!   `(game, seq)`: one row per event; `envelope` holds the very bytes
//!   `envelope.rs` encodes (hash chain included), so an envelope verifies
//!   here exactly as in sled or in memory, and copying envelopes between
//!   backends keeps them verifying.
//! - `games (game PRIMARY KEY, last_seq, last_hash, created_millis)`: the
//!   head of each game's chain. An append locks its game's row
//!   (`SELECT … FOR UPDATE`; a new game's row is inserted with `ON CONFLICT
//!   DO NOTHING` first, so two creators meet on it), checks the expected
//!   sequence number against it, and moves it on.
//! - `requests (game, request_id) PRIMARY KEY` with the append's result:
//!   a request id is answered with the first append for as long as the
//!   game exists (no time limit). It is looked up after the game's row is
//!   locked, so a retry racing its original waits for it and returns it.
//! - `event_positions`: the sequence global positions are taken from,
//!   with the functions `take_positions(n)` and `safe_position()` (below).
//! - `server_secrets (name PRIMARY KEY, value)`: what every server node on
//!   the database must share and nobody else may read: the key that signs
//!   archives (`PgStore::secret_or_insert`). Not events: never in a stream.
//! - `node_heartbeats (node PRIMARY KEY, alive_at)`: when each server
//!   node was last alive, by the database's clock (`PgStore::beat`), so
//!   that a node starting knows whether the others ran while it was down,
//!   and since when the service was down (`PgStore::heartbeat_ages`).
//!
//! # How global positions are made safe to read
//!
//! A catch-up reader (`read_all` from the last position it saw) would skip
//! an event for good if it read a position while a smaller one's
//! transaction was still open: that event commits later, behind the
//! reader. Handing positions out in commit order would prevent it, but
//! then every append in the database waits for the one before it to
//! commit: one WAL flush at a time, store-wide. Instead, appends commit in
//! any order, and readers read only up to a *safe position*:
//!
//! - An append takes its positions as its last step before inserting its
//!   events, with `take_positions(n)`: under a short allocation lock (an
//!   advisory lock held for that call only, never until the commit, and
//!   released by the call's exception handler whatever fails in it,
//!   cancellation included: schema V6) it
//!   takes `n` consecutive numbers from the sequence `event_positions` and
//!   a transaction-level advisory lock on minus its first position, which
//!   PostgreSQL releases when the transaction commits or rolls back, after
//!   the commit is visible.
//! - `safe_position()` reads the last allocated position under the same
//!   allocation lock (so every number up to it has its position lock, or
//!   its transaction has ended), then the smallest position lock still
//!   held (`pg_locks`), and returns the position just below it, or the last
//!   allocated one when none is held. Every position up to it is committed
//!   or never will be.
//! - A reader calls `safe_position()` first, then reads events up to it in
//!   a later statement, whose snapshot therefore sees every one of them.
//!   `read_all`, the follower that feeds subscriptions and `verify_all` all
//!   read this way.
//!
//! So appends to different games share only the allocation lock, for the
//! time of one function call, and PostgreSQL's group commit flushes their
//! commits together; appends that arrive while others are being written
//! even share a transaction (`batch.rs`). A reader waits, at worst, for the slowest transaction
//! that took a smaller position. The price is gaps: an append that fails
//! after taking its positions (a lost connection, a failed commit) leaves
//! its numbers unused, and a crash or failover can skip a few (sequences
//! are logged ahead). Positions only ever increase; a game's events still
//! have sequence numbers 1, 2, 3, … without gaps, and its hash chain, not
//! the global index, shows an event missing.
//!
//! # Calling it
//!
//! The driver is the synchronous `postgres` crate, which runs a small
//! runtime of its own per connection and would panic if it blocked on an
//! async runtime's worker thread. Every call that reaches the database
//! therefore goes through `blocking`: directly on a plain thread (or in
//! `spawn_blocking`, where it belongs), in `block_in_place` on a
//! multi-threaded runtime's worker, on a thread of its own on a
//! current-thread runtime. `last_position`, `subscribe_game` and
//! `subscribe_all` never touch the database.
//!
//! # Subscriptions across nodes
//!
//! Once appends commit, the store's notifier thread sends `NOTIFY
//! carcassonne_events, '<last position this node committed>'`, one for all
//! the appends committed since its last and at most one every 5 ms
//! (`NOTIFY_GAP`: each wakes every node), in a transaction of its own
//! (committing a transaction that notifies holds a database-wide lock
//! until its commit is flushed: inside the append it would serialise all
//! appends; alone, with `synchronous_commit` off for it, it flushes
//! nothing). PostgreSQL delivers it to every node. Each store runs a
//! follower thread with its own connection that `LISTEN`s, and on a
//! notification (or every 250 ms, in case one was missed across a
//! reconnect, or a position was left unused) reads from the last position
//! it published up to the safe position and publishes into the broadcast
//! hub; no read is needed while the cursor is past every position
//! notified so far (a node's own appends are usually published from
//! memory before their notification arrives). Publishing is one
//! mutex-guarded cursor: events go out strictly by position, each once. A
//! local append also runs the cursor before it returns, so its own
//! subscribers have its events as soon as it is acknowledged, unless an
//! older transaction still holds a smaller position: then they follow when
//! that one ends (its commit notifies).
//!
//! # Durability and acknowledgement
//!
//! An append returns only once its transaction committed, so the
//! [`Written`] it returns is already durable. Opening refuses a server or
//! session with `fsync=off` or `synchronous_commit=off` unless the store's
//! [`Durability`](crate::Durability) is not
//! [`Durability::Flush`](crate::Durability::Flush). A commit whose answer was
//! lost (the connection dropped) is reported as
//! [`StoreError::Unavailable`]; retrying with the same request id returns
//! the first append if it did commit.
//!
//! # Connections
//!
//! `url` is a libpq-style connection string or URL; several hosts may be
//! named (`host=a,b`): connections always ask for a writable session
//! (`target_session_attrs=read-write`), so after a failover new
//! connections find the new primary. A pool (r2d2) checks a connection
//! that sat idle before handing it out, and drops broken ones (`pool.rs`).

mod append;
mod batch;
mod import;
mod pool;
mod schema;
mod server_state;
#[cfg(test)]
mod tests;

pub use import::ImportReport;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::config::TargetSessionAttrs;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::Type;
use postgres::{Config, NoTls};

use crate::chain::{self, ChainCheck, Head};
use crate::clock::Clock;
use crate::config::StoreConfig;
use crate::error::{Result, StoreError};
use crate::event::{Appended, GamePage, GameSummary, NewEvent, StoredEvent, VerifyReport};
use crate::hub::{EventReceiver, Hub};
use crate::ids::{GameId, RequestId};
use crate::store::{self, EventStore, MAX_READ_LIMIT};
use crate::written::Written;

/// The channel appends notify and followers listen on.
const CHANNEL: &str = "carcassonne_events";

/// How often the follower reads new events without a notification.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(250);

/// The least time between two of a node's notifications. Each one costs
/// the database a transaction and every node a wake-up of a backend and
/// of its follower: one per append made a lone writer's appends a sixth
/// slower (`benches/postgres.rs`). Coalesced, a notification follows the
/// first commit after a quiet spell at once, and under a steady stream of
/// appends at most this much after a commit it announces.
const NOTIFY_GAP: Duration = Duration::from_millis(5);

/// The publishing cursor: the last position published to the hub, and
/// this node's committed appends waiting for the positions before them,
/// by first position.
struct Cursor {
    last: u64,
    waiting: BTreeMap<u64, Vec<StoredEvent>>,
}

/// The most of this node's appends that wait in memory for smaller
/// positions to be published.
const MAX_WAITING_APPENDS: usize = 4096;

/// An [`EventStore`] in a PostgreSQL database, shared by any number of
/// server nodes. See the module documentation for the schema and how the
/// global order is kept.
pub struct PgStore {
    /// Always there but in `drop`, which hands it to a plain thread.
    shared: Option<Arc<Shared>>,
    /// The notifier and the follower.
    threads: Vec<JoinHandle<()>>,
}

struct Shared {
    pool: pool::Pool,
    clock: Arc<dyn Clock>,
    hub: Hub,
    /// The one publishing cursor.
    published: Mutex<Cursor>,
    /// Where appends wait to be written together.
    batcher: batch::Batcher,
    /// Asks the notifier thread to notify the other nodes; holds at most
    /// one request, which covers every append committed before it is taken.
    notify: SyncSender<()>,
    /// The same, readable without the lock.
    last_published: AtomicU64,
    /// The last position of this node's appends committed so far: what
    /// the notifier's next notification announces.
    last_committed: AtomicU64,
    stop: AtomicBool,
}

pub(crate) fn pg_error(error: postgres::Error) -> StoreError {
    let connection_lost = error.is_closed()
        || error.as_db_error().is_none()
        || error.code().is_some_and(|code| {
            let code = code.code();
            // Connection exceptions, an administrator's shutdown, a
            // read-only (former primary) session after a failover.
            code.starts_with("08") || code.starts_with("57P") || code == "25006"
        });
    if connection_lost {
        pool::connection_lost();
        StoreError::Unavailable(format!("PostgreSQL: {error}"))
    } else {
        StoreError::Io(std::io::Error::other(format!("PostgreSQL: {error}")))
    }
}

fn to_db(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn from_db(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

impl PgStore {
    /// Connects to the database at `url` (a libpq connection string or URL,
    /// several hosts allowed), applies the schema's migrations, checks the
    /// server's durability settings and starts following other nodes'
    /// appends. Only `config.durability`, `config.clock`,
    /// `config.subscription_capacity` and `config.postgres_connections`
    /// apply here.
    pub fn open(url: &str, config: StoreConfig) -> Result<PgStore> {
        blocking(|| PgStore::open_here(url, config))
    }

    fn open_here(url: &str, config: StoreConfig) -> Result<PgStore> {
        let mut pg_config: Config = url
            .parse()
            .map_err(|error| StoreError::InvalidArgument(format!("bad PostgreSQL address: {error}")))?;
        pg_config.target_session_attrs(TargetSessionAttrs::ReadWrite);
        if pg_config.get_connect_timeout().is_none() {
            pg_config.connect_timeout(Duration::from_secs(10));
        }
        let mut client = pg_config.connect(NoTls).map_err(pg_error)?;
        schema::migrate(&mut client)?;
        schema::check_durability(&mut client, config.durability)?;
        let start = safe_position(&mut client)?;
        drop(client);
        let manager = pool::Manager::new(pg_config.clone());
        let pool = r2d2::Pool::builder()
            .max_size(config.postgres_connections.max(1))
            .min_idle(Some(1))
            .connection_timeout(Duration::from_secs(10))
            .build(manager)
            .map_err(|error| StoreError::Unavailable(format!("PostgreSQL pool: {error}")))?;
        let (notify, requests) = sync_channel(1);
        let shared = Arc::new(Shared {
            pool,
            clock: config.clock.clone(),
            hub: Hub::new(config.subscription_capacity),
            batcher: batch::Batcher::new((config.postgres_connections as usize / 8).max(2)),
            published: Mutex::new(Cursor {
                last: start,
                waiting: BTreeMap::new(),
            }),
            notify,
            last_published: AtomicU64::new(start),
            last_committed: AtomicU64::new(start),
            stop: AtomicBool::new(false),
        });
        let notifier = {
            let (shared, pg_config) = (Arc::clone(&shared), pg_config.clone());
            std::thread::Builder::new()
                .name("pg-notifier".into())
                .spawn(move || notify_other_nodes(&shared, &pg_config, &requests))?
        };
        let follower = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("pg-follower".into())
                .spawn(move || follow(&shared, &pg_config))?
        };
        Ok(PgStore {
            shared: Some(shared),
            threads: vec![notifier, follower],
        })
    }
}

impl PgStore {
    fn shared(&self) -> &Shared {
        self.shared
            .as_ref()
            .expect("the store's state is gone only in drop")
    }
}

/// Runs `f`, which calls the synchronous driver, where it may block: here
/// on a plain thread (or in `spawn_blocking`), in `block_in_place` on a
/// multi-threaded runtime's worker, and on a thread of its own on a
/// current-thread runtime (the driver's own `block_on` would panic there).
fn blocking<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Err(_) => f(),
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        Ok(_) => std::thread::scope(|scope| match scope.spawn(f).join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }),
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        let Some(shared) = self.shared.take() else { return };
        shared.stop.store(true, Ordering::SeqCst);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
        // Closing the pool's connections blocks in the driver.
        blocking(move || drop(shared));
    }
}

/// The notifier thread: tells every node's follower (this one's too) that
/// events were committed, one notification for all the appends committed
/// since the last, and none sooner than [`NOTIFY_GAP`] after the last.
/// Not in the appends' transactions: committing a transaction that
/// notifies takes a database-wide lock until its commit is flushed, which
/// would put every append in line behind one another.
/// Its own transactions need no flush (a lost notification only delays
/// the followers until they poll).
fn notify_other_nodes(shared: &Shared, config: &Config, requests: &Receiver<()>) {
    let mut client = None;
    let mut last_sent: Option<Instant> = None;
    while !shared.stop.load(Ordering::SeqCst) {
        match requests.recv_timeout(FOLLOW_INTERVAL) {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if let Some(sent_at) = last_sent {
            // The commits of the gap, announced together.
            std::thread::sleep(NOTIFY_GAP.saturating_sub(sent_at.elapsed()));
        }
        if client.as_ref().is_none_or(postgres::Client::is_closed) {
            client = config.connect(NoTls).ok();
        }
        let committed = shared.last_committed.load(Ordering::SeqCst);
        let sent = client.as_mut().map(|connected| {
            connected.batch_execute(&format!(
                "BEGIN; SET LOCAL synchronous_commit = off; NOTIFY {CHANNEL}, '{committed}'; COMMIT"
            ))
        });
        match sent {
            Some(Ok(())) => last_sent = Some(Instant::now()),
            // A session that can no longer notify (a former primary, now a
            // standby, refuses): the next request connects again.
            Some(Err(_)) => client = None,
            None => {}
        }
    }
}

/// The follower thread: LISTEN, and publish what other nodes committed.
fn follow(shared: &Shared, config: &Config) {
    // The highest position a notification announced, this node's or
    // another's.
    let mut heard = 0;
    let mut reported = Reported::default();
    while !shared.stop.load(Ordering::SeqCst) {
        let mut client = match config.connect(NoTls) {
            Ok(client) => client,
            Err(_) => {
                std::thread::sleep(FOLLOW_INTERVAL);
                continue;
            }
        };
        if client.batch_execute(&format!("LISTEN {CHANNEL}")).is_err() {
            std::thread::sleep(FOLLOW_INTERVAL);
            continue;
        }
        // What was committed before the LISTEN took effect.
        reported.report(shared.catch_up(&mut client));
        let mut caught_up = Instant::now();
        while !shared.stop.load(Ordering::SeqCst) && !client.is_closed() {
            let mut news = false;
            {
                let mut notifications = client.notifications();
                match notifications.timeout_iter(FOLLOW_INTERVAL).next() {
                    Err(_) => break,
                    Ok(None) => news = true,
                    Ok(Some(first)) => news |= shared.is_news(&first, &mut heard),
                }
                // Drain what else arrived: one read serves them all.
                let mut pending = notifications.iter();
                while let Ok(Some(notification)) = pending.next() {
                    news |= shared.is_news(&notification, &mut heard);
                }
            }
            if news || caught_up.elapsed() >= FOLLOW_INTERVAL {
                reported.report(shared.catch_up(&mut client));
                caught_up = Instant::now();
            }
        }
    }
}

/// The follower's failures, logged: each new one at once, one that goes on
/// once every [`REPORT_AGAIN`], and the recovery. While the follower
/// cannot read, no node's events reach this node's subscribers.
#[derive(Default)]
struct Reported {
    last: Option<(String, Instant)>,
}

/// How often a failure that goes on is logged again.
const REPORT_AGAIN: Duration = Duration::from_secs(60);

impl Reported {
    fn report(&mut self, read: Result<()>) {
        match read {
            Ok(()) => {
                if self.last.take().is_some() {
                    tracing::info!("the PostgreSQL follower reads again");
                }
            }
            Err(error) => {
                let detail = error.to_string();
                let again = match &self.last {
                    Some((last, at)) => *last != detail || at.elapsed() >= REPORT_AGAIN,
                    None => true,
                };
                if !again {
                    return;
                }
                if matches!(error, StoreError::Unavailable(_)) {
                    tracing::warn!(error = %detail, "the PostgreSQL follower cannot read; subscribers wait");
                } else {
                    tracing::error!(error = %detail, "the PostgreSQL follower cannot read past an event; subscribers wait");
                }
                self.last = Some((detail, Instant::now()));
            }
        }
    }
}

impl Shared {
    /// Whether events may wait to be read after `notification`: while
    /// any notification so far (`heard`, the highest announced) named a
    /// position past the last one published. A node's notification names
    /// its last commit, so once the cursor has passed it, that node's
    /// commits up to it are published: this node's own usually are, from
    /// memory, when its notification arrives. Not just this
    /// notification's position: an earlier one's events may still be
    /// waiting, held back by an older transaction this one ended. A
    /// payload that is no position is news. A read every
    /// [`FOLLOW_INTERVAL`] catches what no notification announces
    /// (positions left unused).
    fn is_news(&self, notification: &postgres::Notification, heard: &mut u64) -> bool {
        match notification.payload().parse::<u64>() {
            Ok(announced) => *heard = (*heard).max(announced),
            Err(_) => return true,
        }
        *heard > self.last_published.load(Ordering::SeqCst)
    }

    fn client(&self) -> Result<r2d2::PooledConnection<pool::Manager>> {
        self.pool
            .get()
            .map_err(|error| StoreError::Unavailable(format!("PostgreSQL pool: {error}")))
    }

    /// The follower's read, the only one that publishes from the database:
    /// every event committed after the cursor up to the safe position, read
    /// without holding the cursor (appends publish meanwhile), then
    /// published from where the cursor is by then.
    fn catch_up(&self, client: &mut impl postgres::GenericClient) -> Result<()> {
        let safe = safe_position(client)?;
        loop {
            let from = self.last_published.load(Ordering::SeqCst) + 1;
            if from > safe {
                return Ok(());
            }
            let events = read_range(client, from, safe, 1000)?;
            // Past the last event read, or, with none left, up to `safe`:
            // the positions in between were never committed (gaps).
            let reached = match events.last() {
                Some(last) if events.len() == 1000 => last.position,
                _ => safe,
            };
            self.advance(events, reached);
        }
    }

    /// Publishes `events`, all those committed up to `reached` from some
    /// position at or below the cursor on, except those the cursor passed.
    fn advance(&self, events: Vec<StoredEvent>, reached: u64) {
        let mut cursor = self.published.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh: Vec<Arc<StoredEvent>> = events
            .into_iter()
            .filter(|event| event.position > cursor.last)
            .map(Arc::new)
            .collect();
        if !fresh.is_empty() {
            self.hub.publish(fresh);
        }
        if reached > cursor.last {
            cursor.last = reached;
            // This node's appends the follower just read: published.
            cursor.waiting = cursor.waiting.split_off(&(reached + 1));
        }
        self.publish_waiting(&mut cursor);
    }

    /// Publishes this node's appends that wait for the cursor, as long as
    /// the next one begins just after it.
    fn publish_waiting(&self, cursor: &mut Cursor) {
        while let Some(events) = cursor.waiting.remove(&(cursor.last + 1)) {
            if let Some(last) = events.last() {
                cursor.last = last.position;
            }
            self.hub
                .publish(events.into_iter().map(Arc::new).collect::<Vec<_>>());
        }
        self.last_published.store(cursor.last, Ordering::SeqCst);
    }

    /// After an append through this node committed: when every position
    /// before it is published, its events are published at once, from
    /// memory, so that this node's subscribers have them before the caller
    /// hears of it. Otherwise they wait in memory for the smaller
    /// positions: published as soon as those are, by another of this
    /// node's appends (the usual case: the smaller positions are this
    /// node's own appends still committing) or by the follower, which
    /// reads them from the database if it gets there first. Waiting for
    /// that here would hold the append back for other games' transactions.
    fn publish_own(&self, events: Vec<StoredEvent>) {
        let Some(first) = events.first().map(|event| event.position) else {
            return;
        };
        let mut cursor = self.published.lock().unwrap_or_else(PoisonError::into_inner);
        if first <= cursor.last {
            return;
        }
        // Bounded: what does not fit, the follower publishes.
        if cursor.waiting.len() < MAX_WAITING_APPENDS {
            cursor.waiting.insert(first, events);
        }
        self.publish_waiting(&mut cursor);
    }

    /// Up to `limit` events from `from_position` on that are safe to read:
    /// none is behind a position whose transaction is still open.
    fn read_all(&self, from_position: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let mut client = self.client()?;
        let safe = safe_position(&mut **client)?;
        read_range(&mut **client, from_position, safe, limit)
    }

    fn read_stream(&self, game: &GameId, from_seq: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let from_seq = from_seq.max(1);
        let mut client = self.client()?;
        let exists = client
            .query_opt("SELECT 1 FROM games WHERE game = $1", &[&game.as_str()])
            .map_err(pg_error)?
            .is_some();
        if !exists {
            return Err(StoreError::NotFound(game.to_string()));
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows = client
            .query(
                "SELECT seq, envelope FROM events WHERE game = $1 AND seq >= $2 \
                 ORDER BY seq LIMIT $3",
                &[&game.as_str(), &to_db(from_seq), &to_db(limit as u64)],
            )
            .map_err(pg_error)?;
        let mut check = ChainCheck::new(game.as_str(), from_seq);
        rows.iter()
            .map(|row| check.next(from_db(row.get(0)), row.get(1)))
            .collect()
    }

    fn append(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<(Appended, Vec<StoredEvent>)> {
        let append = batch::Append {
            game: game.clone(),
            expected_seq,
            request_id: request_id.clone(),
            time_millis,
            events: events.to_vec(),
        };
        self.batcher.append(append, |appends| self.write_batch(appends))
    }

    /// Writes a batch (see `batch.rs`): each append's outcome, in order.
    fn write_batch(&self, appends: &[&batch::Append]) -> Vec<batch::Outcome> {
        match self.try_batch(appends) {
            Ok(outcomes) => outcomes,
            // The commit's outcome is unknown, for all of them alike.
            Err(StoreError::Unavailable(detail)) => appends
                .iter()
                .map(|_| Err(StoreError::Unavailable(detail.clone())))
                .collect(),
            // Refused by the database: one by one, so that only the
            // append at fault fails.
            Err(_) if appends.len() > 1 => appends
                .iter()
                .map(|&append| {
                    self.try_batch(&[append]).and_then(|mut outcomes| {
                        outcomes.pop().unwrap_or_else(|| {
                            Err(StoreError::Io(std::io::Error::other(
                                "PostgreSQL: an append without an outcome",
                            )))
                        })
                    })
                })
                .collect(),
            Err(error) => vec![Err(error)],
        }
    }

    /// One transaction for `appends`, in one round trip (`append.rs`).
    fn try_batch(&self, appends: &[&batch::Append]) -> Result<Vec<batch::Outcome>> {
        let mut client = self.client()?;
        let answers = append::write(&mut client, appends).map_err(|error| match error {
            StoreError::Unavailable(detail) => StoreError::Unavailable(format!(
                "{detail} (the commit's outcome is unknown: retry with the same request id)"
            )),
            other => other,
        })?;
        drop(client);
        // Committed: from here on, an error is one append's.
        let outcomes: Vec<batch::Outcome> = appends
            .iter()
            .zip(answers)
            .map(|(append, answer)| outcome(append, answer))
            .collect();
        let committed = outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                Ok((_, events)) => events.last().map(|event| event.position),
                Err(_) => None,
            })
            .max();
        if let Some(last) = committed {
            self.last_committed.fetch_max(last, Ordering::SeqCst);
            // A request already waiting covers this commit too.
            let _ = self.notify.try_send(());
        }
        Ok(outcomes)
    }
}

/// What `append_events` answered for `a`: the first outcome of a repeated
/// request id, a conflict, or the events it wrote, encoded here again from
/// the head and positions it names. The hash the database computed must
/// be the one encoded here: it would differ only if the database's
/// chaining went wrong, which the envelopes it stored would then show.
fn outcome(a: &batch::Append, answer: Result<append::Answer>) -> batch::Outcome {
    let (head_hash, first_position, last_hash) = match answer? {
        append::Answer::Repeat(original) => return Ok((original, Vec::new())),
        append::Answer::Conflict { actual } => {
            return Err(StoreError::Conflict {
                game: a.game.to_string(),
                expected: a.expected_seq,
                actual,
            });
        }
        append::Answer::Written {
            head_hash,
            first_position,
            last_hash,
        } => (head_hash, first_position, last_hash),
    };
    let head = Head {
        last_seq: a.expected_seq,
        last_hash: head_hash,
    };
    let built = chain::build(
        &a.game,
        &a.request_id,
        head,
        first_position,
        a.time_millis,
        &a.events,
    );
    let events: Vec<StoredEvent> = built.into_iter().map(|(event, _)| event).collect();
    let ours = events.last().map_or(head.last_hash, |event| event.hash);
    let count = a.events.len() as u64;
    if ours != last_hash {
        return Err(StoreError::corrupt(
            a.game.as_str(),
            a.expected_seq + count,
            "the database chained the append's envelopes to another hash than the store's",
        ));
    }
    Ok((
        Appended {
            first_seq: a.expected_seq + 1,
            last_seq: a.expected_seq + count,
            first_position,
            last_position: first_position + count - 1,
            time_millis: a.time_millis,
        },
        events,
    ))
}

/// Up to `limit` events with positions from `from_position` to `to_position`.
fn read_range(
    client: &mut impl postgres::GenericClient,
    from_position: u64,
    to_position: u64,
    limit: usize,
) -> Result<Vec<StoredEvent>> {
    let from = from_position.max(1);
    let limit = limit.min(MAX_READ_LIMIT);
    if limit == 0 || from > to_position {
        return Ok(Vec::new());
    }
    let rows = client
        .query_typed(
            "SELECT global_position, game, seq, envelope FROM events \
             WHERE global_position >= $1 AND global_position <= $2 \
             ORDER BY global_position LIMIT $3",
            &[
                (&to_db(from), Type::INT8),
                (&to_db(to_position), Type::INT8),
                (&to_db(limit as u64), Type::INT8),
            ],
        )
        .map_err(pg_error)?;
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        let position = from_db(row.get(0));
        let game: &str = row.get(1);
        let seq = from_db(row.get(2));
        let bytes: &[u8] = row.get(3);
        let event = ChainCheck::new(game, seq).next(seq, bytes)?;
        if event.position != position {
            return Err(StoreError::CorruptIndex {
                position,
                detail: format!("holds the envelope of position {}", event.position),
            });
        }
        events.push(event);
    }
    Ok(events)
}

/// See `safe_position` in the schema: every position up to it is
/// committed (or never will be), so a read that starts after this call
/// sees all of them.
fn safe_position(client: &mut impl postgres::GenericClient) -> Result<u64> {
    let safe: i64 = client
        .query_typed_one("SELECT safe_position()", &[])
        .map_err(pg_error)?
        .get(0);
    Ok(from_db(safe))
}

fn find_request(
    client: &mut impl postgres::GenericClient,
    game: &GameId,
    request_id: &RequestId,
) -> Result<Option<Appended>> {
    let row = client
        .query_opt(
            "SELECT first_seq, last_seq, first_position, last_position, time_millis \
             FROM requests WHERE game = $1 AND request_id = $2",
            &[&game.as_str(), &request_id.as_str()],
        )
        .map_err(pg_error)?;
    Ok(row.map(|row| Appended {
        first_seq: from_db(row.get(0)),
        last_seq: from_db(row.get(1)),
        first_position: from_db(row.get(2)),
        last_position: from_db(row.get(3)),
        time_millis: from_db(row.get(4)),
    }))
}

fn summary(game: GameId, row: &postgres::Row) -> GameSummary {
    GameSummary {
        game,
        last_seq: from_db(row.get("last_seq")),
        created_millis: from_db(row.get("created_millis")),
    }
}

impl EventStore for PgStore {
    fn now_millis(&self) -> u64 {
        self.shared().clock.now_millis()
    }

    fn write_at(
        &self,
        game: &GameId,
        expected_seq: u64,
        request_id: &RequestId,
        time_millis: u64,
        events: &[NewEvent],
    ) -> Result<Written> {
        blocking(|| {
            chain::check_batch(game, request_id, events)?;
            let (appended, events) =
                self.shared()
                    .append(game, expected_seq, request_id, time_millis, events)?;
            self.shared().publish_own(events);
            Ok(Written::durable(appended))
        })
    }

    fn find_request(&self, game: &GameId, request_id: &RequestId) -> Result<Option<Written>> {
        blocking(|| {
            if request_id.is_none() {
                return Ok(None);
            }
            let mut client = self.shared().client()?;
            Ok(find_request(&mut **client, game, request_id)?.map(Written::durable))
        })
    }

    fn read_game(&self, game: &GameId, from_seq: u64) -> Result<Vec<StoredEvent>> {
        blocking(|| self.shared().read_stream(game, from_seq, usize::MAX))
    }

    fn read_game_chunk(&self, game: &GameId, from_seq: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        blocking(|| self.shared().read_stream(game, from_seq, limit))
    }

    fn read_all(&self, from_position: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        blocking(|| self.shared().read_all(from_position, limit))
    }

    fn game(&self, game: &GameId) -> Result<Option<GameSummary>> {
        blocking(|| {
            let row = self
                .shared()
                .client()?
                .query_opt(
                    "SELECT last_seq, created_millis FROM games WHERE game = $1",
                    &[&game.as_str()],
                )
                .map_err(pg_error)?;
            Ok(row.map(|row| summary(game.clone(), &row)))
        })
    }

    fn list_games(&self, page_token: Option<&str>, page_size: usize) -> Result<GamePage> {
        blocking(|| {
            let after = page_token.map(store::parse_page_token).transpose()?;
            let page_size = store::clamp_page_size(page_size);
            let rows = self
                .shared()
                .client()?
                .query(
                    "SELECT game, last_seq, created_millis FROM games \
                     WHERE ($1::text IS NULL OR game > $1) ORDER BY game LIMIT $2",
                    &[&after.as_ref().map(GameId::as_str), &to_db(page_size as u64 + 1)],
                )
                .map_err(pg_error)?;
            let mut games = Vec::with_capacity(rows.len());
            let mut damaged = Vec::new();
            for row in &rows {
                let id: &str = row.get("game");
                match GameId::new(id) {
                    Ok(game) => games.push(summary(game, row)),
                    Err(error) => damaged.push(crate::Corruption {
                        game: id.to_owned(),
                        seq: 0,
                        detail: error.to_string(),
                    }),
                }
            }
            let next_page_token = if rows.len() > page_size {
                games.truncate(page_size);
                games.last().map(|last| store::page_token_after(&last.game))
            } else {
                None
            };
            Ok(GamePage {
                games,
                next_page_token,
                damaged,
            })
        })
    }

    /// The last position this node has published: every append through it
    /// is included once acknowledged, another node's once its notification
    /// arrived. Never blocks on the database.
    fn last_position(&self) -> u64 {
        self.shared().last_published.load(Ordering::SeqCst)
    }

    fn subscribe_game(&self, game: &GameId) -> EventReceiver {
        self.shared().hub.subscribe_game(game)
    }

    fn subscribe_all(&self) -> EventReceiver {
        self.shared().hub.subscribe_all()
    }

    fn verify_game(&self, game: &GameId) -> Result<VerifyReport> {
        blocking(|| {
            let mut report = VerifyReport {
                games: 1,
                ..VerifyReport::default()
            };
            match self.shared().read_stream(game, 1, usize::MAX) {
                Ok(events) => report.events = events.len() as u64,
                Err(error @ StoreError::NotFound(_)) => return Err(error),
                Err(error) => match error.corruption() {
                    Some(corruption) => report.problems.push(corruption),
                    None => return Err(error),
                },
            }
            Ok(report)
        })
    }

    fn verify_all(&self) -> Result<VerifyReport> {
        blocking(|| {
            // The global index up to the safe position when the check began.
            // Positions may have gaps (an append that failed after taking
            // its positions): the games' chains, not the index, show a
            // missing event.
            let last = safe_position(&mut **self.shared().client()?)?;
            let mut report = VerifyReport::default();
            let mut from = 1;
            while from <= last {
                let rows = self
                    .shared()
                    .client()?
                    .query(
                        "SELECT global_position, game, seq, envelope FROM events \
                         WHERE global_position >= $1 AND global_position <= $2 \
                         ORDER BY global_position LIMIT 10000",
                        &[&to_db(from), &to_db(last)],
                    )
                    .map_err(pg_error)?;
                if rows.is_empty() {
                    break;
                }
                for row in &rows {
                    let position = from_db(row.get(0));
                    let (game, seq): (&str, i64) = (row.get(1), row.get(2));
                    let bytes: &[u8] = row.get(3);
                    match crate::envelope::decode(bytes) {
                        Ok(event)
                            if event.position == position
                                && event.game.as_str() == game
                                && event.seq == from_db(seq) => {}
                        Ok(event) => report.index_problems.push((
                            position,
                            format!(
                                "holds game {:?} event {} at position {}",
                                event.game.as_str(),
                                event.seq,
                                event.position
                            ),
                        )),
                        // The game's own check names the damaged envelope.
                        Err(_) => {}
                    }
                    from = position + 1;
                }
            }
            let mut token = None;
            loop {
                let page = self.list_games(token.as_deref(), store::MAX_PAGE_SIZE)?;
                for game in &page.games {
                    let one = self.verify_game(&game.game)?;
                    report.games += one.games;
                    report.events += one.events;
                    report.problems.extend(one.problems);
                }
                report.problems.extend(page.damaged);
                match page.next_page_token {
                    Some(next) => token = Some(next),
                    None => break,
                }
            }
            Ok(report)
        })
    }

    fn storage_problem(&self) -> Option<String> {
        blocking(|| match self.shared().client() {
            Ok(_) => None,
            Err(error) => Some(error.to_string()),
        })
    }
}
