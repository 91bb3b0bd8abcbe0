//! A game of the API (`proto::Game`) and its events as text: the board in
//! the characters of the engine's `render::board`, the players, the pending
//! decision and the last event with its score changes.

use std::collections::HashMap;
use std::fmt::Write as _;

use carcassonne::proto::{self, game_event::Event as E};
use carcassonne_engine::{Dir, Rotation, TileKind};

use super::clock;
use crate::text::counted;

/// One picture of a game: its state and the event that led to it, if any.
pub struct Frame<'a> {
    pub game: &'a proto::Game,
    pub event: Option<&'a proto::GameEvent>,
    /// The server's now for a live view, whose running clock counts down
    /// to it; `None`: the clocks as of the state's own moment (a replay).
    pub now: Option<i64>,
}

/// What the symbols of the board mean (a follower is its seat's number),
/// in 80 columns.
pub const LEGEND: &str = "# city, |- road, ~ river, . field, % walls, o cloister, 0-4 follower, * several";

/// What the keys do to the board when it does not fit.
const SCROLL_KEYS: &str = "w a s d: scroll, c: follow";

/// How a frame is laid out.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// The columns and rows the frame must fit in; `None`: no limit (a pipe).
    pub size: Option<(usize, usize)>,
    /// Rows kept free under the frame (the replay's help and note).
    pub reserved: usize,
    /// The tile at the board window's top left; `None`: a window around
    /// the last tile laid.
    pub origin: Option<(i32, i32)>,
}

/// A frame drawn, and the board window it shows (its top left tile), for
/// scrolling from there.
pub struct Drawn {
    pub text: String,
    pub origin: Option<(i32, i32)>,
}

/// The rows score changes leave when rows are short: two tile rows of
/// board (3 lines each), its column labels and the line that says it is
/// cut.
const BOARD_MIN_LINES: usize = 8;

/// The whole frame, in the order that matters when the screen is small:
/// header, players and scores, the last event and the pending decision,
/// then the board (fitted to the rows left, or a window of it), and the
/// legend.
pub fn frame(frame: &Frame<'_>, layout: &Layout) -> Drawn {
    let game = frame.game;
    let mut top = vec![header(game)];
    top.extend(players(game).lines().map(str::to_owned));
    if let Some(control) = clock::time_control_text(game) {
        top.push(format!("time control: {control}"));
    }
    top.extend(clock::clocks_line(game, frame.now));
    let bag: u32 = game.bag.iter().map(|t| t.count).sum();
    top.push(format!(
        "tiles: {} on the board, {bag} in the bag",
        game.tiles.len()
    ));
    let mut changes = Vec::new();
    if let Some(event) = frame.event {
        top.push(format!("last: {}", event_line(game, event)));
        changes = event
            .score_changes
            .iter()
            .map(|change| format!("      {}", score_line(game, change)))
            .collect();
    }
    let next = format!("next: {}", pending_line(game));
    let Some((cols, rows)) = layout.size else {
        let mut out = top.join("\n") + "\n";
        for line in changes.iter().chain([&next]) {
            out.push_str(line);
            out.push('\n');
        }
        let (board, _) = board_window(game, None, None);
        out.push_str(&board);
        out.push_str(LEGEND);
        out.push('\n');
        return Drawn {
            text: out,
            origin: None,
        };
    };
    // One line for `next`, one for the legend.
    let fixed = top.len() + 2 + layout.reserved;
    let room_for_changes = rows.saturating_sub(fixed + BOARD_MIN_LINES);
    if changes.len() > room_for_changes {
        let hidden = changes.len() - room_for_changes.saturating_sub(1);
        changes.truncate(room_for_changes.saturating_sub(1));
        if room_for_changes > 0 {
            changes.push(format!("      ... and {hidden} more score changes"));
        }
    }
    let mut lines = top;
    lines.append(&mut changes);
    lines.push(next);
    let board_lines = rows.saturating_sub(lines.len() + 1 + layout.reserved);
    let (board, origin) = board_window(game, Some((cols, board_lines)), layout.origin);
    lines.extend(board.lines().map(str::to_owned));
    lines.push(LEGEND.to_owned());
    // A screen smaller than even the scores: the bottom goes first.
    lines.truncate(rows.saturating_sub(layout.reserved));
    let mut out = String::new();
    for line in lines {
        out.extend(line.chars().take(cols));
        out.push('\n');
    }
    Drawn { text: out, origin }
}

/// `games/{id}  version V  running`: the line scripts and tests read.
pub fn header(game: &proto::Game) -> String {
    let status = match game.status() {
        proto::GameStatus::Finished => "finished",
        _ => "running",
    };
    format!("{}  version {}  {status}", game.name, game.version)
}

/// Why a finished game ended, its final scores, its winners and its
/// ranking (T-11).
pub fn final_scores(game: &proto::Game) -> String {
    let scores: Vec<String> = game
        .players
        .iter()
        .map(|p| format!("{} {}", p.name, p.score))
        .collect();
    let winners: Vec<&str> = game.winners.iter().map(|&s| seat_name(game, s)).collect();
    let label = if winners.len() == 1 { "winner" } else { "winners" };
    let reason = clock::end_reason(game).map_or_else(String::new, |reason| format!(": {reason}"));
    let mut out = format!("game over{reason}\nfinal scores: {}\n", scores.join(", "));
    if winners.is_empty() {
        out.push_str("no winner\n");
    } else {
        let _ = writeln!(out, "{label}: {}", winners.join(", "));
    }
    if let Some(ranking) = clock::ranking_line(game) {
        out.push_str(&ranking);
        out.push('\n');
    }
    out
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
        if let Some(out_why) = clock::seat_out(p) {
            let _ = write!(out, ", {out_why}");
        }
        out.push('\n');
    }
    out
}

pub(super) fn seat_name(game: &proto::Game, seat: u32) -> &str {
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
        proto::DecisionKind::Unspecified => match clock::end_reason(game) {
            Some(reason) => format!("nothing: the game is over ({reason})"),
            None => "nothing: the game is over".to_owned(),
        },
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
        Some(E::TimedOut(t)) => format!("{} ran out of time", who(game, t.seat)),
        Some(E::Resigned(_)) => format!("{actor}resigned"),
        Some(E::Aborted(_)) => format!("{actor}aborted the game: no result"),
        Some(E::Resumed(r)) => format!(
            "the server was down for {}; the clocks resumed",
            clock::duration_text(event.time_ms.saturating_sub(r.down_since_ms) / 1000 * 1000)
        ),
    };
    let mut line = format!("v{} {what}", event.version);
    if !event.decided_for_seat.is_empty() {
        let decided: Vec<String> = event.decided_for_seat.iter().map(action_text).collect();
        let _ = write!(line, "; the server decided for them: {}", decided.join(", "));
    }
    if let Some(seat) = event.seat_out {
        let _ = write!(line, "; {} is out", who(game, seat));
        if !event.abandoned.is_empty() {
            let _ = write!(line, " and tile {} leaves the game", event.abandoned);
        }
    }
    if !event.discarded.is_empty() {
        let _ = write!(line, "; discarded {}", event.discarded.join(", "));
    }
    if event.finished {
        line.push_str("; the game is over");
    }
    line
}

/// An action the server took for a seat out of time (T-7), in words.
fn action_text(action: &proto::Action) -> String {
    use proto::action::Action as A;
    match &action.action {
        Some(A::PlaceTile(p)) => {
            let (x, y) = p.position.as_ref().map_or((0, 0), |p| (p.x, p.y));
            format!("placed the tile at ({x}, {y}), rotated {}", p.rotation)
        }
        Some(A::PlaceFollower(f)) => match f.place() {
            proto::Place::Unspecified => "deployed no follower".to_owned(),
            place => format!("deployed a follower on {}", place_name(place)),
        },
        Some(A::Pass(_)) => "passed".to_owned(),
        Some(A::MoveFromCarcassonne(m)) => format!(
            "moved a follower from Carcassonne to {}",
            target_name(m.target.as_ref())
        ),
        Some(A::DeployToCarcassonne(d)) => {
            format!("sent a follower to the {} quarter", quarter_name(d.quarter()))
        }
        Some(A::Resign(_)) => "resigned".to_owned(),
        Some(A::Abort(_)) => "aborted".to_owned(),
        None => "an unknown action".to_owned(),
    }
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
        let _ = write!(line, ", {}", counted(change.tiles, "tile"));
    }
    if change.pennants > 0 {
        let _ = write!(line, ", {}", counted(change.pennants, "pennant"));
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

/// The board, north up, with x along the top and y down the left: all of
/// it, or, when it does not fit `space` (columns, lines), the window with
/// its top left tile at `origin` (or around the last tile laid) and a line
/// that says which part it shows. Returns the window's top left tile when
/// the board is cut.
fn board_window(
    game: &proto::Game,
    space: Option<(usize, usize)>,
    origin: Option<(i32, i32)>,
) -> (String, Option<(i32, i32)>) {
    let at = |p: &Option<proto::Position>| p.as_ref().map_or((0, 0), |p| (p.x, p.y));
    let tiles: HashMap<(i32, i32), &proto::BoardTile> =
        game.tiles.iter().map(|t| (at(&t.position), t)).collect();
    let (Some(lo_x), Some(hi_x), Some(lo_y), Some(hi_y)) = (
        tiles.keys().map(|p| p.0).min(),
        tiles.keys().map(|p| p.0).max(),
        tiles.keys().map(|p| p.1).min(),
        tiles.keys().map(|p| p.1).max(),
    ) else {
        return (String::new(), None);
    };
    // Tiles are 3 characters and a space wide after a 5-character label,
    // 3 lines high under a line of labels.
    let (width, height) = (
        i64::from(hi_x) - i64::from(lo_x) + 1,
        i64::from(hi_y) - i64::from(lo_y) + 1,
    );
    let (mut x_range, mut y_range) = ((lo_x, hi_x), (lo_y, hi_y));
    let mut cut = None;
    if let Some((cols, lines)) = space {
        let fit_cols = i64::try_from(cols.saturating_sub(5).saturating_add(1) / 4).unwrap_or(i64::MAX);
        let fit_rows = i64::try_from(lines.saturating_sub(1) / 3).unwrap_or(i64::MAX);
        if fit_cols < width || fit_rows < height {
            // The line that says the board is cut takes a line of its own.
            let fit_rows = i64::try_from(lines.saturating_sub(2) / 3).unwrap_or(i64::MAX);
            if fit_cols < 1 || fit_rows < 1 {
                let note = "the board does not fit: enlarge the terminal\n";
                return (if lines > 0 { note.to_owned() } else { String::new() }, None);
            }
            let last = game.tiles.last().map_or((0, 0), |t| at(&t.position));
            let (view_w, view_h) = (fit_cols.min(width), fit_rows.min(height));
            let (left, top) = origin.map_or_else(
                || (i64::from(last.0) - view_w / 2, i64::from(last.1) + view_h / 2),
                |(x, y)| (i64::from(x), i64::from(y)),
            );
            // Inside the board: left in lo_x..=hi_x-w+1, top in lo_y+h-1..=hi_y.
            let left = left.clamp(i64::from(lo_x), i64::from(hi_x) - view_w + 1);
            let top = top.clamp(i64::from(lo_y) + view_h - 1, i64::from(hi_y));
            let narrow = |v: i64| i32::try_from(v).unwrap_or(0);
            x_range = (narrow(left), narrow(left + view_w - 1));
            y_range = (narrow(top - view_h + 1), narrow(top));
            cut = Some((x_range.0, y_range.1));
        }
    }
    let mut centre: HashMap<(i32, i32), char> = HashMap::new();
    for f in &game.followers {
        let pos = at(&f.target.as_ref().and_then(|t| t.position));
        let seat = char::from_digit(f.seat, 10).unwrap_or('?');
        centre.entry(pos).and_modify(|c| *c = '*').or_insert(seat);
    }
    let mut out = String::new();
    if cut.is_some() {
        let _ = writeln!(
            out,
            "board x {}..{} of {lo_x}..{hi_x}, y {}..{} of {lo_y}..{hi_y} ({SCROLL_KEYS})",
            x_range.0, x_range.1, y_range.0, y_range.1
        );
    }
    out.push_str("     ");
    for x in x_range.0..=x_range.1 {
        let _ = write!(out, "{x:<4}");
    }
    let trimmed = out.trim_end_matches(' ').len();
    out.truncate(trimmed);
    out.push('\n');
    for y in (y_range.0..=y_range.1).rev() {
        for line in 0..3 {
            if line == 0 {
                let _ = write!(out, "{y:>3}  ");
            } else {
                out.push_str("     ");
            }
            for x in x_range.0..=x_range.1 {
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
    (out, cut)
}
