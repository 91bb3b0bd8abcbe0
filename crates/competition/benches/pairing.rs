//! Pairing benchmarks (divan). Run with
//! `cargo bench -p carcassonne-competition --bench pairing`.
//!
//! Each benchmark pairs one round of a 64-player Swiss of 7 rounds whose
//! earlier rounds were played with seeded random results: the time to
//! pair round r from the state before it (standings, meetings and the
//! search), in duels and in tables of 4. Target: every round well under
//! 100 ms on one core (a server pairs while players wait).

use std::sync::LazyLock;

use carcassonne_competition::*;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const PLAYERS: usize = 64;
const ROUNDS: u32 = 7;

/// A small seeded generator (xorshift64*): the same results every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

/// The tournament before each round, 1 to 7.
fn states(table_size: u8) -> Vec<Tournament> {
    let spec = Spec {
        name: "Bench".into(),
        organiser: None,
        participants: (0..PLAYERS)
            .map(|i| PlayerName::new(format!("p{i:02}")).expect("a valid name"))
            .collect(),
        house_bots: Default::default(),
        format: Format::Swiss { rounds: ROUNDS },
        table_size,
        table_points: Spec::default_table_points(table_size),
        games_per_match: 1,
        duplicate_bags: false,
        rated: false,
        games: serde_json::Value::Null,
    };
    let mut rng = Rng(0x5EED);
    let mut tournament = Tournament::created("bench", spec, [7; 32]);
    let mut states = Vec::new();
    while !tournament.is_finished() {
        states.push(tournament.clone());
        for event in tournament.decide(&TournamentCommand::Advance).expect("advance") {
            tournament.apply(&event);
        }
        let pending: Vec<(String, usize)> = tournament
            .pending_games()
            .map(|g| (g.id, g.seats.len()))
            .collect();
        for (game, seats) in pending {
            let scores: Vec<u32> = (0..seats).map(|_| rng.below(100) as u32).collect();
            let ranks = scores
                .iter()
                .map(|s| 1 + scores.iter().filter(|t| *t > s).count() as u8)
                .collect();
            let result = GameResult::Ranked { ranks, scores };
            tournament.apply(&TournamentEvent::GameEnded { game, result });
        }
    }
    states.truncate(ROUNDS as usize);
    states
}

static DUELS: LazyLock<Vec<Tournament>> = LazyLock::new(|| states(2));
static TABLES_OF_4: LazyLock<Vec<Tournament>> = LazyLock::new(|| states(4));

#[divan::bench(args = 1..=ROUNDS)]
fn swiss_64_duels(bencher: Bencher, round: u32) {
    let before = &DUELS[round as usize - 1];
    bencher.bench(|| black_box(before.pairing_for_next_round()));
}

#[divan::bench(args = 1..=ROUNDS)]
fn swiss_64_tables_of_4(bencher: Bencher, round: u32) {
    let before = &TABLES_OF_4[round as usize - 1];
    bencher.bench(|| black_box(before.pairing_for_next_round()));
}
