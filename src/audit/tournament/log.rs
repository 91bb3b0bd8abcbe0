//! The tournament's own log, `tournament/events.json`: its hash chain, its
//! events folded by the competition crate (each one its rules produce at
//! its point), and every round's pairing recomputed from the events
//! before it.

use std::collections::HashMap;

use carcassonne_competition::{
    PAIRING_VERSION, PlayerName, TOURNAMENT_SCHEMA, Tournament, TournamentCommand, TournamentEvent, game_id,
};
use carcassonne_store::GameId;

use super::EVENTS;
use crate::audit::game::{counted, log_finding};
use crate::audit::{At, Checks, Finding};
use crate::proto;
use crate::server::audit::check_chain;

/// The log folded.
pub struct Folded {
    /// The tournament at the end of its log.
    pub tournament: Tournament,
    /// The sequence number of the last event.
    pub version: u64,
    /// Each game's result: the sequence number of its event.
    pub result_at: HashMap<String, u64>,
    /// Each withdrawn player: the sequence number of the withdrawal.
    pub withdrawn_at: HashMap<PlayerName, u64>,
    /// Each `RoundPaired` and the `Finished`: the event, its sequence
    /// number and the tournament before it.
    advances: Vec<(u64, TournamentEvent, Tournament)>,
}

/// A problem at the log's event `seq`.
fn at(seq: u64, error: impl std::fmt::Display) -> Finding {
    Finding {
        file: Some(EVENTS.to_owned()),
        at: Some(At::Event(seq)),
        rule: None,
        error: format!("event {seq}: {error}"),
    }
}

/// Checks the chain of the log `json` of the stream `stream`, decodes its
/// events and folds them: the creation first (by a pairing version this
/// build knows, its spec valid), then each event one the competition
/// rules produce at its point, the last the end of the tournament.
pub fn fold(stream: &GameId, json: &str, checks: &mut Checks) -> Result<Folded, Finding> {
    let events: Vec<proto::StoredEvent> = serde_json::from_str(json)
        .map_err(|e| Finding::file(Some(EVENTS), format!("not an event log: {e}")))?;
    let stored = check_chain(stream, &events).map_err(|p| log_finding(EVENTS, p))?;
    checks.pass(
        EVENTS,
        format!(
            "{}, each hash over its content, chained from the first to the last",
            counted(stored.len(), "event")
        ),
    );
    let mut decoded = Vec::with_capacity(stored.len());
    for event in &stored {
        if event.schema != TOURNAMENT_SCHEMA {
            return Err(at(
                event.seq,
                format!(
                    "schema {}, not a tournament event's ({TOURNAMENT_SCHEMA})",
                    event.schema
                ),
            ));
        }
        let tournament_event = TournamentEvent::decode(&event.payload).map_err(|e| at(event.seq, e))?;
        decoded.push((event.seq, tournament_event));
    }
    let Some((_, created)) = decoded.first() else {
        return Err(Finding::file(
            Some(EVENTS),
            "no event: a tournament's log begins with its creation",
        ));
    };
    let TournamentEvent::Created { spec, pairing, .. } = created else {
        return Err(at(1, "not the tournament's creation"));
    };
    if pairing != PAIRING_VERSION {
        return Err(at(
            1,
            format!(
                "the tournament pairs by {pairing}, which this build does not know (it knows {PAIRING_VERSION})"
            ),
        ));
    }
    spec.check()
        .map_err(|e| at(1, format!("the tournament's spec: {e}")))?;
    let id = stream
        .as_str()
        .trim_start_matches(crate::tournaments::TOURNAMENT_STREAM_PREFIX);
    let mut tournament = Tournament::from_event(id, created).ok_or_else(|| at(1, "not the creation"))?;
    let mut result_at = HashMap::new();
    let mut withdrawn_at = HashMap::new();
    let mut advances = Vec::new();
    let (mut results, mut withdrawals) = (0, 0);
    for (seq, event) in &decoded[1..] {
        let seq = *seq;
        if tournament.is_finished() {
            return Err(at(seq, "after the tournament's end"));
        }
        let command = match event {
            TournamentEvent::Created { .. } => return Err(at(seq, "a second creation")),
            TournamentEvent::GameEnded { game, result } => {
                result_at.insert(game.clone(), seq);
                results += 1;
                Some(TournamentCommand::RecordResult {
                    game: game.clone(),
                    result: result.clone(),
                })
            }
            TournamentEvent::Withdrawn { player } => {
                withdrawals += 1;
                withdrawn_at.insert(player.clone(), seq);
                Some(TournamentCommand::Withdraw {
                    player: player.clone(),
                })
            }
            TournamentEvent::RoundPaired { round, tables, .. } => {
                paired_in_turn(&tournament, *round, tables).map_err(|e| at(seq, e))?;
                advances.push((seq, event.clone(), tournament.clone()));
                None
            }
            TournamentEvent::Finished => {
                if !tournament.round_complete() {
                    return Err(at(
                        seq,
                        format!(
                            "finished while round {} has a game without a result",
                            tournament.round()
                        ),
                    ));
                }
                advances.push((seq, event.clone(), tournament.clone()));
                None
            }
        };
        if let Some(command) = command {
            let decided = tournament.decide(&command).map_err(|e| at(seq, e))?;
            if decided != [event.clone()] {
                return Err(at(seq, "not the event the tournament's rules record"));
            }
        }
        tournament.apply(event);
    }
    let version = decoded.last().map_or(0, |(seq, _)| *seq);
    if !tournament.is_finished() {
        return Err(at(version, "the log stops before the tournament's end"));
    }
    checks.pass(
        EVENTS,
        format!(
            "created with {PAIRING_VERSION}; {} paired, {}, {}, then finished: each event the \
             competition rules produce at its point",
            counted(tournament.round() as usize, "round"),
            counted(results, "result"),
            counted(withdrawals, "withdrawal")
        ),
    );
    Ok(Folded {
        tournament,
        version,
        result_at,
        withdrawn_at,
        advances,
    })
}

/// A round may be paired once the last is complete, numbered after it,
/// each table with the games the tournament's ids give it.
fn paired_in_turn(
    tournament: &Tournament,
    round: u32,
    tables: &[carcassonne_competition::Table],
) -> Result<(), String> {
    if !tournament.round_complete() {
        return Err(format!(
            "round {round} paired while round {} has a game without a result",
            tournament.round()
        ));
    }
    if round != tournament.round() + 1 {
        return Err(format!("round {round} paired after round {}", tournament.round()));
    }
    let games_per_match = tournament.spec().games_per_match();
    for (t, table) in tables.iter().enumerate() {
        let expected: Vec<String> = (0..games_per_match)
            .map(|g| game_id(tournament.id(), round, t as u32 + 1, g))
            .collect();
        if table.games != expected {
            return Err(format!(
                "round {round} table {}: games {:?}, not {expected:?}",
                t + 1,
                table.games
            ));
        }
    }
    Ok(())
}

fn names(players: &[PlayerName]) -> String {
    let names: Vec<&str> = players.iter().map(PlayerName::as_str).collect();
    format!("[{}]", names.join(", "))
}

/// Every round's tables and byes are those `pairing/1` gives from the
/// events before it, and the tournament finished when it gave no more.
pub fn pairings(folded: &Folded, checks: &mut Checks) -> Result<(), Finding> {
    let mut rounds = 0;
    for (seq, event, before) in &folded.advances {
        let next = before.pairing_for_next_round();
        match (event, next) {
            (TournamentEvent::RoundPaired { round, .. }, None) => {
                return Err(at(
                    *seq,
                    format!(
                        "round {round} paired, but {PAIRING_VERSION} pairs no round after round {}: \
                         the format's rounds are played, or fewer than two players are active",
                        before.round()
                    ),
                ));
            }
            (TournamentEvent::RoundPaired { round, tables, byes }, Some(pairing)) => {
                let longest = tables.len().max(pairing.tables.len());
                for t in 0..longest {
                    let stated = tables.get(t).map(|table| &table.players[..]).unwrap_or_default();
                    let computed = pairing.tables.get(t).map(Vec::as_slice).unwrap_or_default();
                    if stated != computed {
                        return Err(at(
                            *seq,
                            format!(
                                "round {round} table {} seats {}; {PAIRING_VERSION} from the events \
                                 before it seats {}",
                                t + 1,
                                names(stated),
                                names(computed)
                            ),
                        ));
                    }
                }
                if *byes != pairing.byes {
                    return Err(at(
                        *seq,
                        format!(
                            "round {round} gives byes to {}; {PAIRING_VERSION} from the events before \
                             it gives them to {}",
                            names(byes),
                            names(&pairing.byes)
                        ),
                    ));
                }
                rounds += 1;
            }
            (_, Some(_)) => {
                return Err(at(
                    *seq,
                    format!(
                        "the tournament finished, but {PAIRING_VERSION} pairs a round {} from the \
                         events before it",
                        before.round() + 1
                    ),
                ));
            }
            (_, None) => {}
        }
    }
    checks.pass(
        EVENTS,
        format!(
            "every round's tables and byes ({}) are {PAIRING_VERSION}'s from the events before it, \
             and the tournament finished when it paired no more",
            counted(rounds, "round")
        ),
    );
    Ok(())
}
