//! The standings: points, then the tie-breaks, then the lot.

use std::cmp::Reverse;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::Tournament;
use super::events::GameResult;
use crate::name::PlayerName;
use crate::points::{Points, table_points};

/// One line of the standings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Standing {
    /// 1-based and distinct: the lot separates players equal on all else.
    pub rank: u32,
    pub player: PlayerName,
    pub points: Points,
    /// The sum, over every table the player sat at, of the current points
    /// of the other players at it (a bye adds nothing).
    pub buchholz: Points,
    /// Games placed first, shared firsts included.
    pub firsts: u32,
    /// The sum of the player's scores in ranked games.
    pub game_score: u64,
    /// Games with a ranked result (aborted ones do not count).
    pub games: u32,
    pub withdrawn: bool,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    points: Points,
    buchholz: Points,
    firsts: u32,
    game_score: u64,
    games: u32,
}

pub(super) fn standings(tournament: &Tournament) -> Vec<Standing> {
    let lot = tournament.plan.lot();
    let position: HashMap<&PlayerName, usize> = lot.iter().enumerate().map(|(i, name)| (name, i)).collect();
    let mut tallies = vec![Tally::default(); lot.len()];
    let spec = tournament.spec();
    let bye_points = Points::whole(spec.table_points.first().copied().unwrap_or(0));

    for round in tournament.paired_rounds() {
        for player in &round.byes {
            if let Some(&p) = position.get(player) {
                for _ in 0..spec.games_per_match() {
                    tallies[p].points = tallies[p].points + bye_points;
                }
            }
        }
        for table in &round.tables {
            let seats: Vec<Option<usize>> = table
                .players
                .iter()
                .map(|name| position.get(name).copied())
                .collect();
            for (index, game) in table.games.iter().enumerate() {
                let Some(GameResult::Ranked { ranks, scores }) = tournament.result(game) else {
                    continue;
                };
                let best = ranks.iter().min().copied();
                let points = table_points(&spec.table_points, ranks);
                // Game `index` seats the table rotated left by `index`.
                for (seat, ((rank, score), points)) in ranks.iter().zip(scores).zip(points).enumerate() {
                    let Some(p) = seats[(seat + index) % seats.len()] else {
                        continue;
                    };
                    let tally = &mut tallies[p];
                    tally.points = tally.points + points;
                    tally.firsts += u32::from(Some(*rank) == best);
                    tally.game_score += u64::from(*score);
                    tally.games += 1;
                }
            }
        }
    }

    let points: Vec<Points> = tallies.iter().map(|tally| tally.points).collect();
    for round in tournament.paired_rounds() {
        for table in &round.tables {
            let seats: Vec<usize> = table
                .players
                .iter()
                .filter_map(|name| position.get(name).copied())
                .collect();
            for &p in &seats {
                let others: Points = seats.iter().filter(|&&q| q != p).map(|&q| points[q]).sum();
                tallies[p].buchholz = tallies[p].buchholz + others;
            }
        }
    }

    let mut order: Vec<usize> = (0..lot.len()).collect();
    order.sort_by_key(|&p| {
        let t = &tallies[p];
        (
            Reverse(t.points),
            Reverse(t.buchholz),
            Reverse(t.firsts),
            Reverse(t.game_score),
            p,
        )
    });
    order
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let t = tallies[p];
            Standing {
                rank: i as u32 + 1,
                player: lot[p].clone(),
                points: t.points,
                buchholz: t.buchholz,
                firsts: t.firsts,
                game_score: t.game_score,
                games: t.games,
                withdrawn: tournament.withdrawn().contains(&lot[p]),
            }
        })
        .collect()
}
