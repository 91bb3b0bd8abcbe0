//! Where things lie on one tile, computed from the catalogue's segment
//! data alone: the outlines of cities and of the City of Carcassonne, the
//! lines of roads and of the river, the cloister, and the anchor of each
//! segment (where its follower stands).
//!
//! A tile is a square of [`TILE`] units, north up, `y` growing downwards
//! (as in SVG). Everything is laid out at rotation 0 and turned as a
//! whole: [`rotate`] turns a point the way the catalogue turns a tile
//! (clockwise), and the SVG of a tile is turned by the same angle.

use carcassonne_engine::{Dir, EdgeKind, FeatureKind, Half, Rotation, SegmentDef, TileDef, TileKind};

/// A point on a tile, in tile units.
pub type Point = (f32, f32);

/// The side of a tile, in units.
pub const TILE: f32 = 100.0;
const CENTRE: Point = (50.0, 50.0);

/// How far a city's inner wall reaches into the tile across one edge (a
/// band's side; a notch, deeper to leave room to the field beside its
/// road), and across three (a cap), at its deepest (controls of cubics).
const SIDE_DEPTH: f32 = 36.0;
const NOTCH_DEPTH: f32 = 46.0;
const CAP_DEPTH: f32 = 38.0;
/// How far the City of Carcassonne reaches past its own half-edges into a
/// field's, so that the middle of a wall edge is always city.
const WALL_OVERLAP: f32 = 12.0;
/// A 1-end road's follower stands this far from its edge.
const ROAD_ANCHOR: f32 = 22.0;
/// ... or this far when a city starts close to that edge (a notch).
const SHORT_ROAD_ANCHOR: f32 = 15.0;
/// A field's follower stands this far inside, from an edge or a corner.
const FIELD_INSET: f32 = 14.0;
/// ... or from a half-edge, nearer its border to keep clear of a wall.
const HALF_INSET: f32 = 12.0;
/// A farmer in a corner stands this part of the way to the centre.
const CORNER_INSET: f32 = 0.36;

/// One piece of an outline, from the current point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    Line(Point),
    Quad(Point, Point),
    Cubic(Point, Point, Point),
}

/// A closed outline (its first point, then steps) and the part of it that
/// is a wall (the curves inside the tile, not the tile's own border).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outline {
    pub start: Point,
    pub steps: Vec<Step>,
    /// Each wall piece: its first point and its curve.
    pub walls: Vec<(Point, Step)>,
}

/// A road or river line: from its first point, one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub start: Point,
    pub step: Step,
}

/// Where a 1-end road stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoadEnd {
    /// At a village square in the middle (a crossroads).
    Square,
    Cloister,
    City,
}

fn lerp(a: Point, b: Point, t: f32) -> Point {
    (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
}

fn add(a: Point, d: Point, k: f32) -> Point {
    (a.0 + d.0 * k, a.1 + d.1 * k)
}

pub(crate) fn distance(a: Point, b: Point) -> f32 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Corner `i` (0 NW, 1 NE, 2 SE, 3 SW): edge `d` runs from corner `d`
/// to corner `d + 1`, clockwise.
pub fn corner(i: usize) -> Point {
    [(0.0, 0.0), (TILE, 0.0), (TILE, TILE), (0.0, TILE)][i % 4]
}

pub fn edge_mid(d: Dir) -> Point {
    lerp(corner(d.index()), corner(d.index() + 1), 0.5)
}

/// The unit vector from edge `d` into the tile.
pub fn inward(d: Dir) -> Point {
    [(0.0, 1.0), (-1.0, 0.0), (0.0, -1.0), (1.0, 0.0)][d.index()]
}

/// The 8 points that bound the half-edges, clockwise from the NW corner:
/// half `h` runs from point `h` to point `h + 1`.
pub fn perimeter(k: usize) -> Point {
    let k = k % 8;
    if k.is_multiple_of(2) {
        corner(k / 2)
    } else {
        edge_mid(Dir::from_index(k / 2))
    }
}

pub fn half_mid(h: Half) -> Point {
    lerp(perimeter(h.index()), perimeter(h.index() + 1), 0.5)
}

/// A point of a tile at rotation 0, where it lies once the tile is turned.
pub fn rotate(p: Point, rotation: Rotation) -> Point {
    let (x, y) = p;
    match rotation {
        Rotation::R0 => (x, y),
        Rotation::R90 => (TILE - y, x),
        Rotation::R180 => (TILE - x, TILE - y),
        Rotation::R270 => (y, TILE - x),
    }
}

fn has_edge(mask: u8, d: usize) -> bool {
    mask & (1 << (d % 4)) != 0
}

fn edges_of(mask: u8) -> impl Iterator<Item = Dir> {
    Dir::ALL.into_iter().filter(move |d| has_edge(mask, d.index()))
}

/// The outline of a city segment reaching the edges of `mask`: its edges
/// with their corners, and between them walls bowing inward (one edge: a
/// cap; two neighbours: a corner piece; two opposite: a band; three: a
/// notch; four: the whole tile).
pub fn city_outline(mask: u8) -> Outline {
    let mask = mask & 0b1111;
    if mask == 0b1111 || mask == 0 {
        return square();
    }
    // Start at a member edge whose predecessor is not one.
    let first = (0..4)
        .find(|&d| has_edge(mask, d) && !has_edge(mask, d + 3))
        .unwrap_or(0);
    let mut outline = Outline {
        start: corner(first),
        ..Outline::default()
    };
    let mut d = first;
    while d < first + 4 {
        if has_edge(mask, d) {
            outline.steps.push(Step::Line(corner(d + 1)));
            d += 1;
            continue;
        }
        let run = (0..4).take_while(|k| !has_edge(mask, d + k)).count();
        let (from, to) = (corner(d), corner(d + run));
        let curve = match run {
            1 => {
                let n = inward(Dir::from_index(d));
                let depth = if mask.count_ones() == 3 {
                    NOTCH_DEPTH
                } else {
                    SIDE_DEPTH
                };
                Step::Cubic(
                    add(lerp(from, to, 0.3), n, depth),
                    add(lerp(from, to, 0.7), n, depth),
                    to,
                )
            }
            2 => {
                // Bow a little towards the corner the two city edges share.
                let shared = corner(d + 3);
                Step::Quad(lerp(CENTRE, shared, 0.2), to)
            }
            _ => {
                let n = inward(Dir::from_index(d + 3));
                Step::Cubic(
                    add(lerp(from, to, 0.4), n, CAP_DEPTH),
                    add(lerp(from, to, 0.6), n, CAP_DEPTH),
                    to,
                )
            }
        };
        outline.steps.push(curve);
        outline.walls.push((from, curve));
        d += run;
    }
    outline
}

fn square() -> Outline {
    Outline {
        start: corner(0),
        steps: (1..4).map(|i| Step::Line(corner(i))).collect(),
        walls: Vec::new(),
    }
}

/// The half-edges of the City of Carcassonne on a tile: those of its
/// walls (`EdgeKind::Wall`) that no field reaches, as bits.
pub fn city_of_carcassonne_halves(def: &TileDef) -> u8 {
    let fields = def
        .segments
        .iter()
        .filter(|s| s.kind == FeatureKind::Field)
        .fold(0u8, |acc, s| acc | s.halves);
    Half::ALL
        .into_iter()
        .filter(|h| def.rotations[0].edges[h.dir().index()] == EdgeKind::Wall)
        .fold(0u8, |acc, h| acc | 1 << h.index())
        & !fields
}

/// The outlines of the City of Carcassonne on a tile: one per run of its
/// half-edges, each reaching a little into the fields beside it and
/// closed by a wall across the tile.
pub fn city_of_carcassonne_outlines(halves: u8) -> Vec<Outline> {
    if halves == 0xff {
        return vec![square()];
    }
    let has = |h: usize| halves & (1 << (h % 8)) != 0;
    let mut outlines = Vec::new();
    for first in (0..8).filter(|&h| has(h) && !has(h + 7)) {
        let run = (0..8).take_while(|k| has(first + k)).count();
        let last = first + run;
        let start = lerp(perimeter(first), perimeter(first + 7), WALL_OVERLAP / 50.0);
        let end = lerp(perimeter(last), perimeter(last + 1), WALL_OVERLAP / 50.0);
        let mut steps: Vec<Step> = (first..=last).map(|k| Step::Line(perimeter(k))).collect();
        steps.push(Step::Line(end));
        let chord = lerp(end, start, 0.5);
        let wall = Step::Quad(lerp(chord, CENTRE, 0.35), start);
        steps.push(wall);
        outlines.push(Outline {
            start,
            steps,
            walls: vec![(end, wall)],
        });
    }
    outlines
}

/// Where the City of Carcassonne's part of a tile is, for roads that end
/// at it: its half-edges' middle, pulled towards the centre.
fn city_of_carcassonne_anchor(halves: u8) -> Point {
    let mids: Vec<Point> = Half::ALL
        .into_iter()
        .filter(|h| halves & (1 << h.index()) != 0)
        .map(half_mid)
        .collect();
    pull(average(&mids), 0.7)
}

fn average(points: &[Point]) -> Point {
    if points.is_empty() {
        return CENTRE;
    }
    let n = points.len() as f32;
    let sum = points.iter().fold((0.0, 0.0), |s, p| (s.0 + p.0, s.1 + p.1));
    (sum.0 / n, sum.1 / n)
}

/// `p` moved towards the centre: `k` = 1 keeps it, 0 is the centre.
fn pull(p: Point, k: f32) -> Point {
    lerp(CENTRE, p, k)
}

/// Where a city segment's knight stands (and its pennant beside it).
pub(crate) fn city_anchor(mask: u8) -> Point {
    let mids: Vec<Point> = edges_of(mask).map(edge_mid).collect();
    pull(average(&mids), 0.7)
}

/// Where a city's pennant is drawn: beside its knight.
pub fn pennant_point(segment: &SegmentDef) -> Point {
    add(city_anchor(segment.edges), (17.0, -4.0), 1.0)
}

/// Where the cloister stands: in the middle, or towards a field edge
/// when the river runs through the middle.
pub fn cloister_point(def: &TileDef) -> Point {
    let layout = &def.rotations[0];
    if !layout.edges.contains(&EdgeKind::Water) {
        return CENTRE;
    }
    let field_edge = Dir::ALL.into_iter().find(|d| {
        let (a, b) = (
            layout.half_segment[2 * d.index()],
            layout.half_segment[2 * d.index() + 1],
        );
        a == b && usize::from(a) < def.segments.len()
    });
    match field_edge {
        Some(d) => add(edge_mid(d), inward(d), 25.0),
        None => CENTRE,
    }
}

/// The first city segment of a tile, or the City of Carcassonne on it:
/// where a road that ends at a city goes.
pub(crate) fn city_target(def: &TileDef) -> Option<Point> {
    if let Some(city) = def.segments.iter().find(|s| s.kind == FeatureKind::City) {
        return Some(city_anchor(city.edges));
    }
    let halves = city_of_carcassonne_halves(def);
    (halves != 0).then(|| city_of_carcassonne_anchor(halves))
}

/// Where the 1-end roads of a tile stop.
pub fn road_end(def: &TileDef) -> RoadEnd {
    let dead_ends = def
        .segments
        .iter()
        .filter(|s| s.kind == FeatureKind::Road && s.edges.count_ones() == 1)
        .count();
    if def.cloister.is_some() {
        RoadEnd::Cloister
    } else if dead_ends == 1 && city_target(def).is_some() {
        RoadEnd::City
    } else {
        RoadEnd::Square
    }
}

/// The line of a road (or the river) reaching the edges of `mask`: from
/// edge to edge by a curve through the middle, or from its edge to where
/// it stops (`to`).
fn through_line(mask: u8, to: Point) -> Option<Line> {
    let mut ends = edges_of(mask);
    let a = ends.next()?;
    Some(match ends.next() {
        Some(b) => Line {
            start: edge_mid(a),
            step: Step::Quad(CENTRE, edge_mid(b)),
        },
        None => Line {
            start: edge_mid(a),
            step: Step::Line(to),
        },
    })
}

/// The line of a road segment.
pub fn road_line(def: &TileDef, segment: &SegmentDef) -> Option<Line> {
    let to = match road_end(def) {
        RoadEnd::Square => CENTRE,
        RoadEnd::Cloister => cloister_point(def),
        RoadEnd::City => city_target(def).unwrap_or(CENTRE),
    };
    through_line(segment.edges, to)
}

/// The river's line on a tile, if it has water edges; a spring or a lake
/// (one water edge) runs to a pool in the middle.
pub fn river_line(def: &TileDef) -> Option<Line> {
    let mask = Dir::ALL
        .into_iter()
        .filter(|d| def.rotations[0].edges[d.index()] == EdgeKind::Water)
        .fold(0u8, |acc, d| acc | 1 << d.index());
    through_line(mask, CENTRE)
}

pub(crate) fn point_on(line: &Line, t: f32) -> Point {
    match line.step {
        Step::Line(to) => lerp(line.start, to, t),
        Step::Quad(c, to) => lerp(lerp(line.start, c, t), lerp(c, to, t), t),
        Step::Cubic(c1, c2, to) => {
            let (a, b, c) = (lerp(line.start, c1, t), lerp(c1, c2, t), lerp(c2, to, t));
            lerp(lerp(a, b, t), lerp(b, c, t), t)
        }
    }
}

/// Whether the only edge a city leaves free is `d`: a road from `d` meets
/// that city's wall soon.
fn notch_at(def: &TileDef, d: Dir) -> bool {
    def.segments
        .iter()
        .any(|s| s.kind == FeatureKind::City && s.edges.count_ones() == 3 && !has_edge(s.edges, d.index()))
}

fn road_anchor(def: &TileDef, segment: &SegmentDef) -> Point {
    let Some(line) = road_line(def, segment) else {
        return CENTRE;
    };
    match line.step {
        Step::Line(to) => {
            let d = edges_of(segment.edges).next().unwrap_or(Dir::N);
            let along = if notch_at(def, d) {
                SHORT_ROAD_ANCHOR
            } else {
                ROAD_ANCHOR
            };
            let length = distance(line.start, to).max(1.0);
            lerp(line.start, to, (along / length).min(0.5))
        }
        _ => point_on(&line, 0.5),
    }
}

/// Where a farmer stands in a field: in a corner the field holds both
/// sides of, else before an edge it holds whole, else before one of its
/// half-edges, towards the corner (clear of the road or river in the
/// middle of the edge).
fn field_anchor(segment: &SegmentDef) -> Point {
    let has = |h: usize| segment.halves & (1 << (h % 8)) != 0;
    // Corner i lies between half 2i - 1 and half 2i.
    if let Some(i) = (0..4).find(|&i| has(2 * i + 7) && has(2 * i)) {
        return lerp(corner(i), CENTRE, CORNER_INSET);
    }
    if let Some(d) = Dir::ALL
        .into_iter()
        .find(|d| has(2 * d.index()) && has(2 * d.index() + 1))
    {
        return add(edge_mid(d), inward(d), FIELD_INSET);
    }
    let half = Half::ALL.into_iter().find(|h| has(h.index())).unwrap_or(Half::Nw);
    // From its corner end, 60% of the way to the edge's middle.
    let (from, to) = if half.index().is_multiple_of(2) {
        (perimeter(half.index()), perimeter(half.index() + 1))
    } else {
        (perimeter(half.index() + 1), perimeter(half.index()))
    };
    add(lerp(from, to, 0.6), inward(half.dir()), HALF_INSET)
}

/// Where the follower of segment `segment` of `kind` stands once the tile
/// lies at `rotation`, in tile units from the tile's top-left corner
/// (north up). Knights stand in their city, thieves on their road, monks
/// on the cloister, farmers in their field.
pub fn segment_anchor(kind: TileKind, rotation: Rotation, segment: u8) -> Point {
    let def = kind.def();
    let Some(s) = def.segments.get(usize::from(segment)) else {
        return rotate(CENTRE, rotation);
    };
    let at = match s.kind {
        FeatureKind::City => city_anchor(s.edges),
        FeatureKind::Road => road_anchor(def, s),
        FeatureKind::Cloister => add(cloister_point(def), (0.0, 3.0), 1.0),
        FeatureKind::Field => field_anchor(s),
    };
    rotate(at, rotation)
}

/// The segment of `kind` at `rotation` that a follower's place names.
pub fn segment_at(kind: TileKind, rotation: Rotation, place: carcassonne_engine::Place) -> Option<u8> {
    let def = kind.def();
    let layout = def.at(rotation);
    let segment = match place {
        carcassonne_engine::Place::Edge(d) => layout.edge_segment[d.index()],
        carcassonne_engine::Place::Half(h) => layout.half_segment[h.index()],
        carcassonne_engine::Place::Cloister => def.cloister?,
    };
    (usize::from(segment) < def.segments.len()).then_some(segment)
}
