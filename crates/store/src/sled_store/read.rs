//! Reading, listing and verifying: every envelope read passes the chain
//! check, and nothing past the durable position is shown.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use crate::chain::ChainCheck;
use crate::error::{Result, StoreError};
use crate::event::{GamePage, GameSummary, StoredEvent, VerifyReport};
use crate::ids::GameId;
use crate::store::{self, MAX_READ_LIMIT};

use super::layout;

/// A sled error met while reading `game` at `seq`: sled's own checksums
/// caught damage there, or the IO failed.
pub(super) fn sled_error(game: &str, seq: u64, error: sled::Error) -> StoreError {
    match error {
        sled::Error::Corruption { at, .. } => {
            StoreError::corrupt(game, seq, format!("sled found damaged data on disk at {at:?}"))
        }
        other => other.into(),
    }
}

/// Checks the envelopes of one stored append (the value under `first_seq`)
/// with `check` and returns their events.
fn append_events(
    game: &str,
    first_seq: u64,
    value: &[u8],
    check: &mut ChainCheck,
) -> Result<Vec<StoredEvent>> {
    let envelopes =
        layout::split_envelopes(value).map_err(|detail| StoreError::corrupt(game, first_seq, detail))?;
    (first_seq..)
        .zip(envelopes)
        .map(|(seq, envelope)| check.next(seq, envelope))
        .collect()
}

/// Visits the game's appends (first sequence number, checked events) from
/// the one holding `from_seq` on, until `visit` breaks or an error. Chain
/// links are checked from that append on.
pub(super) fn scan_appends(
    db: &sled::Db,
    game: &str,
    from_seq: u64,
    mut visit: impl FnMut(u64, Vec<StoredEvent>) -> ControlFlow<()>,
) -> Result<()> {
    let from_seq = from_seq.max(1);
    let prefix = layout::game_prefix(game);
    // The append holding `from_seq` starts at or before it.
    let start = match db
        .range(prefix.as_slice()..=layout::events_key(game, from_seq).as_slice())
        .next_back()
        .transpose()
        .map_err(|error| sled_error(game, from_seq, error))?
    {
        Some((key, _)) => key.to_vec(),
        None => prefix,
    };
    let mut check: Option<ChainCheck> = None;
    for item in db.range(start.as_slice()..layout::after_game(game).as_slice()) {
        let expected = check.as_ref().map_or(from_seq, ChainCheck::next_seq);
        let (key, value) = item.map_err(|error| sled_error(game, expected, error))?;
        let (_, first_seq) = layout::parse_events_key(&key)
            .ok_or_else(|| StoreError::corrupt(game, expected, "malformed key"))?;
        let check = check.get_or_insert_with(|| ChainCheck::new(game, first_seq));
        let events = append_events(game, first_seq, &value, check)?;
        if visit(first_seq, events).is_break() {
            break;
        }
    }
    Ok(())
}

/// Visits the game's checked events from `from_seq` on, in order.
fn scan_game(
    db: &sled::Db,
    game: &str,
    from_seq: u64,
    mut visit: impl FnMut(StoredEvent) -> ControlFlow<()>,
) -> Result<()> {
    scan_appends(db, game, from_seq, |_, events| {
        for event in events {
            if event.seq >= from_seq.max(1) {
                visit(event)?;
            }
        }
        ControlFlow::Continue(())
    })
}

/// The game's durable events from `from_seq` on.
/// At most `limit` durable events of a game from `from_seq` on.
fn durable_events(
    db: &sled::Db,
    durable: u64,
    game: &str,
    from_seq: u64,
    limit: usize,
) -> Result<Vec<StoredEvent>> {
    let mut events = Vec::new();
    if limit == 0 {
        return Ok(events);
    }
    scan_game(db, game, from_seq, |event| {
        if event.position > durable {
            return ControlFlow::Break(());
        }
        events.push(event);
        if events.len() >= limit {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    Ok(events)
}

/// At most `limit` events of a game from `from_seq` on;
/// [`StoreError::NotFound`] if it has none at all.
pub(super) fn read_game(
    db: &sled::Db,
    durable: u64,
    game: &GameId,
    from_seq: u64,
    limit: usize,
) -> Result<Vec<StoredEvent>> {
    let events = durable_events(db, durable, game.as_str(), from_seq, limit)?;
    if events.is_empty() && summary(db, durable, game)?.is_none() {
        return Err(StoreError::NotFound(game.to_string()));
    }
    Ok(events)
}

/// The events of the game's last stored append (durable or not), checked.
fn last_append(
    db: &sled::Db,
    game: &GameId,
    before: Option<&[u8]>,
) -> Result<Option<(Vec<u8>, Vec<StoredEvent>)>> {
    let prefix = layout::game_prefix(game.as_str());
    let end = before.map_or_else(|| layout::after_game(game.as_str()), <[u8]>::to_vec);
    let Some(item) = db.range(prefix.as_slice()..end.as_slice()).next_back() else {
        return Ok(None);
    };
    let (key, value) = item.map_err(|error| sled_error(game.as_str(), 0, error))?;
    let (_, first_seq) = layout::parse_events_key(&key)
        .ok_or_else(|| StoreError::corrupt(game.as_str(), 0, "malformed key"))?;
    let mut check = ChainCheck::new(game.as_str(), first_seq);
    let events = append_events(game.as_str(), first_seq, &value, &mut check)?;
    Ok(Some((key.to_vec(), events)))
}

pub(super) fn read_all(
    db: &sled::Db,
    durable: u64,
    from_position: u64,
    limit: usize,
) -> Result<Vec<StoredEvent>> {
    let from = from_position.max(1);
    let limit = limit.min(MAX_READ_LIMIT);
    // An index item covers a run of positions from its key: start at the
    // one holding `from`.
    let start = db
        .range(layout::position_key(0).as_slice()..=layout::position_key(from).as_slice())
        .next_back()
        .transpose()?
        .map_or(from, |(key, _)| layout::parse_position_key(&key).unwrap_or(from));
    let mut events = Vec::new();
    let mut expected = start;
    'items: for item in db.range(layout::position_key(start).as_slice()..layout::POSITIONS_END) {
        if events.len() >= limit || expected > durable {
            break;
        }
        let bad = |position: u64, detail: &str| StoreError::CorruptIndex {
            position,
            detail: detail.into(),
        };
        let (key, value) = item?;
        if layout::parse_position_key(&key) != Some(expected) {
            return Err(bad(expected, "position missing from the index"));
        }
        let entries = layout::parse_index_item(&value).ok_or_else(|| bad(expected, "malformed item"))?;
        for entry in entries {
            if events.len() >= limit || expected > durable {
                break 'items;
            }
            let next = expected + u64::from(entry.count);
            if next <= from {
                expected = next;
                continue;
            }
            let game = entry.game.as_str();
            let envelopes = db
                .get(layout::events_key(game, entry.first_seq))
                .map_err(|error| sled_error(game, entry.first_seq, error))?
                .ok_or_else(|| bad(expected, "points to missing events"))?;
            let mut check = ChainCheck::new(game, entry.first_seq);
            let append = append_events(game, entry.first_seq, &envelopes, &mut check)?;
            if append.len() != usize::from(entry.count) || append[0].position != expected {
                return Err(bad(expected, "points to events at other positions"));
            }
            expected = next;
            events.extend(
                append
                    .into_iter()
                    .filter(|event| event.position >= from && event.position <= durable),
            );
        }
    }
    events.truncate(limit);
    Ok(events)
}

/// The game's summary from its first and last durable events.
pub(super) fn summary(db: &sled::Db, durable: u64, game: &GameId) -> Result<Option<GameSummary>> {
    let mut first = None;
    scan_game(db, game.as_str(), 1, |event| {
        first = Some(event);
        ControlFlow::Break(())
    })?;
    let Some(first) = first.filter(|first| first.position <= durable) else {
        return Ok(None);
    };
    // Walk back from the stored end past appends still in flight.
    let mut before = None;
    while let Some((key, events)) = last_append(db, game, before.as_deref())? {
        if let Some(last) = events.iter().rev().find(|event| event.position <= durable) {
            return Ok(Some(GameSummary {
                game: game.clone(),
                last_seq: last.seq,
                created_millis: first.time_millis,
            }));
        }
        before = Some(key);
    }
    Ok(None)
}

/// Every game id, in order, from `start` (an event key), as raw text: one
/// seek per game. A damaged sled page ends it with a `Corrupt` error that
/// names the last game seen.
fn game_ids(db: &sled::Db, start: Vec<u8>) -> impl Iterator<Item = Result<String>> + '_ {
    let mut cursor = Some(start);
    let mut previous = String::new();
    std::iter::from_fn(move || {
        let start = cursor.take()?;
        let item = db.range(start.as_slice()..layout::EVENTS_END).next()?;
        let after = |detail: &str| format!("games after {previous:?}: {detail}");
        Some(match item {
            Err(error) => Err(sled_error(&after("unreadable"), 0, error)),
            Ok((key, _)) => match layout::parse_events_key(&key) {
                None => Err(StoreError::corrupt(
                    &after("malformed key"),
                    0,
                    "malformed event key",
                )),
                Some((game, _)) => {
                    cursor = Some(layout::after_game(&game));
                    previous.clone_from(&game);
                    Ok(game)
                }
            },
        })
    })
}

fn parse_game_id(game: &str) -> Result<GameId> {
    GameId::new(game).map_err(|_| StoreError::corrupt(game, 0, "invalid game id in a key"))
}

pub(super) fn list_games(
    db: &sled::Db,
    durable: u64,
    page_token: Option<&str>,
    page_size: usize,
) -> Result<GamePage> {
    let start = match page_token {
        None => layout::EVENTS_START.to_vec(),
        Some(token) => layout::after_game(store::parse_page_token(token)?.as_str()),
    };
    let page_size = store::clamp_page_size(page_size);
    let mut page = GamePage {
        games: Vec::new(),
        next_page_token: None,
        damaged: Vec::new(),
    };
    for game in game_ids(db, start) {
        // A damaged page ends the listing early, said so in `damaged`.
        let game = match game {
            Ok(game) => game,
            Err(error) => match error.corruption() {
                Some(corruption) => {
                    page.damaged.push(corruption);
                    break;
                }
                None => return Err(error),
            },
        };
        match parse_game_id(&game).and_then(|game| summary(db, durable, &game)) {
            Ok(Some(summary)) => {
                if page.games.len() == page_size {
                    page.next_page_token = page.games.last().map(|last| store::page_token_after(&last.game));
                    break;
                }
                page.games.push(summary);
            }
            Ok(None) => {}
            Err(error) => match error.corruption() {
                Some(corruption) => page.damaged.push(corruption),
                None => return Err(error),
            },
        }
    }
    Ok(page)
}

/// The append the global index says starts at `position`, if any.
fn indexed_at(db: &sled::Db, position: u64) -> sled::Result<Option<layout::IndexEntry>> {
    let Some((key, value)) = db
        .range(layout::position_key(0).as_slice()..=layout::position_key(position).as_slice())
        .next_back()
        .transpose()?
    else {
        return Ok(None);
    };
    let (Some(mut at), Some(entries)) = (layout::parse_position_key(&key), layout::parse_index_item(&value))
    else {
        return Ok(None);
    };
    for entry in entries {
        if at == position {
            return Ok(Some(entry));
        }
        at += u64::from(entry.count);
    }
    Ok(None)
}

/// Checks every durable envelope of a game, its chain, and that the global
/// index points at each of its appends.
pub(super) fn verify_game(db: &sled::Db, durable: u64, game: &GameId) -> Result<VerifyReport> {
    let mut report = VerifyReport {
        games: 1,
        ..VerifyReport::default()
    };
    let mut index_check = Ok(());
    let scanned = scan_appends(db, game.as_str(), 1, |first_seq, events| {
        let Some(first) = events.first() else {
            return ControlFlow::Continue(());
        };
        if first.position > durable {
            // Being put into sled: its index item may not be there yet.
            return ControlFlow::Break(());
        }
        let expected = layout::IndexEntry {
            game: game.clone(),
            first_seq,
            count: events.len() as u16,
        };
        index_check = match indexed_at(db, first.position) {
            Ok(entry) if entry == Some(expected) => Ok(()),
            Ok(_) => Err(StoreError::corrupt(
                game.as_str(),
                first_seq,
                format!("the global index at {} does not point to it", first.position),
            )),
            Err(error) => Err(sled_error(game.as_str(), first_seq, error)),
        };
        if index_check.is_err() {
            return ControlFlow::Break(());
        }
        report.events += events.len() as u64;
        ControlFlow::Continue(())
    });
    if let Err(error) = scanned.and(index_check) {
        match error.corruption() {
            Some(corruption) => report.problems.push(corruption),
            None => return Err(error),
        }
    }
    if report.events == 0 && report.problems.is_empty() {
        return Err(StoreError::NotFound(game.to_string()));
    }
    Ok(report)
}

/// Checks every game and the global index, up to the durable position.
/// The games are those the index names and those found by their keys: a
/// damaged page hides neither the games of the other.
pub(super) fn verify_all(db: &sled::Db, durable: u64) -> Result<VerifyReport> {
    let mut report = VerifyReport::default();
    let mut games = BTreeSet::new();
    // The index: items covering positions 1..=n without gaps.
    let mut expected = 1;
    let mut indexed = 0;
    for item in db.range(layout::position_key(1).as_slice()..layout::POSITIONS_END) {
        let (key, value) = match item {
            Ok(entry) => entry,
            Err(error) => {
                report
                    .index_problems
                    .push((expected, format!("unreadable: {error}")));
                break;
            }
        };
        let Some(position) = layout::parse_position_key(&key) else {
            report.index_problems.push((expected, "malformed key".into()));
            continue;
        };
        if position > durable {
            // Groups past it are being put into sled.
            break;
        }
        if position != expected {
            report
                .index_problems
                .push((expected, format!("next entry at {position}")));
        }
        let Some(entries) = layout::parse_index_item(&value) else {
            report.index_problems.push((position, "malformed item".into()));
            expected = position + 1;
            continue;
        };
        let count = layout::item_events(&entries);
        indexed += count;
        expected = position + count;
        games.extend(entries.into_iter().map(|entry| entry.game.to_string()));
    }
    for game in game_ids(db, layout::EVENTS_START.to_vec()) {
        match game {
            Ok(game) => {
                games.insert(game);
            }
            Err(error) => {
                report.problems.extend(error.corruption());
                break;
            }
        }
    }
    // Every append of every game has its index entry (verify_game).
    for game in games {
        match parse_game_id(&game).and_then(|game| verify_game(db, durable, &game)) {
            Ok(one) => {
                report.games += 1;
                report.events += one.events;
                report.problems.extend(one.problems);
            }
            // Created by a group still being put into sled.
            Err(StoreError::NotFound(_)) => {}
            Err(error) => match error.corruption() {
                Some(corruption) => {
                    report.games += 1;
                    report.problems.push(corruption);
                }
                None => return Err(error),
            },
        }
    }
    if indexed != report.events && report.is_ok() {
        report.index_problems.push((
            expected,
            format!(
                "the index covers {indexed} events, the games hold {}",
                report.events
            ),
        ));
    }
    Ok(report)
}
