//! The tile catalogue of `docs/tiles.md`, as data (a test compares the
//! two).
//!
//! Each kind is written below in the notation of docs/tiles.md (edges N E S W,
//! segments by the edges or half-edges they reach) and compiled once into
//! lookup tables per rotation, so that the hot paths (legal placements,
//! joining features) are table lookups and bit tests.

use std::fmt;
use std::sync::OnceLock;

use crate::geometry::{Dir, Half, Rotation};

/// What a tile edge carries. Two touching edges must carry the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    Field = 1,
    Road = 2,
    City = 3,
    /// The river: joins only water.
    Water = 4,
    /// An inner edge of the City of Carcassonne: only ever touches another
    /// city tile, laid at setup, so it never has to match anything.
    Wall = 5,
}

impl EdgeKind {
    pub const fn name(self) -> &'static str {
        match self {
            EdgeKind::Field => "field",
            EdgeKind::Road => "road",
            EdgeKind::City => "city",
            EdgeKind::Water => "river",
            EdgeKind::Wall => "city wall",
        }
    }

    fn from_letter(letter: char) -> Option<EdgeKind> {
        Some(match letter {
            'F' => EdgeKind::Field,
            'R' => EdgeKind::Road,
            'C' => EdgeKind::City,
            'W' => EdgeKind::Water,
            '-' => EdgeKind::Wall,
            _ => return None,
        })
    }
}

/// The kind of a feature, which fixes the kind of follower on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FeatureKind {
    Road,
    City,
    Cloister,
    Field,
}

impl FeatureKind {
    pub const fn name(self) -> &'static str {
        match self {
            FeatureKind::Road => "road",
            FeatureKind::City => "city",
            FeatureKind::Cloister => "cloister",
            FeatureKind::Field => "field",
        }
    }

    /// The follower standing on such a feature (B-T3).
    pub const fn follower_name(self) -> &'static str {
        match self {
            FeatureKind::Road => "thief",
            FeatureKind::City => "knight",
            FeatureKind::Cloister => "monk",
            FeatureKind::Field => "farmer",
        }
    }
}

impl fmt::Display for FeatureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One segment of a tile at rotation 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentDef {
    pub kind: FeatureKind,
    /// Bit `d` set: reaches edge `d` (cities and roads).
    pub edges: u8,
    /// Bit `h` set: reaches half-edge `h` (fields).
    pub halves: u8,
    pub pennant: bool,
    /// Bit `i` set: this field borders city segment `i` of the same tile.
    pub cities: u16,
}

/// A tile kind's layout at one rotation, as lookup tables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    pub edges: [EdgeKind; 4],
    /// The edges packed 3 bits each (`EdgeKind as u16` at bit `3 * d`), to
    /// test a placement against a cell's constraints with one comparison.
    pub packed: u16,
    /// The city or road segment reaching each edge, or `NONE`.
    pub edge_segment: [u8; 4],
    /// The field segment reaching each half-edge, or `NONE`.
    pub half_segment: [u8; 8],
}

/// A tile kind: its catalogue layout (rotation 0) and all four rotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileDef {
    pub name: &'static str,
    pub segments: Vec<SegmentDef>,
    /// Index of the cloister segment, if any.
    pub cloister: Option<u8>,
    /// Every field of this tile borders the City of Carcassonne (C-11).
    pub city_of_carcassonne: bool,
    pub rotations: [Rotated; 4],
}

/// No segment in a lookup table.
pub const NONE: u8 = u8::MAX;

impl TileDef {
    pub fn at(&self, rotation: Rotation) -> &Rotated {
        &self.rotations[rotation.index()]
    }

    pub fn is_river(&self) -> bool {
        self.rotations[0].edges.contains(&EdgeKind::Water)
    }

    pub fn pennants(&self) -> usize {
        self.segments.iter().filter(|s| s.pennant).count()
    }

    /// Whether the tile lies alike at rotations `a` and `b`: the same edges,
    /// and at every edge and half-edge a segment of the same kind, with the
    /// same pennant, reaching the same places and bordering the same
    /// cities. A tile with a symmetry (C at every quarter turn, U at a half
    /// turn, …) laid at either rotation is one and the same placement.
    pub fn lies_alike(&self, a: Rotation, b: Rotation) -> bool {
        let (ra, rb) = (self.at(a), self.at(b));
        if ra.edges != rb.edges {
            return false;
        }
        // Which segment of `b` each segment of `a` is, place by place; the
        // cloister (at no edge) turns with the tile.
        let mut same = [NONE; 16];
        if self.segments.len() > same.len() {
            return a == b;
        }
        if let Some(c) = self.cloister {
            same[usize::from(c)] = c;
        }
        let places_a = ra.edge_segment.iter().chain(&ra.half_segment);
        let places_b = rb.edge_segment.iter().chain(&rb.half_segment);
        for (&sa, &sb) in places_a.zip(places_b) {
            if sa == NONE || sb == NONE {
                if sa != sb {
                    return false;
                }
                continue;
            }
            let Some(slot) = same.get_mut(usize::from(sa)) else {
                return false;
            };
            if *slot == NONE {
                *slot = sb;
            } else if *slot != sb {
                return false;
            }
        }
        self.segments.iter().enumerate().all(|(i, s)| {
            let Some(t) = self.segments.get(usize::from(same[i])) else {
                return false;
            };
            let cities: u16 = (0..self.segments.len())
                .filter(|&c| s.cities & (1 << c) != 0)
                .filter_map(|c| 1u16.checked_shl(u32::from(same[c])))
                .fold(0, |acc, bit| acc | bit);
            s.kind == t.kind && s.pennant == t.pennant && cities == t.cities
        })
    }
}

/// A tile kind, by its index in the catalogue.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TileKind(pub(crate) u8);

impl TileKind {
    pub fn from_name(name: &str) -> Option<TileKind> {
        catalogue()
            .iter()
            .position(|t| t.name == name)
            .map(|i| TileKind(i as u8))
    }

    pub fn name(self) -> &'static str {
        self.def().name
    }

    pub fn def(self) -> &'static TileDef {
        &catalogue()[self.0 as usize]
    }

    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Every kind of the catalogue, in its order.
    pub fn all() -> impl Iterator<Item = TileKind> {
        (0..catalogue().len()).map(|i| TileKind(i as u8))
    }
}

impl fmt::Debug for TileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for TileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Number of kinds in the catalogue: 24 base, 10 river, 12 city tiles.
pub const KINDS: usize = 46;

/// The whole catalogue, built once.
pub fn catalogue() -> &'static [TileDef] {
    static CATALOGUE: OnceLock<Vec<TileDef>> = OnceLock::new();
    CATALOGUE.get_or_init(build_catalogue)
}

/// How many tiles of each base kind the game has (docs/tiles.md).
pub const BASE_COUNTS: [(&str, u8); 24] = [
    ("A", 2),
    ("B", 4),
    ("C", 1),
    ("D", 4),
    ("E", 5),
    ("F", 2),
    ("G", 1),
    ("H", 3),
    ("I", 2),
    ("J", 3),
    ("K", 3),
    ("L", 3),
    ("M", 2),
    ("N", 3),
    ("O", 2),
    ("P", 3),
    ("Q", 1),
    ("R", 3),
    ("S", 2),
    ("T", 1),
    ("U", 8),
    ("V", 9),
    ("W", 4),
    ("X", 1),
];

/// The river tiles with their counts; the spring and the lake once each.
pub const RIVER_COUNTS: [(&str, u8); 10] = [
    ("RS", 1),
    ("RL", 1),
    ("R1", 1),
    ("R2", 1),
    ("R3", 1),
    ("R4", 1),
    ("R5", 2),
    ("R6", 1),
    ("R7", 1),
    ("R8", 2),
];

/// The 12 city tiles of the Count (C-1) and where they lie, at rotation 0.
pub const CITY_LAYOUT: [(&str, i32, i32); 12] = [
    ("CO1", -2, 1),
    ("CO2", -1, 1),
    ("CO3", 0, 1),
    ("CO4", 1, 1),
    ("CO5", -2, 0),
    ("CO6", -1, 0),
    ("CO7", 0, 0),
    ("CO8", 1, 0),
    ("CO9", -2, -1),
    ("CO10", -1, -1),
    ("CO11", 0, -1),
    ("CO12", 1, -1),
];

/// The catalogue, in the notation of docs/tiles.md. Edges are N E S W (`-` is a
/// wall of the City of Carcassonne); a city or road lists the edges it
/// reaches; a field lists its half-edges and, after `->`, the edges that
/// name the cities it borders.
fn build_catalogue() -> Vec<TileDef> {
    let tiles = vec![
        // Base game.
        spec("A", "FFRF")
            .road("S")
            .cloister()
            .field("Nw Ne En Es Se Sw Ws Wn", ""),
        spec("B", "FFFF").cloister().field("Nw Ne En Es Se Sw Ws Wn", ""),
        spec("C", "CCCC").pennant_city("NESW"),
        spec("D", "CRFR")
            .city("N")
            .road("E-W")
            .field("En Wn", "N")
            .field("Es Se Sw Ws", ""),
        spec("E", "CFFF").city("N").field("En Es Se Sw Ws Wn", "N"),
        spec("F", "FCFC")
            .pennant_city("EW")
            .field("Nw Ne", "E")
            .field("Se Sw", "E"),
        spec("G", "FCFC")
            .city("EW")
            .field("Nw Ne", "E")
            .field("Se Sw", "E"),
        spec("H", "CFCF").city("N").city("S").field("En Es Ws Wn", "N S"),
        spec("I", "CFFC").city("N").city("W").field("En Es Se Sw", "N W"),
        spec("J", "CRRF")
            .city("N")
            .road("E-S")
            .field("En Sw Ws Wn", "N")
            .field("Es Se", ""),
        spec("K", "CFRR")
            .city("N")
            .road("S-W")
            .field("En Es Se Wn", "N")
            .field("Sw Ws", ""),
        spec("L", "CRRR")
            .city("N")
            .road("E")
            .road("S")
            .road("W")
            .field("En Wn", "N")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        spec("M", "CFFC").pennant_city("NW").field("En Es Se Sw", "N"),
        spec("N", "CFFC").city("NW").field("En Es Se Sw", "N"),
        spec("O", "CRRC")
            .pennant_city("NW")
            .road("E-S")
            .field("En Sw", "N")
            .field("Es Se", ""),
        spec("P", "CRRC")
            .city("NW")
            .road("E-S")
            .field("En Sw", "N")
            .field("Es Se", ""),
        spec("Q", "CCFC").pennant_city("NEW").field("Se Sw", "N"),
        spec("R", "CCFC").city("NEW").field("Se Sw", "N"),
        spec("S", "CCRC")
            .pennant_city("NEW")
            .road("S")
            .field("Se", "N")
            .field("Sw", "N"),
        spec("T", "CCRC")
            .city("NEW")
            .road("S")
            .field("Se", "N")
            .field("Sw", "N"),
        spec("U", "FRFR")
            .road("E-W")
            .field("Wn Nw Ne En", "")
            .field("Es Se Sw Ws", ""),
        spec("V", "FFRR")
            .road("S-W")
            .field("Wn Nw Ne En Es Se", "")
            .field("Sw Ws", ""),
        spec("W", "FRRR")
            .road("E")
            .road("S")
            .road("W")
            .field("Wn Nw Ne En", "")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        spec("X", "RRRR")
            .road("N")
            .road("E")
            .road("S")
            .road("W")
            .field("Wn Nw", "")
            .field("Ne En", "")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        // The River.
        spec("RS", "FWFF").field("Nw Ne En Es Se Sw Ws Wn", ""),
        spec("RL", "FFFW").field("Nw Ne En Es Se Sw Ws Wn", ""),
        spec("R1", "CWCW")
            .city("N")
            .city("S")
            .field("Wn En", "N")
            .field("Ws Es", "S"),
        spec("R2", "CWRW")
            .city("N")
            .road("S")
            .field("Wn", "N")
            .field("En", "N")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        spec("R3", "FWRW")
            .road("S")
            .cloister()
            .field("Wn Nw Ne En", "")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        spec("R4", "WRWR")
            .road("E-W")
            .field("Wn Nw", "")
            .field("Ne En", "")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        spec("R5", "FWFW")
            .field("Wn Nw Ne En", "")
            .field("Es Se Sw Ws", ""),
        spec("R6", "CWWC")
            .city("NW")
            .field("En Sw", "N")
            .field("Es Se", ""),
        spec("R7", "RRWW")
            .road("N-E")
            .field("Wn Nw Es Se", "")
            .field("Ne En", "")
            .field("Sw Ws", ""),
        spec("R8", "FFWW")
            .field("Wn Nw Ne En Es Se", "")
            .field("Sw Ws", ""),
        // The Count: the city tiles. Only the outer ring has landscape.
        spec("CO1", "F--R")
            .carcassonne()
            .road("W")
            .field("Wn Nw Ne En", "")
            .field("Ws Sw", ""),
        spec("CO2", "F---").carcassonne().field("Wn Nw Ne En", ""),
        spec("CO3", "F---").carcassonne().field("Wn Nw Ne En", ""),
        spec("CO4", "RF--")
            .carcassonne()
            .road("N")
            .field("Wn Nw", "")
            .field("Ne En Es Se", ""),
        spec("CO5", "---F").carcassonne().field("Nw Wn Ws Sw", ""),
        spec("CO6", "----").carcassonne(),
        spec("CO7", "----").carcassonne(),
        spec("CO8", "-F--").carcassonne().field("Ne En Es Se", ""),
        spec("CO9", "--CF")
            .carcassonne()
            .city("S")
            .field("Nw Wn Ws Es", "S"),
        spec("CO10", "--F-").carcassonne().field("Ws Sw Se Es", ""),
        spec("CO11", "--R-")
            .carcassonne()
            .road("S")
            .field("Es Se", "")
            .field("Sw Ws", ""),
        spec("CO12", "-CF-")
            .carcassonne()
            .city("E")
            .field("Ne Se Sw Ws", "E"),
    ];
    debug_assert_eq!(tiles.len(), KINDS);
    tiles.into_iter().map(Spec::build).collect()
}

/// A tile being written down, before its rotation tables exist.
struct Spec {
    name: &'static str,
    edges: [EdgeKind; 4],
    segments: Vec<SegmentDef>,
    /// For each field: the edges naming the cities it borders.
    field_cities: Vec<&'static str>,
    city_of_carcassonne: bool,
}

fn spec(name: &'static str, edges: &str) -> Spec {
    let letters: Vec<EdgeKind> = edges.chars().filter_map(EdgeKind::from_letter).collect();
    let edges: [EdgeKind; 4] = letters
        .try_into()
        .unwrap_or_else(|_| panic!("tile {name}: edges must be 4 letters of FRCW-"));
    Spec {
        name,
        edges,
        segments: Vec::new(),
        field_cities: Vec::new(),
        city_of_carcassonne: false,
    }
}

fn edge_mask(edges: &str) -> u8 {
    edges
        .chars()
        .filter(|c| c.is_ascii_uppercase())
        .map(|c| {
            let d = Dir::from_name(&c.to_string()).unwrap_or_else(|| panic!("bad edge {c}"));
            1u8 << d.index()
        })
        .fold(0, |acc, bit| acc | bit)
}

impl Spec {
    fn push(mut self, kind: FeatureKind, edges: u8, halves: u8, pennant: bool) -> Spec {
        self.segments.push(SegmentDef {
            kind,
            edges,
            halves,
            pennant,
            cities: 0,
        });
        self.field_cities.push("");
        self
    }

    fn city(self, edges: &str) -> Spec {
        self.push(FeatureKind::City, edge_mask(edges), 0, false)
    }

    fn pennant_city(self, edges: &str) -> Spec {
        self.push(FeatureKind::City, edge_mask(edges), 0, true)
    }

    /// `E-W` crosses the tile; `S` ends on it.
    fn road(self, edges: &str) -> Spec {
        self.push(FeatureKind::Road, edge_mask(edges), 0, false)
    }

    fn cloister(self) -> Spec {
        self.push(FeatureKind::Cloister, 0, 0, false)
    }

    fn carcassonne(mut self) -> Spec {
        self.city_of_carcassonne = true;
        self
    }

    /// A field by its half-edges, and the edges of the cities it borders.
    fn field(mut self, halves: &str, cities: &'static str) -> Spec {
        let mask = halves
            .split_whitespace()
            .map(|h| {
                1u8 << Half::from_name(h)
                    .unwrap_or_else(|| panic!("bad half {h}"))
                    .index()
            })
            .fold(0, |acc, bit| acc | bit);
        self = self.push(FeatureKind::Field, 0, mask, false);
        if let Some(last) = self.field_cities.last_mut() {
            *last = cities;
        }
        self
    }

    fn build(mut self) -> TileDef {
        let name = self.name;
        // Resolve each field's bordering cities to segment indices.
        for i in 0..self.segments.len() {
            for edge in self.field_cities[i].split_whitespace() {
                let bit = edge_mask(edge);
                let city = self
                    .segments
                    .iter()
                    .position(|s| s.kind == FeatureKind::City && s.edges & bit != 0)
                    .unwrap_or_else(|| panic!("tile {name}: no city at {edge}"));
                self.segments[i].cities |= 1 << city;
            }
        }
        let cloister = self
            .segments
            .iter()
            .position(|s| s.kind == FeatureKind::Cloister)
            .map(|i| i as u8);
        let rotations = Rotation::ALL.map(|r| self.rotate(r));
        TileDef {
            name,
            segments: self.segments,
            cloister,
            city_of_carcassonne: self.city_of_carcassonne,
            rotations,
        }
    }

    fn rotate(&self, rotation: Rotation) -> Rotated {
        let mut edges = [EdgeKind::Wall; 4];
        let mut edge_segment = [NONE; 4];
        let mut half_segment = [NONE; 8];
        for d in Dir::ALL {
            edges[d.rotated(rotation).index()] = self.edges[d.index()];
        }
        for (i, segment) in self.segments.iter().enumerate() {
            for d in Dir::ALL {
                if segment.edges & (1 << d.index()) != 0 {
                    edge_segment[d.rotated(rotation).index()] = i as u8;
                }
            }
            for h in Half::ALL {
                if segment.halves & (1 << h.index()) != 0 {
                    half_segment[h.rotated(rotation).index()] = i as u8;
                }
            }
        }
        let packed = pack_edges(&edges);
        Rotated {
            edges,
            packed,
            edge_segment,
            half_segment,
        }
    }
}

/// Packs four edge kinds, 3 bits each, edge `d` at bit `3 * d`.
pub(crate) fn pack_edges(edges: &[EdgeKind; 4]) -> u16 {
    edges
        .iter()
        .enumerate()
        .fold(0, |acc, (d, &e)| acc | (e as u16) << (3 * d))
}
