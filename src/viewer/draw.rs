//! A game of the API (`proto::Game`) and its events as text: the board in
//! the characters of the engine's `render::board`, the players, the pending
//! decision and the last event with its score changes.

use std::collections::HashMap;
use std::fmt::Write as _;

use carcassonne::proto::{self, game_event::Event as E};
use carcassonne_engine::{Dir, Rotation, TileKind};

/// One picture of a game: its state and the event that led to it, if any.
pub struct Frame<'a> {
    pub game: &'a proto::Game,
    pub event: Option<&'a proto::GameEvent>,
}

/// The whole frame: header, board, players, pending decision, last event.
pub fn frame(frame: &Frame<'_>) -> String {
    let game = frame.game;
    let mut out = header(game);
    out.push('\n');
    out.push_str(&board(game));
    let bag: u32 = game.bag.iter().map(|t| t.count).sum();
    let _ = writeln!(out, "tiles: {} on the board, {bag} in the bag", game.tiles.len());
    out.push_str(&players(game));
    if let Some(event) = frame.event {
        let _ = writeln!(out, "last: {}", event_line(game, event));
        for change in &event.score_changes {
            let _ = writeln!(out, "      {}", score_line(game, change));
        }
    }
    let _ = writeln!(out, "next: {}", pending_line(game));
    out
}

/// `games/{id}  version V  running`: the line scripts and tests read.
pub fn header(game: &proto::Game) -> String {
    let status = match game.status() {
        proto::GameStatus::Finished => "finished",
        _ => "running",
    };
    format!("{}  version {}  {status}", game.name, game.version)
}

/// The final scores and the winners of a finished game.
pub fn final_scores(game: &proto::Game) -> String {
    let scores: Vec<String> = game
        .players
        .iter()
        .map(|p| format!("{} {}", p.name, p.score))
        .collect();
    let winners: Vec<&str> = game.winners.iter().map(|&s| seat_name(game, s)).collect();
    let label = if winners.len() == 1 { "winner" } else { "winners" };
    format!(
        "game over\nfinal scores: {}\n{label}: {}\n",
        scores.join(", "),
        winners.join(", ")
    )
}

fn players(game: &proto::Game) -> String {
    let width = game.players.iter().map(|p| p.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for p in &game.players {
        let _ = write!(
            out,
            "  {} {:<width$} {:>4} points, {} followers in supply",
            p.seat, p.name, p.score, p.followers_in_supply
        );
        if p.followers_in_carcassonne > 0 {
            let _ = write!(out, ", {} in Carcassonne", p.followers_in_carcassonne);
        }
        out.push('\n');
    }
    out
}

fn seat_name(game: &proto::Game, seat: u32) -> &str {
    game.players
        .iter()
        .find(|p| p.seat == seat)
        .map_or("?", |p| p.name.as_str())
}

fn who(game: &proto::Game, seat: u32) -> String {
    format!("{} (seat {seat})", seat_name(game, seat))
}

/// Whose decision the game waits for, and which.
pub fn pending_line(game: &proto::Game) -> String {
    let Some(pending) = &game.pending else {
        return "nothing".to_owned();
    };
    let seat = who(game, pending.seat);
    match pending.kind() {
        proto::DecisionKind::Unspecified => "nothing: the game is over".to_owned(),
        proto::DecisionKind::Draw => format!("the server draws a tile for {seat}"),
        proto::DecisionKind::PlaceTile => format!("{seat} places tile {}", pending.tile),
        proto::DecisionKind::PlaceFollower => format!("{seat} deploys a follower or none"),
        proto::DecisionKind::Redeploy => format!(
            "{seat} may move followers from Carcassonne (after the tile of {})",
            who(game, pending.placer)
        ),
        proto::DecisionKind::DeployToCarcassonne => format!("{seat} may deploy a follower to Carcassonne"),
        proto::DecisionKind::FinalRound => {
            format!("{seat} may move a follower from Carcassonne (final round)")
        }
    }
}

fn place_name(place: proto::Place) -> String {
    place
        .as_str_name()
        .trim_start_matches("PLACE_")
        .to_ascii_lowercase()
}

fn quarter_name(quarter: proto::Quarter) -> String {
    quarter
        .as_str_name()
        .trim_start_matches("QUARTER_")
        .to_ascii_lowercase()
}

fn target_name(target: Option<&proto::Target>) -> String {
    let Some(target) = target else {
        return "?".to_owned();
    };
    let (x, y) = target.position.as_ref().map_or((0, 0), |p| (p.x, p.y));
    format!("{} of ({x}, {y})", place_name(target.place()))
}

/// What an event did, in one line.
pub fn event_line(game: &proto::Game, event: &proto::GameEvent) -> String {
    let actor = event
        .seat
        .map_or_else(String::new, |s| format!("{} ", who(game, s)));
    let what = match &event.event {
        None => "an unknown event".to_owned(),
        Some(E::Created(c)) => format!("the game was created for {}", c.players.join(", ")),
        Some(E::TileDrawn(d)) => {
            // The game after a draw waits for the drawer to place the tile.
            let seat = game
                .pending
                .as_ref()
                .filter(|p| p.kind() == proto::DecisionKind::PlaceTile && p.tile == d.kind)
                .map_or(d.seat, |p| p.seat);
            format!("{} drew tile {}", who(game, seat), d.kind)
        }
        Some(E::TilePlaced(p)) => {
            let (x, y) = p.position.as_ref().map_or((0, 0), |p| (p.x, p.y));
            format!("{actor}placed the tile at ({x}, {y}), rotated {}", p.rotation)
        }
        Some(E::FollowerPlaced(f)) => match f.place() {
            proto::Place::Unspecified => format!("{actor}deployed no follower"),
            place => format!("{actor}deployed a follower on {}", place_name(place)),
        },
        Some(E::FollowerMoved(m)) => format!(
            "{actor}moved a follower from Carcassonne to {}",
            target_name(m.target.as_ref())
        ),
        Some(E::Passed(_)) => format!("{actor}passed"),
        Some(E::DeployedToCarcassonne(d)) => {
            let mut line = format!(
                "{actor}sent a follower to the {} quarter",
                quarter_name(d.quarter())
            );
            if d.count() != proto::Quarter::Unspecified {
                let _ = write!(line, ", the count to the {}", quarter_name(d.count()));
            }
            line
        }
    };
    let mut line = format!("v{} {what}", event.version);
    if !event.discarded.is_empty() {
        let _ = write!(line, "; discarded {}", event.discarded.join(", "));
    }
    if event.finished {
        line.push_str("; the game is over");
    }
    line
}

/// A score change: `+4 Ada (seat 0): city, 2 tiles, 1 pennant (B-S2)`.
pub fn score_line(game: &proto::Game, change: &proto::ScoreChange) -> String {
    let seats: Vec<String> = change.seats.iter().map(|&s| who(game, s)).collect();
    let feature = change
        .feature()
        .as_str_name()
        .trim_start_matches("FEATURE_KIND_")
        .to_ascii_lowercase()
        .replace('_', " ");
    let mut line = format!("+{} {}: {feature}", change.points, seats.join(", "));
    if change.tiles > 0 {
        let _ = write!(line, ", {} tiles", change.tiles);
    }
    if change.pennants > 0 {
        let _ = write!(line, ", {} pennants", change.pennants);
    }
    if change.at.is_some() {
        let _ = write!(line, " at {}", target_name(change.at.as_ref()));
    }
    let _ = write!(line, " ({})", change.rule);
    line
}

/// The 3 by 3 characters of one tile, as `render::board` draws them: its
/// edges in the middle of each side, in the centre a follower's seat, `*`
/// for several, `o` for an empty cloister.
fn cell(tile: &proto::BoardTile, centre: Option<char>) -> [[char; 3]; 3] {
    let rotation = Rotation::from_degrees(i64::from(tile.rotation));
    let Some((kind, rotation)) = TileKind::from_name(&tile.kind).zip(rotation) else {
        return [['?'; 3]; 3];
    };
    let def = kind.def();
    let edges = def.at(rotation).edges;
    let e = |d: Dir| carcassonne_engine::render::edge_char(edges[d.index()], d);
    let middle = centre.unwrap_or(if def.cloister.is_some() { 'o' } else { ' ' });
    [
        [' ', e(Dir::N), ' '],
        [e(Dir::W), middle, e(Dir::E)],
        [' ', e(Dir::S), ' '],
    ]
}

/// The board, north up, with x along the top and y down the left.
pub fn board(game: &proto::Game) -> String {
    let at = |p: &Option<proto::Position>| p.as_ref().map_or((0, 0), |p| (p.x, p.y));
    let tiles: HashMap<(i32, i32), &proto::BoardTile> =
        game.tiles.iter().map(|t| (at(&t.position), t)).collect();
    let (Some(lo_x), Some(hi_x), Some(lo_y), Some(hi_y)) = (
        tiles.keys().map(|p| p.0).min(),
        tiles.keys().map(|p| p.0).max(),
        tiles.keys().map(|p| p.1).min(),
        tiles.keys().map(|p| p.1).max(),
    ) else {
        return String::new();
    };
    let mut centre: HashMap<(i32, i32), char> = HashMap::new();
    for f in &game.followers {
        let pos = at(&f.target.as_ref().and_then(|t| t.position));
        let seat = char::from_digit(f.seat, 10).unwrap_or('?');
        centre.entry(pos).and_modify(|c| *c = '*').or_insert(seat);
    }
    let mut out = String::from("     ");
    for x in lo_x..=hi_x {
        let _ = write!(out, "{x:<4}");
    }
    out.push('\n');
    for y in (lo_y..=hi_y).rev() {
        for line in 0..3 {
            if line == 0 {
                let _ = write!(out, "{y:>3}  ");
            } else {
                out.push_str("     ");
            }
            for x in lo_x..=hi_x {
                let chars = tiles
                    .get(&(x, y))
                    .map_or([' '; 3], |t| cell(t, centre.get(&(x, y)).copied())[line]);
                out.extend(chars);
                out.push(' ');
            }
            let trimmed = out.trim_end_matches(' ').len();
            out.truncate(trimmed);
            out.push('\n');
        }
    }
    out
}
