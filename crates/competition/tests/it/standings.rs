//! Standings from hand-written event logs: table points, byes, and each
//! tie-break in turn.

use carcassonne_competition::*;

use crate::support::*;

/// One table of a hand-written round: players in seat order, and the
/// ranks and scores of its one game.
struct Played(&'static [&'static str], &'static [u8], &'static [u32]);

/// Folds rounds of `Played` tables (and byes) into a tournament of the
/// players named, with `points` by place.
fn tournament(players: &[&str], points: &[u32], rounds: &[(&[Played], &[&str])]) -> Tournament {
    let mut spec = swiss(players.len(), rounds.len() as u32, points.len() as u8);
    spec.participants = players.iter().map(|p| name(p)).collect();
    spec.table_points = points.to_vec();
    let mut tournament = Tournament::created("s", spec, [0; 32]);
    for (r, (tables, byes)) in rounds.iter().enumerate() {
        let round = r as u32 + 1;
        let tables_paired = tables
            .iter()
            .enumerate()
            .map(|(t, played)| Table {
                players: played.0.iter().map(|p| name(p)).collect(),
                games: vec![game_id("s", round, t as u32 + 1, 0)],
            })
            .collect();
        let byes = byes.iter().map(|p| name(p)).collect();
        tournament.apply(&TournamentEvent::RoundPaired {
            round,
            tables: tables_paired,
            byes,
        });
        for (t, played) in tables.iter().enumerate() {
            let result = GameResult::Ranked {
                ranks: played.1.to_vec(),
                scores: played.2.to_vec(),
            };
            tournament.apply(&TournamentEvent::GameEnded {
                game: game_id("s", round, t as u32 + 1, 0),
                result,
            });
        }
    }
    tournament
}

/// Checks the standings' order and each line's (points, buchholz,
/// firsts, game score) as "points/buchholz/firsts/score".
fn check(tournament: &Tournament, expected: &[(&str, &str)]) {
    let lines: Vec<(String, String)> = tournament
        .standings()
        .iter()
        .map(|s| {
            (
                s.player.to_string(),
                format!("{}/{}/{}/{}", s.points, s.buchholz, s.firsts, s.game_score),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(p, l)| (p.to_string(), l.to_string()))
        .collect();
    assert_eq!(lines, expected);
    check_standings_sorted(&tournament.standings());
}

#[test]
fn tied_players_share_the_points_of_the_places_they_occupy() {
    let t = tournament(
        &["A", "B", "C", "D"],
        &[5, 3, 2, 1],
        &[(
            &[Played(&["A", "B", "C", "D"], &[1, 1, 3, 4], &[21, 20, 9, 4])],
            &[],
        )],
    );
    check(
        &t,
        &[
            ("A", "4/7/1/21"),
            ("B", "4/7/1/20"),
            ("C", "2/9/0/9"),
            ("D", "1/10/0/4"),
        ],
    );
    let t = tournament(
        &["A", "B", "C"],
        &[5, 3, 2],
        &[(&[Played(&["A", "B", "C"], &[2, 2, 2], &[1, 1, 1])], &[])],
    );
    assert!(
        t.standings()
            .iter()
            .all(|s| s.points == Points(200) && s.points.to_string() == "3.33")
    );
}

#[test]
fn points_then_buchholz_then_firsts_then_game_score_then_the_lot() {
    // Buchholz: A and D both have a point, but D met the stronger ones.
    let t = tournament(
        &["A", "B", "C", "D"],
        &[1, 0],
        &[
            (
                &[
                    Played(&["A", "B"], &[1, 2], &[9, 1]),
                    Played(&["C", "D"], &[1, 2], &[9, 1]),
                ],
                &[],
            ),
            (
                &[
                    Played(&["A", "D"], &[2, 1], &[1, 9]),
                    Played(&["C", "B"], &[1, 2], &[9, 1]),
                ],
                &[],
            ),
        ],
    );
    check(
        &t,
        &[
            ("C", "2/1/2/18"),
            ("D", "1/3/1/10"),
            ("A", "1/1/1/10"),
            ("B", "0/3/0/2"),
        ],
    );

    // Firsts, then game score: A, B, C share first (a point each) while E
    // earns its point in second place; equal firsts fall to the scores.
    let t = tournament(
        &["A", "B", "C", "D", "E", "F"],
        &[2, 1, 0],
        &[(
            &[
                Played(&["A", "B", "C"], &[1, 1, 1], &[10, 30, 20]),
                Played(&["D", "E", "F"], &[1, 2, 3], &[5, 4, 3]),
            ],
            &[],
        )],
    );
    check(
        &t,
        &[
            ("D", "2/1/1/5"),
            ("B", "1/2/1/30"),
            ("C", "1/2/1/20"),
            ("A", "1/2/1/10"),
            ("E", "1/2/0/4"),
            ("F", "0/3/0/3"),
        ],
    );
}

#[test]
fn players_equal_on_everything_are_ordered_by_the_lot() {
    let players = ["A", "B", "C", "D", "E", "F"];
    let t = tournament(
        &players,
        &[1, 0],
        &[(
            &[
                Played(&["A", "B"], &[1, 1], &[5, 5]),
                Played(&["C", "D"], &[1, 1], &[5, 5]),
                Played(&["E", "F"], &[1, 1], &[5, 5]),
            ],
            &[],
        )],
    );
    let order: Vec<PlayerName> = t.standings().into_iter().map(|s| s.player).collect();
    assert_eq!(order, lot_order(&t.spec().participants, t.seed()));
    let ranks: Vec<u32> = t.standings().iter().map(|s| s.rank).collect();
    assert_eq!(ranks, vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn a_bye_scores_first_place_points_for_each_game_and_adds_no_buchholz() {
    let mut t = tournament(
        &["A", "B", "C"],
        &[3, 1],
        &[(&[Played(&["A", "B"], &[1, 2], &[7, 2])], &["C"])],
    );
    check(&t, &[("A", "3/1/1/7"), ("C", "3/0/0/0"), ("B", "1/3/0/2")]);

    // With matches of 3 games the bye is worth 3 first places.
    let mut spec = t.spec().clone();
    spec.games_per_match = 3;
    t = Tournament::created("s", spec, [0; 32]);
    t.apply(&TournamentEvent::RoundPaired {
        round: 1,
        tables: vec![],
        byes: vec![name("C")],
    });
    assert_eq!(t.standings()[0].points, Points::whole(9));
    assert_eq!(t.standings()[0].games, 0);
}

#[test]
fn each_game_of_a_match_scores_the_players_in_its_own_seat_order() {
    let mut spec = swiss(2, 1, 2);
    spec.participants = vec![name("A"), name("B")];
    spec.games_per_match = 2;
    let mut t = Tournament::created("s", spec, [0; 32]);
    let games = vec![game_id("s", 1, 1, 0), game_id("s", 1, 1, 1)];
    t.apply(&TournamentEvent::RoundPaired {
        round: 1,
        tables: vec![Table {
            players: vec![name("A"), name("B")],
            games: games.clone(),
        }],
        byes: vec![],
    });
    // The first seat wins both games: A in game 0, B in game 1.
    for game in &games {
        let result = GameResult::Ranked {
            ranks: vec![1, 2],
            scores: vec![20, 10],
        };
        t.apply(&TournamentEvent::GameEnded {
            game: game.clone(),
            result,
        });
    }
    for standing in t.standings() {
        let line = (
            standing.points,
            standing.buchholz,
            standing.firsts,
            standing.game_score,
            standing.games,
        );
        assert_eq!(
            line,
            (Points::whole(1), Points::whole(1), 1, 30, 2),
            "{}",
            standing.player
        );
    }
}
