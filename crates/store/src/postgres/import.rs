//! Copying a whole store into an empty database (`carcassonne migrate`):
//! every envelope as it is, so that every chain keeps verifying, at the
//! global position it had, with the request ids of its appends.

use std::collections::HashMap;

use super::{PgStore, blocking, pg_error, to_db};
use crate::chain::Head;
use crate::envelope;
use crate::error::{Result, StoreError};
use crate::event::StoredEvent;
use crate::ids::GameId;
use crate::store::{EventStore, MAX_PAGE_SIZE, MAX_READ_LIMIT};

/// What an import copied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Streams (games and the server's own streams).
    pub streams: u64,
    pub events: u64,
    /// Appends, each with its request id (those that had one).
    pub appends: u64,
    /// The last global position copied.
    pub last_position: u64,
}

/// A game's chain as the import has copied it so far.
struct Copied {
    head: Head,
    created_millis: u64,
    /// The append its last event belongs to.
    run: Run,
}

/// One append, as its events show it: one request id, consecutive
/// sequence numbers and positions, one time.
#[derive(Clone)]
struct Run {
    request_id: String,
    first_seq: u64,
    last_seq: u64,
    first_position: u64,
    last_position: u64,
    time_millis: u64,
}

impl Run {
    fn of(event: &StoredEvent) -> Run {
        Run {
            request_id: event.request_id.as_str().to_owned(),
            first_seq: event.seq,
            last_seq: event.seq,
            first_position: event.position,
            last_position: event.position,
            time_millis: event.time_millis,
        }
    }

    /// Whether `event` continues this append.
    fn continued_by(&self, event: &StoredEvent) -> bool {
        !self.request_id.is_empty()
            && event.request_id.as_str() == self.request_id
            && event.seq == self.last_seq + 1
            && event.position == self.last_position + 1
            && event.time_millis == self.time_millis
    }
}

impl PgStore {
    /// Copies every stream of `source` into this store, which must be
    /// empty: refused with [`StoreError::NotEmpty`], writing nothing,
    /// otherwise. Every envelope is checked as it is read (its hash, its
    /// link to the one before in its stream, its position right after the
    /// one before in the global order, its bytes as this crate encodes
    /// them), and the copy is one transaction: all of it is there, or
    /// nothing. Other nodes must not write meanwhile (the tables are
    /// locked against it).
    pub fn import_from(&self, source: &dyn EventStore) -> Result<ImportReport> {
        blocking(|| self.import_here(source))
    }

    fn import_here(&self, source: &dyn EventStore) -> Result<ImportReport> {
        let mut client = self.shared().client()?;
        let mut tx = client.transaction().map_err(pg_error)?;
        tx.batch_execute("LOCK TABLE games, events, requests IN EXCLUSIVE MODE")
            .map_err(pg_error)?;
        let games: i64 = tx
            .query_one("SELECT count(*) FROM games", &[])
            .map_err(pg_error)?
            .get(0);
        let last: i64 = tx
            .query_one("SELECT coalesce(max(global_position), 0) FROM events", &[])
            .map_err(pg_error)?
            .get(0);
        if games > 0 || last > 0 {
            return Err(StoreError::NotEmpty(format!(
                "it holds {games} streams and {last} events; copy only into an empty database"
            )));
        }
        let mut report = ImportReport::default();
        let mut copied: HashMap<GameId, Copied> = HashMap::new();
        let mut requests: Vec<(GameId, Run)> = Vec::new();
        loop {
            let events = source.read_all(report.last_position + 1, MAX_READ_LIMIT)?;
            if events.is_empty() {
                break;
            }
            let mut positions = Vec::with_capacity(events.len());
            let mut ids = Vec::with_capacity(events.len());
            let mut seqs = Vec::with_capacity(events.len());
            let mut envelopes = Vec::with_capacity(events.len());
            for event in &events {
                let expected = report.last_position + 1;
                if event.position != expected {
                    return Err(StoreError::CorruptIndex {
                        position: expected,
                        detail: format!("the source's next event is at position {}", event.position),
                    });
                }
                let (bytes, hash) = envelope::encode(event);
                if hash != event.hash {
                    return Err(StoreError::corrupt(
                        event.game.as_str(),
                        event.seq,
                        "its hash is not the hash of its content",
                    ));
                }
                let game = copied.entry(event.game.clone()).or_insert_with(|| Copied {
                    head: Head::EMPTY,
                    created_millis: event.time_millis,
                    run: Run::of(event),
                });
                if event.seq != game.head.last_seq + 1 {
                    return Err(StoreError::corrupt(
                        event.game.as_str(),
                        game.head.last_seq + 1,
                        format!("event missing: the next in the global order is {}", event.seq),
                    ));
                }
                if event.prev_hash != game.head.last_hash {
                    return Err(StoreError::corrupt(
                        event.game.as_str(),
                        event.seq,
                        "chain broken: its previous hash is not the previous event's hash",
                    ));
                }
                if event.seq > 1 {
                    if game.run.continued_by(event) {
                        game.run.last_seq = event.seq;
                        game.run.last_position = event.position;
                    } else {
                        requests.push((event.game.clone(), game.run.clone()));
                        game.run = Run::of(event);
                    }
                }
                game.head = Head {
                    last_seq: event.seq,
                    last_hash: event.hash,
                };
                positions.push(to_db(event.position));
                ids.push(event.game.as_str().to_owned());
                seqs.push(to_db(event.seq));
                envelopes.push(bytes);
                report.last_position = event.position;
                report.events += 1;
            }
            let envelopes: Vec<&[u8]> = envelopes.iter().map(Vec::as_slice).collect();
            tx.execute(
                "INSERT INTO events (global_position, game, seq, envelope) \
                 SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bytea[])",
                &[&positions, &ids, &seqs, &envelopes],
            )
            .map_err(pg_error)?;
        }
        // Every stream the source lists, whole: nothing was left out of
        // its global order.
        let mut listed = 0u64;
        let mut token = None;
        loop {
            let page = source.list_games(token.as_deref(), MAX_PAGE_SIZE)?;
            if let Some(damaged) = page.damaged.first() {
                return Err(StoreError::Corrupt {
                    game: damaged.game.clone(),
                    seq: damaged.seq,
                    detail: damaged.detail.clone(),
                });
            }
            for summary in &page.games {
                listed += 1;
                let copied_seq = copied.get(&summary.game).map_or(0, |game| game.head.last_seq);
                if copied_seq != summary.last_seq {
                    return Err(StoreError::corrupt(
                        summary.game.as_str(),
                        copied_seq + 1,
                        format!(
                            "the source lists {} events, its global order holds {copied_seq}",
                            summary.last_seq
                        ),
                    ));
                }
            }
            match page.next_page_token {
                Some(next) => token = Some(next),
                None => break,
            }
        }
        if listed != copied.len() as u64 {
            return Err(StoreError::CorruptIndex {
                position: report.last_position,
                detail: format!(
                    "the global order holds {} streams, the source lists {listed}",
                    copied.len()
                ),
            });
        }
        for (game, copy) in &copied {
            requests.push((game.clone(), copy.run.clone()));
        }
        requests.retain(|(_, run)| !run.request_id.is_empty());
        report.streams = copied.len() as u64;
        report.appends = requests.len() as u64;
        for chunk in requests.chunks(MAX_READ_LIMIT) {
            let column =
                |f: fn(&Run) -> u64| chunk.iter().map(|(_, run)| to_db(f(run))).collect::<Vec<i64>>();
            let games: Vec<&str> = chunk.iter().map(|(game, _)| game.as_str()).collect();
            let request_ids: Vec<&str> = chunk.iter().map(|(_, run)| run.request_id.as_str()).collect();
            tx.execute(
                "INSERT INTO requests (game, request_id, first_seq, last_seq, first_position, \
                 last_position, time_millis) \
                 SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], \
                 $5::bigint[], $6::bigint[], $7::bigint[])",
                &[
                    &games,
                    &request_ids,
                    &column(|run| run.first_seq),
                    &column(|run| run.last_seq),
                    &column(|run| run.first_position),
                    &column(|run| run.last_position),
                    &column(|run| run.time_millis),
                ],
            )
            .map_err(pg_error)?;
        }
        let heads: Vec<(&GameId, &Copied)> = copied.iter().collect();
        for chunk in heads.chunks(MAX_READ_LIMIT) {
            let games: Vec<&str> = chunk.iter().map(|(game, _)| game.as_str()).collect();
            let seqs: Vec<i64> = chunk.iter().map(|(_, copy)| to_db(copy.head.last_seq)).collect();
            let hashes: Vec<&[u8]> = chunk.iter().map(|(_, copy)| &copy.head.last_hash.0[..]).collect();
            let created: Vec<i64> = chunk.iter().map(|(_, copy)| to_db(copy.created_millis)).collect();
            tx.execute(
                "INSERT INTO games (game, last_seq, last_hash, created_millis) \
                 SELECT * FROM unnest($1::text[], $2::bigint[], $3::bytea[], $4::bigint[])",
                &[&games, &seqs, &hashes, &created],
            )
            .map_err(pg_error)?;
        }
        if report.last_position > 0 {
            // The position lock of position 1 until the commit, taken
            // before the sequence moves: `safe_position()` stays below the
            // copied events until they are visible, as for an append, so
            // that no follower passes over them meanwhile.
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&-1_i64])
                .map_err(pg_error)?;
            // Not transactional: should the commit fail, the next appends
            // start after a gap, which is harmless.
            tx.execute(
                "SELECT setval('event_positions', $1)",
                &[&to_db(report.last_position)],
            )
            .map_err(pg_error)?;
        }
        tx.commit().map_err(pg_error)?;
        Ok(report)
    }
}
