//! Unit tests of the renderer: every tile kind in every rotation is
//! rasterised and read back, to show that it is drawn where the catalogue
//! says (edge colours, segment anchors, the extent of each segment by
//! flood fill) and that followers stand inside their segment.

use carcassonne_engine::{Dir, EdgeKind, FeatureKind, Half, Rotation, TileKind};

use crate::geometry::{self, Point, TILE};
use crate::palette::{self, CITY_RGB, FIELD_RGB, RIVER_RGB, ROAD_EDGE_RGB, ROAD_RGB};
use crate::png::{Raster, rasterise};
use crate::sheet::{tile_svg, tile_svg_with};
use crate::svg::Num;

/// Pixels per tile unit in these tests.
const SCALE: f32 = 2.0;
/// How far inside the tile the border is sampled, in tile units.
const INSET: f32 = 3.0;

/// A tile rasterised, with its pixels as RGB.
struct Picture {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

impl Picture {
    fn of(svg: &str) -> Picture {
        let Raster { width, height, rgba } = rasterise(svg, SCALE).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        let rgb = rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect();
        Picture {
            width: width as usize,
            height: height as usize,
            rgb,
        }
    }

    fn index(&self, p: Point) -> usize {
        let x = ((p.0 * SCALE) as usize).min(self.width - 1);
        let y = ((p.1 * SCALE) as usize).min(self.height - 1);
        y * self.width + x
    }

    fn at(&self, p: Point) -> [u8; 3] {
        self.rgb[self.index(p)]
    }

    /// The pixels reached from `start` through pixels of `colour`
    /// (4-connected).
    fn flood(&self, start: Point, colour: [u8; 3]) -> Vec<bool> {
        self.flood_through(start, &[colour])
    }

    fn flood_through(&self, start: Point, colours: &[[u8; 3]]) -> Vec<bool> {
        let mut region = vec![false; self.rgb.len()];
        let first = self.index(start);
        let near = |c: [u8; 3]| colours.iter().any(|&k| near(c, k));
        if !near(self.rgb[first]) {
            return region;
        }
        let mut stack = vec![first];
        region[first] = true;
        while let Some(i) = stack.pop() {
            let (x, y) = (i % self.width, i / self.width);
            let mut visit = |j: usize| {
                if !region[j] && near(self.rgb[j]) {
                    region[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < self.width {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - self.width);
            }
            if y + 1 < self.height {
                visit(i + self.width);
            }
        }
        region
    }

    /// `region` with its holes filled (what it encloses, such as a pennant
    /// inside a city), grown by one pixel (the anti-aliased rim).
    fn enclosed(&self, region: &[bool]) -> Vec<bool> {
        let (w, h) = (self.width, self.height);
        let mut outside = vec![false; region.len()];
        let mut stack: Vec<usize> = (0..region.len())
            .filter(|&i| !region[i] && (i % w == 0 || i % w == w - 1 || i / w == 0 || i / w == h - 1))
            .collect();
        for &i in &stack {
            outside[i] = true;
        }
        while let Some(i) = stack.pop() {
            let (x, y) = (i % w, i / w);
            let neighbours = [
                (x > 0).then(|| i - 1),
                (x + 1 < w).then(|| i + 1),
                (y > 0).then(|| i - w),
                (y + 1 < h).then(|| i + w),
            ];
            for j in neighbours.into_iter().flatten() {
                if !outside[j] && !region[j] {
                    outside[j] = true;
                    stack.push(j);
                }
            }
        }
        let filled: Vec<bool> = outside.iter().map(|o| !o).collect();
        (0..filled.len())
            .map(|i| {
                let (x, y) = (i % w, i / w);
                filled[i]
                    || (x > 0 && filled[i - 1])
                    || (x + 1 < w && filled[i + 1])
                    || (y > 0 && filled[i - w])
                    || (y + 1 < h && filled[i + w])
            })
            .collect()
    }
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 28)
}

fn edge_colour(kind: EdgeKind) -> [u8; 3] {
    match kind {
        EdgeKind::Field => FIELD_RGB,
        EdgeKind::Road => ROAD_RGB,
        EdgeKind::City | EdgeKind::Wall => CITY_RGB,
        EdgeKind::Water => RIVER_RGB,
    }
}

fn feature_colour(kind: FeatureKind) -> Option<[u8; 3]> {
    match kind {
        FeatureKind::Field => Some(FIELD_RGB),
        FeatureKind::City => Some(CITY_RGB),
        FeatureKind::Road => Some(ROAD_RGB),
        FeatureKind::Cloister => None,
    }
}

fn inside(p: Point, d: Dir) -> Point {
    let (mx, my) = p;
    let (nx, ny) = geometry::inward(d);
    (mx + nx * INSET, my + ny * INSET)
}

fn edge_sample(d: Dir) -> Point {
    inside(geometry::edge_mid(d), d)
}

fn half_sample(h: Half) -> Point {
    inside(geometry::half_mid(h), h.dir())
}

fn all_tiles() -> impl Iterator<Item = (TileKind, Rotation)> {
    TileKind::all().flat_map(|k| Rotation::ALL.map(|r| (k, r)))
}

fn report(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn every_edge_of_every_tile_in_every_rotation_shows_its_kind_colour_at_its_middle() {
    let mut failures = Vec::new();
    for (kind, rotation) in all_tiles() {
        let picture = Picture::of(&tile_svg(kind, rotation));
        let layout = kind.def().at(rotation);
        for d in Dir::ALL {
            let edge = layout.edges[d.index()];
            let seen = picture.at(edge_sample(d));
            if !near(seen, edge_colour(edge)) {
                failures.push(format!(
                    "{kind} at {rotation}: edge {d} is {} but shows {seen:?}",
                    edge.name()
                ));
            }
        }
    }
    report(failures);
}

/// Each field, city and road segment: its anchor shows its colour, and a
/// flood fill from the anchor through that colour reaches every edge (or
/// half-edge, for fields) of the segment and none of another segment of
/// the same kind: two fields split by a road are drawn apart.
#[test]
fn every_segment_is_drawn_where_the_catalogue_says_and_apart_from_the_others() {
    let mut failures = Vec::new();
    let mut floods = 0;
    for (kind, rotation) in all_tiles() {
        let def = kind.def();
        let layout = def.at(rotation);
        let picture = Picture::of(&tile_svg(kind, rotation));
        for (i, segment) in def.segments.iter().enumerate() {
            let i = i as u8;
            let anchor = geometry::segment_anchor(kind, rotation, i);
            let name = format!("{kind} at {rotation}: {} segment {i}", segment.kind);
            let Some(colour) = feature_colour(segment.kind) else {
                continue;
            };
            if !near(picture.at(anchor), colour) {
                failures.push(format!(
                    "{name}: its anchor {anchor:?} shows {:?}",
                    picture.at(anchor)
                ));
                continue;
            }
            let region = picture.flood(anchor, colour);
            floods += 1;
            let same_kind = |s: u8| {
                def.segments
                    .get(usize::from(s))
                    .is_some_and(|o| o.kind == segment.kind)
            };
            let mut check = |place: String, sample: Point, owner: u8| {
                let reached = region[picture.index(sample)];
                if owner == i && !reached {
                    failures.push(format!("{name} does not reach {place}"));
                } else if owner != i && same_kind(owner) && reached {
                    failures.push(format!("{name} runs into segment {owner} at {place}"));
                }
            };
            if segment.kind == FeatureKind::Field {
                for h in Half::ALL {
                    check(h.to_string(), half_sample(h), layout.half_segment[h.index()]);
                }
            } else {
                for d in Dir::ALL {
                    check(d.to_string(), edge_sample(d), layout.edge_segment[d.index()]);
                }
            }
        }
    }
    assert!(floods > 400, "only {floods} segments checked");
    report(failures);
}

/// Every seat's shape drawn at a segment's anchor changes only pixels of
/// that segment (its flood-filled region with what it encloses), or of the
/// cloister's chapel for a monk.
#[test]
fn a_follower_is_drawn_inside_the_segment_it_stands_on() {
    let mut failures = Vec::new();
    for (kind, rotation) in all_tiles() {
        let def = kind.def();
        let plain = Picture::of(&tile_svg(kind, rotation));
        for (i, segment) in def.segments.iter().enumerate() {
            let anchor = geometry::segment_anchor(kind, rotation, i as u8);
            let mut over = String::new();
            for seat in 0..5 {
                palette::follower(&mut over, seat, anchor, palette::follower_radius(segment.kind));
            }
            let with = Picture::of(&tile_svg_with(kind, rotation, &over));
            let allowed: Vec<bool> = match feature_colour(segment.kind) {
                // A road with its kerbs.
                Some(ROAD_RGB) => plain.enclosed(&plain.flood_through(anchor, &[ROAD_RGB, ROAD_EDGE_RGB])),
                Some(colour) => plain.enclosed(&plain.flood(anchor, colour)),
                None => {
                    // The chapel: its walls, roof and cross.
                    let (x, y) = geometry::rotate(geometry::cloister_point(def), Rotation::R0);
                    let (x, y) = geometry::rotate((x, y), rotation);
                    (0..plain.rgb.len())
                        .map(|j| {
                            let (px, py) =
                                ((j % plain.width) as f32 / SCALE, (j / plain.width) as f32 / SCALE);
                            (px - x).abs() <= 16.0 && py >= y - 22.0 && py <= y + 14.0
                        })
                        .collect()
                }
            };
            let stray = (0..plain.rgb.len())
                .filter(|&j| plain.rgb[j] != with.rgb[j] && !allowed[j])
                .count();
            let drawn = (0..plain.rgb.len())
                .filter(|&j| plain.rgb[j] != with.rgb[j])
                .count();
            if stray > 0 || drawn < 100 {
                failures.push(format!(
                    "{kind} at {rotation}: a {} at {anchor:?}: {stray} of {drawn} changed pixels outside its segment",
                    segment.kind.follower_name()
                ));
            }
        }
    }
    report(failures);
}

#[test]
fn numbers_are_written_with_at_most_two_decimals_and_no_negative_zero() {
    let written: Vec<String> = [0.0, -0.0, 1.0, 62.5, 33.333, -4.25, 0.004, -0.004, 100.10]
        .iter()
        .map(|&x| Num(x).to_string())
        .collect();
    assert_eq!(
        written,
        ["0", "0", "1", "62.5", "33.33", "-4.25", "0", "0", "100.1"]
    );
}

#[test]
fn a_tile_turned_by_the_catalogue_moves_its_anchors_as_the_picture_turns() {
    // The N edge's middle goes to the E edge at 90 degrees, clockwise.
    assert_eq!(
        geometry::rotate(geometry::edge_mid(Dir::N), Rotation::R90),
        geometry::edge_mid(Dir::E)
    );
    assert_eq!(geometry::rotate((0.0, 0.0), Rotation::R90), (TILE, 0.0));
    assert_eq!(geometry::rotate((10.0, 20.0), Rotation::R270), (20.0, 90.0));
}

// ---- Boards -------------------------------------------------------------

fn recorded(name: &str) -> carcassonne_engine::record::Record {
    let path = format!(
        "{}/../engine/tests/records/shared/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    carcassonne_engine::record::Record::parse(&text).unwrap_or_else(|e| panic!("{e}"))
}

fn after(record: &carcassonne_engine::record::Record, turns: usize) -> carcassonne_engine::Game {
    let record = record.first_turns(turns).unwrap_or_else(|e| panic!("{e}"));
    record.replay().unwrap_or_else(|e| panic!("{e}")).game
}

/// Parses `#rrggbb`.
fn rgb(hex: &str) -> [u8; 3] {
    let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0);
    [byte(1), byte(3), byte(5)]
}

/// A board rasterised at `SCALE` pixels a tile unit, like the tiles.
fn board_picture(game: &carcassonne_engine::Game, options: &crate::BoardOptions) -> Picture {
    let svg = crate::board_svg(game, options);
    let Raster { width, height, rgba } =
        rasterise(&svg, SCALE / crate::PIXELS_PER_UNIT).unwrap_or_else(|e| panic!("{e}"));
    Picture {
        width: width as usize,
        height: height as usize,
        rgb: rgba.chunks_exact(4).map(|p| [p[0], p[1], p[2]]).collect(),
    }
}

/// On recorded boards, the middle of each follower (alone on its segment)
/// shows its seat's colour, at its segment's anchor on its tile.
#[test]
fn followers_on_a_board_stand_at_their_segments_anchor_in_their_seats_colour() {
    let mut checked = 0;
    for (name, turns) in [("count-3p.json", 40), ("river-3p.json", 60), ("base-4p.json", 50)] {
        let game = after(&recorded(name), turns);
        let options = crate::BoardOptions::default();
        let layout = crate::board::Layout::new(&game, &options);
        let picture = board_picture(&game, &options);
        let followers: Vec<_> = game.followers().collect();
        for f in &followers {
            if followers
                .iter()
                .filter(|g| g.at == f.at && g.place == f.place)
                .count()
                > 1
            {
                continue;
            }
            let tile = game
                .tile_at(f.at)
                .unwrap_or_else(|| panic!("{name}: no tile at {}", f.at));
            let segment = geometry::segment_at(tile.kind, tile.rotation, f.place).unwrap_or(0);
            let anchor = geometry::segment_anchor(tile.kind, tile.rotation, segment);
            let origin = layout.origin(f.at);
            let seen = picture.at((origin.0 + anchor.0, origin.1 + anchor.1));
            assert!(
                near(seen, rgb(palette::seat_colour(f.owner.index()))),
                "{name} after {turns}: the {} of seat {} at {} {} shows {seen:?}",
                f.kind.follower_name(),
                f.owner.index(),
                f.at,
                f.place
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} followers checked");
}

/// Followers in the City of Carcassonne's quarters are drawn in their
/// quarter, one shape per follower, in their seat's colour.
#[test]
fn followers_in_the_quarters_of_carcassonne_are_drawn_in_their_quarter() {
    use carcassonne_engine::{Quarter, Seat};
    let record = recorded("count-3p.json");
    let mut checked = 0;
    for turns in (0..=record.turns.len()).step_by(6) {
        let game = after(&record, turns);
        let Some(city) = game.city().copied() else {
            continue;
        };
        let options = crate::BoardOptions::default();
        let layout = crate::board::Layout::new(&game, &options);
        let Some(corner) = crate::city::city_corner(&game) else {
            panic!("the City is not where CITY_LAYOUT lays it")
        };
        let (cx, cy) = layout.origin(corner);
        let picture = board_picture(&game, &options);
        for quarter in Quarter::ALL {
            for seat in 0..game.players() {
                let n = city.quarters[quarter.index()][Seat(seat as u8).index()];
                let colour = rgb(palette::seat_colour(seat));
                for k in 0..n.min(7) {
                    let (dx, dy) = crate::city::follower_slot(quarter, seat, k);
                    // The stack's last follower is whole; the others show
                    // their top.
                    let at = (cx + dx, cy + dy + if k + 1 == n.min(7) { 0.0 } else { -2.5 });
                    assert!(
                        near(picture.at(at), colour),
                        "after {turns}: seat {seat} in the {quarter}, follower {k}"
                    );
                    checked += 1;
                }
                let next = crate::city::follower_slot(quarter, seat, n.min(7));
                assert!(
                    !near(picture.at((cx + next.0, cy + next.1 + 2.5)), colour),
                    "after {turns}: seat {seat} has {n} followers in the {quarter}, and more are drawn"
                );
            }
        }
    }
    assert!(checked >= 3, "only {checked} followers in quarters checked");
}

/// The board frames the last tile a player placed, never a tile of the
/// setup: it counts the setup's tiles as `Game` lays them.
#[test]
fn the_setup_tiles_are_counted_as_the_engine_lays_them() {
    use carcassonne_engine::{Expansion, Game, Rules, Seed, Setup};
    for expansions in [
        vec![],
        vec![Expansion::River],
        vec![Expansion::Count],
        vec![Expansion::River, Expansion::Count],
    ] {
        let rules = expansions.iter().fold(Rules::default(), |r, &e| r.with(e));
        let game = Game::new(Setup {
            rules,
            players: vec!["A".into(), "B".into()],
            tiles: None,
            seed: Some(Seed::from_u64(1)),
            time_control: None,
        });
        assert_eq!(
            crate::board::setup_tiles(&game),
            game.tiles().len(),
            "{expansions:?}"
        );
        assert!(!crate::board_svg(&game, &crate::BoardOptions::default()).contains(r#"class="last""#));
    }
}

#[test]
fn every_tile_name_has_its_glyphs() {
    for kind in TileKind::all() {
        assert!(crate::lettering::draws(kind.name()), "{}", kind.name());
    }
}
