//! A transaction of appends in one round trip (one append, or a batch of
//! them: `batch.rs`).
//!
//! Under load, an append's cost is its round trips: each one is a pair of
//! context switches on both sides while the transaction holds its row
//! lock, and on a virtual machine a wake-up can cost more than the commit's
//! flush. So an append is one statement, `SELECT … FROM append_events(…)`,
//! which locks the game's head, checks it, takes the positions, chains the
//! envelopes in the database and writes them (`schema.rs`, V5), and a batch
//! is one statement too, `append_batch(…)`, which calls it for each append
//! in turn (V5), as one transaction: committed after the last, rolled back
//! whole at the first error. Both statements are prepared once per pooled
//! connection (`pool.rs` keeps them) and sent binary parameters: no SQL
//! text for the server to parse and plan again, no bytes spelt in hex.

use postgres::error::SqlState;
use postgres::types::{ToSql, Type};

use super::batch::Append;
use super::{from_db, pg_error, pool, to_db};
use crate::chain::{self, Head};
use crate::error::{Result, StoreError};
use crate::event::{Appended, Hash};

/// What `append_events` answers for one append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Answer {
    /// The request id was stored already: the first append's place.
    Repeat(Appended),
    /// The game is at version `actual`, not the expected one.
    Conflict { actual: u64 },
    /// Written after the head whose hash is `head_hash`, from position
    /// `first_position` on; `last_hash` is the new head's.
    Written {
        head_hash: Hash,
        first_position: u64,
        last_hash: Hash,
    },
}

/// The columns every answer has.
macro_rules! columns {
    () => {
        "outcome, seq_from, seq_to, position_from, position_to, at_millis, head_hash, last_hash"
    };
}

/// An append alone, and its parameters' types.
const ONE: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM append_events($1, $2, $3, $4, $5, $6, $7)"
);
const ONE_TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::INT8,
    Type::BYTEA_ARRAY,
    Type::INT4,
    Type::INT4,
];

/// A batch, in the order of its appends, and its parameters' types.
const BATCH: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM append_batch($1, $2, $3, $4, $5, $6, $7, $8) ORDER BY item"
);
const BATCH_TYPES: &[Type] = &[
    Type::TEXT_ARRAY,
    Type::INT8_ARRAY,
    Type::TEXT_ARRAY,
    Type::INT8_ARRAY,
    Type::INT4_ARRAY,
    Type::BYTEA_ARRAY,
    Type::INT4,
    Type::INT4_ARRAY,
];

/// Writes `appends` (distinct games) in one transaction and one round
/// trip; their answers, in order. An error leaves nothing committed, but
/// for a lost connection: then the commit's outcome is unknown. Once the
/// database answered, the transaction is committed: an answer that makes
/// no sense is then that append's error.
pub(super) fn write(client: &mut pool::Connection, appends: &[&Append]) -> Result<Vec<Result<Answer>>> {
    let rows = match appends {
        [one] => write_one(client, one)?,
        _ => write_batch(client, appends)?,
    };
    if rows.len() != appends.len() {
        let detail = format!(
            "{} answers to {} appends (they were committed)",
            rows.len(),
            appends.len()
        );
        return Ok(appends.iter().map(|_| Err(bad_answer(detail.clone()))).collect());
    }
    Ok(rows.iter().map(row_answer).collect())
}

/// Runs the statement `sql`, prepared once per connection, with `params`.
/// A statement the session no longer knows, or whose result's type a
/// migration changed, fails before anything is written (and the statement's
/// transaction is rolled back whatever failed): it is prepared again and
/// run once more.
fn run(
    client: &mut pool::Connection,
    sql: &'static str,
    types: &[Type],
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<postgres::Row>> {
    let statement = client.prepared(sql, types).map_err(pg_error)?;
    match client.query(&statement, params) {
        Err(error) if is_stale_statement(&error) => {
            client.forget_prepared();
            let statement = client.prepared(sql, types).map_err(pg_error)?;
            client.query(&statement, params).map_err(pg_error)
        }
        answered => answered.map_err(pg_error),
    }
}

fn is_stale_statement(error: &postgres::Error) -> bool {
    // "cached plan must not change result type"; "prepared statement does
    // not exist".
    [
        SqlState::FEATURE_NOT_SUPPORTED,
        SqlState::INVALID_SQL_STATEMENT_NAME,
    ]
    .iter()
    .any(|code| error.code() == Some(code))
}

/// The envelopes of `a`, encoded with zeros for the previous hash and the
/// position, which the database fills in at these offsets.
fn templates(a: &Append) -> (Vec<Vec<u8>>, i32, i32) {
    let unchained = Head {
        last_seq: a.expected_seq,
        last_hash: Hash::ZERO,
    };
    let templates = chain::build(&a.game, &a.request_id, unchained, 0, a.time_millis, &a.events)
        .into_iter()
        .map(|(_, bytes)| bytes)
        .collect();
    let offset = |at: usize| i32::try_from(at).unwrap_or(i32::MAX);
    (
        templates,
        offset(crate::envelope::PREV_HASH_AT),
        offset(crate::envelope::position_at(a.game.as_str().len())),
    )
}

fn write_one(client: &mut pool::Connection, a: &Append) -> Result<Vec<postgres::Row>> {
    let (templates, prev_hash_at, position_at) = templates(a);
    run(
        client,
        ONE,
        ONE_TYPES,
        &[
            &a.game.as_str(),
            &to_db(a.expected_seq),
            &a.request_id.as_str(),
            &to_db(a.time_millis),
            &templates,
            &prev_hash_at,
            &position_at,
        ],
    )
}

fn write_batch(client: &mut pool::Connection, appends: &[&Append]) -> Result<Vec<postgres::Row>> {
    let mut counts = Vec::with_capacity(appends.len());
    let mut all_templates = Vec::new();
    let mut position_ats = Vec::with_capacity(appends.len());
    let mut prev_hash_at = 0;
    for a in appends {
        let (templates, prev_at, position_at) = templates(a);
        counts.push(i32::try_from(templates.len()).unwrap_or(i32::MAX));
        all_templates.extend(templates);
        position_ats.push(position_at);
        prev_hash_at = prev_at;
    }
    let games: Vec<&str> = appends.iter().map(|a| a.game.as_str()).collect();
    let expected: Vec<i64> = appends.iter().map(|a| to_db(a.expected_seq)).collect();
    let requests: Vec<&str> = appends.iter().map(|a| a.request_id.as_str()).collect();
    let times: Vec<i64> = appends.iter().map(|a| to_db(a.time_millis)).collect();
    run(
        client,
        BATCH,
        BATCH_TYPES,
        &[
            &games,
            &expected,
            &requests,
            &times,
            &counts,
            &all_templates,
            &prev_hash_at,
            &position_ats,
        ],
    )
}

/// What `append_events` answered for one append (columns read only where
/// the outcome has them).
fn row_answer(row: &postgres::Row) -> Result<Answer> {
    let number = |name: &str| {
        row.try_get::<_, i64>(name)
            .map(from_db)
            .map_err(|e| bad_answer(format!("{name}: {e}")))
    };
    let hash = |name: &str| {
        let bytes: &[u8] = row
            .try_get(name)
            .map_err(|e| bad_answer(format!("{name}: {e}")))?;
        <[u8; 32]>::try_from(bytes)
            .map(Hash)
            .map_err(|_| bad_answer(format!("{name} is not 32 bytes")))
    };
    let outcome: &str = row.try_get("outcome").map_err(|e| bad_answer(e.to_string()))?;
    match outcome {
        "repeat" => Ok(Answer::Repeat(Appended {
            first_seq: number("seq_from")?,
            last_seq: number("seq_to")?,
            first_position: number("position_from")?,
            last_position: number("position_to")?,
            time_millis: number("at_millis")?,
        })),
        "conflict" => Ok(Answer::Conflict {
            actual: number("seq_to")?,
        }),
        "append" => Ok(Answer::Written {
            head_hash: hash("head_hash")?,
            first_position: number("position_from")?,
            last_hash: hash("last_hash")?,
        }),
        other => Err(bad_answer(format!(
            "an unknown outcome {:?}",
            other.chars().take(20).collect::<String>()
        ))),
    }
}

fn bad_answer(detail: String) -> StoreError {
    StoreError::Io(std::io::Error::other(format!(
        "PostgreSQL: a bad answer to an append: {detail}"
    )))
}
