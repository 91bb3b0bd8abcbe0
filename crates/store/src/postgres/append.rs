//! A transaction of appends in two round trips (one append, or a batch
//! of them: `batch.rs`).
//!
//! Under load, an append's cost is its round trips: each one is a pair of
//! context switches on both sides while the transaction holds its row
//! lock. The extended protocol takes four (BEGIN, `begin_append`,
//! `finish_append`, COMMIT); two simple-query messages, each of two
//! statements, take two: `BEGIN; SELECT * FROM begin_append(…)` (one call per
//! append), then `SELECT finish_append(…); COMMIT`. The simple protocol has no
//! parameters, so the values go in as literals, made here and nowhere
//! else: numbers as digits, text as escape strings (`E'…'`, which mean the
//! same whatever `standard_conforming_strings` says), bytes as
//! `decode('…', 'hex')`. After a failed statement the message's other
//! statements are skipped and the transaction is left aborted:
//! [`Transaction`] rolls it back before the connection goes back to the
//! pool.

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

/// A transaction opened by a simple-query message on a pooled connection:
/// rolled back when dropped unless committed.
pub(super) struct Transaction<'a> {
    client: &'a mut Client,
    open: bool,
}

impl<'a> Transaction<'a> {
    /// The transaction [`begin`] opened on `client`.
    pub(super) fn opened(client: &'a mut Client) -> Self {
        Transaction { client, open: true }
    }

    /// Sends `{statements}; COMMIT` (or COMMIT alone). An error leaves
    /// nothing committed, but for a lost connection: then the commit's
    /// outcome is unknown.
    pub(super) fn commit_after(mut self, statements: &str) -> Result<()> {
        // An error in a statement skips the COMMIT (the server runs no
        // more of a message after an error), so an answer without an
        // error is a commit.
        let message = if statements.is_empty() {
            "COMMIT".to_owned()
        } else {
            format!("{statements}; COMMIT")
        };
        self.client.simple_query(&message).map_err(pg_error)?;
        self.open = false;
        Ok(())
    }
}

/// Sends `BEGIN; {statements}` and returns their rows, in order; the
/// transaction stays open ([`Transaction::opened`]), but after an error,
/// which rolls it back.
pub(super) fn begin(client: &mut Client, statements: &str) -> Result<Vec<SimpleQueryRow>> {
    match client.simple_query(&format!("BEGIN; {statements}")) {
        Ok(messages) => Ok(messages
            .into_iter()
            .filter_map(|message| match message {
                SimpleQueryMessage::Row(row) => Some(row),
                _ => None,
            })
            .collect()),
        Err(error) => {
            // On a closed connection this fails at once, and the pool
            // drops the connection.
            let _ = client.simple_query("ROLLBACK");
            Err(pg_error(error))
        }
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open {
            // A connection that cannot roll back is broken: the pool
            // finds it closed and drops it.
            let _ = self.client.simple_query("ROLLBACK");
        }
    }
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
