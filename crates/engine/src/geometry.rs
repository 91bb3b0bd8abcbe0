//! Positions, directions, half-edges and rotations: the vocabulary of
//! `docs/tiles.md` and `docs/record-format.md`, with their exact names.

use std::fmt;

/// A cell of the board. `x` grows to the east, `y` to the north.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos {
    pub x: i32,
    pub y: i32,
}

impl Pos {
    pub const ORIGIN: Pos = Pos { x: 0, y: 0 };

    pub const fn new(x: i32, y: i32) -> Pos {
        Pos { x, y }
    }

    /// The neighbouring cell across edge `dir`.
    pub const fn step(self, dir: Dir) -> Pos {
        match dir {
            Dir::N => Pos::new(self.x, self.y + 1),
            Dir::E => Pos::new(self.x + 1, self.y),
            Dir::S => Pos::new(self.x, self.y - 1),
            Dir::W => Pos::new(self.x - 1, self.y),
        }
    }

    /// The 8 cells around this one (for cloisters, B-X3).
    pub fn ring(self) -> [Pos; 8] {
        let Pos { x, y } = self;
        [
            Pos::new(x - 1, y + 1),
            Pos::new(x, y + 1),
            Pos::new(x + 1, y + 1),
            Pos::new(x + 1, y),
            Pos::new(x + 1, y - 1),
            Pos::new(x, y - 1),
            Pos::new(x - 1, y - 1),
            Pos::new(x - 1, y),
        ]
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({},{})", self.x, self.y)
    }
}

/// An edge of a tile, clockwise from north.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    N = 0,
    E = 1,
    S = 2,
    W = 3,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::N, Dir::E, Dir::S, Dir::W];

    pub const fn from_index(i: usize) -> Dir {
        Dir::ALL[i % 4]
    }

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn opposite(self) -> Dir {
        Dir::from_index(self as usize + 2)
    }

    /// This edge after turning the tile by `rotation` clockwise.
    pub const fn rotated(self, rotation: Rotation) -> Dir {
        Dir::from_index(self as usize + rotation as usize)
    }

    pub const fn name(self) -> &'static str {
        ["N", "E", "S", "W"][self as usize]
    }

    pub fn from_name(name: &str) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Half of an edge, where fields touch the border: clockwise from the
/// north-west corner `Nw Ne En Es Se Sw Ws Wn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Half {
    Nw = 0,
    Ne = 1,
    En = 2,
    Es = 3,
    Se = 4,
    Sw = 5,
    Ws = 6,
    Wn = 7,
}

impl Half {
    pub const ALL: [Half; 8] = [
        Half::Nw,
        Half::Ne,
        Half::En,
        Half::Es,
        Half::Se,
        Half::Sw,
        Half::Ws,
        Half::Wn,
    ];

    pub const fn from_index(i: usize) -> Half {
        Half::ALL[i % 8]
    }

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn dir(self) -> Dir {
        Dir::from_index(self as usize / 2)
    }

    /// The half-edge of the neighbouring tile that touches this one:
    /// `Nw` touches `Sw`, `Ne` touches `Se`, `En` touches `Wn`, ...
    pub const fn facing(self) -> Half {
        // Across a border the edge is the opposite one, and its halves are
        // met in reverse order.
        let h = self as usize;
        Half::from_index(2 * ((h / 2 + 2) % 4) + (1 - h % 2))
    }

    pub const fn rotated(self, rotation: Rotation) -> Half {
        Half::from_index(self as usize + 2 * rotation as usize)
    }

    pub const fn name(self) -> &'static str {
        ["Nw", "Ne", "En", "Es", "Se", "Sw", "Ws", "Wn"][self as usize]
    }

    pub fn from_name(name: &str) -> Option<Half> {
        Half::ALL.into_iter().find(|h| h.name() == name)
    }
}

impl fmt::Display for Half {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Clockwise rotation in steps of 90 degrees. Mirroring does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Rotation {
    #[default]
    R0 = 0,
    R90 = 1,
    R180 = 2,
    R270 = 3,
}

impl Rotation {
    pub const ALL: [Rotation; 4] = [Rotation::R0, Rotation::R90, Rotation::R180, Rotation::R270];

    pub const fn from_index(i: usize) -> Rotation {
        Rotation::ALL[i % 4]
    }

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn degrees(self) -> u16 {
        self as u16 * 90
    }

    pub fn from_degrees(degrees: i64) -> Option<Rotation> {
        match degrees {
            0 => Some(Rotation::R0),
            90 => Some(Rotation::R90),
            180 => Some(Rotation::R180),
            270 => Some(Rotation::R270),
            _ => None,
        }
    }

    /// The rotation that undoes this one.
    pub const fn inverse(self) -> Rotation {
        Rotation::from_index(4 - self as usize)
    }
}

impl fmt::Display for Rotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.degrees())
    }
}

/// A place on a tile where a follower can stand, named as in
/// `docs/record-format.md`: an edge for a city or road, a half-edge for a field,
/// or the cloister.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    Edge(Dir),
    Half(Half),
    Cloister,
}

impl Place {
    pub fn from_name(name: &str) -> Option<Place> {
        if name == "cloister" {
            return Some(Place::Cloister);
        }
        Dir::from_name(name)
            .map(Place::Edge)
            .or_else(|| Half::from_name(name).map(Place::Half))
    }

    pub const fn name(self) -> &'static str {
        match self {
            Place::Edge(d) => d.name(),
            Place::Half(h) => h.name(),
            Place::Cloister => "cloister",
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
