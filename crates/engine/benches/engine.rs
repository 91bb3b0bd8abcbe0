//! Engine benchmarks (divan). Run with
//! `cargo bench -p carcassonne-engine --bench engine`.
//!
//! The machine this runs on is noisy, so every figure should be read as a
//! ratio to the `baseline` group of the same run:
//! - `games`: complete random games, one core, in games/s, per rule set,
//!   played as a playout plays (choices counted and picked by index, no
//!   allocation); `games_listing`, the base game with the choices listed,
//!   is its baseline; target >= 20,000 base games/s;
//! - `legal_placements`: every legal placement of the pending tile on a
//!   late-game board (about 60 tiles placed); target median < 20 µs;
//! - `fold`: rebuilding recorded games from their events, in events/s;
//!   target >= 2 million events/s;
//! - the memory of a finished game's state is printed once before the
//!   benchmarks run; target < 64 KiB.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use carcassonne_engine::*;
use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

fn main() {
    print_memory();
    divan::main();
}

// ---- Rule sets ----------------------------------------------------------

/// A rule set to benchmark, named for divan's output.
#[derive(Clone, Copy)]
struct Variant {
    name: &'static str,
    expansions: &'static [Expansion],
}

impl Variant {
    fn rules(self) -> Rules {
        self.expansions
            .iter()
            .fold(Rules::default(), |rules, &e| rules.with(e))
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name)
    }
}

/// Every rule set the game benchmarks run over: a new combination is one
/// more line here.
const VARIANTS: &[Variant] = &[
    Variant {
        name: "base",
        expansions: &[],
    },
    Variant {
        name: "river",
        expansions: &[Expansion::River],
    },
    Variant {
        name: "count",
        expansions: &[Expansion::Count],
    },
    Variant {
        name: "river+count",
        expansions: &[Expansion::River, Expansion::Count],
    },
];

// ---- Driving random games -----------------------------------------------

/// xorshift64*: the players' choices. Not the engine's shuffle.
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> XorShift {
        // Never zero, and distinct seeds give distinct streams.
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 32) as usize * n) >> 32
    }
}

fn setup(rules: Rules, players: usize, seed: u64) -> Setup {
    Setup {
        rules,
        players: (0..players).map(|i| format!("P{i}")).collect(),
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    }
}

/// Plays one decision at random, the way a playout does: counts the
/// legal commands, picks one by its index and executes it into the game's
/// event list, allocating nothing. Returns false when the game is over.
fn play_one(game: &mut Game, rng: &mut XorShift, events: &mut Vec<Event>) -> bool {
    let Some(player) = game.pending().player() else {
        return false;
    };
    let command = game
        .legal_command(rng.below(game.legal_command_count()))
        .expect("an index below the count");
    game.execute_into(game.time(), Actor::Seat(player), &command, events, &mut ())
        .expect("a listed move is legal");
    true
}

/// [`play_one`] the plain way (the baseline of `games`): lists the legal
/// placements or follower places, and executes into a new event list.
fn play_one_listing(game: &mut Game, rng: &mut XorShift, events: &mut Vec<Event>) -> bool {
    let Some(player) = game.pending().player() else {
        return false;
    };
    let command = match game.pending() {
        Pending::PlaceTile { .. } => {
            let moves = game.legal_placements();
            let m = moves[rng.below(moves.len())];
            Command::PlaceTile {
                pos: m.pos,
                rotation: m.rotation,
            }
        }
        Pending::PlaceFollower { .. } => {
            let places = game.legal_follower_places();
            Command::PlaceFollower(places.get(rng.below(places.len() + 1)).copied())
        }
        _ => {
            let choices = game.legal_commands();
            choices[rng.below(choices.len())]
        }
    };
    let new = game
        .execute(Actor::Seat(player), &command, &mut ())
        .expect("a listed move is legal");
    events.extend(new);
    true
}

/// A complete random game: its final state and its events.
fn random_game(rules: Rules, players: usize, seed: u64) -> (Game, Vec<Event>) {
    random_game_by(rules, players, seed, play_one)
}

fn random_game_by(
    rules: Rules,
    players: usize,
    seed: u64,
    mut play: impl FnMut(&mut Game, &mut XorShift, &mut Vec<Event>) -> bool,
) -> (Game, Vec<Event>) {
    let setup = setup(rules, players, seed);
    let mut game = Game::new(setup.clone());
    let mut events = Vec::with_capacity(256);
    events.push(Event::Created(setup));
    game.run_automatic(&mut events, &mut ());
    let mut rng = XorShift::new(seed);
    while play(&mut game, &mut rng, &mut events) {}
    (game, events)
}

/// A seeded random game played until `placed` tiles lie on the board and
/// the next tile waits to be placed.
fn late_game(rules: Rules, seed: u64, placed: usize) -> Game {
    let setup = setup(rules, 2, seed);
    let mut game = Game::new(setup);
    let mut events = Vec::new();
    game.run_automatic(&mut events, &mut ());
    let mut rng = XorShift::new(seed);
    loop {
        if game.tiles().len() >= placed && matches!(game.pending(), Pending::PlaceTile { .. }) {
            return game;
        }
        assert!(
            play_one(&mut game, &mut rng, &mut events),
            "the game ended too early"
        );
    }
}

/// A fresh seed per game, so that every iteration plays a different game.
fn next_seed() -> u64 {
    static SEED: AtomicU64 = AtomicU64::new(1);
    SEED.fetch_add(1, Ordering::Relaxed)
}

// ---- Benchmarks ---------------------------------------------------------

/// The late-game board of `legal_placements`: this seed, this many tiles on
/// the board (the start tile included), 2 players, base game.
const LATE_SEED: u64 = 42;
const LATE_TILES: usize = 60;

/// Complete random 2-player games, in games/s.
#[divan::bench(args = VARIANTS)]
fn games(bencher: Bencher, variant: Variant) {
    let rules = variant.rules();
    bencher
        .counter(ItemsCount::new(1usize))
        .with_inputs(next_seed)
        .bench_local_values(|seed| random_game(rules, 2, seed));
}

/// The baseline of `games`: the same base games, choices listed.
#[divan::bench]
fn games_listing(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(1usize))
        .with_inputs(next_seed)
        .bench_local_values(|seed| random_game_by(Rules::default(), 2, seed, play_one_listing));
}

/// Every legal placement of the pending tile on a late-game board.
#[divan::bench_group]
mod legal_placements {
    use super::*;

    fn board() -> (Game, TileKind) {
        let game = late_game(Rules::default(), LATE_SEED, LATE_TILES);
        let Pending::PlaceTile { tile, .. } = game.pending() else {
            unreachable!("late_game stops at a placement")
        };
        (game, tile)
    }

    /// `Game::legal_placements`, which collects them into a `Vec`.
    #[divan::bench]
    fn collect(bencher: Bencher) {
        let (game, _) = board();
        bencher.bench_local(|| black_box(&game).legal_placements());
    }

    /// `Game::for_each_placement`, counting them without allocating.
    #[divan::bench]
    fn for_each(bencher: Bencher) {
        let (game, tile) = board();
        bencher.bench_local(|| {
            let mut n = 0usize;
            black_box(&game).for_each_placement(black_box(tile), |_| {
                n += 1;
                false
            });
            n
        });
    }

    /// `Game::for_each_placement` for each of the 24 base kinds on the same
    /// board, in kinds/s (the median divided by 24 is the cost per tile).
    #[divan::bench]
    fn every_base_kind(bencher: Bencher) {
        let (game, _) = board();
        let kinds: Vec<TileKind> = BASE_COUNTS
            .iter()
            .map(|(name, _)| TileKind::from_name(name).expect("base kind"))
            .collect();
        bencher.counter(ItemsCount::new(kinds.len())).bench_local(|| {
            let mut n = 0usize;
            for &kind in black_box(&kinds) {
                black_box(&game).for_each_placement(kind, |_| {
                    n += 1;
                    false
                });
            }
            n
        });
    }
}

/// Rebuilding recorded games from their events, in events/s.
#[divan::bench(args = VARIANTS)]
fn fold(bencher: Bencher, variant: Variant) {
    let games: Vec<Vec<Event>> = (0..16)
        .map(|seed| random_game(variant.rules(), 2, seed).1)
        .collect();
    let events: usize = games.iter().map(Vec::len).sum();
    bencher.counter(ItemsCount::new(events)).bench_local(|| {
        for events in black_box(&games) {
            black_box(Game::fold(events));
        }
    });
}

/// Reference points of the same run, to report the others as ratios.
#[divan::bench_group]
mod baseline {
    use super::*;

    /// Cloning a finished 2-player base game (a memory-bound copy).
    #[divan::bench]
    fn clone_finished_game(bencher: Bencher) {
        let (game, _) = random_game(Rules::default(), 2, 7);
        bencher.bench_local(|| black_box(&game).clone());
    }

    /// A game's setup only: the shuffle and the first draw.
    #[divan::bench]
    fn new_game(bencher: Bencher) {
        bencher.with_inputs(next_seed).bench_local_values(|seed| {
            let mut game = Game::new(setup(Rules::default(), 2, seed));
            game.run_automatic(&mut Vec::new(), &mut ());
            game
        });
    }

    /// The players' PRNG alone, as many draws as a game makes (about 71
    /// placements and 71 follower choices).
    #[divan::bench]
    fn prng_only(bencher: Bencher) {
        bencher.with_inputs(next_seed).bench_local_values(|seed| {
            let mut rng = XorShift::new(seed);
            let mut acc = 0usize;
            for i in 0..142 {
                acc = acc.wrapping_add(rng.below(black_box(8 + i % 30)));
            }
            acc
        });
    }
}

/// Prints the memory of finished games once (not a timing).
fn print_memory() {
    println!("memory of a finished game's state (Game::memory_bytes, target < 64 KiB):");
    for variant in VARIANTS {
        for players in [2, 5] {
            let mut bytes: Vec<usize> = (0..32)
                .map(|seed| random_game(variant.rules(), players, seed).0.memory_bytes())
                .collect();
            bytes.sort_unstable();
            println!(
                "  {variant:<6} {players} players, 32 games: min {} B, median {} B, max {} B ({:.1} KiB)",
                bytes[0],
                bytes[bytes.len() / 2],
                bytes[bytes.len() - 1],
                bytes[bytes.len() - 1] as f64 / 1024.0
            );
        }
    }
    let late = late_game(Rules::default(), LATE_SEED, LATE_TILES);
    println!(
        "late-game board for legal_placements: {} tiles placed, {} legal placements of {}",
        late.tiles().len(),
        late.legal_placements().len(),
        match late.pending() {
            Pending::PlaceTile { tile, .. } => tile.name(),
            _ => "?",
        }
    );
    println!();
}
