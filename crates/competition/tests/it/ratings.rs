//! Ratings: skillratings' numbers, folded.

use carcassonne_competition::*;
use skillratings::MultiTeamOutcome;
use skillratings::Outcomes;
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

use crate::support::*;

fn rated(game: &str, players: &[&str], ranks: &[u8]) -> RatingEvent {
    RatingEvent::Rated {
        game: game.into(),
        players: players.iter().map(|p| name(p)).collect(),
        ranks: ranks.to_vec(),
    }
}

fn fold(events: &[RatingEvent]) -> Ratings {
    let mut ratings = Ratings::default();
    for event in events {
        ratings.apply(event);
    }
    ratings
}

fn value(ratings: &Ratings, pool: Pool, player: &str) -> (f64, f64, u32) {
    let rating = ratings.rating(pool, &name(player)).unwrap();
    (rating.value, rating.deviation, rating.games)
}

#[test]
fn duels_are_rated_by_glicko2_one_game_a_period() {
    let ratings = fold(&[
        rated("g1", &["Ada", "Brun"], &[1, 2]),
        rated("g2", &["Brun", "Cy"], &[1, 1]),
    ]);
    let config = Glicko2Config::new();
    let (ada, brun) = glicko2(
        &Glicko2Rating::new(),
        &Glicko2Rating::new(),
        &Outcomes::WIN,
        &config,
    );
    let (brun, cy) = glicko2(&brun, &Glicko2Rating::new(), &Outcomes::DRAW, &config);
    assert_eq!(value(&ratings, Pool::Duel, "Ada"), (ada.rating, ada.deviation, 1));
    assert_eq!(
        value(&ratings, Pool::Duel, "Brun"),
        (brun.rating, brun.deviation, 2)
    );
    assert_eq!(value(&ratings, Pool::Duel, "Cy"), (cy.rating, cy.deviation, 1));
    assert!(ada.rating > 1500.0 && value(&ratings, Pool::Duel, "Ada").0 > 1500.0);
    assert_eq!(ratings.rating(Pool::Multiplayer, &name("Ada")), None);

    // The second seat winning is a loss for the first.
    let ratings = fold(&[rated("g1", &["Ada", "Brun"], &[2, 1])]);
    let (ada, _) = glicko2(
        &Glicko2Rating::new(),
        &Glicko2Rating::new(),
        &Outcomes::LOSS,
        &config,
    );
    assert_eq!(value(&ratings, Pool::Duel, "Ada").0, ada.rating);
    assert!(value(&ratings, Pool::Duel, "Brun").0 > 1500.0);
}

#[test]
fn tables_of_3_to_5_are_rated_by_weng_lin_each_player_a_team_of_one() {
    let events = [
        rated("g1", &["Ada", "Brun", "Cy", "Dot"], &[2, 1, 3, 3]),
        rated("g2", &["Cy", "Ada", "Eve"], &[1, 2, 3]),
    ];
    let ratings = fold(&events);
    let config = WengLinConfig::new();
    let fresh = [WengLinRating::new()];
    let outcome = MultiTeamOutcome::new;
    let first = weng_lin_multi_team(
        &[
            (&fresh[..], outcome(2)),
            (&fresh[..], outcome(1)),
            (&fresh[..], outcome(3)),
            (&fresh[..], outcome(3)),
        ],
        &config,
    );
    let (ada, brun, cy, dot) = (first[0][0], first[1][0], first[2][0], first[3][0]);
    let second = weng_lin_multi_team(
        &[
            (&[cy][..], outcome(1)),
            (&[ada][..], outcome(2)),
            (&fresh[..], outcome(3)),
        ],
        &config,
    );
    for (player, expected, games) in [
        ("Brun", brun, 1),
        ("Dot", dot, 1),
        ("Cy", second[0][0], 2),
        ("Ada", second[1][0], 2),
        ("Eve", second[2][0], 1),
    ] {
        assert_eq!(
            value(&ratings, Pool::Multiplayer, player),
            (expected.rating, expected.uncertainty, games),
            "{player}"
        );
    }
    assert!(brun.rating > 25.0 && dot.rating < 25.0);
    assert_eq!(ratings.rating(Pool::Duel, &name("Ada")), None);
}

#[test]
fn the_history_lists_each_change_in_order_and_the_leaderboard_sorts_by_value() {
    let ratings = fold(&[
        rated("g1", &["Ada", "Brun"], &[1, 2]),
        rated("g2", &["Ada", "Brun", "Cy"], &[3, 1, 2]),
        rated("g3", &["Cy", "Ada"], &[2, 1]),
    ]);
    let history = ratings.history(&name("Ada"));
    let games: Vec<(&str, Pool)> = history.iter().map(|c| (c.game.as_str(), c.pool)).collect();
    assert_eq!(
        games,
        vec![("g1", Pool::Duel), ("g2", Pool::Multiplayer), ("g3", Pool::Duel)]
    );
    assert_eq!(
        (
            history[0].before.value,
            history[0].before.deviation,
            history[0].before.games
        ),
        (1500.0, 350.0, 0)
    );
    assert_eq!(
        history[2].before, history[0].after,
        "g3 starts from g1's duel rating"
    );
    assert_eq!(history[1].before.value, 25.0);
    assert!(history[1].after.value < 25.0, "last of three");
    assert_eq!(Some(history[2].after), ratings.rating(Pool::Duel, &name("Ada")));
    assert!(ratings.history(&name("Nobody")).is_empty());

    let board: Vec<String> = ratings
        .leaderboard(Pool::Duel)
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(board, vec!["Ada", "Cy", "Brun"]);
    // Equal values fall back to the name.
    let equal = fold(&[rated("g1", &["Zed", "Abe"], &[1, 1])]);
    let board: Vec<String> = equal
        .leaderboard(Pool::Duel)
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert_eq!(board, vec!["Abe", "Zed"]);
}

#[test]
fn folding_the_same_events_twice_gives_bit_identical_ratings() {
    let mut rng = Rng::new(20);
    let players = names(12);
    let events: Vec<RatingEvent> = (0..400)
        .map(|g| {
            let seats = 2 + rng.below(4);
            let mut table: Vec<PlayerName> = Vec::new();
            while table.len() < seats {
                let p = players[rng.below(players.len())].clone();
                if !table.contains(&p) {
                    table.push(p);
                }
            }
            let scores: Vec<u32> = (0..seats).map(|_| rng.below(5) as u32).collect();
            RatingEvent::Rated {
                game: format!("g{g}"),
                players: table,
                ranks: ranks_of(&scores),
            }
        })
        .collect();
    let (first, second) = (fold(&events), fold(&events));
    for pool in [Pool::Duel, Pool::Multiplayer] {
        let bits = |ratings: &Ratings| -> Vec<(PlayerName, u64, u64, u32)> {
            ratings
                .leaderboard(pool)
                .into_iter()
                .map(|(p, r)| (p, r.value.to_bits(), r.deviation.to_bits(), r.games))
                .collect()
        };
        assert_eq!(bits(&first), bits(&second));
        assert_eq!(bits(&first).len(), 12);
    }
    for player in &players {
        assert_eq!(first.history(player), second.history(player));
    }
}

#[test]
fn malformed_or_repeated_games_are_ignored() {
    let valid = rated("g1", &["Ada", "Brun"], &[1, 2]);
    let baseline = fold(std::slice::from_ref(&valid));
    for ignored in [
        rated("g2", &["Ada", "Ada"], &[1, 2]),
        rated("g3", &["Ada", "Brun"], &[1]),
        rated("g4", &["Ada", "Brun", "Cy"], &[1, 2]),
        rated("g5", &["Ada"], &[1]),
        rated(
            "g6",
            &["Ada", "Brun", "Cy", "Dot", "Eve", "Fay"],
            &[1, 2, 3, 4, 5, 6],
        ),
        rated("g7", &["Ada", "Brun"], &[0, 1]),
        rated("g1", &["Ada", "Brun"], &[2, 1]),
    ] {
        let ratings = fold(&[valid.clone(), ignored.clone()]);
        for player in ["Ada", "Brun", "Cy"] {
            assert_eq!(
                ratings.history(&name(player)),
                baseline.history(&name(player)),
                "{ignored:?}"
            );
        }
        assert_eq!(ratings.leaderboard(Pool::Multiplayer), vec![], "{ignored:?}");
    }
}
