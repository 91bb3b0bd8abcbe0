//! Pictures of Carcassonne: the one renderer of boards and tiles.
//!
//! [`board_svg`] draws a game's board at any state as SVG; the same state
//! always gives the same bytes. [`tile_svg`] draws one tile and
//! [`tile_sheet_svg`] every tile kind with its name (drawn as strokes);
//! [`svg_to_png`] turns any of them into a PNG (resvg, pure Rust).
//!
//! Every tile is drawn from the catalogue's own segment data
//! (`TileDef.segments` and the edges), never from a picture per kind:
//! fields are green, cities are walled shapes over the edges they reach,
//! roads run from edge to edge or to where they stop (a village square,
//! a cloister, a city), the river runs like a road and ends in a pool,
//! and the City of Carcassonne fills the walls of its twelve tiles. A new
//! tile kind draws itself. Followers stand at their segment's anchor
//! ([`segment_anchor`]) in their seat's colour and shape (circle, square,
//! triangle, diamond, hexagon), so that a picture reads without colour
//! and without text: the PNG has no text at all, as this crate loads no
//! fonts (it does no IO); a board's coordinates are SVG text for
//! browsers, and the tile sheet's names are strokes (`lettering.rs`), in
//! the PNG too.
//!
//! Knows no gRPC, no IO and no clock.
//!
//! The pictures in `docs/tiles/` and the golden SVGs in `tests/golden/`
//! are checked against what this crate draws now; after changing a
//! drawing on purpose, regenerate them with
//! `UPDATE_PICTURES=1 cargo test -p carcassonne-picture`.

mod board;
mod city;
mod geometry;
mod houses;
mod lettering;
mod palette;
mod png;
mod sheet;
mod svg;
mod tile;

#[cfg(test)]
mod tests;

pub use board::{BoardOptions, PIXELS_PER_UNIT, board_svg};
pub use geometry::{Point, TILE, rotate, segment_anchor, segment_at};
pub use palette::{CITY_RGB, FIELD_RGB, RIVER_RGB, ROAD_EDGE_RGB, ROAD_RGB, Shape, seat_colour, seat_shape};
pub use png::{PictureError, Raster, rasterise, svg_to_png};
pub use sheet::{tile_sheet_svg, tile_svg};
