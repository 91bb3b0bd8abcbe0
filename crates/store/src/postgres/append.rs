//! A transaction of appends in one round trip (one append, or a batch of
//! them: `batch.rs`).
//!
//! Under load, an append's cost is its round trips: each one is a pair of
//! context switches on both sides while the transaction holds its row
//! lock, and on a virtual machine a wake-up can cost more than the commit's
//! flush. So an append is one statement, `SELECT … FROM append_events(…)`,
//! which locks the game's head, checks it, takes the positions, chains the
//! envelopes in the database and writes them (`schema.rs`, V4); a batch is
//! one simple-query message of such statements, which PostgreSQL runs as
//! one transaction, committed after the last, or rolled back whole at the
//! first error (the message names no BEGIN or COMMIT). The simple protocol
//! has no parameters, so the values go in as literals, made here and
//! nowhere else: numbers as digits, text as escape strings (`E'…'`, which
//! mean the same whatever `standard_conforming_strings` says), bytes as
//! `decode('…', 'hex')`.

use postgres::{Client, SimpleQueryMessage, SimpleQueryRow};

use super::pg_error;
use crate::error::{Result, StoreError};
use crate::event::Hash;

/// A text literal: an escape string, each `\` and `'` doubled.
pub(super) fn text(value: &str) -> String {
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
pub(super) fn bytes(value: &[u8]) -> String {
    format!("decode('{}', 'hex')", hex::encode(value))
}

/// A hash the server gave in hex (`encode(…, 'hex')`).
pub(super) fn hash(text: &str) -> Option<Hash> {
    let mut hash = Hash::ZERO;
    hex::decode_to_slice(text, &mut hash.0).ok()?;
    Some(hash)
}

/// An `ARRAY[…]` of literals, typed (an empty one needs its type).
pub(super) fn array(items: impl IntoIterator<Item = String>, element_type: &str) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("ARRAY[{}]::{element_type}[]", items.join(", "))
}

/// Sends `statements` in one message, which PostgreSQL runs as one
/// transaction, and returns their rows, in order. An error leaves nothing
/// committed, but for a lost connection: then the commit's outcome is
/// unknown.
pub(super) fn transact(client: &mut Client, statements: &str) -> Result<Vec<SimpleQueryRow>> {
    let messages = client.simple_query(statements).map_err(pg_error)?;
    Ok(messages
        .into_iter()
        .filter_map(|message| match message {
            SimpleQueryMessage::Row(row) => Some(row),
            _ => None,
        })
        .collect())
}

/// Column `name` of `row`, as text; an error if it is missing or NULL.
pub(super) fn column<'r>(row: &'r SimpleQueryRow, name: &str) -> Result<&'r str> {
    row.try_get(name).ok().flatten().ok_or_else(|| {
        StoreError::Io(std::io::Error::other(format!(
            "PostgreSQL: no {name} in the answer"
        )))
    })
}

/// Column `name` of `row` as a number.
pub(super) fn number(row: &SimpleQueryRow, name: &str) -> Result<i64> {
    let text = column(row, name)?;
    text.parse().map_err(|_| {
        StoreError::Io(std::io::Error::other(format!(
            "PostgreSQL: {name} is not a number"
        )))
    })
}
