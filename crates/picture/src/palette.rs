//! Colours of the landscape, and each seat's colour and shape.
//!
//! Seat colours are the Okabe–Ito palette (distinguishable with the
//! common colour-vision deficiencies), and every seat has a shape of its
//! own as well, so that a follower's owner reads without colour and
//! without text (a PNG has no text).

use std::fmt::Write as _;

use crate::geometry::Point;
use crate::svg::{Num, Pt};

pub const FIELD: &str = "#8dbf55";
pub const CITY: &str = "#d9b27a";
pub const CITY_WALL: &str = "#6e4a2a";
pub const ROAD: &str = "#f4eddb";
pub const ROAD_EDGE: &str = "#76664a";
pub const RIVER: &str = "#3f8fd2";
pub const RIVER_BANK: &str = "#2b6aa3";
pub const BACKGROUND: &str = "#ebe5d3";
pub const TILE_BORDER: &str = "#3b4a2a";
pub const OUTLINE: &str = "#1b1b1b";
pub const HIGHLIGHT: &str = "#ffffff";

/// The colours the rasterised picture shows for each edge kind, as RGB,
/// for tests that sample it.
pub const FIELD_RGB: [u8; 3] = [0x8d, 0xbf, 0x55];
pub const CITY_RGB: [u8; 3] = [0xd9, 0xb2, 0x7a];
pub const ROAD_RGB: [u8; 3] = [0xf4, 0xed, 0xdb];
pub const ROAD_EDGE_RGB: [u8; 3] = [0x76, 0x66, 0x4a];
pub const RIVER_RGB: [u8; 3] = [0x3f, 0x8f, 0xd2];

/// Okabe–Ito: vermillion, blue, yellow, reddish purple, sky blue.
const SEAT_COLOURS: [&str; 5] = ["#d55e00", "#0072b2", "#f0e442", "#cc79a7", "#56b4e9"];

/// A seat's follower shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    Diamond,
    Hexagon,
}

impl Shape {
    pub const ALL: [Shape; 5] = [
        Shape::Circle,
        Shape::Square,
        Shape::Triangle,
        Shape::Diamond,
        Shape::Hexagon,
    ];
}

/// The colour of seat `seat` (seats beyond five repeat the palette).
pub fn seat_colour(seat: usize) -> &'static str {
    SEAT_COLOURS[seat % SEAT_COLOURS.len()]
}

pub fn seat_shape(seat: usize) -> Shape {
    Shape::ALL[seat % Shape::ALL.len()]
}

/// The radius followers are drawn with, in tile units: thieves a little
/// smaller, to stand on their road.
pub const FOLLOWER_RADIUS: f32 = 7.5;
pub const THIEF_RADIUS: f32 = 5.7;

pub fn follower_radius(kind: carcassonne_engine::FeatureKind) -> f32 {
    match kind {
        carcassonne_engine::FeatureKind::Road => THIEF_RADIUS,
        _ => FOLLOWER_RADIUS,
    }
}

/// A follower of `seat` centred at `at`, `r` its radius.
pub fn follower(out: &mut String, seat: usize, at: Point, r: f32) {
    let fill = seat_colour(seat);
    let style = format!(
        r#"fill="{fill}" stroke="{OUTLINE}" stroke-width="{}""#,
        Num(r * 0.26)
    );
    let (x, y) = at;
    let polygon = |out: &mut String, points: &[(f32, f32)]| {
        let pts: Vec<String> = points
            .iter()
            .map(|&(dx, dy)| Pt((x + dx * r, y + dy * r)).to_string())
            .collect();
        let _ = write!(out, r#"<polygon points="{}" {style}/>"#, pts.join(" "));
    };
    match seat_shape(seat) {
        Shape::Circle => {
            let _ = write!(
                out,
                r#"<circle cx="{}" cy="{}" r="{}" {style}/>"#,
                Num(x),
                Num(y),
                Num(r)
            );
        }
        Shape::Square => polygon(out, &[(-0.85, -0.85), (0.85, -0.85), (0.85, 0.85), (-0.85, 0.85)]),
        Shape::Triangle => polygon(out, &[(0.0, -1.15), (1.05, 0.8), (-1.05, 0.8)]),
        Shape::Diamond => polygon(out, &[(0.0, -1.12), (1.12, 0.0), (0.0, 1.12), (-1.12, 0.0)]),
        Shape::Hexagon => polygon(
            out,
            &[
                (-0.5, -0.9),
                (0.5, -0.9),
                (1.05, 0.0),
                (0.5, 0.9),
                (-0.5, 0.9),
                (-1.05, 0.0),
            ],
        ),
    }
}
