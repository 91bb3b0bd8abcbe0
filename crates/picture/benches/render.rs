//! Rendering benchmarks. Run with
//! `cargo bench -p carcassonne-picture --bench render`.
//!
//! The board of a finished 5-player game with the River and the Count
//! (played by random bots), drawn as SVG (target: median under 2 ms) and
//! as PNG (target: median under 50 ms). The machine is noisy, so each
//! figure is also given as a ratio to baselines measured in the same run:
//! folding the same game's events into its state, and the engine's text
//! drawing of the same board.

use std::hint::black_box;
use std::time::{Duration, Instant};

use carcassonne_engine::{Actor, Event, Expansion, Game, Rules, Seed, Setup, render};
use carcassonne_picture::{BoardOptions, board_svg, rasterise, svg_to_png};

/// xorshift64: the bots' choices (not the engine's shuffle).
struct Bot(u64);

impl Bot {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// A finished game of `players` bots with the River and the Count, and
/// its events.
fn finished_game(players: usize, seed: u64) -> (Game, Vec<Event>) {
    let setup = Setup {
        rules: Rules::default().with(Expansion::River).with(Expansion::Count),
        players: (0..players).map(|i| format!("Bot {i}")).collect(),
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    };
    let mut game = Game::new(setup.clone());
    let mut events = vec![Event::Created(setup)];
    game.run_automatic(&mut events, &mut ());
    let mut bot = Bot(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    while let Some(player) = game.pending().player() {
        let choices = game.legal_commands();
        let Some(&command) = choices.get(bot.below(choices.len())) else {
            break;
        };
        match game.execute(Actor::Seat(player), &command, &mut ()) {
            Ok(new) => events.extend(new),
            Err(e) => panic!("a legal command was refused: {e}"),
        }
    }
    assert!(game.is_finished(), "the bots' game did not finish");
    (game, events)
}

/// The median of `runs` timed calls of `f`, after a few untimed ones.
fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    for _ in 0..3 {
        black_box(f());
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let (game, events) = finished_game(5, 7);
    let options = BoardOptions::default();
    let svg = board_svg(&game, &options);
    let raster = rasterise(&svg, 1.0).unwrap_or_else(|e| panic!("{e}"));
    let png = svg_to_png(&svg).unwrap_or_else(|e| panic!("{e}"));
    println!(
        "board: {} tiles, {} followers on it; SVG {} bytes, PNG {} x {} px, {} bytes",
        game.tiles().len(),
        game.followers().count(),
        svg.len(),
        raster.width,
        raster.height,
        png.len()
    );

    let fold = median(101, || Game::fold(&events));
    let text = median(101, || render::board(&game));
    let to_svg = median(101, || board_svg(&game, &options));
    let to_raster = median(41, || rasterise(&svg, 1.0));
    let to_png = median(41, || svg_to_png(&board_svg(&game, &options)));

    println!();
    println!(
        "{:<34} {:>10} {:>10} {:>10} {:>8}",
        "median of", "ms", "/ fold", "/ text", "target"
    );
    let rows = [
        ("baseline: fold the game's events", fold, None),
        ("baseline: engine's text board", text, None),
        ("board_svg", to_svg, Some(2.0)),
        ("rasterise the SVG (no PNG)", to_raster, None),
        ("board_svg + svg_to_png", to_png, Some(50.0)),
    ];
    for (name, time, target) in rows {
        let verdict = match target {
            Some(limit) if ms(time) < limit => format!("< {limit} ms met"),
            Some(limit) => format!("< {limit} ms MISSED"),
            None => String::new(),
        };
        println!(
            "{name:<34} {:>10.3} {:>10.1} {:>10.1}  {verdict}",
            ms(time),
            ms(time) / ms(fold),
            ms(time) / ms(text),
        );
    }
}
