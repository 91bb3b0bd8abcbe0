//! Where tiles lie, and where the next one may go (B-T1).
//!
//! The board keeps a *frontier*: every empty cell next to a placed tile,
//! with the edge kinds its neighbours require, packed like
//! [`Rotated::packed`]. Testing a tile at a cell is then one mask and one
//! comparison, and enumerating all placements touches only the frontier.

use crate::geometry::{Dir, Pos, Rotation};
use crate::tiles::{EdgeKind, Rotated, TileDef, TileKind};

/// A tile on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlacedTile {
    pub kind: TileKind,
    pub pos: Pos,
    pub rotation: Rotation,
    /// Index of this tile's first segment in the feature forest.
    pub(crate) first_node: u16,
}

impl PlacedTile {
    pub fn def(&self) -> &'static TileDef {
        self.kind.def()
    }

    pub fn layout(&self) -> &'static Rotated {
        self.kind.def().at(self.rotation)
    }
}

/// An empty cell next to the placed area and what its neighbours require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrontierCell {
    pub pos: Pos,
    /// 3 bits set at each side that touches a placed tile.
    pub care: u16,
    /// The edge kinds those neighbours require, packed.
    pub required: u16,
}

impl FrontierCell {
    pub fn accepts(&self, layout: &Rotated) -> bool {
        layout.packed & self.care == self.required
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cell {
    /// Tile slot + 1, or 0 when empty.
    tile: u16,
    /// Frontier index + 1, or 0 when not on the frontier.
    frontier: u16,
}

/// A grid that grows with the bounding box of the placed area.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Grid {
    min: Pos,
    width: i32,
    height: i32,
    cells: Vec<Cell>,
}

impl Grid {
    fn index(&self, pos: Pos) -> Option<usize> {
        // In i64: any `i32` position may be asked about (a command or a
        // forged event names it before a rule refuses it), and the
        // difference of two `i32`s overflows an `i32`.
        let dx = i64::from(pos.x) - i64::from(self.min.x);
        let dy = i64::from(pos.y) - i64::from(self.min.y);
        let (width, height) = (i64::from(self.width), i64::from(self.height));
        (dx >= 0 && dy >= 0 && dx < width && dy < height).then(|| (dy * width + dx) as usize)
    }

    fn get(&self, pos: Pos) -> Cell {
        self.index(pos).map_or(Cell::default(), |i| self.cells[i])
    }

    fn get_mut(&mut self, pos: Pos) -> &mut Cell {
        if self.index(pos).is_none() {
            self.grow_to(pos);
        }
        let i = self.index(pos).unwrap_or_default();
        &mut self.cells[i]
    }

    /// Grows to include `pos`, by half its size or more each time, so that
    /// growth is rare and its copies cost little in total.
    fn grow_to(&mut self, pos: Pos) {
        let (old_min, old_w, old_h) = (self.min, self.width, self.height);
        let (min_x, min_y, max_x, max_y) = if self.cells.is_empty() {
            (pos.x, pos.y, pos.x, pos.y)
        } else {
            (
                old_min.x.min(pos.x),
                old_min.y.min(pos.y),
                (old_min.x + old_w - 1).max(pos.x),
                (old_min.y + old_h - 1).max(pos.y),
            )
        };
        let margin_x = (old_w / 2).max(8);
        let margin_y = (old_h / 2).max(8);
        let min = Pos::new(min_x - margin_x, min_y - margin_y);
        let width = max_x - min_x + 1 + 2 * margin_x;
        let height = max_y - min_y + 1 + 2 * margin_y;
        let mut cells = vec![Cell::default(); (width * height) as usize];
        for y in 0..old_h {
            let from = (y * old_w) as usize;
            let to = ((old_min.y + y - min.y) * width + (old_min.x - min.x)) as usize;
            cells[to..to + old_w as usize].copy_from_slice(&self.cells[from..from + old_w as usize]);
        }
        *self = Grid {
            min,
            width,
            height,
            cells,
        };
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Board {
    tiles: Vec<PlacedTile>,
    grid: Grid,
    frontier: Vec<FrontierCell>,
}

impl Board {
    /// Makes room for `tiles` more tiles at once, rather than growing often.
    pub fn reserve(&mut self, tiles: usize) {
        self.tiles.reserve(tiles);
        self.frontier.reserve(2 * tiles.min(64));
    }

    pub fn tiles(&self) -> &[PlacedTile] {
        &self.tiles
    }

    pub fn tile(&self, slot: u16) -> &PlacedTile {
        &self.tiles[slot as usize]
    }

    /// The slot of the tile at `pos`, if any.
    pub fn slot_at(&self, pos: Pos) -> Option<u16> {
        self.grid.get(pos).tile.checked_sub(1)
    }

    pub fn at(&self, pos: Pos) -> Option<&PlacedTile> {
        self.slot_at(pos).map(|s| self.tile(s))
    }

    pub fn frontier(&self) -> &[FrontierCell] {
        &self.frontier
    }

    pub fn frontier_cell(&self, pos: Pos) -> Option<&FrontierCell> {
        let i = self.grid.get(pos).frontier.checked_sub(1)?;
        Some(&self.frontier[i as usize])
    }

    /// Puts a tile down without checking any rule (the caller has), and
    /// updates the frontier. Returns its slot.
    pub fn put(&mut self, kind: TileKind, pos: Pos, rotation: Rotation, first_node: u16) -> u16 {
        let slot = self.tiles.len() as u16;
        self.tiles.push(PlacedTile {
            kind,
            pos,
            rotation,
            first_node,
        });
        let cell = self.grid.get_mut(pos);
        cell.tile = slot + 1;
        if let Some(i) = cell.frontier.checked_sub(1) {
            cell.frontier = 0;
            self.remove_frontier(i as usize);
        }
        let layout = kind.def().at(rotation);
        for d in Dir::ALL {
            let next = pos.step(d);
            if self.grid.get(next).tile != 0 {
                continue;
            }
            // The neighbour's side facing us must carry our edge kind.
            let side = d.opposite();
            let shift = 3 * side.index() as u16;
            let (care, required) = (0b111 << shift, (layout.edges[d.index()] as u16) << shift);
            match self.grid.get(next).frontier.checked_sub(1) {
                Some(i) => {
                    let f = &mut self.frontier[i as usize];
                    f.care |= care;
                    f.required |= required;
                }
                None => {
                    self.frontier.push(FrontierCell {
                        pos: next,
                        care,
                        required,
                    });
                    self.grid.get_mut(next).frontier = self.frontier.len() as u16;
                }
            }
        }
        slot
    }

    fn remove_frontier(&mut self, i: usize) {
        self.frontier.swap_remove(i);
        if let Some(moved) = self.frontier.get(i) {
            let pos = moved.pos;
            self.grid.get_mut(pos).frontier = i as u16 + 1;
        }
    }

    /// The first edge where `kind` at `pos` and `rotation` does not match
    /// its neighbour: (edge, our kind, neighbour's kind).
    pub fn mismatch(&self, layout: &Rotated, pos: Pos) -> Option<(Dir, EdgeKind, EdgeKind)> {
        Dir::ALL.into_iter().find_map(|d| {
            let neighbour = self.at(pos.step(d))?;
            let theirs = neighbour.layout().edges[d.opposite().index()];
            let ours = layout.edges[d.index()];
            (ours != theirs).then_some((d, ours, theirs))
        })
    }

    /// Smallest rectangle holding every tile: (min, max).
    pub fn bounds(&self) -> Option<(Pos, Pos)> {
        let first = self.tiles.first()?.pos;
        Some(self.tiles.iter().fold((first, first), |(lo, hi), t| {
            (
                Pos::new(lo.x.min(t.pos.x), lo.y.min(t.pos.y)),
                Pos::new(hi.x.max(t.pos.x), hi.y.max(t.pos.y)),
            )
        }))
    }

    /// Bytes held, for the memory budget of a finished game.
    pub fn heap_bytes(&self) -> usize {
        self.tiles.capacity() * size_of::<PlacedTile>()
            + self.grid.cells.capacity() * size_of::<Cell>()
            + self.frontier.capacity() * size_of::<FrontierCell>()
    }
}
