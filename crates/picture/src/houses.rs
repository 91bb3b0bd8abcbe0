//! The houses drawn inside cities: on a grid, clear of the walls, of the
//! tile's border (where edges are read), of knights and of pennants, so
//! that they never hide what the picture must show.

use carcassonne_engine::{FeatureKind, TileDef};

use crate::geometry::{
    Line, Outline, Point, RoadEnd, Step, TILE, city_anchor, city_of_carcassonne_halves,
    city_of_carcassonne_outlines, city_outline, city_target, distance, pennant_point, point_on, road_end,
};

/// The grid's step, and how far houses keep from walls, from the tile's
/// border and from knights and pennants.
const HOUSE_STEP: f32 = 16.0;
const HOUSE_WALL_MARGIN: f32 = 8.5;
const HOUSE_BORDER_MARGIN: f32 = 9.0;
const HOUSE_ANCHOR_MARGIN: f32 = 14.0;

fn flatten(start: Point, steps: &[Step]) -> Vec<Point> {
    let mut points = vec![start];
    let mut from = start;
    for step in steps {
        let line = Line {
            start: from,
            step: *step,
        };
        let n = if matches!(step, Step::Line(_)) { 1 } else { 16 };
        points.extend((1..=n).map(|i| point_on(&line, i as f32 / n as f32)));
        from = *points.last().unwrap_or(&from);
    }
    points
}

fn inside_polygon(p: Point, polygon: &[Point]) -> bool {
    let mut inside = false;
    for (i, &a) in polygon.iter().enumerate() {
        let b = polygon[(i + 1) % polygon.len()];
        if (a.1 > p.1) != (b.1 > p.1) && p.0 < a.0 + (p.1 - a.1) * (b.0 - a.0) / (b.1 - a.1) {
            inside = !inside;
        }
    }
    inside
}

fn distance_to_segment(p: Point, a: Point, b: Point) -> f32 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let length = dx * dx + dy * dy;
    let t = if length == 0.0 {
        0.0
    } else {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / length).clamp(0.0, 1.0)
    };
    distance(p, (a.0 + dx * t, a.1 + dy * t))
}

/// Where the houses of a city outline stand (their centres, at rotation 0),
/// clear of `keep_clear` points.
fn houses_in(outline: &Outline, keep_clear: &[Point]) -> Vec<Point> {
    let polygon = flatten(outline.start, &outline.steps);
    let walls: Vec<Vec<Point>> = outline
        .walls
        .iter()
        .map(|(from, step)| flatten(*from, std::slice::from_ref(step)))
        .collect();
    let near_wall = |p: Point| {
        walls.iter().any(|w| {
            w.windows(2)
                .any(|ab| distance_to_segment(p, ab[0], ab[1]) < HOUSE_WALL_MARGIN)
        })
    };
    let mut houses = Vec::new();
    let steps = (TILE / HOUSE_STEP) as usize;
    for row in 0..steps {
        for column in 0..steps {
            // Every other row shifted by half a step, like streets.
            let shift = if row % 2 == 1 { HOUSE_STEP / 2.0 } else { 0.0 };
            // A little irregular, as houses are.
            let jitter = ((row * 7 + column * 3) % 5) as f32 - 2.0;
            let p = (
                HOUSE_STEP * 0.7 + column as f32 * HOUSE_STEP + shift + jitter,
                HOUSE_STEP * 0.7 + row as f32 * HOUSE_STEP - jitter * 0.5,
            );
            let clear_of_border = p.0 >= HOUSE_BORDER_MARGIN
                && p.1 >= HOUSE_BORDER_MARGIN
                && p.0 <= TILE - HOUSE_BORDER_MARGIN
                && p.1 <= TILE - HOUSE_BORDER_MARGIN;
            if clear_of_border
                && inside_polygon(p, &polygon)
                && !near_wall(p)
                && keep_clear.iter().all(|&k| distance(p, k) >= HOUSE_ANCHOR_MARGIN)
            {
                houses.push(p);
            }
        }
    }
    houses
}

/// The houses of every city on a tile (its segments and the City of
/// Carcassonne), at rotation 0.
pub fn houses(def: &TileDef) -> Vec<Point> {
    let mut keep_clear: Vec<Point> = Vec::new();
    for s in def.segments.iter().filter(|s| s.kind == FeatureKind::City) {
        keep_clear.push(city_anchor(s.edges));
        if s.pennant {
            keep_clear.push(pennant_point(s));
        }
    }
    // Where roads that end at a city meet it.
    if road_end(def) == RoadEnd::City {
        keep_clear.extend(city_target(def));
    }
    let mut all = Vec::new();
    let carcassonne = city_of_carcassonne_halves(def);
    if carcassonne != 0 {
        for outline in city_of_carcassonne_outlines(carcassonne) {
            all.extend(houses_in(&outline, &keep_clear));
        }
    }
    for s in def.segments.iter().filter(|s| s.kind == FeatureKind::City) {
        all.extend(houses_in(&city_outline(s.edges), &keep_clear));
    }
    all
}
