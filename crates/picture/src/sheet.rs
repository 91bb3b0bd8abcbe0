//! Pictures of tiles alone: one tile (for the documentation) and a sheet
//! of every kind with its name (drawn as strokes, so that a PNG shows it
//! too).

use std::fmt::Write as _;

use carcassonne_engine::{Rotation, TileKind};

use crate::board::{svg_open, tile_defs, tile_use};
use crate::geometry::TILE;
use crate::lettering::lettering;
use crate::svg::Num;
use crate::tile;

/// One tile at `rotation`, 100 units (and pixels) a side.
pub fn tile_svg(kind: TileKind, rotation: Rotation) -> String {
    tile_svg_with(kind, rotation, "")
}

/// One tile with more drawn over it (`over`: SVG elements in tile units).
pub(crate) fn tile_svg_with(kind: TileKind, rotation: Rotation, over: &str) -> String {
    let mut out = String::with_capacity(4096);
    svg_open(&mut out, (TILE, TILE), 1.0);
    tile_defs(&mut out, [kind]);
    tile_use(&mut out, kind, (0.0, 0.0), rotation);
    tile::tile_marks(&mut out, kind.def(), rotation, (0.0, 0.0));
    out.push_str(over);
    out.push_str("</svg>\n");
    out
}

const COLUMNS: usize = 8;
const GAP: f32 = 14.0;
const LABEL: f32 = 22.0;

/// Every tile kind of the catalogue, in its order, each with its name
/// below it (strokes, not text: a PNG of it shows the names too).
pub fn tile_sheet_svg() -> String {
    let kinds: Vec<TileKind> = TileKind::all().collect();
    let rows = kinds.len().div_ceil(COLUMNS);
    let cell = (TILE + GAP, TILE + LABEL + GAP);
    let size = (COLUMNS as f32 * cell.0 + GAP, rows as f32 * cell.1 + GAP);
    let mut out = String::with_capacity(64 * 1024);
    svg_open(&mut out, size, 1.0);
    let _ = write!(
        out,
        r##"<rect width="{}" height="{}" fill="#ebe5d3"/>"##,
        Num(size.0),
        Num(size.1)
    );
    tile_defs(&mut out, kinds.iter().copied());
    for (i, &kind) in kinds.iter().enumerate() {
        let x = GAP + (i % COLUMNS) as f32 * cell.0;
        let y = GAP + (i / COLUMNS) as f32 * cell.1;
        tile_use(&mut out, kind, (x, y), Rotation::R0);
        tile::tile_marks(&mut out, kind.def(), Rotation::R0, (x, y));
        lettering(
            &mut out,
            kind.name(),
            (x + TILE / 2.0, y + TILE + 16.0),
            11.0,
            "#2b2118",
        );
    }
    out.push_str("</svg>\n");
    out
}
