//! A text drawing of the board, for tests, logs and the terminal.
//!
//! Each tile is 3 by 3 characters: its four edges in the middle of each
//! side, a follower's seat number (or `o` for an empty cloister) in the
//! centre. Edges: `#` city, `|` or `-` road, `~` river, `.` field; the
//! City of Carcassonne's walls are `%`.
//!
//! ```text
//!      0  1
//!  1  .#.
//!     -0-
//!     ...
//!  0  .#. .#.
//!     ---o--
//!     ... .|.
//! ```

use std::fmt::Write as _;

use crate::game::Game;
use crate::geometry::{Dir, Pos};
use crate::tiles::EdgeKind;

/// The character of a tile edge, as [`board`] draws it.
pub fn edge_char(kind: EdgeKind, dir: Dir) -> char {
    match kind {
        EdgeKind::City => '#',
        EdgeKind::Road if matches!(dir, Dir::N | Dir::S) => '|',
        EdgeKind::Road => '-',
        EdgeKind::Field => '.',
        EdgeKind::Water => '~',
        EdgeKind::Wall => '%',
    }
}

/// Draws the board, north up.
pub fn board(game: &Game) -> String {
    let Some((lo, hi)) = game.board.bounds() else {
        return String::new();
    };
    let mut centre = std::collections::HashMap::new();
    for f in game.followers() {
        centre
            .entry(f.at)
            .and_modify(|c| *c = '*')
            .or_insert(char::from_digit(u32::from(f.owner.0), 10).unwrap_or('?'));
    }
    let mut out = String::from("     ");
    for x in lo.x..=hi.x {
        let _ = write!(out, "{x:<4}");
    }
    out.push('\n');
    for y in (lo.y..=hi.y).rev() {
        for line in 0..3 {
            if line == 0 {
                let _ = write!(out, "{y:>3}  ");
            } else {
                out.push_str("     ");
            }
            for x in lo.x..=hi.x {
                let pos = Pos::new(x, y);
                let cell = match game.tile_at(pos) {
                    None => [' '; 3],
                    Some(tile) => {
                        let e = |d: Dir| edge_char(tile.layout().edges[d.index()], d);
                        let middle = centre
                            .get(&pos)
                            .copied()
                            .unwrap_or(if tile.def().cloister.is_some() { 'o' } else { ' ' });
                        match line {
                            0 => [' ', e(Dir::N), ' '],
                            1 => [e(Dir::W), middle, e(Dir::E)],
                            _ => [' ', e(Dir::S), ' '],
                        }
                    }
                };
                out.extend(cell);
                out.push(' ');
            }
            let trimmed = out.trim_end_matches(' ').len();
            out.truncate(trimmed);
            out.push('\n');
        }
    }
    out
}
