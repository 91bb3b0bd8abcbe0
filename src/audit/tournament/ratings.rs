//! A rated tournament's ratings: `ratings/events.json`, the server's
//! `@ratings` stream up to the tournament's last rated game (its chain,
//! and each of the tournament's games rated once with its audited seats
//! and ranks), and `ratings/changes.json`, the changes the stream's fold
//! gives each participant in the tournament's games.

use std::collections::{BTreeMap, HashMap, HashSet};

use carcassonne_archive::Archive;
use carcassonne_competition::{PlayerName, RATINGS_SCHEMA, RatingEvent, Tournament};
use carcassonne_store::GameId;

use super::json;
use crate::audit::game::{AuditedGame, counted, log_finding};
use crate::audit::{At, Checks, Finding};
use crate::proto;
use crate::ratings::{RATINGS_STREAM, changes_in};
use crate::server::audit::check_chain;
use crate::tournaments::archive::{RATING_CHANGES, RATING_EVENTS};

/// A problem at the ratings log's event `seq`.
fn at(seq: u64, error: impl std::fmt::Display) -> Finding {
    Finding {
        file: Some(RATING_EVENTS.to_owned()),
        at: Some(At::Event(seq)),
        rule: None,
        error: format!("event {seq}: {error}"),
    }
}

fn names(players: &[PlayerName]) -> String {
    let names: Vec<&str> = players.iter().map(PlayerName::as_str).collect();
    format!("[{}]", names.join(", "))
}

/// Checks the ratings of the rated `tournament`, whose games are `games`.
pub fn audit(
    archive: &Archive,
    tournament: &Tournament,
    games: &BTreeMap<String, AuditedGame>,
    checks: &mut Checks,
) -> Result<(), Finding> {
    let text = archive.file(RATING_EVENTS).ok_or_else(|| {
        Finding::file(
            Some(RATING_EVENTS),
            "missing: a rated tournament's archive holds it",
        )
    })?;
    let events: Vec<proto::StoredEvent> = serde_json::from_slice(text)
        .map_err(|e| Finding::file(Some(RATING_EVENTS), format!("not an event log: {e}")))?;
    let stream = GameId::new(RATINGS_STREAM)
        .map_err(|e| Finding::file(Some(RATING_EVENTS), format!("the ratings stream's id: {e}")))?;
    let stored = check_chain(&stream, &events).map_err(|p| log_finding(RATING_EVENTS, p))?;
    checks.pass(
        RATING_EVENTS,
        format!(
            "{}, each hash over its content, chained from the first to the last",
            counted(stored.len(), "event")
        ),
    );

    // Each event decoded; each of the tournament's games rated once.
    let mut rating: HashMap<String, (u64, Vec<PlayerName>, Vec<u8>)> = HashMap::new();
    for event in &stored {
        if event.schema != RATINGS_SCHEMA {
            return Err(at(
                event.seq,
                format!("schema {}, not a rating event's ({RATINGS_SCHEMA})", event.schema),
            ));
        }
        let RatingEvent::Rated { game, players, ranks } =
            RatingEvent::decode(&event.payload).map_err(|e| at(event.seq, e))?;
        if games.contains_key(&game) && rating.contains_key(&game) {
            return Err(at(event.seq, format!("rates game {game} a second time")));
        }
        rating.insert(game, (event.seq, players, ranks));
    }
    if let Some(last) = stored.last()
        && let Some(RatingEvent::Rated { game, .. }) = RatingEvent::decode(&last.payload).ok()
        && !games.contains_key(&game)
    {
        return Err(at(
            last.seq,
            format!(
                "rates game {game}, not the tournament's: the file holds the stream up to the \
                 tournament's last rated game"
            ),
        ));
    }
    let mut rated = 0;
    for (id, game) in games {
        let stated = rating.get(id);
        // A game with a house bot is not rated (its opening says so, checked
        // against the tournament's seats before): no event may rate it.
        if !game.opened.rated {
            if let Some((seq, ..)) = stated {
                return Err(at(*seq, format!("rates game {id}, which seats a house bot")));
            }
            continue;
        }
        match (game.game.ranking(), stated) {
            (Some(_), None) => {
                return Err(Finding::file(
                    Some(RATING_EVENTS),
                    format!("game {id} of the rated tournament ended ranked, and no event rates it"),
                ));
            }
            (None, Some((seq, ..))) => {
                return Err(at(*seq, format!("rates game {id}, which was aborted")));
            }
            (None, None) => {}
            (Some(ranks), Some((seq, players, stated_ranks))) => {
                let seats: Option<Vec<PlayerName>> = game
                    .opened
                    .accounts
                    .iter()
                    .map(|a| a.as_deref().and_then(|name| PlayerName::new(name).ok()))
                    .collect();
                if seats.as_ref() != Some(players) || ranks != *stated_ranks {
                    return Err(at(
                        *seq,
                        format!(
                            "rates game {id} as {} ranked {stated_ranks:?}; the audited game seats \
                             {} ranked {ranks:?}",
                            names(players),
                            seats.as_deref().map_or_else(|| "guests".to_owned(), names)
                        ),
                    ));
                }
                rated += 1;
            }
        }
    }
    checks.pass(
        RATING_EVENTS,
        format!(
            "every ranked game of the tournament{} ({}) rated once, with its seats' players and its \
             audited ranks; the stream ends at the tournament's last",
            if tournament.spec().house_bots.is_empty() {
                ""
            } else {
                " without a house bot"
            },
            counted(rated, "game")
        ),
    );

    // The stream folded as the server folds it, and the changes it gives.
    let (ratings, _) = crate::ratings::fold(&stored).map_err(|e| Finding::file(Some(RATING_EVENTS), e))?;
    let ids: HashSet<String> = games.keys().cloned().collect();
    json::same(
        archive,
        RATING_CHANGES,
        &changes_in(&ratings, &tournament.spec().participants, &ids),
    )?;
    checks.pass(
        RATING_CHANGES,
        "each participant's rating changes in the tournament's games, before and after each, as the \
         fold of ratings/events.json gives them (Glicko-2 for duels, Weng-Lin for 3 to 5 players)",
    );
    Ok(())
}
