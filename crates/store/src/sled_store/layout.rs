//! The layout of the store in sled's default tree: what each key holds.
//!
//! | key | value |
//! | --- | --- |
//! | `e` game `\0` first seq (u64 BE) | the records of one append (below) |
//! | `p` first position (u64 BE) | first seq (u64 BE), event count (u16 BE), game: the global index, one entry per append |
//! | `mlayout` | this layout's version, `1` |
//!
//! An append's records share one value, each framed by its length (u32
//! LE): one sled `insert` is atomic, so an append is all or nothing without
//! `apply_batch`, which costs sled a log buffer roll and a disk write per
//! call (measured: 27 µs per batch alone, 128 µs while a flush runs,
//! against 7 µs and 12 µs per insert). The index entry is a separate
//! insert, made before the records under the writer lock; sled recovers a
//! prefix of its log, so only the last append can be cut, and opening the
//! store repairs it (see `recover`). Request ids live in the records only:
//! the writer's game cache (`games.rs`) finds retries.
//!
//! Ids contain no 0 byte (they are printable ASCII), so `game \0` is a
//! prefix of exactly one game's keys, and big-endian numbers sort keys in
//! numeric order.

use crate::ids::GameId;

pub(super) const LAYOUT_KEY: &[u8] = b"mlayout";
pub(super) const LAYOUT_VERSION: &[u8] = &[1];

const EVENTS: u8 = b'e';
const POSITIONS: u8 = b'p';

/// The prefix of every event key of `game`.
pub(super) fn game_prefix(game: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(game.len() + 10);
    key.push(EVENTS);
    key.extend_from_slice(game.as_bytes());
    key.push(0);
    key
}

/// The key of the append whose first event is `first_seq`.
pub(super) fn events_key(game: &str, first_seq: u64) -> Vec<u8> {
    let mut key = game_prefix(game);
    key.extend_from_slice(&first_seq.to_be_bytes());
    key
}

/// The first key after every event key of `game`.
pub(super) fn after_game(game: &str) -> Vec<u8> {
    let mut key = game_prefix(game);
    if let Some(last) = key.last_mut() {
        *last = 1;
    }
    key
}

/// The first event key of all.
pub(super) const EVENTS_START: &[u8] = &[EVENTS];
/// The first key after all event keys.
pub(super) const EVENTS_END: &[u8] = &[EVENTS + 1];

/// Splits an event key into game and first sequence number. The game is
/// raw text: a damaged key may not hold a valid id.
pub(super) fn parse_events_key(key: &[u8]) -> Option<(String, u64)> {
    let rest = key.strip_prefix(&[EVENTS])?;
    let (game, seq) = rest.split_at_checked(rest.len().checked_sub(9)?)?;
    let seq = seq.strip_prefix(&[0])?;
    Some((
        String::from_utf8_lossy(game).into_owned(),
        u64::from_be_bytes(seq.try_into().ok()?),
    ))
}

/// Joins the records of one append into one value.
pub(super) fn join_records<'a>(records: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut value = Vec::new();
    for record in records {
        // Records are bounded by MAX_APPEND_BYTES, far below u32::MAX.
        value.extend_from_slice(&(record.len() as u32).to_le_bytes());
        value.extend_from_slice(record);
    }
    value
}

/// Splits an append's value into its records.
pub(super) fn split_records(mut value: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut records = Vec::new();
    while !value.is_empty() {
        let (len, rest) = value.split_first_chunk::<4>().ok_or("record frame truncated")?;
        let len = u32::from_le_bytes(*len) as usize;
        if len > rest.len() {
            return Err(format!("record frame of {len} bytes, {} left", rest.len()));
        }
        let (record, rest) = rest.split_at(len);
        records.push(record);
        value = rest;
    }
    if records.is_empty() {
        return Err("an append without records".into());
    }
    Ok(records)
}

pub(super) fn position_key(position: u64) -> [u8; 9] {
    let mut key = [POSITIONS; 9];
    key[1..].copy_from_slice(&position.to_be_bytes());
    key
}

pub(super) const POSITIONS_END: &[u8] = &[POSITIONS + 1];

pub(super) fn parse_position_key(key: &[u8]) -> Option<u64> {
    let rest = key.strip_prefix(&[POSITIONS])?;
    Some(u64::from_be_bytes(rest.try_into().ok()?))
}

/// One global index entry: the append at a first position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct IndexEntry {
    pub game: GameId,
    pub first_seq: u64,
    pub count: u16,
}

pub(super) fn index_value(entry: &IndexEntry) -> Vec<u8> {
    let mut value = entry.first_seq.to_be_bytes().to_vec();
    value.extend_from_slice(&entry.count.to_be_bytes());
    value.extend_from_slice(entry.game.as_str().as_bytes());
    value
}

pub(super) fn parse_index_value(value: &[u8]) -> Option<IndexEntry> {
    let (first_seq, rest) = value.split_first_chunk::<8>()?;
    let (count, game) = rest.split_first_chunk::<2>()?;
    let count = u16::from_be_bytes(*count);
    (count > 0).then_some(())?;
    Some(IndexEntry {
        game: GameId::new(std::str::from_utf8(game).ok()?).ok()?,
        first_seq: u64::from_be_bytes(*first_seq),
        count,
    })
}
