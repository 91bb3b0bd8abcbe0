//! A transaction of appends in one round trip (one append, or a batch of
//! them: `batch.rs`).
//!
//! Under load, an append's cost is its round trips: each one is a pair of
//! context switches on both sides while the transaction holds its row
//! lock, and on a virtual machine a wake-up can cost more than the commit's
//! flush. So an append is one statement, `SELECT … FROM append_events(…)`,
//! which locks the game's head, checks it, takes the positions, chains the
//! envelopes in the database and writes them (`schema.rs`, V4).
//!
//! - An append alone is that statement prepared once per connection
//!   (`pool.rs` keeps it), its values sent as binary parameters: no SQL
//!   text to parse and plan, no bytes spelt in hex.
//! - A batch is one simple-query message of such statements, which
//!   PostgreSQL runs as one transaction, committed after the last, or
//!   rolled back whole at the first error (the message names no BEGIN or
//!   COMMIT). The simple protocol has no parameters, so the values go in
//!   as literals, made here and nowhere else: numbers as digits, text as
//!   escape strings (`E'…'`, which mean the same whatever
//!   `standard_conforming_strings` says), bytes as `decode('…', 'hex')`.

use postgres::types::Type;
use postgres::{SimpleQueryMessage, SimpleQueryRow};

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

/// The columns every answer has; the hashes as they are (prepared) or in
/// hex (simple protocol, `SIMPLE_COLUMNS`).
const COLUMNS: &str =
    "outcome, seq_from, seq_to, position_from, position_to, at_millis, head_hash, last_hash";
const SIMPLE_COLUMNS: &str = "outcome, seq_from, seq_to, position_from, position_to, at_millis, \
     encode(head_hash, 'hex') AS head_hash, encode(last_hash, 'hex') AS last_hash";

/// The prepared statement of an append alone, and its parameters' types.
const PREPARED: &str = "FROM append_events($1, $2, $3, $4, $5, $6, $7)";
const PREPARED_TYPES: &[Type] = &[
    Type::TEXT,
    Type::INT8,
    Type::TEXT,
    Type::INT8,
    Type::BYTEA_ARRAY,
    Type::INT4,
    Type::INT4,
];

/// Writes `appends` (distinct games) in one transaction and one round
/// trip; their answers, in order. An error leaves nothing committed, but
/// for a lost connection: then the commit's outcome is unknown.
pub(super) fn write(client: &mut pool::Connection, appends: &[&Append]) -> Result<Vec<Answer>> {
    let answers = match appends {
        [one] => vec![write_one(client, one)?],
        _ => write_batch(client, appends)?,
    };
    if answers.len() != appends.len() {
        return Err(bad_answer(format!(
            "{} answers to {} appends",
            answers.len(),
            appends.len()
        )));
    }
    Ok(answers)
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

fn write_one(client: &mut pool::Connection, a: &Append) -> Result<Answer> {
    let statement = client
        .prepared(&format!("SELECT {COLUMNS} {PREPARED}"), PREPARED_TYPES)
        .map_err(pg_error)?;
    let (templates, prev_hash_at, position_at) = templates(a);
    let row = client
        .query_one(
            &statement,
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
        .map_err(pg_error)?;
    let outcome: &str = row.try_get("outcome").map_err(|e| bad_answer(e.to_string()))?;
    answer(
        outcome,
        |name| {
            row.try_get::<_, i64>(name)
                .map_err(|e| bad_answer(format!("{name}: {e}")))
        },
        |name| {
            let bytes: &[u8] = row
                .try_get(name)
                .map_err(|e| bad_answer(format!("{name}: {e}")))?;
            <[u8; 32]>::try_from(bytes)
                .map(Hash)
                .map_err(|_| bad_answer(format!("{name} is not 32 bytes")))
        },
    )
}

fn write_batch(client: &mut pool::Connection, appends: &[&Append]) -> Result<Vec<Answer>> {
    let statements: Vec<String> = appends
        .iter()
        .map(|a| {
            let (templates, prev_hash_at, position_at) = templates(a);
            format!(
                "SELECT {SIMPLE_COLUMNS} FROM append_events({}, {}, {}, {}, {}, {prev_hash_at}, {position_at})",
                text(a.game.as_str()),
                to_db(a.expected_seq),
                text(a.request_id.as_str()),
                to_db(a.time_millis),
                array(templates.iter().map(|t| bytes(t)), "bytea"),
            )
        })
        .collect();
    let messages = client.simple_query(&statements.join("; ")).map_err(pg_error)?;
    messages
        .iter()
        .filter_map(|message| match message {
            SimpleQueryMessage::Row(row) => Some(simple_answer(row)),
            _ => None,
        })
        .collect()
}

fn simple_answer(row: &SimpleQueryRow) -> Result<Answer> {
    let column = |name: &str| -> Result<&str> {
        row.try_get(name)
            .ok()
            .flatten()
            .ok_or_else(|| bad_answer(format!("no {name}")))
    };
    answer(
        column("outcome")?,
        |name| {
            column(name)?
                .parse()
                .map_err(|_| bad_answer(format!("{name} is not a number")))
        },
        |name| {
            let mut hash = Hash::ZERO;
            hex::decode_to_slice(column(name)?, &mut hash.0)
                .map_err(|_| bad_answer(format!("{name} is not 32 bytes in hex")))?;
            Ok(hash)
        },
    )
}

/// An answer from its columns, whichever protocol brought them: the
/// outcome, numbers and hashes by column name (read only where the
/// outcome has them).
fn answer(
    outcome: &str,
    number: impl Fn(&str) -> Result<i64>,
    hash: impl Fn(&str) -> Result<Hash>,
) -> Result<Answer> {
    let number = |name| number(name).map(from_db);
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

/// A text literal: an escape string, each `\` and `'` doubled.
fn text(value: &str) -> String {
    let mut literal = String::with_capacity(value.len() + 3);
    literal.push_str("E'");
    for c in value.chars() {
        match c {
            '\\' => literal.push_str("\\\\"),
            '\'' => literal.push_str("''"),
            c => literal.push(c),
        }
    }
    literal.push('\'');
    literal
}

/// A `bytea` value: its bytes in hex, decoded by the server.
fn bytes(value: &[u8]) -> String {
    format!("decode('{}', 'hex')", hex::encode(value))
}

/// An `ARRAY[…]` of literals, typed (an empty one needs its type).
fn array(items: impl IntoIterator<Item = String>, element_type: &str) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("ARRAY[{}]::{element_type}[]", items.join(", "))
}
