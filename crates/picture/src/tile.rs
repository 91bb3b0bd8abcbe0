//! One tile drawn from its catalogue entry: the field, the river, the
//! roads, the cities with their walls and pennants, the City of
//! Carcassonne, crossroads and cloisters. Nothing here knows a tile kind
//! by name: every shape comes from `TileDef.segments` and the edges.

use std::fmt::Write as _;
use std::sync::OnceLock;

use carcassonne_engine::{FeatureKind, Rotation, TileDef, TileKind};

use crate::geometry::{self, Point, RoadEnd, TILE};
use crate::palette::*;
use crate::svg::{Num, line_path, outline_path, walls_path};

const ROAD_WIDTH: f32 = 12.0;
const ROAD_EDGE_WIDTH: f32 = 18.0;
const RIVER_WIDTH: f32 = 15.0;
const RIVER_BANK_WIDTH: f32 = 18.0;
const WALL_WIDTH: f32 = 4.0;
const SQUARE_RADIUS: f32 = 11.0;

/// The id of a tile kind's drawing in a picture's `<defs>`.
pub fn def_id(kind: TileKind) -> String {
    format!("tile-{}", kind.name())
}

/// Each kind's [`tile_body`], drawn once: a drawing depends on nothing but
/// the catalogue.
pub fn drawing(kind: TileKind) -> &'static str {
    static DRAWINGS: OnceLock<Vec<String>> = OnceLock::new();
    let drawings = DRAWINGS.get_or_init(|| TileKind::all().map(|k| tile_body(k.def())).collect());
    drawings.get(kind.index()).map_or("", String::as_str)
}

/// The landscape of one tile at rotation 0 (turned with the tile; see
/// [`tile_marks`] for what stands upright), in a `TILE`-unit square whose
/// top-left corner is the origin: SVG elements, no wrapper.
pub fn tile_body(def: &TileDef) -> String {
    let mut out = String::with_capacity(2048);
    let _ = write!(
        out,
        r#"<rect width="{t}" height="{t}" fill="{FIELD}"/>"#,
        t = Num(TILE)
    );
    river(&mut out, def);
    roads(&mut out, def);
    cities(&mut out, def);
    let _ = write!(
        out,
        r#"<rect x="0.5" y="0.5" width="{w}" height="{w}" fill="none" stroke="{TILE_BORDER}" stroke-opacity="0.35" stroke-width="1"/>"#,
        w = Num(TILE - 1.0)
    );
    out
}

fn river(out: &mut String, def: &TileDef) {
    let Some(line) = geometry::river_line(def) else {
        return;
    };
    let d = line_path(&line);
    let _ = write!(
        out,
        r#"<path d="{d}" fill="none" stroke="{RIVER_BANK}" stroke-width="{}"/><path d="{d}" fill="none" stroke="{RIVER}" stroke-width="{}"/>"#,
        Num(RIVER_BANK_WIDTH),
        Num(RIVER_WIDTH)
    );
    if matches!(line.step, geometry::Step::Line(_)) {
        // A spring or a lake: the river ends in a pool.
        let _ = write!(
            out,
            r#"<circle cx="50" cy="50" r="17" fill="{RIVER}" stroke="{RIVER_BANK}" stroke-width="2"/>"#
        );
    }
}

fn roads(out: &mut String, def: &TileDef) {
    let lines: Vec<String> = def
        .segments
        .iter()
        .filter(|s| s.kind == FeatureKind::Road)
        .filter_map(|s| geometry::road_line(def, s))
        .map(|l| line_path(&l))
        .collect();
    if lines.is_empty() {
        return;
    }
    let d = lines.join("");
    let _ = write!(
        out,
        r#"<path d="{d}" fill="none" stroke="{ROAD_EDGE}" stroke-width="{}"/><path d="{d}" fill="none" stroke="{ROAD}" stroke-width="{}"/>"#,
        Num(ROAD_EDGE_WIDTH),
        Num(ROAD_WIDTH)
    );
    if geometry::road_end(def) == RoadEnd::Square
        && def
            .segments
            .iter()
            .any(|s| s.kind == FeatureKind::Road && s.edges.count_ones() == 1)
    {
        let _ = write!(
            out,
            r##"<circle cx="50" cy="50" r="{}" fill="#c9bda0" stroke="{ROAD_EDGE}" stroke-width="2"/><rect x="46" y="44" width="8" height="8" fill="#a3473a" stroke="{OUTLINE}" stroke-width="0.8"/>"##,
            Num(SQUARE_RADIUS)
        );
    }
}

fn city_shape(out: &mut String, outline: &geometry::Outline) {
    let _ = write!(out, r#"<path d="{}" fill="{CITY}"/>"#, outline_path(outline));
    let walls = walls_path(outline);
    if !walls.is_empty() {
        let _ = write!(
            out,
            // A dark wall with a light walk along its top.
            r##"<path d="{walls}" fill="none" stroke="{CITY_WALL}" stroke-width="{}" stroke-linecap="round"/><path d="{walls}" fill="none" stroke="#f1dfb8" stroke-width="1.2"/>"##,
            Num(WALL_WIDTH)
        );
    }
}

fn cities(out: &mut String, def: &TileDef) {
    let carcassonne = geometry::city_of_carcassonne_halves(def);
    if carcassonne != 0 {
        for outline in geometry::city_of_carcassonne_outlines(carcassonne) {
            city_shape(out, &outline);
        }
    }
    for segment in def.segments.iter().filter(|s| s.kind == FeatureKind::City) {
        city_shape(out, &geometry::city_outline(segment.edges));
    }
    houses(out, &crate::houses::houses(def));
}

/// Roofs seen from above: red tiles with a ridge, two shades.
fn houses(out: &mut String, at: &[Point]) {
    if at.is_empty() {
        return;
    }
    let (mut light, mut dark) = (String::new(), String::new());
    for (i, &(x, y)) in at.iter().enumerate() {
        // Alternate long sides, so that the roofs do not all line up.
        let (w, h) = if i % 3 == 1 { (7.0, 10.0) } else { (10.5, 7.0) };
        let shade = if (i * 5 / 3) % 2 == 0 {
            &mut light
        } else {
            &mut dark
        };
        let _ = write!(
            shade,
            "M{},{}h{}v{}h-{}z",
            Num(x - w / 2.0),
            Num(y - h / 2.0),
            Num(w),
            Num(h),
            Num(w)
        );
    }
    let ridges: String = at
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| {
            if i % 3 == 1 {
                format!("M{},{}v7", Num(x), Num(y - 3.5))
            } else {
                format!("M{},{}h8", Num(x - 4.0), Num(y))
            }
        })
        .collect();
    let _ = write!(
        out,
        r##"<path d="{light}" fill="#c0553d" stroke="#7a3322" stroke-width="0.8"/><path d="{dark}" fill="#a84a36" stroke="#7a3322" stroke-width="0.8"/><path d="{ridges}" stroke="#6b2a1c" stroke-width="0.9"/>"##
    );
}

/// What stands upright on a tile whatever its rotation (a cloister, the
/// pennants), for the tile at `origin` turned by `rotation`.
pub fn tile_marks(out: &mut String, def: &TileDef, rotation: Rotation, origin: Point) {
    let at = |p: Point| {
        let (x, y) = geometry::rotate(p, rotation);
        (origin.0 + x, origin.1 + y)
    };
    for segment in def
        .segments
        .iter()
        .filter(|s| s.kind == FeatureKind::City && s.pennant)
    {
        pennant(out, at(geometry::pennant_point(segment)));
    }
    if def.cloister.is_some() {
        cloister(out, at(geometry::cloister_point(def)));
    }
}

/// A coat of arms: a small blue shield with a white chevron.
fn pennant(out: &mut String, (x, y): Point) {
    let _ = write!(
        out,
        r##"<path d="M{l},{t}h10v5.5q0,4.5 -5,7.5q-5,-3 -5,-7.5z" fill="#2f5ca8" stroke="#ffffff" stroke-width="1.2"/><path d="M{l2},{m}l3.5,-3l3.5,3" fill="none" stroke="#ffffff" stroke-width="1.3"/>"##,
        l = Num(x - 5.0),
        t = Num(y - 6.0),
        l2 = Num(x - 3.5),
        m = Num(y + 1.0),
    );
}

/// A cloister: a chapel with a red roof and a cross.
fn cloister(out: &mut String, (x, y): Point) {
    let _ = write!(
        out,
        r##"<rect x="{l}" y="{t}" width="26" height="17" fill="#f3ead6" stroke="{OUTLINE}" stroke-width="1.2"/><path d="M{rl},{rt}L{x},{apex}L{rr},{rt}Z" fill="#b5473a" stroke="{OUTLINE}" stroke-width="1.2"/><rect x="{dl}" y="{dt}" width="6" height="8" fill="#5a4632"/><path d="M{x},{c1}v-7M{cl},{c2}h6" stroke="{OUTLINE}" stroke-width="1.4"/>"##,
        l = Num(x - 13.0),
        t = Num(y - 4.0),
        rl = Num(x - 15.0),
        rr = Num(x + 15.0),
        rt = Num(y - 4.0),
        apex = Num(y - 14.0),
        x = Num(x),
        dl = Num(x - 3.0),
        dt = Num(y + 5.0),
        c1 = Num(y - 14.0),
        cl = Num(x - 3.0),
        c2 = Num(y - 18.5),
    );
}
