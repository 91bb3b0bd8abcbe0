//! The offline commands: `demo`, `score` and `verify` (`render` and
//! `tiles` are in `pictures.rs`). Their output
//! formats are part of the interface (`docs/record-format.md`): scripts read them.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::Context as _;
use carcassonne_engine::record::{Record, RecordError, Replay};
use carcassonne_engine::{
    Actor, Effect, Ending, Event, Game, Rules, ScoreChange, Scored, Seed, Setup, render,
};
use serde_json::{Value, json};

use crate::text::counted;

#[derive(clap::Args)]
pub struct DemoArgs {
    /// Seed of the draw order and of the bots' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of players, 2 to 5.
    #[arg(long, default_value_t = 2)]
    players: usize,
    /// Play with the River.
    #[arg(long)]
    river: bool,
    /// Play with The Count of Carcassonne.
    #[arg(long)]
    count: bool,
    /// Also write the game as a record: to FILE, or alone on standard
    /// output (`--record > game.json`, the board and scores then go to
    /// standard error).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    record: Option<String>,
}

#[derive(clap::Args)]
pub struct ScoreArgs {
    /// The record to score; `-` reads standard input.
    file: String,
    /// Print a JSON object: `scores` in seat order, `finished`, how the
    /// game ended (`ending`, `ending_seat`) and its `ranks`, and the
    /// breakdown by feature and rule.
    #[arg(long)]
    json: bool,
    /// Also draw the board.
    #[arg(long)]
    board: bool,
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The record to check; `-` reads standard input.
    file: String,
}

/// Exit status of a record that is unreadable or breaks a rule.
pub const INVALID: u8 = 1;

/// Writes to standard output; an error (such as a reader that went away,
/// `| head`) is returned, not a panic as with `print!`.
pub fn emit(text: &str) -> std::io::Result<()> {
    let mut out = crate::stdout::lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

pub fn read_input(file: &str) -> anyhow::Result<String> {
    if file == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading standard input")?;
        Ok(text)
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {file}"))
    }
}

fn load(file: &str, check_claim: bool) -> anyhow::Result<Result<(Record, Replay), RecordError>> {
    let text = read_input(file)?;
    Ok(Record::parse(&text).and_then(|record| {
        let replay = if check_claim {
            record.verify()
        } else {
            record.replay()
        }?;
        Ok((record, replay))
    }))
}

pub fn verify(args: &VerifyArgs) -> anyhow::Result<ExitCode> {
    match load(&args.file, true)? {
        Ok((record, replay)) => {
            let game = &replay.game;
            let ranks = ranks_shown(game)
                .map(|ranks| format!(", ranks {ranks:?}"))
                .unwrap_or_default();
            emit(&format!(
                "ok: {} turns, {}{ranks}, scores {:?}\n",
                record.turns.len(),
                state(game, |seat| format!("seat {seat}")),
                game.scores()
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            emit(&format!("{error}\n"))?;
            Ok(ExitCode::from(INVALID))
        }
    }
}

pub fn score(args: &ScoreArgs) -> anyhow::Result<ExitCode> {
    let (record, replay) = match load(&args.file, false)? {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("{error}");
            return Ok(ExitCode::from(INVALID));
        }
    };
    if args.json {
        let mut out = score_json(&record, &replay);
        if args.board {
            out["board"] = Value::String(render::board(&replay.game));
        }
        emit(&(serde_json::to_string_pretty(&out)? + "\n"))?;
    } else {
        if args.board {
            emit(&format!("{}\n", render::board(&replay.game)))?;
        }
        emit(&score_text(&record.players, &replay))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether the game runs or is over, and how it ended when that was
/// early: `finished (seat 1 resigned)`; `name` names a seat.
fn state(game: &Game, name: impl Fn(u8) -> String) -> String {
    match game.ending() {
        None => "in progress".to_owned(),
        Some(Ending::Normal) => "finished".to_owned(),
        Some(Ending::OutOfTime(seat)) => format!("finished ({} ran out of time)", name(seat.0)),
        Some(Ending::Resigned(seat)) => format!("finished ({} resigned)", name(seat.0)),
        Some(Ending::Aborted(seat)) => format!("finished (aborted by {})", name(seat.0)),
    }
}

/// The ranking, where it says more than the scores: once a seat went out
/// (T-11). A game that ended normally with every seat in ranks by score.
fn ranks_shown(game: &Game) -> Option<Vec<u8>> {
    let someone_out =
        (0..game.players() as u8).any(|s| game.out_reason(carcassonne_engine::Seat(s)).is_some());
    game.ranking().filter(|_| someone_out)
}

fn scored(replay: &Replay) -> impl Iterator<Item = (usize, &ScoreChange)> {
    replay.effects.iter().filter_map(|(turn, e)| match e {
        Effect::Scored(change) => Some((*turn, change)),
        _ => None,
    })
}

/// The JSON of `score --json`.
pub fn score_json(record: &Record, replay: &Replay) -> Value {
    let game = &replay.game;
    let players = record.players.len();
    let mut by_rule = serde_json::Map::new();
    let breakdown: Vec<Value> = scored(replay)
        .map(|(turn, c)| {
            let per_player = by_rule
                .entry(c.rule.as_str())
                .or_insert_with(|| json!(vec![0u32; players]));
            for seat in c.players.iter() {
                if let Some(total) = per_player.get_mut(seat.index()) {
                    *total = json!(total.as_u64().unwrap_or(0) + u64::from(c.points));
                }
            }
            json!({
                "turn": turn,
                "rule": c.rule.as_str(),
                "feature": feature_json(&c.scored),
                "players": c.players.iter().map(|s| s.index()).collect::<Vec<_>>(),
                "points": c.points,
            })
        })
        .collect();
    json!({
        "players": record.players,
        "scores": game.scores(),
        "finished": game.is_finished(),
        "ending": game.ending().map(Ending::name),
        "ending_seat": game.ending().and_then(Ending::seat).map(|s| s.0),
        "ranks": game.ranking(),
        "turns": record.turns.len(),
        "by_rule": by_rule,
        "breakdown": breakdown,
    })
}

fn feature_json(scored: &Scored) -> Value {
    match scored {
        Scored::Feature(f) => json!({
            "kind": f.kind.name(),
            "x": f.at.x,
            "y": f.at.y,
            "at": f.place.name(),
            "tiles": f.tiles,
            "pennants": f.pennants,
        }),
        Scored::CityOfCarcassonne => json!({ "kind": "city_of_carcassonne" }),
    }
}

fn feature_text(scored: &Scored) -> String {
    match scored {
        Scored::Feature(f) => {
            format!(
                "{} at {} {}, {}, {}",
                f.kind,
                f.at,
                f.place,
                counted(u32::from(f.tiles), "tile"),
                counted(u32::from(f.pennants), "pennant")
            )
        }
        Scored::CityOfCarcassonne => "the City of Carcassonne".to_owned(),
    }
}

/// The text of `score`.
pub fn score_text(players: &[String], replay: &Replay) -> String {
    let game = &replay.game;
    let width = players.iter().map(|p| p.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (name, score) in players.iter().zip(game.scores()) {
        out += &format!("{name:width$}  {score:>4}\n");
    }
    let name = |seat: u8| players.get(usize::from(seat)).cloned().unwrap_or_default();
    out += &format!(
        "{} after {}\n",
        state(game, name),
        counted(u32::from(game.draws()), "turn")
    );
    if let Some(ranks) = ranks_shown(game) {
        out += &format!("ranks {ranks:?}\n");
    }
    out += "\nbreakdown:\n";
    for (turn, c) in scored(replay) {
        let who: Vec<&str> = c
            .players
            .iter()
            .filter_map(|s| players.get(s.index()).map(String::as_str))
            .collect();
        out += &format!(
            "  turn {turn:>3}  {:<5}  {}: {} +{}\n",
            c.rule,
            feature_text(&c.scored),
            who.join(", "),
            c.points
        );
    }
    out
}

/// A tiny deterministic generator for the bots' choices.
struct Bot(u64);

impl Bot {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

pub fn demo(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let mut rules = Rules::default();
    if args.river {
        rules = rules.with(carcassonne_engine::Expansion::River);
    }
    if args.count {
        rules = rules.with(carcassonne_engine::Expansion::Count);
    }
    let setup = Setup {
        rules,
        // Named by seat, as the board draws their followers.
        players: (0..args.players).map(|i| format!("Bot {i}")).collect(),
        tiles: None,
        seed: Some(Seed::from_u64(args.seed)),
        time_control: None,
    };
    Game::check_setup(&setup)?;
    let mut game = Game::new(setup.clone());
    let mut events = vec![Event::Created(setup.clone())];
    game.run_automatic(&mut events, &mut ());
    let mut bot = Bot(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    while let Some(player) = game.pending().player() {
        let choices = game.legal_commands();
        let command = *choices
            .get(bot.below(choices.len()))
            .context("a pending decision with no legal choice")?;
        let new = game.execute(Actor::Seat(player), &command, &mut ())?;
        events.extend(new);
    }
    let record = Record::from_events(&events).context("the game has a creation event")?;
    let replay = record.replay()?;
    let summary = format!(
        "{}\n{}",
        render::board(&game),
        score_text(&setup.players, &replay)
    );
    match args.record.as_deref() {
        None => emit(&summary)?,
        // Standard output carries the record alone, so that it can be
        // redirected to a file and read back.
        Some("-") => {
            eprint!("{summary}");
            emit(&record.to_json())?;
        }
        Some(file) => {
            emit(&summary)?;
            std::fs::write(file, record.to_json())
                .with_context(|| format!("writing the record to {file}"))?;
            emit(&format!("record written to {file}\n"))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
