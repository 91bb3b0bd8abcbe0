//! The Count of Carcassonne (C-*, CD-*): the quarters of the City, the
//! redeploy round before scoring (C-6), the deploy after it (C-3), and the
//! final round (C-9). These are decisions owed by players other than the
//! one whose turn it is; `Pending` names the player each time.

use crate::features::NodeId;
use crate::game::{Game, Observer, segment_at};
use crate::model::{City, PlayError, Quarter, Seat, Seats, Target};
use crate::rules::id;
use crate::tiles::FeatureKind;

/// Where a redeploy round or the final round stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Rounds {
    /// Redeploy round: the offset from the placer of the player asked last
    /// (1 is the player to the placer's left, n the placer).
    pub offset: u8,
    /// Final round: the players who have not passed.
    pub active: Seats,
}

/// Who scored in this turn's completed features (CD-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct TurnScoring {
    pub anyone: bool,
    pub scorers: Seats,
}

impl Game {
    /// The next seat still in the game after `seat`, in seat order (B-T5,
    /// T-6).
    pub(crate) fn next_seat(&self, seat: Seat) -> Seat {
        let n = self.players() as u8;
        (1..=n)
            .map(|i| Seat((seat.0 + i) % n))
            .find(|&s| !self.is_out(s))
            .unwrap_or(Seat((seat.0 + 1) % n))
    }

    /// The quarter a follower leaves for a feature of `kind`, if a follower
    /// of `player` may leave it now: not the count's quarter (C-7), and the
    /// market only in the final round (C-8).
    fn open_quarter(
        &self,
        city: &City,
        player: Seat,
        kind: FeatureKind,
        final_round: bool,
    ) -> Option<Quarter> {
        let quarter = Quarter::feeding(kind);
        let allowed = quarter != city.count
            && (final_round || quarter != Quarter::Market)
            && city.quarters[quarter.index()][player.index()] > 0;
        allowed.then_some(quarter)
    }

    /// Can `player` move anything onto this turn's completed features?
    fn can_redeploy(&self, player: Seat) -> bool {
        let Some(city) = &self.city else { return false };
        if self.is_out(player) {
            return false; // T-6: its decisions are passes.
        }
        self.completed.iter().any(|&root| {
            self.open_quarter(city, player, self.features.node(root).kind, false)
                .is_some()
        })
    }

    /// Starts or continues the redeploy round of `placer`'s tile (C-6):
    /// asks the next player, in seat order from the placer's left and the
    /// placer last, who has something to move. False when nobody is left.
    pub(crate) fn ask_next_redeployer(&mut self, placer: Seat) -> bool {
        let n = self.players() as u8;
        while self.rounds.offset < n {
            self.rounds.offset += 1;
            let player = Seat((placer.0 + self.rounds.offset) % n);
            if self.can_redeploy(player) {
                self.pending = crate::model::Pending::Redeploy { player, placer };
                return true;
            }
        }
        false
    }

    /// After a move of the redeploy round: the same player goes on while
    /// they can.
    pub(crate) fn after_redeploy_move(&mut self, player: Seat, placer: Seat, observer: &mut impl Observer) {
        if !self.can_redeploy(player) {
            self.after_redeploy_pass(placer, observer);
        }
    }

    pub(crate) fn after_redeploy_pass(&mut self, placer: Seat, observer: &mut impl Observer) {
        if !self.ask_next_redeployer(placer) {
            self.score_and_offer_deploy(placer, observer);
        }
    }

    /// Scores the completed features (B-T4), then offers the placer a
    /// deploy to Carcassonne if others scored and they did not (C-3, C-4,
    /// CD-1).
    pub(crate) fn score_and_offer_deploy(&mut self, placer: Seat, observer: &mut impl Observer) {
        let scoring = self.score_completed(observer);
        let may_deploy = self.city.is_some()
            && !self.is_out(placer)
            && scoring.anyone
            && !scoring.scorers.contains(placer)
            && self.supply[placer.index()] > 0;
        if may_deploy {
            self.pending = crate::model::Pending::DeployToCarcassonne { player: placer };
        } else {
            let next = self.next_seat(placer);
            self.end_turn(placer, next, observer);
        }
    }

    /// Starts the final round (C-9) left of `last`, who placed or
    /// discarded the last tile (CD-7).
    pub(crate) fn start_final_round(&mut self, last: Seat) {
        let mut active = Seats::default();
        for seat in self.seats_in() {
            active.insert(seat);
        }
        self.rounds.active = active;
        self.pending = crate::model::Pending::FinalRound {
            player: self.next_seat(last),
        };
    }

    /// The next player of the final round after `player`, or the end.
    pub(crate) fn next_in_final_round(&mut self, player: Seat, observer: &mut impl Observer) {
        let mut seat = player;
        for _ in 0..self.players() {
            seat = self.next_seat(seat);
            if self.rounds.active.contains(seat) {
                self.pending = crate::model::Pending::FinalRound { player: seat };
                return;
            }
        }
        self.finish(observer);
    }

    pub(crate) fn leave_final_round(&mut self, player: Seat, observer: &mut impl Observer) {
        self.rounds.active.0 &= !(1 << player.0);
        self.next_in_final_round(player, observer);
    }

    /// Resolves a target to its feature root; errors name `rule`.
    fn target_root(&self, target: Target, rule: crate::RuleId) -> Result<(NodeId, NodeId), PlayError> {
        let tile = self
            .board
            .at(target.pos)
            .ok_or_else(|| PlayError::rule(rule, format!("no tile lies at {}", target.pos)))?;
        let segment = segment_at(tile, target.place).ok_or_else(|| {
            PlayError::rule(
                rule,
                format!("{} at {} has no feature at {}", tile.kind, tile.pos, target.place),
            )
        })?;
        let node = tile.first_node + NodeId::from(segment);
        Ok((node, self.features.root(node)))
    }

    /// Checks a move from Carcassonne onto `target`; returns the feature's
    /// canonical target, as [`Game::move_targets`] lists it.
    pub(crate) fn check_move(
        &self,
        player: Seat,
        target: Target,
        final_round: bool,
    ) -> Result<Target, PlayError> {
        let Some(city) = &self.city else {
            return Err(PlayError::rule(id::C_1, "this game is played without the Count"));
        };
        let rule = if final_round { id::C_9 } else { id::C_6 };
        let (_, root) = self.target_root(target, rule)?;
        let kind = self.features.node(root).kind;
        let quarter = Quarter::feeding(kind);
        if final_round {
            if kind != FeatureKind::Field && self.is_complete(root) {
                return Err(PlayError::rule(
                    id::C_9,
                    format!("the {kind} at {target} is complete and scored"),
                ));
            }
        } else {
            if kind == FeatureKind::Field {
                return Err(PlayError::rule(
                    id::C_8,
                    "followers in the market leave Carcassonne only in the final round",
                ));
            }
            if !self.completed.contains(&root) {
                return Err(PlayError::rule(
                    id::C_6,
                    format!("the {kind} at {target} was not completed by this turn's tile"),
                ));
            }
        }
        if quarter == city.count {
            return Err(PlayError::rule(
                id::C_7,
                format!("the count stands in the {quarter}: nobody leaves it"),
            ));
        }
        if city.quarters[quarter.index()][player.index()] == 0 {
            return Err(PlayError::rule(
                rule,
                format!("{player} has no follower in the {quarter}"),
            ));
        }
        // The choice is the feature, not the tile it is named by (C-6, C-9):
        // every name of it gives the one target `legal_commands` lists.
        let feature = self.feature_ref(root);
        Ok(Target {
            pos: feature.at,
            place: feature.place,
        })
    }

    pub(crate) fn is_complete(&self, root: NodeId) -> bool {
        let node = self.features.node(root);
        match node.kind {
            FeatureKind::Road | FeatureKind::City => self.features.open(root) == 0,
            FeatureKind::Cloister => self.cloister_neighbours(self.board.tile(node.tile).pos) == 8,
            FeatureKind::Field => false,
        }
    }

    /// Moves a follower of `player` from its quarter onto `target` (C-6,
    /// C-9). The move was checked.
    pub(crate) fn move_from_city(&mut self, player: Seat, target: Target) {
        let Some(tile) = self.board.at(target.pos).copied() else {
            return;
        };
        let Some(segment) = segment_at(&tile, target.place) else {
            return;
        };
        let node = tile.first_node + NodeId::from(segment);
        let root = self.features.find(node);
        let quarter = Quarter::feeding(self.features.node(root).kind);
        if let Some(city) = &mut self.city {
            let count = &mut city.quarters[quarter.index()][player.index()];
            *count = count.saturating_sub(1);
        }
        self.features.add_follower(root);
        self.followers.push(crate::game::Standing { owner: player, node });
    }

    /// A follower from supply into a quarter, and maybe the count moves
    /// (C-3, C-5).
    pub(crate) fn deploy_to_city(&mut self, player: Seat, quarter: Quarter, count: Option<Quarter>) {
        self.supply[player.index()] = self.supply[player.index()].saturating_sub(1);
        if let Some(city) = &mut self.city {
            city.quarters[quarter.index()][player.index()] += 1;
            if let Some(count) = count {
                city.count = count;
            }
        }
    }

    /// Every legal target of a move from Carcassonne for `player`: one per
    /// feature, named by its first tile.
    pub(crate) fn move_targets(&self, player: Seat, final_round: bool) -> Vec<Target> {
        let Some(city) = &self.city else { return Vec::new() };
        let roots: Vec<NodeId> = if final_round {
            let mut roots: Vec<NodeId> = (0..self.features.len() as NodeId)
                .map(|n| self.features.root(n))
                .filter(|&r| self.features.node(r).kind == FeatureKind::Field || !self.is_complete(r))
                .collect();
            roots.sort_unstable();
            roots.dedup();
            roots
        } else {
            self.completed.clone()
        };
        roots
            .into_iter()
            .filter(|&r| {
                self.open_quarter(city, player, self.features.node(r).kind, final_round)
                    .is_some()
            })
            .map(|r| {
                let f = self.feature_ref(r);
                Target {
                    pos: f.at,
                    place: f.place,
                }
            })
            .collect()
    }
}
