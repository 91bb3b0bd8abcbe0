//! `decide`: a command checked against the rules, turned into events or
//! refused with the rule it breaks. Changes nothing.

use crate::features::NodeId;
use crate::game::{Game, canonical_place, kind, river_outflow_ok, segment_at};
use crate::geometry::{Place, Pos, Rotation};
use crate::model::*;
use crate::rules::{Expansion, id};
use crate::tiles::{EdgeKind, RIVER_COUNTS, TileKind};

impl Game {
    /// Checks `command` by `actor` against the rules and returns the events
    /// it produces. Changes nothing.
    /// A choice the rules let one name in several ways is accepted in each
    /// of them, and its events hold the one form [`Game::legal_commands`]
    /// lists: a follower place by any place of its segment on the tile
    /// (B-T3), a move from Carcassonne by any place of the feature on any
    /// of its tiles (C-6, C-9), the count left where it stands by no move
    /// or a move to that quarter (C-5).
    /// It decides at the time of the last event: in a game with a time
    /// control, [`Game::decide_at`] decides at a time of one's own.
    pub fn decide(&self, actor: Actor, command: &Command) -> Result<Vec<Event>, PlayError> {
        self.decide_at(self.time, actor, command)
    }

    /// The rules of the board and the turn for `command` (not the clocks,
    /// nor resigning and aborting: [`Game::decide_at`]), appending its
    /// events to `out`.
    pub(crate) fn decide_into(
        &self,
        actor: Actor,
        command: &Command,
        out: &mut Vec<Event>,
    ) -> Result<(), PlayError> {
        let expected = self.pending.actor().ok_or(PlayError::Finished)?;
        let wrong = || PlayError::WrongDecision {
            pending: self.pending.name(),
            command: command.name(),
        };
        match (*command, self.pending) {
            (Command::Draw(tile), Pending::Draw { .. }) => {
                check_actor(expected, actor)?;
                self.check_draw(tile)?;
                {
                    out.push(Event::Drawn(tile));
                    Ok(())
                }
            }
            (Command::PlaceTile { pos, rotation }, Pending::PlaceTile { tile, .. }) => {
                check_actor(expected, actor)?;
                self.check_placement(tile, pos, rotation)?;
                {
                    out.push(Event::TilePlaced { pos, rotation });
                    Ok(())
                }
            }
            (Command::PlaceFollower(place), Pending::PlaceFollower { player }) => {
                check_actor(expected, actor)?;
                let place = match place {
                    Some(place) => Some(self.check_follower(player, place)?),
                    None => None,
                };
                {
                    out.push(Event::FollowerPlaced(place));
                    Ok(())
                }
            }
            (Command::MoveFromCarcassonne(target), Pending::Redeploy { player, .. }) => {
                check_actor(expected, actor)?;
                {
                    out.push(Event::FollowerMoved(self.check_move(player, target, false)?));
                    Ok(())
                }
            }
            (Command::MoveFromCarcassonne(target), Pending::FinalRound { player }) => {
                check_actor(expected, actor)?;
                {
                    out.push(Event::FollowerMoved(self.check_move(player, target, true)?));
                    Ok(())
                }
            }
            (
                Command::Pass,
                Pending::Redeploy { .. } | Pending::DeployToCarcassonne { .. } | Pending::FinalRound { .. },
            ) => {
                check_actor(expected, actor)?;
                {
                    out.push(Event::Passed);
                    Ok(())
                }
            }
            (Command::DeployToCarcassonne { quarter, count }, Pending::DeployToCarcassonne { .. }) => {
                check_actor(expected, actor)?;
                out.push(Event::DeployedToCarcassonne {
                    quarter,
                    count: self.canonical_count_move(count),
                });
                Ok(())
            }
            _ => Err(wrong()),
        }
    }

    pub(crate) fn check_draw(&self, tile: TileKind) -> Result<(), PlayError> {
        if self.bag[tile.index()] == 0 {
            return Err(PlayError::rule(id::B_1, format!("no {tile} is left in the bag")));
        }
        if self.setup.rules.has(Expansion::River) {
            let lake = kind("RL");
            let river_left: u16 = RIVER_COUNTS
                .iter()
                .map(|&(n, _)| kind(n))
                .filter(|&k| k != lake)
                .map(|k| self.bag[k.index()])
                .sum();
            let (expected, what) = if river_left > 0 {
                (
                    tile.def().is_river() && tile != lake,
                    "a river tile other than the lake",
                )
            } else if self.bag[lake.index()] > 0 {
                (tile == lake, "the lake")
            } else {
                (true, "")
            };
            if !expected {
                return Err(PlayError::rule(
                    id::R_2,
                    format!("{tile} drawn where the next tile must be {what}"),
                ));
            }
        }
        Ok(())
    }

    /// C-5: the count moves to any quarter, or stays where it stands.
    /// Staying may be written as no move or as a move to the quarter where
    /// it stands (moving it there is leaving it there): both are accepted,
    /// and the event holds the one form `legal_commands` lists, no move.
    fn canonical_count_move(&self, count: Option<Quarter>) -> Option<Quarter> {
        let here = self.city.map(|c| c.count);
        count.filter(|&to| Some(to) != here)
    }

    /// Checks a placement of `tile`, naming the first rule it breaks.
    pub fn check_placement(&self, tile: TileKind, pos: Pos, rotation: Rotation) -> Result<(), PlayError> {
        let layout = tile.def().at(rotation);
        let at = TileAt(tile, pos);
        if self.board.at(pos).is_some() {
            return Err(PlayError::rule(
                id::B_T1,
                format!("{at}: the cell is already taken"),
            ));
        }
        if self.board.frontier_cell(pos).is_none() {
            return Err(PlayError::rule(id::B_T1, format!("{at} touches no placed tile")));
        }
        if let Some((d, ours, theirs)) = self.board.mismatch(layout, pos) {
            let rule = if ours == EdgeKind::Water || theirs == EdgeKind::Water {
                id::R_3
            } else {
                id::B_T1
            };
            return Err(PlayError::rule(
                rule,
                format!(
                    "edge {d} of {at} is {}, neighbour's {} edge is {}",
                    ours.name(),
                    d.opposite(),
                    theirs.name()
                ),
            ));
        }
        if tile.def().is_river() {
            let end = self
                .river
                .ok_or_else(|| PlayError::rule(id::R_3, "the river is already closed"))?;
            if pos != end.cell || layout.edges[end.inflow.index()] != EdgeKind::Water {
                return Err(PlayError::rule(
                    id::R_3,
                    format!("{at} does not continue the river, which is open at {}", end.cell),
                ));
            }
            if !river_outflow_ok(layout, end) {
                return Err(PlayError::rule(
                    id::R_4,
                    format!(
                        "{at} would make the river flow {}, back towards the spring",
                        end.forbidden
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks a follower place on the tile just placed; returns its
    /// canonical name.
    fn check_follower(&self, player: Seat, place: Place) -> Result<Place, PlayError> {
        let slot = self
            .current
            .ok_or_else(|| PlayError::rule(id::B_T3, "no tile was placed this turn"))?;
        let tile = self.board.tile(slot);
        let layout = tile.layout();
        let on = TileAt(tile.kind, tile.pos);
        let segment = segment_at(tile, place).ok_or_else(|| {
            let water = match place {
                Place::Edge(d) => layout.edges[d.index()] == EdgeKind::Water,
                Place::Half(_) | Place::Cloister => false,
            };
            if water {
                PlayError::rule(
                    id::R_5,
                    format!("{place} of {on} is the river: no follower may stand on it"),
                )
            } else {
                PlayError::rule(id::B_T3, format!("{on} has no feature at {place}"))
            }
        })?;
        if self.supply[player.index()] == 0 {
            return Err(PlayError::rule(
                id::B_T3,
                format!("{player} has no follower left in supply"),
            ));
        }
        let root = self.features.root(tile.first_node + segment as NodeId);
        if self.features.followers(root) > 0 {
            let kind = self.features.node(root).kind;
            return Err(PlayError::rule(
                id::B_T3,
                format!("the {kind} at {place} of {on} already holds a follower"),
            ));
        }
        Ok(canonical_place(tile, segment))
    }
}

/// "V at (3,-1)", formatted only when an error needs it.
struct TileAt(TileKind, Pos);

impl std::fmt::Display for TileAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.0, self.1)
    }
}

fn check_actor(expected: Actor, actor: Actor) -> Result<(), PlayError> {
    if expected == actor {
        Ok(())
    } else {
        Err(PlayError::NotYourTurn { expected, actor })
    }
}
