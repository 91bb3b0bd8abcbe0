//! Round robins: every pair (or every table) exactly once.

use std::collections::BTreeSet;

use carcassonne_competition::*;

use crate::support::*;

/// Plays a round robin of `n` in tables of `k` to the end; checks that
/// every k-subset played exactly once, that no one sat twice in a round,
/// and returns the byes by round.
fn check_every_table_once(n: usize, k: u8) -> Vec<Vec<PlayerName>> {
    let mut rng = Rng::new(n as u64 * 10 + u64::from(k));
    let mut run = Run::new("rr", spec(n, Format::RoundRobin, k), rng.seed());
    let rounds = run.play_to_end(&mut rng);
    assert_eq!(rounds, run.tournament.rounds(), "n = {n}, k = {k}");
    assert_eq!(run.events.last(), Some(&TournamentEvent::Finished));
    let mut tables = BTreeSet::new();
    for round in run.tables() {
        let mut seated = BTreeSet::new();
        for table in round {
            assert_eq!(
                table.len(),
                usize::from(k),
                "n = {n}: a short table without a withdrawal"
            );
            assert!(
                table.iter().all(|p| seated.insert(p.clone())),
                "n = {n}, k = {k}: someone sits twice"
            );
            let mut sorted = table.clone();
            sorted.sort();
            assert!(tables.insert(sorted), "n = {n}, k = {k}: {table:?} twice");
        }
    }
    let binomial = (0..usize::from(k)).fold(1, |acc, i| acc * (n - i) / (i + 1));
    assert_eq!(tables.len(), binomial, "n = {n}, k = {k}");
    run.tournament
        .paired_rounds()
        .iter()
        .map(|r| r.byes.clone())
        .collect()
}

#[test]
fn a_round_robin_of_4_in_duels_is_3_rounds_without_byes() {
    let byes = check_every_table_once(4, 2);
    assert_eq!(byes.len(), 3);
    assert!(byes.iter().all(Vec::is_empty));
}

#[test]
fn a_round_robin_of_5_in_duels_is_5_rounds_with_one_bye_each() {
    let byes = check_every_table_once(5, 2);
    assert_eq!(byes.len(), 5);
    assert!(byes.iter().all(|b| b.len() == 1));
    assert_eq!(
        byes.iter().flatten().collect::<BTreeSet<_>>().len(),
        5,
        "everyone once"
    );
}

#[test]
fn round_robins_in_tables_of_3_play_every_triple_once() {
    for (n, rounds) in [(3, 1), (4, 4), (6, 10)] {
        let byes = check_every_table_once(n, 3);
        assert_eq!(byes.len(), rounds, "n = {n}");
        assert!(byes.iter().all(Vec::is_empty), "sitting out is no bye");
    }
}

#[test]
fn round_robin_duels_alternate_the_first_seat_of_the_fixed_player() {
    let mut rng = Rng::new(7);
    let mut run = Run::new("rr", spec(6, Format::RoundRobin, 2), [1; 32]);
    run.play_to_end(&mut rng);
    let lot = run.tournament.lot().to_vec();
    let fixed = &lot[5];
    let first_seats: Vec<bool> = run
        .tables()
        .iter()
        .map(|round| round.iter().any(|t| &t[0] == fixed))
        .collect();
    assert_eq!(first_seats, vec![false, true, false, true, false]);
}
