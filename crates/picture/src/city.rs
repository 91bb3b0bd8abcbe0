//! The four quarters of the City of Carcassonne (castle, blacksmith,
//! cathedral, market), drawn over the City's middle: each with its sign,
//! its followers per seat (a stack of the seat's shape, one per follower)
//! and the Count in his quarter.

use std::fmt::Write as _;

use carcassonne_engine::{CITY_LAYOUT, City, Game, Pos, Quarter, Seat};

use crate::geometry::Point;
use crate::palette::{self, OUTLINE};
use crate::svg::Num;

const BOX_WIDTH: f32 = 118.0;
const BOX_HEIGHT: f32 = 76.0;
/// Followers shown in a stack at most; more are one stack of this height.
const MAX_STACK: u8 = 7;

/// A quarter's box, from the City's top-left corner (tile units).
fn quarter_box(quarter: Quarter) -> Point {
    match quarter {
        Quarter::Castle => (79.0, 71.0),
        Quarter::Blacksmith => (203.0, 71.0),
        Quarter::Cathedral => (79.0, 153.0),
        Quarter::Market => (203.0, 153.0),
    }
}

fn tint(quarter: Quarter) -> &'static str {
    match quarter {
        Quarter::Castle => "#b7a9cf",
        Quarter::Blacksmith => "#c99a74",
        Quarter::Cathedral => "#a9c6d9",
        Quarter::Market => "#e3cf7a",
    }
}

/// Where the `k`-th follower of `seat` in `quarter` is drawn, from the
/// City's top-left corner: a column per seat, a stack per column.
pub(crate) fn follower_slot(quarter: Quarter, seat: usize, k: u8) -> Point {
    let (bx, by) = quarter_box(quarter);
    (bx + 42.0 + 15.5 * seat as f32, by + 27.0 + 6.5 * f32::from(k))
}

/// Where the City's top-left tile lies (the engine lays the City at setup
/// as `CITY_LAYOUT` says), if it lies there.
pub(crate) fn city_corner(game: &Game) -> Option<Pos> {
    let x = CITY_LAYOUT.iter().map(|&(_, x, _)| x).min()?;
    let y = CITY_LAYOUT.iter().map(|&(_, _, y)| y).max()?;
    let pos = Pos::new(x, y);
    game.tile_at(pos)
        .is_some_and(|t| t.def().city_of_carcassonne)
        .then_some(pos)
}

pub fn quarters(out: &mut String, game: &Game, city: &City, origin: &dyn Fn(Pos) -> Point) {
    let Some(corner) = city_corner(game) else { return };
    let (cx, cy) = origin(corner);
    for quarter in Quarter::ALL {
        let (bx, by) = quarter_box(quarter);
        let (x, y) = (cx + bx, cy + by);
        let is_count = city.count == quarter;
        let _ = write!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" rx="8" fill="{}" stroke="{}" stroke-width="{}"/>"##,
            Num(x),
            Num(y),
            Num(BOX_WIDTH),
            Num(BOX_HEIGHT),
            tint(quarter),
            if is_count { OUTLINE } else { "#5a4630" },
            if is_count { "3.5" } else { "2" },
        );
        sign(out, quarter, (x + 17.0, y + 22.0));
        let _ = write!(
            out,
            r##"<text x="{}" y="{}" font-size="11" font-family="sans-serif" text-anchor="middle" fill="#2b2118">{}</text>"##,
            Num(x + 75.0),
            Num(y + 13.0),
            quarter.name()
        );
        if is_count {
            count_figure(out, (x + 17.0, y + 56.0));
        }
        for seat in 0..game.players() {
            let n = city.quarters[quarter.index()][Seat(seat as u8).index()];
            for k in 0..n.min(MAX_STACK) {
                let (dx, dy) = follower_slot(quarter, seat, k);
                palette::follower(out, seat, (cx + dx, cy + dy), 5.5);
            }
            if n > 0 {
                let (dx, _) = follower_slot(quarter, seat, 0);
                let _ = write!(
                    out,
                    r##"<text x="{}" y="{}" font-size="9" font-family="sans-serif" text-anchor="middle" fill="#2b2118">{n}</text>"##,
                    Num(cx + dx),
                    Num(y + BOX_HEIGHT - 3.0)
                );
            }
        }
    }
}

/// The Count: a black figure with a gold crown.
fn count_figure(out: &mut String, (x, y): Point) {
    let _ = write!(
        out,
        r##"<path d="M{l},{b}L{lm},{s}Q{x},{n} {rm},{s}L{r},{b}Z" fill="#111111" stroke="#ffffff" stroke-width="1.5"/><circle cx="{x}" cy="{h}" r="5.5" fill="#111111" stroke="#ffffff" stroke-width="1.5"/><path d="M{c1},{ct}l2,-5l2.5,3l1.5,-4l1.5,4l2.5,-3l2,5z" fill="#e8b923" stroke="#111111" stroke-width="0.8"/>"##,
        l = Num(x - 11.0),
        r = Num(x + 11.0),
        lm = Num(x - 6.0),
        rm = Num(x + 6.0),
        b = Num(y + 14.0),
        s = Num(y - 2.0),
        n = Num(y - 6.0),
        h = Num(y - 9.0),
        c1 = Num(x - 6.0),
        ct = Num(y - 13.5),
        x = Num(x),
    );
}

/// A quarter's sign: a tower, an anvil, a church, a market stall.
fn sign(out: &mut String, quarter: Quarter, (x, y): Point) {
    let p = |dx: f32, dy: f32| format!("{},{}", Num(x + dx), Num(y + dy));
    let _ = match quarter {
        Quarter::Castle => write!(
            out,
            r##"<path d="M{}V{}h3v3h3v-3h3v3h3v-3h3v3h3v-3h0V{}Z" fill="#6c5d8c" stroke="{OUTLINE}" stroke-width="1"/>"##,
            p(-9.0, 10.0),
            Num(y - 10.0),
            Num(y + 10.0),
        ),
        Quarter::Blacksmith => write!(
            out,
            r##"<path d="M{}h18q0,5 -6,6v4h4v4h-14v-4h4v-4q-6,-1 -6,-6z" fill="#3a3a3a" stroke="{OUTLINE}" stroke-width="1"/>"##,
            p(-9.0, -6.0),
        ),
        Quarter::Cathedral => write!(
            out,
            r##"<path d="M{}h16v-10l-8,-7l-8,7z" fill="#f3ead6" stroke="{OUTLINE}" stroke-width="1"/><path d="M{}v-8M{}h6" stroke="{OUTLINE}" stroke-width="1.4"/>"##,
            p(-8.0, 10.0),
            p(0.0, -7.0),
            p(-3.0, -12.0),
        ),
        Quarter::Market => write!(
            out,
            r##"<rect x="{}" y="{}" width="18" height="10" fill="#f3ead6" stroke="{OUTLINE}" stroke-width="1"/><path d="M{}h22l-3,-8h-16z" fill="#c0392b" stroke="{OUTLINE}" stroke-width="1"/><path d="M{}l-1,-8M{}l1,-8" stroke="#ffffff" stroke-width="2"/>"##,
            Num(x - 9.0),
            Num(y),
            p(-11.0, 0.0),
            p(-3.0, 0.0),
            p(3.0, 0.0),
        ),
    };
}
