//! The layout of the store in sled's default tree: what each key holds.
//!
//! | key | value |
//! | --- | --- |
//! | `e` game `\0` first seq (u64 BE) | the envelopes of one append (below) |
//! | `p` first position (u64 BE) | an index item: up to 32 appends of one commit group, in position order (below) |
//! | `mlayout` | this layout's version, `2` |
//!
//! An append's envelopes share one value, each framed by its length (u32
//! LE). The global index has one item per commit group rather than one
//! entry per append: its keys grow with the position, so every insert
//! lands in the rightmost leaf, and one insert per append cost as much as
//! the envelopes themselves (measured: 64 concurrent games went from 7x to
//! 11x the one-writer rate without it). The committer puts a group into
//! sled once its write-ahead log entries are synced: each append's
//! envelopes, then the index item. sled recovers a prefix of its log, so an
//! index item always has its envelopes; envelopes a crash left without their
//! item are in the log, and opening replays them (`wal.rs`). Where the log
//! is not synced first (`Durability::Written`, `None`), an item and its
//! envelopes go in one atomic `apply_batch` instead. Request ids live in the
//! envelopes only: the writer's game cache (`games.rs`) finds retries.
//!
//! An index item is a version byte `2`, then per append: its first seq
//! (u64 BE), its event count (u16 BE), the length of its game id (u8) and
//! the game id; the first append starts at the item's key, each next one
//! where the previous ends. Items hold at most [`MAX_APPENDS_PER_ITEM`]
//! appends, so that a leaf of 16 items stays far below the quarter segment
//! past which sled moves a page to an unsynced blob file. Layout 1 wrote
//! one item per append with no version byte and no length: first seq
//! (u64 BE, whose first byte is 0 below 2^56), count (u16 BE), game id.
//! Those items keep reading; a store of layout 1 is marked 2 once opened,
//! since older code cannot read the new items.
//!
//! Ids contain no 0 byte (they are printable ASCII), so `game \0` is a
//! prefix of exactly one game's keys, and big-endian numbers sort keys in
//! numeric order.

use crate::ids::GameId;

pub(super) const LAYOUT_KEY: &[u8] = b"mlayout";
pub(super) const LAYOUT_VERSION: &[u8] = &[2];
/// The layout before index items held whole commit groups.
pub(super) const LAYOUT_VERSION_1: &[u8] = &[1];

/// The most appends one index item holds.
pub(super) const MAX_APPENDS_PER_ITEM: usize = 32;

/// The first byte of an index item of layout 2.
const ITEM_VERSION: u8 = 2;

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

/// Joins the envelopes of one append into one value.
pub(super) fn join_envelopes<'a>(envelopes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut value = Vec::new();
    for envelope in envelopes {
        // Envelopes are bounded by MAX_APPEND_BYTES, far below u32::MAX.
        value.extend_from_slice(&(envelope.len() as u32).to_le_bytes());
        value.extend_from_slice(envelope);
    }
    value
}

/// Splits an append's value into its envelopes.
pub(super) fn split_envelopes(mut value: &[u8]) -> Result<Vec<&[u8]>, String> {
    let mut envelopes = Vec::new();
    while !value.is_empty() {
        let (len, rest) = value.split_first_chunk::<4>().ok_or("envelope frame truncated")?;
        let len = u32::from_le_bytes(*len) as usize;
        if len > rest.len() {
            return Err(format!("envelope frame of {len} bytes, {} left", rest.len()));
        }
        let (envelope, rest) = rest.split_at(len);
        envelopes.push(envelope);
        value = rest;
    }
    if envelopes.is_empty() {
        return Err("an append without envelopes".into());
    }
    Ok(envelopes)
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

/// One append in the global index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct IndexEntry {
    pub game: GameId,
    pub first_seq: u64,
    pub count: u16,
}

/// One append's entry as the write-ahead log carries it (and as layout 1
/// stored it as a whole index item): first seq, count, game id.
pub(super) fn append_entry(entry: &IndexEntry) -> Vec<u8> {
    let mut value = entry.first_seq.to_be_bytes().to_vec();
    value.extend_from_slice(&entry.count.to_be_bytes());
    value.extend_from_slice(entry.game.as_str().as_bytes());
    value
}

pub(super) fn parse_append_entry(value: &[u8]) -> Option<IndexEntry> {
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

/// An index item holding `entries`, at most [`MAX_APPENDS_PER_ITEM`].
pub(super) fn index_item<'a>(entries: impl IntoIterator<Item = &'a IndexEntry>) -> Vec<u8> {
    let mut value = vec![ITEM_VERSION];
    for entry in entries {
        value.extend_from_slice(&entry.first_seq.to_be_bytes());
        value.extend_from_slice(&entry.count.to_be_bytes());
        // Game ids are at most MAX_GAME_ID_LEN (64) bytes.
        value.push(entry.game.as_str().len() as u8);
        value.extend_from_slice(entry.game.as_str().as_bytes());
    }
    value
}

/// Whether an index item was written by layout 1.
pub(super) fn is_layout_1_item(value: &[u8]) -> bool {
    value.first() == Some(&0)
}

/// The appends of an index item of either layout; `None` if malformed.
pub(super) fn parse_index_item(value: &[u8]) -> Option<Vec<IndexEntry>> {
    let (&version, mut rest) = value.split_first()?;
    match version {
        // Layout 1: one append, its first seq's high byte first.
        0 => return Some(vec![parse_append_entry(value)?]),
        ITEM_VERSION => {}
        _ => return None,
    }
    let mut entries = Vec::new();
    while !rest.is_empty() {
        let (first_seq, after) = rest.split_first_chunk::<8>()?;
        let (count, after) = after.split_first_chunk::<2>()?;
        let (&len, after) = after.split_first()?;
        let (game, after) = after.split_at_checked(usize::from(len))?;
        let count = u16::from_be_bytes(*count);
        (count > 0).then_some(())?;
        entries.push(IndexEntry {
            game: GameId::new(std::str::from_utf8(game).ok()?).ok()?,
            first_seq: u64::from_be_bytes(*first_seq),
            count,
        });
        rest = after;
    }
    (!entries.is_empty()).then_some(entries)
}

/// The events an index item covers.
pub(super) fn item_events(entries: &[IndexEntry]) -> u64 {
    entries.iter().map(|entry| u64::from(entry.count)).sum()
}
