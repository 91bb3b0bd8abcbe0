//! The bots' strength and speed. `cargo bench -p carcassonne-bots --bench strength`.
//!
//! 1. Speed: random playouts from a mid-game position (the search's
//!    simulations) per second on one core, against the engine's own rate
//!    of whole random 2-player games in the same run (the baseline); and
//!    the time of each decision of `greedy` and `random` over whole games
//!    (median and slowest), and the search's iterations a millisecond, in
//!    a 2-player base game and a 5-player River + Count game: what the
//!    server's admission of bot games reckons with
//!    (`src/games/bot_seats/admission.rs`).
//! 2. Strength: matches of `STRENGTH_GAMES` [20] 2-player games per pair
//!    of levels, the first seat alternating, for the base game and for
//!    River + Count: the first level's win rate with its 95% Wilson
//!    interval, and its average score margin. Pairs: greedy vs random,
//!    search vs greedy, strong search vs greedy, strong search vs search
//!    (`STRENGTH_PAIRS`, a comma-separated subset of `greedy`, `search`,
//!    `strong-greedy`, `strong`, picks some). `STRENGTH_ITERATIONS` [500]
//!    is the search's budget a decision, `STRENGTH_STRONG` [2000] the
//!    strong one's; `STRENGTH_THREADS` [1] plays games side by side (the
//!    results do not depend on it); `STRENGTH_RULES` (`base` or
//!    `river-count`) plays one rule set only; `STRENGTH_SPEED=0` skips
//!    part 1.

// A bench: a failed step should stop it loudly.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use carcassonne_bots::{Bot, Level};
use carcassonne_engine::{Actor, Expansion, Game, Rules, Seed, Setup, Stream};

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn new_game(rules: Rules, seed: u64) -> Game {
    new_table(rules, 2, seed)
}

fn new_table(rules: Rules, players: usize, seed: u64) -> Game {
    let mut game = Game::new(Setup {
        rules,
        players: (0..players).map(|i| format!("P{i}")).collect(),
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    });
    game.run_automatic(&mut Vec::new(), &mut ());
    game
}

/// Plays `game` to its end, seat i by `bots[i]`.
fn play(game: &mut Game, bots: &mut [Bot]) {
    while let Some(seat) = game.pending().player() {
        let (_, command) = bots[seat.index()].decide(&game.public()).unwrap();
        game.execute(Actor::Seat(seat), &command, &mut ()).unwrap();
    }
}

fn speed() {
    let randoms = [
        Bot::new(Level::Random, Seed::from_u64(1)),
        Bot::new(Level::Random, Seed::from_u64(3)),
    ];
    // The baseline: the engine's own whole random games (no bot, no
    // public view made per decision).
    let started = Instant::now();
    let mut games = 0u64;
    let mut pick = Stream::new(&Seed::from_u64(5));
    while started.elapsed().as_secs_f64() < 2.0 {
        let mut game = new_game(Rules::default(), games);
        let mut events = Vec::with_capacity(256);
        while let Some(seat) = game.pending().player() {
            let count = game.legal_command_count() as u32;
            let command = game.legal_command(pick.below(count) as usize).unwrap();
            game.execute_into(game.time(), Actor::Seat(seat), &command, &mut events, &mut ())
                .unwrap();
        }
        games += 1;
    }
    let [mut random, _] = randoms;
    let games_per_second = games as f64 / started.elapsed().as_secs_f64();
    // The search's simulations from turn 30 of a game.
    let mut game = new_game(Rules::default(), 99);
    for _ in 0..60 {
        let seat = game.pending().player().unwrap();
        let (_, command) = random.decide(&game.public()).unwrap();
        game.execute(Actor::Seat(seat), &command, &mut ()).unwrap();
    }
    let seat = game.pending().player().unwrap();
    let mut searcher = Bot::new(Level::Random, Seed::from_u64(2));
    let started = Instant::now();
    let searched = searcher
        .search(&game.public(), seat, |_| started.elapsed().as_secs_f64() >= 2.0)
        .unwrap();
    let simulations = f64::from(searched.iterations) / started.elapsed().as_secs_f64();
    println!("speed, one core:");
    println!("  whole random 2-player games (baseline): {games_per_second:.0}/s");
    println!(
        "  search iterations from turn 30 (a deal, a walk, a random playout): {simulations:.0}/s ({:.2} of the baseline)",
        simulations / games_per_second
    );
    let both = Rules::default().with(Expansion::River).with(Expansion::Count);
    for (label, rules, players) in [
        ("base, 2 players", Rules::default(), 2),
        ("River+Count, 5 players", both, 5),
    ] {
        decision_times(label, rules, players);
    }
}

/// Each decision's time of `random` and `greedy` over whole games of
/// every seat played by that level, and a search's iterations a
/// millisecond from every 10th decision of them.
fn decision_times(label: &str, rules: Rules, players: usize) {
    for level in [Level::Random, Level::Greedy] {
        let mut times = Vec::new();
        for seed in 0..3 {
            let mut game = new_table(rules, players, 500 + seed);
            let mut bots: Vec<Bot> = (0..players)
                .map(|i| Bot::new(level, Seed::from_u64(seed * 10 + i as u64)))
                .collect();
            while let Some(seat) = game.pending().player() {
                let started = Instant::now();
                let (_, command) = bots[seat.index()].decide(&game.public()).unwrap();
                times.push(started.elapsed().as_secs_f64() * 1000.0);
                game.execute(Actor::Seat(seat), &command, &mut ()).unwrap();
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "  {label}: {} decision: median {:.3} ms, slowest {:.3} ms ({} decisions)",
            level.name(),
            times[times.len() / 2],
            times[times.len() - 1],
            times.len()
        );
    }
    let mut game = new_table(rules, players, 600);
    let mut random = Bot::new(Level::Random, Seed::from_u64(7));
    let mut searcher = Bot::new(Level::Random, Seed::from_u64(8));
    let mut rates = Vec::new();
    let mut decision = 0;
    while let Some(seat) = game.pending().player() {
        if decision % 10 == 0 {
            let started = Instant::now();
            let searched = searcher
                .search(&game.public(), seat, |_| started.elapsed().as_secs_f64() >= 0.05)
                .unwrap();
            rates.push(f64::from(searched.iterations) / (started.elapsed().as_secs_f64() * 1000.0));
        }
        decision += 1;
        let (_, command) = random.decide(&game.public()).unwrap();
        game.execute(Actor::Seat(seat), &command, &mut ()).unwrap();
    }
    rates.sort_by(f64::total_cmp);
    println!(
        "  {label}: search iterations a millisecond: median {:.1}, lowest {:.1} ({} positions)",
        rates[rates.len() / 2],
        rates[0],
        rates.len()
    );
}

/// Wilson's 95% interval of `wins` in `n`.
fn wilson(wins: f64, n: f64) -> (f64, f64) {
    let z = 1.96;
    let p = wins / n;
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / (1.0 + z * z / n);
    (centre - half, centre + half)
}

/// One game of a match: `first` in seat `n % 2`; its points (1, ½, 0)
/// and its margin.
fn one_game(first: Level, second: Level, rules: Rules, n: u32) -> (f64, i64) {
    let first_seat = (n % 2) as usize;
    let mut bots = vec![
        Bot::new(second, Seed::from_u64(u64::from(n) * 2 + 1)),
        Bot::new(second, Seed::from_u64(u64::from(n) * 2 + 2)),
    ];
    bots[first_seat] = Bot::new(first, Seed::from_u64(u64::from(n) * 2 + 1));
    let mut game = new_game(rules, 10_000 + u64::from(n / 2));
    play(&mut game, &mut bots);
    let scores = game.scores();
    let (mine, theirs) = (scores[first_seat], scores[1 - first_seat]);
    let points = match mine.cmp(&theirs) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    };
    (points, i64::from(mine) - i64::from(theirs))
}

/// A match of `games` games, spread over `threads` threads (each game is
/// deterministic: the result does not depend on the threads).
fn matches(first: Level, second: Level, rules: Rules, label: &str, games: u32, threads: u32) {
    let started = Instant::now();
    let results: Vec<(f64, i64)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..games)
                        .step_by(threads as usize)
                        .map(|n| one_game(first, second, rules, n))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });
    let wins: f64 = results.iter().map(|r| r.0).sum();
    let margin: i64 = results.iter().map(|r| r.1).sum();
    let n = f64::from(games);
    let (low, high) = wilson(wins, n);
    println!(
        "  {label}: {} vs {}: wins {:.1}% (95% CI {:.1}–{:.1}%), margin {:+.1} a game, {games} games in {:.0} s",
        first.name(),
        second.name(),
        100.0 * wins / n,
        100.0 * low,
        100.0 * high,
        margin as f64 / n,
        started.elapsed().as_secs_f64()
    );
}

fn main() {
    if env("STRENGTH_SPEED", 1) == 1 {
        speed();
    }
    let games = env("STRENGTH_GAMES", 20);
    let threads = env("STRENGTH_THREADS", 1).max(1);
    let search = Level::Search {
        iterations: env("STRENGTH_ITERATIONS", 500),
    };
    let strong = Level::Search {
        iterations: env("STRENGTH_STRONG", 2_000),
    };
    let only = std::env::var("STRENGTH_PAIRS").unwrap_or_default();
    let pairs = [
        ("greedy", Level::Greedy, Level::Random),
        ("search", search, Level::Greedy),
        ("strong-greedy", strong, Level::Greedy),
        ("strong", strong, search),
    ];
    println!("strength, 2 players, first seat alternating:");
    let base = Rules::default();
    let both = base.with(Expansion::River).with(Expansion::Count);
    let only_rules = std::env::var("STRENGTH_RULES").unwrap_or_default();
    for (rules, label, key) in [(base, "base", "base"), (both, "River+Count", "river-count")] {
        if !only_rules.is_empty() && only_rules != key {
            continue;
        }
        for (name, first, second) in pairs {
            if only.is_empty() || only.split(',').any(|p| p.trim() == name) {
                matches(first, second, rules, label, games, threads);
            }
        }
    }
}
