//! The board of a game at one state: its tiles, the followers where they
//! stand, the City of Carcassonne's quarters, the last placed tile and,
//! optionally, coordinates in the margins.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use carcassonne_engine::{Expansion, Game, Place, Pos, Rotation, TileKind};

use crate::city;
use crate::geometry::{self, Point, TILE};
use crate::palette::{self, BACKGROUND, FOLLOWER_RADIUS, HIGHLIGHT, OUTLINE};
use crate::svg::{Num, escape};
use crate::tile;

/// How a board is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoardOptions {
    /// Write each column's `x` and each row's `y` in the margins (SVG
    /// text: shown by browsers, not in PNG).
    pub coordinates: bool,
    /// Frame the tile placed last.
    pub highlight_last: bool,
}

impl Default for BoardOptions {
    fn default() -> BoardOptions {
        BoardOptions {
            coordinates: false,
            highlight_last: true,
        }
    }
}

/// Pixels per tile unit in the picture's own size (80 pixels a tile).
pub const PIXELS_PER_UNIT: f32 = 0.8;

/// Where the board's cells lie in the picture.
pub(crate) struct Layout {
    lo: Pos,
    hi: Pos,
    margin: f32,
}

impl Layout {
    pub(crate) fn new(game: &Game, options: &BoardOptions) -> Layout {
        let first = game.tiles().first().map_or(Pos::ORIGIN, |t| t.pos);
        let (lo, hi) = game.tiles().iter().fold((first, first), |(lo, hi), t| {
            (
                Pos::new(lo.x.min(t.pos.x), lo.y.min(t.pos.y)),
                Pos::new(hi.x.max(t.pos.x), hi.y.max(t.pos.y)),
            )
        });
        let margin = if options.coordinates { 36.0 } else { 12.0 };
        Layout { lo, hi, margin }
    }

    /// The top-left corner of cell `pos` (north up: `y` grows upwards on
    /// the board, downwards in the picture).
    pub(crate) fn origin(&self, pos: Pos) -> Point {
        (
            self.margin + (i64::from(pos.x) - i64::from(self.lo.x)) as f32 * TILE,
            self.margin + (i64::from(self.hi.y) - i64::from(pos.y)) as f32 * TILE,
        )
    }

    fn size(&self) -> Point {
        let columns = (i64::from(self.hi.x) - i64::from(self.lo.x) + 1) as f32;
        let rows = (i64::from(self.hi.y) - i64::from(self.lo.y) + 1) as f32;
        (
            columns * TILE + 2.0 * self.margin,
            rows * TILE + 2.0 * self.margin,
        )
    }
}

/// How many tiles `Game` lays at setup (the start tile, the spring, the
/// City of Carcassonne), which no player placed.
pub(crate) fn setup_tiles(game: &Game) -> usize {
    let rules = game.rules();
    let (river, count) = (rules.has(Expansion::River), rules.has(Expansion::Count));
    let city = if count {
        carcassonne_engine::CITY_LAYOUT.len()
    } else {
        0
    };
    city + usize::from(river) + usize::from(!river && !count)
}

/// The opening of an SVG document of `size` tile units.
pub(crate) fn svg_open(out: &mut String, size: Point, pixels_per_unit: f32) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{}" height="{}" viewBox="0 0 {} {}">"#,
        Num((size.0 * pixels_per_unit).round()),
        Num((size.1 * pixels_per_unit).round()),
        Num(size.0),
        Num(size.1)
    );
}

/// Each kind's drawing once, to be placed with `<use>`.
pub(crate) fn tile_defs(out: &mut String, kinds: impl IntoIterator<Item = TileKind>) {
    out.push_str("<defs>");
    for kind in kinds {
        let _ = write!(
            out,
            r#"<g id="{}">{}</g>"#,
            tile::def_id(kind),
            tile::drawing(kind)
        );
    }
    out.push_str("</defs>");
}

/// A placed tile: its kind's drawing, moved and turned.
pub(crate) fn tile_use(out: &mut String, kind: TileKind, at: Point, rotation: Rotation) {
    let _ = write!(
        out,
        r##"<use xlink:href="#{}" transform="translate({} {})"##,
        tile::def_id(kind),
        Num(at.0),
        Num(at.1)
    );
    if rotation != Rotation::R0 {
        let _ = write!(out, " rotate({} 50 50)", rotation.degrees());
    }
    out.push_str(r#""/>"#);
}

/// A follower with its seat's number (SVG text, for browsers).
pub(crate) fn follower_with_number(out: &mut String, seat: usize, at: Point, r: f32) {
    palette::follower(out, seat, at, r);
    let ink = if matches!(seat % 5, 2 | 4) {
        OUTLINE
    } else {
        "#ffffff"
    };
    let _ = write!(
        out,
        r#"<text x="{}" y="{}" font-size="{}" font-family="sans-serif" font-weight="bold" text-anchor="middle" fill="{ink}">{seat}</text>"#,
        Num(at.0),
        Num(at.1 + r * 0.45),
        Num(r * 1.25)
    );
}

/// The board of `game` at its current state, as an SVG document. The
/// same state always gives the same bytes.
pub fn board_svg(game: &Game, options: &BoardOptions) -> String {
    let layout = Layout::new(game, options);
    let size = layout.size();
    let mut out = String::with_capacity(16 * 1024 + game.tiles().len() * 128);
    svg_open(&mut out, size, PIXELS_PER_UNIT);
    let _ = write!(
        out,
        r#"<rect width="{}" height="{}" fill="{BACKGROUND}"/>"#,
        Num(size.0),
        Num(size.1)
    );
    let mut kinds: Vec<TileKind> = game.tiles().iter().map(|t| t.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    tile_defs(&mut out, kinds);
    // A soft shadow under the tiles, as under cardboard.
    let mut shadow = String::new();
    for t in game.tiles() {
        let (x, y) = layout.origin(t.pos);
        let _ = write!(shadow, "M{},{}h100v100h-100z", Num(x + 2.5), Num(y + 3.0));
    }
    let _ = write!(
        out,
        r##"<path d="{shadow}" fill="#3a3020" fill-opacity="0.22"/>"##
    );
    for t in game.tiles() {
        tile_use(&mut out, t.kind, layout.origin(t.pos), t.rotation);
    }
    for t in game.tiles() {
        tile::tile_marks(&mut out, t.def(), t.rotation, layout.origin(t.pos));
    }
    if let Some(city) = game.city() {
        city::quarters(&mut out, game, city, &|pos| layout.origin(pos));
    }
    followers(&mut out, game, &layout);
    if options.highlight_last
        && game.tiles().len() > setup_tiles(game)
        && let Some(last) = game.tiles().last()
    {
        highlight(&mut out, layout.origin(last.pos));
    }
    if options.coordinates {
        coordinates(&mut out, &layout);
    }
    out.push_str("</svg>\n");
    out
}

fn followers(out: &mut String, game: &Game, layout: &Layout) {
    // Two followers on one segment of one tile (a move from Carcassonne
    // before scoring) stand side by side.
    let mut seen: BTreeMap<(Pos, Place), usize> = BTreeMap::new();
    for f in game.followers() {
        let Some(tile) = game.tile_at(f.at) else { continue };
        let Some(segment) = geometry::segment_at(tile.kind, tile.rotation, f.place) else {
            continue;
        };
        let anchor = geometry::segment_anchor(tile.kind, tile.rotation, segment);
        let nth = seen.entry((f.at, f.place)).or_insert(0);
        let shift = *nth as f32 * 0.9 * FOLLOWER_RADIUS;
        *nth += 1;
        let origin = layout.origin(f.at);
        let at = (origin.0 + anchor.0 + shift, origin.1 + anchor.1 + shift * 0.4);
        follower_with_number(out, f.owner.index(), at, palette::follower_radius(f.kind));
    }
}

fn highlight(out: &mut String, (x, y): Point) {
    let _ = write!(
        out,
        r#"<g class="last"><rect x="{}" y="{}" width="{w}" height="{w}" fill="none" stroke="{HIGHLIGHT}" stroke-width="4"/><rect x="{}" y="{}" width="{w2}" height="{w2}" fill="none" stroke="{OUTLINE}" stroke-width="1.5"/></g>"#,
        Num(x + 3.5),
        Num(y + 3.5),
        Num(x + 0.75),
        Num(y + 0.75),
        w = Num(TILE - 7.0),
        w2 = Num(TILE - 1.5),
    );
}

fn coordinates(out: &mut String, layout: &Layout) {
    out.push_str(r##"<g class="coordinates" font-size="16" font-family="sans-serif" fill="#4a4030" text-anchor="middle">"##);
    for x in layout.lo.x..=layout.hi.x {
        let (left, _) = layout.origin(Pos::new(x, layout.hi.y));
        let _ = write!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            Num(left + TILE / 2.0),
            Num(layout.margin - 12.0),
            escape(&x.to_string())
        );
    }
    for y in layout.lo.y..=layout.hi.y {
        let (_, top) = layout.origin(Pos::new(layout.lo.x, y));
        let _ = write!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            Num(layout.margin / 2.0),
            Num(top + TILE / 2.0 + 6.0),
            escape(&y.to_string())
        );
    }
    out.push_str("</g>");
}
