//! The legal choices of the pending decision: what a client may choose
//! from without knowing the rules.

use crate::board::FrontierCell;
use crate::features::NodeId;
use crate::game::{Game, canonical_place, river_outflow_ok};
use crate::geometry::{Place, Rotation};
use crate::model::*;
use crate::tiles::TileKind;

impl Game {
    /// Every legal placement of the drawn tile (B-T1, R-3, R-4), or none
    /// when no tile waits to be placed.
    pub fn legal_placements(&self) -> Vec<Placement> {
        let Pending::PlaceTile { tile, .. } = self.pending else {
            return Vec::new();
        };
        let def = tile.def();
        if def.is_river() {
            let mut out = Vec::new();
            self.for_each_placement(tile, |p| {
                out.push(p);
                false
            });
            return out;
        }
        // The hot path of every bot: one mask and compare per cell and
        // rotation, into a vector sized for the worst case.
        let packed = def.rotations.each_ref().map(|r| r.packed);
        let frontier = self.board.frontier();
        let mut out = Vec::with_capacity(4 * frontier.len());
        for cell in frontier {
            for (rotation, &edges) in Rotation::ALL.iter().zip(&packed) {
                if edges & cell.care == cell.required {
                    out.push(Placement {
                        pos: cell.pos,
                        rotation: *rotation,
                    });
                }
            }
        }
        out
    }

    /// Calls `f` for each legal placement of `tile` until it returns true;
    /// returns whether it did.
    pub fn for_each_placement(&self, tile: TileKind, mut f: impl FnMut(Placement) -> bool) -> bool {
        let def = tile.def();
        if def.is_river() {
            let Some(end) = self.river else { return false };
            let Some(cell) = self.board.frontier_cell(end.cell) else {
                return false;
            };
            for rotation in Rotation::ALL {
                let layout = def.at(rotation);
                if cell.accepts(layout)
                    && river_outflow_ok(layout, end)
                    && f(Placement {
                        pos: end.cell,
                        rotation,
                    })
                {
                    return true;
                }
            }
            return false;
        }
        for cell in self.board.frontier() {
            for rotation in Rotation::ALL {
                if cell.accepts(def.at(rotation))
                    && f(Placement {
                        pos: cell.pos,
                        rotation,
                    })
                {
                    return true;
                }
            }
        }
        false
    }

    /// Every legal command for the pending decision, by its actor: what a
    /// client may choose from without knowing the rules.
    pub fn legal_commands(&self) -> Vec<Command> {
        match self.pending {
            Pending::Draw { .. } => TileKind::all()
                .filter(|&k| self.bag[k.index()] > 0 && self.check_draw(k).is_ok())
                .map(Command::Draw)
                .collect(),
            Pending::PlaceTile { .. } => self
                .legal_placements()
                .into_iter()
                .map(|p| Command::PlaceTile {
                    pos: p.pos,
                    rotation: p.rotation,
                })
                .collect(),
            Pending::PlaceFollower { .. } => std::iter::once(None)
                .chain(self.legal_follower_places().into_iter().map(Some))
                .map(Command::PlaceFollower)
                .collect(),
            Pending::Redeploy { player, .. } => self.moves_or_pass(player, false),
            Pending::FinalRound { player } => self.moves_or_pass(player, true),
            Pending::DeployToCarcassonne { .. } => {
                // C-5: the count staying is listed once, as no move (a move
                // to where it stands is accepted too, as the same choice).
                let here = self.city.map(|c| c.count);
                let mut commands = vec![Command::Pass];
                for quarter in Quarter::ALL {
                    let counts = std::iter::once(None)
                        .chain(Quarter::ALL.into_iter().filter(|&q| Some(q) != here).map(Some));
                    commands.extend(counts.map(|count| Command::DeployToCarcassonne { quarter, count }));
                }
                commands
            }
            Pending::Finished => Vec::new(),
        }
    }

    /// How many commands [`Game::legal_commands`] lists, without listing
    /// them: with [`Game::legal_command`], a random choice in a playout
    /// costs no allocation on the common decisions (placing a tile and a
    /// follower).
    pub fn legal_command_count(&self) -> usize {
        match self.pending {
            Pending::PlaceTile { tile, .. } if !tile.def().is_river() => {
                let packed = tile.def().rotations.each_ref().map(|r| r.packed);
                self.board
                    .frontier()
                    .iter()
                    .map(|cell| fitting(&packed, cell))
                    .sum()
            }
            Pending::PlaceFollower { .. } => {
                let mut places = 0;
                self.for_each_follower_place(|_| places += 1);
                1 + places
            }
            _ => self.legal_commands().len(),
        }
    }

    /// The `n`th command of [`Game::legal_commands`] (the same order),
    /// without listing them; `None` past the last one.
    pub fn legal_command(&self, n: usize) -> Option<Command> {
        match self.pending {
            Pending::PlaceTile { tile, .. } if !tile.def().is_river() => {
                let packed = tile.def().rotations.each_ref().map(|r| r.packed);
                let mut left = n;
                for cell in self.board.frontier() {
                    // Whole cells first: counting is cheaper than choosing.
                    let here = fitting(&packed, cell);
                    if left >= here {
                        left -= here;
                        continue;
                    }
                    for (rotation, &edges) in Rotation::ALL.iter().zip(&packed) {
                        if edges & cell.care == cell.required {
                            if left == 0 {
                                return Some(Command::PlaceTile {
                                    pos: cell.pos,
                                    rotation: *rotation,
                                });
                            }
                            left -= 1;
                        }
                    }
                }
                None
            }
            Pending::PlaceFollower { .. } => {
                let Some(mut left) = n.checked_sub(1) else {
                    return Some(Command::PlaceFollower(None));
                };
                let mut found = None;
                self.for_each_follower_place(|place| {
                    if found.is_none() {
                        if left == 0 {
                            found = Some(place);
                        } else {
                            left -= 1;
                        }
                    }
                });
                found.map(|place| Command::PlaceFollower(Some(place)))
            }
            _ => self.legal_commands().get(n).copied(),
        }
    }

    fn moves_or_pass(&self, player: Seat, final_round: bool) -> Vec<Command> {
        let mut commands: Vec<Command> = self
            .move_targets(player, final_round)
            .into_iter()
            .map(Command::MoveFromCarcassonne)
            .collect();
        commands.push(Command::Pass);
        commands
    }

    pub fn has_placement(&self, tile: TileKind) -> bool {
        self.for_each_placement(tile, |_| true)
    }

    /// The places where a follower may go on the tile just placed (B-T3,
    /// R-5), each by its canonical name. Deploying none is always legal.
    pub fn legal_follower_places(&self) -> Vec<Place> {
        let mut out = Vec::new();
        self.for_each_follower_place(|p| out.push(p));
        out
    }

    pub(crate) fn for_each_follower_place(&self, mut f: impl FnMut(Place)) {
        let (Pending::PlaceFollower { player }, Some(slot)) = (self.pending, self.current) else {
            return;
        };
        if self.supply[player.index()] == 0 {
            return;
        }
        let tile = self.board.tile(slot);
        for segment in 0..tile.def().segments.len() {
            let root = self.features.root(tile.first_node + segment as NodeId);
            if self.features.followers(root) == 0 {
                f(canonical_place(tile, segment as u8));
            }
        }
    }
}

/// How many of a tile's rotations (`packed` edges) fit `cell`.
fn fitting(packed: &[u16; 4], cell: &FrontierCell) -> usize {
    packed
        .iter()
        .map(|&edges| usize::from(edges & cell.care == cell.required))
        .sum()
}
