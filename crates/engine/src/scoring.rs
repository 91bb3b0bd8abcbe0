//! Scoring: completed features during play (B-S*), and final scoring
//! (B-FS*, B-F*). Every score change names its feature and its rule.

use crate::count::TurnScoring;
use crate::features::NodeId;
use crate::game::{Game, Observer, canonical_place};
use crate::model::{Effect, FeatureRef, MAX_PLAYERS, ScoreChange, Scored, Seat, Seats};
use crate::rules::{Farmers, RuleId, SmallCity, id};
use crate::tiles::FeatureKind;

/// Stands for the City of Carcassonne among city roots (C-11).
const CITY_OF_CARCASSONNE: NodeId = NodeId::MAX;

impl Game {
    /// Describes the feature of `root`: kind, first tile, size (B-X5: tiles,
    /// not segments) and pennants.
    pub(crate) fn feature_ref(&self, root: NodeId) -> FeatureRef {
        let tiles = self.distinct_tiles(root);
        let first = self
            .features
            .members(root)
            .min_by_key(|&n| (self.features.node(n).tile, self.features.node(n).segment))
            .unwrap_or(root);
        let node = self.features.node(first);
        let tile = self.board.tile(node.tile);
        let kind = node.kind;
        let size = if kind == FeatureKind::Cloister {
            1 + self.cloister_neighbours(tile.pos) as u16
        } else {
            tiles
        };
        FeatureRef {
            kind,
            at: tile.pos,
            place: canonical_place(tile, node.segment),
            tiles: size,
            pennants: self.features.pennants(root),
        }
    }

    /// How many tiles the feature of `root` covers (B-X5: tiles, not
    /// segments). Small features, the usual case, need no allocation.
    fn distinct_tiles(&self, root: NodeId) -> u16 {
        let mut small = [0u16; 64];
        let mut len = 0;
        for node in self.features.members(root) {
            if len == small.len() {
                let mut all: Vec<u16> = self
                    .features
                    .members(root)
                    .map(|n| self.features.node(n).tile)
                    .collect();
                all.sort_unstable();
                all.dedup();
                return all.len() as u16;
            }
            small[len] = self.features.node(node).tile;
            len += 1;
        }
        let tiles = &mut small[..len];
        tiles.sort_unstable();
        (1..len).filter(|&i| tiles[i] != tiles[i - 1]).count() as u16 + u16::from(len > 0)
    }

    /// Each player's followers on the feature of `root`.
    fn strength(&self, root: NodeId) -> [u8; MAX_PLAYERS] {
        let mut strength = [0; MAX_PLAYERS];
        for s in &self.followers {
            if self.features.root(s.node) == root {
                strength[s.owner.index()] += 1;
            }
        }
        strength
    }

    /// The players with the most followers (B-S5); empty when there are
    /// none (B-S6).
    fn majority(strength: &[u8; MAX_PLAYERS]) -> Seats {
        let best = strength.iter().copied().max().unwrap_or(0);
        let mut seats = Seats::default();
        if best > 0 {
            for (i, &s) in strength.iter().enumerate() {
                if s == best {
                    seats.insert(Seat(i as u8));
                }
            }
        }
        seats
    }

    fn award(
        &mut self,
        players: Seats,
        points: u32,
        rule: RuleId,
        scored: Scored,
        observer: &mut impl Observer,
    ) {
        if players.is_empty() || points == 0 {
            return;
        }
        for seat in players.iter() {
            self.scores[seat.index()] += points;
        }
        observer.effect(Effect::Scored(ScoreChange {
            players,
            points,
            rule,
            scored,
        }));
    }

    /// Scores the features this turn's placement completed, and returns
    /// their followers (B-T4).
    pub(crate) fn score_completed(&mut self, observer: &mut impl Observer) -> TurnScoring {
        let mut scoring = TurnScoring::default();
        let completed = std::mem::take(&mut self.completed);
        for &root in &completed {
            let feature = self.feature_ref(root);
            observer.effect(Effect::Completed(feature));
            let (points, rule) = match feature.kind {
                FeatureKind::Road => (u32::from(feature.tiles), id::B_S1),
                FeatureKind::City
                    if feature.tiles == 2 && self.setup.rules.small_city == SmallCity::Halved =>
                {
                    (2 + u32::from(feature.pennants), id::B_S4)
                }
                FeatureKind::City => (
                    2 * u32::from(feature.tiles) + 2 * u32::from(feature.pennants),
                    id::B_S2,
                ),
                FeatureKind::Cloister => (9, id::B_S3),
                FeatureKind::Field => continue,
            };
            let winners = Self::majority(&self.strength(root));
            scoring.anyone |= !winners.is_empty();
            scoring.scorers.0 |= winners.0;
            self.award(winners, points, rule, Scored::Feature(feature), observer);
            self.return_followers(root, observer);
        }
        self.completed = completed;
        scoring
    }

    fn return_followers(&mut self, root: NodeId, observer: &mut impl Observer) {
        let mut i = 0;
        while i < self.followers.len() {
            let standing = self.followers[i];
            if self.features.root(standing.node) == root {
                self.followers.remove(i);
                self.supply[standing.owner.index()] += 1;
                let node = self.features.node(standing.node);
                let tile = self.board.tile(node.tile);
                observer.effect(Effect::FollowerReturned {
                    player: standing.owner,
                    at: tile.pos,
                    place: canonical_place(tile, node.segment),
                });
            } else {
                i += 1;
            }
        }
        self.features.clear_followers(root);
    }

    /// Final scoring (B-FS1, then the farmers B-FS2).
    pub(crate) fn final_scoring(&mut self, observer: &mut impl Observer) {
        // B-FS1: every incomplete road, city and cloister with followers,
        // each once, in the order of its root.
        let mut roots: Vec<NodeId> = self
            .followers
            .iter()
            .map(|s| self.features.root(s.node))
            .filter(|&r| self.features.node(r).kind != FeatureKind::Field)
            .collect();
        roots.sort_unstable();
        roots.dedup();
        for root in roots {
            let feature = self.feature_ref(root);
            let points = match feature.kind {
                FeatureKind::Road | FeatureKind::Cloister => u32::from(feature.tiles),
                FeatureKind::City => u32::from(feature.tiles) + u32::from(feature.pennants),
                FeatureKind::Field => continue,
            };
            let winners = Self::majority(&self.strength(root));
            self.award(winners, points, id::B_FS1, Scored::Feature(feature), observer);
        }
        self.score_farmers(observer);
    }

    /// B-F2..B-F4: farmers supply completed cities.
    fn score_farmers(&mut self, observer: &mut impl Observer) {
        // Every (field, completed city) pair that borders, once.
        let mut borders: Vec<(NodeId, NodeId)> = Vec::new();
        for node_id in 0..self.features.len() as NodeId {
            let node = *self.features.node(node_id);
            if node.kind != FeatureKind::Field {
                continue;
            }
            let tile = *self.board.tile(node.tile);
            let cities = tile.def().segments[node.segment as usize].cities;
            if cities == 0 {
                continue;
            }
            let field = self.features.root(node_id);
            for city_segment in (0..16).filter(|i| cities & (1 << i) != 0) {
                let city = self.features.root(tile.first_node + city_segment);
                if self.features.open(city) == 0 {
                    borders.push((field, city));
                }
            }
        }
        // C-11: every field on a city tile borders the City of Carcassonne.
        if self.city.is_some() {
            for node_id in 0..self.features.len() as NodeId {
                let node = *self.features.node(node_id);
                if node.kind == FeatureKind::Field && self.board.tile(node.tile).def().city_of_carcassonne {
                    borders.push((self.features.root(node_id), CITY_OF_CARCASSONNE));
                }
            }
        }
        borders.sort_unstable();
        borders.dedup();

        match self.setup.rules.farmers {
            Farmers::CityCentric4 => {
                // B-F3: per city, the farmers of all its fields together.
                borders.sort_unstable_by_key(|&(field, city)| (city, field));
                for group in borders.chunk_by(|a, b| a.1 == b.1) {
                    let mut strength = [0; MAX_PLAYERS];
                    for &(field, _) in group {
                        for (total, s) in strength.iter_mut().zip(self.strength(field)) {
                            *total += s;
                        }
                    }
                    let (scored, rule) = match group[0].1 {
                        CITY_OF_CARCASSONNE => (Scored::CityOfCarcassonne, id::C_11),
                        city => (Scored::Feature(self.feature_ref(city)), id::B_F3),
                    };
                    self.award(Self::majority(&strength), 4, rule, scored, observer);
                }
            }
            Farmers::FarmCentric3 => {
                // B-F4: per field, 3 per completed city it borders.
                for group in borders.chunk_by(|a, b| a.0 == b.0) {
                    let field = group[0].0;
                    let winners = Self::majority(&self.strength(field));
                    let feature = Scored::Feature(self.feature_ref(field));
                    let carcassonne = group.iter().filter(|(_, c)| *c == CITY_OF_CARCASSONNE).count() as u32;
                    let cities = group.len() as u32 - carcassonne;
                    self.award(winners, 3 * cities, id::B_F4, feature, observer);
                    // CD-9: the City of Carcassonne is worth 3 to each field's majority.
                    self.award(winners, 3 * carcassonne, id::CD_9, feature, observer);
                }
            }
        }
    }
}
