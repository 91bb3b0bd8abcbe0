//! A tournament and its standings as the API shows them. The seed stays
//! sealed (only its SHA-256) until the tournament is finished.

use carcassonne_competition::{Format, GameResult, PlayerName, Points};

use super::{GameSettings, Held};
use crate::proto;

fn named(name: &PlayerName) -> String {
    format!("players/{name}")
}

/// Points as a decimal, as people read them.
pub fn points_text(points: Points) -> String {
    points.to_string()
}

pub fn tournament_view(held: &Held) -> proto::Tournament {
    let t = &held.tournament;
    let spec = t.spec();
    let settings: Option<GameSettings> = serde_json::from_value(spec.games.clone()).ok();
    let finished = t.is_finished();
    let paired_rounds = t
        .paired_rounds()
        .iter()
        .map(|round| proto::TournamentRound {
            round: round.round,
            tables: round
                .tables
                .iter()
                .map(|table| proto::TournamentTable {
                    players: table.players.iter().map(named).collect(),
                    games: table
                        .games
                        .iter()
                        .filter_map(|id| t.game(id))
                        .map(|game| {
                            let (ranks, scores) = match game.result {
                                Some(GameResult::Ranked { ranks, scores }) => {
                                    (ranks.iter().map(|&r| u32::from(r)).collect(), scores.clone())
                                }
                                _ => (Vec::new(), Vec::new()),
                            };
                            proto::TournamentGame {
                                game: format!("games/{}", game.id),
                                seats: game.seats.iter().map(named).collect(),
                                ended: game.result.is_some(),
                                ranks,
                                scores,
                            }
                        })
                        .collect(),
                })
                .collect(),
            byes: round.byes.iter().map(named).collect(),
        })
        .collect();
    proto::Tournament {
        name: format!("tournaments/{}", t.id()),
        title: spec.name.clone(),
        organiser: spec.organiser.as_ref().map(named).unwrap_or_default(),
        participants: spec.participants.iter().map(named).collect(),
        format: match spec.format {
            Format::RoundRobin => proto::TournamentFormat::RoundRobin,
            Format::Swiss { .. } => proto::TournamentFormat::Swiss,
        } as i32,
        rounds: t.rounds(),
        table_size: u32::from(spec.table_size),
        table_points: spec.table_points.clone(),
        games_per_match: u32::from(spec.games_per_match),
        duplicate_bags: spec.duplicate_bags,
        rated: spec.rated,
        rules: settings.as_ref().map(|s| s.rules.clone()),
        time_control: settings.map(|s| s.time_control),
        status: if finished {
            proto::TournamentStatus::Finished
        } else {
            proto::TournamentStatus::Running
        } as i32,
        current_round: t.round(),
        pairing: carcassonne_competition::PAIRING_VERSION.to_owned(),
        seed_sha256: t.seed_commitment(),
        // Sealed until the end: pairings and game seeds derive from it.
        seed: if finished {
            carcassonne_competition::to_hex(t.seed())
        } else {
            String::new()
        },
        paired_rounds,
        withdrawn: t.withdrawn().iter().map(named).collect(),
        house_bots: spec
            .house_bots
            .iter()
            .map(|(player, level)| proto::TournamentHouseBot {
                player: named(player),
                level: level.clone(),
            })
            .collect(),
    }
}

pub fn standings_view(held: &Held) -> proto::Standings {
    let t = &held.tournament;
    proto::Standings {
        tournament: format!("tournaments/{}", t.id()),
        round: t.round(),
        r#final: t.is_finished(),
        standings: t
            .standings()
            .iter()
            .map(|s| proto::Standing {
                rank: s.rank,
                player: named(&s.player),
                points: points_text(s.points),
                points_sixtieths: u64::from(s.points.sixtieths()),
                buchholz: points_text(s.buchholz),
                firsts: s.firsts,
                game_score: s.game_score,
                games: s.games,
                withdrawn: s.withdrawn,
            })
            .collect(),
    }
}

/// One message of WatchTournament: the tournament, its standings, and the
/// version they were read at (its stream's events).
pub fn watch_view(held: &Held) -> proto::WatchTournamentResponse {
    proto::WatchTournamentResponse {
        tournament: Some(tournament_view(held)),
        standings: Some(standings_view(held)),
        version: i64::try_from(held.version).unwrap_or(i64::MAX),
    }
}
