//! A game's state and its fold: [`Game::apply`] folds an event in and
//! cannot fail. Its counterpart [`Game::decide`] (in `decide.rs`) checks a
//! command and returns its events, or the rule it breaks.

use crate::board::{Board, PlacedTile};
use crate::clock::Clocks;
use crate::count::Rounds;
use crate::features::{Features, NodeId};
use crate::geometry::{Dir, Half, Place, Pos, Rotation};
use crate::model::*;
use crate::rules::{Expansion, Rules};
use crate::shuffle::Stream;
use crate::tiles::{
    BASE_COUNTS, CITY_LAYOUT, EdgeKind, FeatureKind, KINDS, NONE, RIVER_COUNTS, Rotated, TileKind,
};

/// Receives the effects of an event as the fold derives them.
pub trait Observer {
    fn effect(&mut self, effect: Effect);
}

/// Ignores effects: a plain fold.
impl Observer for () {
    fn effect(&mut self, _: Effect) {}
}

impl Observer for Vec<Effect> {
    fn effect(&mut self, effect: Effect) {
        self.push(effect);
    }
}

/// A follower on a feature node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Standing {
    pub owner: Seat,
    pub node: NodeId,
}

/// The draw order of a seeded game. Its `Debug` shows only its length, so
/// that logging a game's state never reveals what comes next.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct SealedOrder(pub(crate) Vec<TileKind>);

impl std::fmt::Debug for SealedOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedOrder({} tiles)", self.0.len())
    }
}

/// Where the river is open and where it may not flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RiverEnd {
    /// The empty cell the next river tile must fill.
    pub(crate) cell: Pos,
    /// The side of that cell where the water comes in.
    pub(crate) inflow: Dir,
    /// The river may never flow this way.
    pub(crate) forbidden: Dir,
}

/// The whole state of a game: a fold of its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    pub(crate) setup: Setup,
    pub(crate) board: Board,
    pub(crate) features: Features,
    pub(crate) followers: Vec<Standing>,
    pub(crate) supply: [u8; MAX_PLAYERS],
    pub(crate) scores: [u32; MAX_PLAYERS],
    /// Tiles left to draw, by kind.
    pub(crate) bag: [u16; KINDS],
    pub(crate) bag_left: u16,
    /// The draw order, when the game has a seed. Hidden information.
    pub(crate) order: SealedOrder,
    /// Tiles drawn so far (the next turn index).
    pub(crate) draws: u16,
    pub(crate) pending: Pending,
    /// The tile placed this turn, and the features it completed (roots).
    pub(crate) current: Option<u16>,
    pub(crate) completed: Vec<NodeId>,
    pub(crate) river: Option<RiverEnd>,
    /// The City of Carcassonne, when the Count is in play.
    pub(crate) city: Option<City>,
    pub(crate) rounds: Rounds,
    /// The time of the last event folded in, in ms since the Unix epoch (0
    /// for events folded without one).
    pub(crate) time: u64,
    /// The clocks, when the game has a time control (T-1).
    pub(crate) clocks: Option<Clocks>,
    /// Each seat that went out, why, and its place in the order of going
    /// out (1 for the first) (T-6).
    pub(crate) out: [Option<(OutReason, u8)>; MAX_PLAYERS],
    /// The seats that have had a decision of their own (T-9).
    pub(crate) played: Seats,
    /// How the game ended, once it is over.
    pub(crate) ending: Option<Ending>,
}

impl Game {
    /// Checks a setup, for `Event::Created`.
    pub fn check_setup(setup: &Setup) -> Result<(), SetupError> {
        let n = setup.players.len();
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
            return Err(SetupError::PlayerCount(n));
        }
        if let Some(tiles) = &setup.tiles {
            if let Some((kind, _)) = tiles.iter().find(|(k, _)| !is_land(*k)) {
                return Err(SetupError::NotALandTile(*kind));
            }
            let total: usize = tiles.iter().map(|(_, c)| *c as usize).sum();
            if total > MAX_BAG {
                return Err(SetupError::BagTooLarge(total));
            }
        }
        if let Some(control) = &setup.time_control {
            control.check().map_err(SetupError::TimeControl)?;
        }
        Ok(())
    }

    /// The game right after its creation: the fold of `Event::Created`.
    /// The setup must have passed [`Game::check_setup`].
    pub fn new(setup: Setup) -> Game {
        Game::created(setup, &mut ())
    }

    /// [`Game::new`] created at `at` (ms since the Unix epoch), when the
    /// clocks start (T-2): the fold of `Event::Created` stored then.
    pub fn new_at(setup: Setup, at: u64) -> Game {
        Game::created_at(setup, at, &mut ())
    }

    /// [`Game::new`], reporting its effects: a game whose bag is empty
    /// from the start (a custom bag of no tiles) has no turn to play, so it
    /// is over at once, final scoring included (B-E1), as a record that
    /// used up its bag is finished. The Count's final round (C-9) is
    /// skipped there: nobody can have a follower in Carcassonne yet, so it
    /// would hold nothing but passes.
    pub(crate) fn created(setup: Setup, observer: &mut impl Observer) -> Game {
        Game::created_at(setup, 0, observer)
    }

    /// [`Game::created`] at `at`, when the clocks start (T-2).
    pub(crate) fn created_at(setup: Setup, at: u64, observer: &mut impl Observer) -> Game {
        let players = setup.players.len().min(MAX_PLAYERS);
        let mut supply = [0; MAX_PLAYERS];
        supply[..players].fill(FOLLOWERS);
        let mut game = Game {
            board: Board::default(),
            features: Features::default(),
            followers: Vec::with_capacity(players * FOLLOWERS as usize),
            supply,
            scores: [0; MAX_PLAYERS],
            bag: [0; KINDS],
            bag_left: 0,
            order: SealedOrder::default(),
            draws: 0,
            pending: Pending::Draw { player: Seat(0) },
            current: None,
            completed: Vec::new(),
            river: None,
            city: None,
            rounds: Rounds::default(),
            time: at,
            clocks: setup.time_control.map(|control| Clocks::new(control, at)),
            out: [None; MAX_PLAYERS],
            played: Seats::default(),
            ending: None,
            setup,
        };
        game.lay_out();
        // Room for every tile of the bag and its segments (about 4 each).
        let tiles = usize::from(game.bag_left);
        game.board.reserve(tiles);
        game.features.reserve(4 * tiles);
        if game.bag_left == 0 {
            game.finish(observer);
        }
        game
    }

    /// Lays the setup tiles (B-1, R-1, C-1) and fills the bag.
    fn lay_out(&mut self) {
        let rules = self.setup.rules;
        let land: Vec<(TileKind, u16)> = match &self.setup.tiles {
            Some(tiles) => tiles.clone(),
            None => BASE_COUNTS
                .iter()
                .map(|&(name, count)| (kind(name), if name == "D" { count - 1 } else { count } as u16))
                .collect(),
        };
        let mut river_tiles = Vec::new();
        if rules.has(Expansion::River) {
            for &(name, count) in &RIVER_COUNTS {
                if name != "RS" && name != "RL" {
                    river_tiles.extend(std::iter::repeat_n(kind(name), count as usize));
                }
            }
        }
        // Setup tiles.
        if !rules.has(Expansion::River) && !rules.has(Expansion::Count) {
            self.put(kind("D"), Pos::ORIGIN, Rotation::R0);
        }
        if rules.has(Expansion::Count) {
            for &(name, x, y) in &CITY_LAYOUT {
                self.put(kind(name), Pos::new(x, y), Rotation::R0);
            }
            self.city = Some(City::new());
        }
        if rules.has(Expansion::River) {
            // Beside the City with the Count, its river leading away (C-1).
            let spring = if rules.has(Expansion::Count) {
                Pos::new(2, 1)
            } else {
                Pos::ORIGIN
            };
            self.put(kind("RS"), spring, Rotation::R0);
            self.river = Some(RiverEnd {
                cell: spring.step(Dir::E),
                inflow: Dir::W,
                forbidden: Dir::W,
            });
        }
        for (k, count) in &land {
            self.bag[k.index()] += count;
        }
        for k in &river_tiles {
            self.bag[k.index()] += 1;
        }
        if rules.has(Expansion::River) {
            self.bag[kind("RL").index()] += 1;
        }
        self.bag_left = self.bag.iter().sum();
        if let Some(seed) = self.setup.seed {
            let mut stream = Stream::new(&seed);
            let mut land_order: Vec<TileKind> = Vec::with_capacity(self.bag_left as usize);
            for (k, count) in land.iter() {
                land_order.extend(std::iter::repeat_n(*k, *count as usize));
            }
            land_order.sort();
            river_tiles.sort();
            stream.shuffle(&mut river_tiles);
            stream.shuffle(&mut land_order);
            let mut order = river_tiles;
            if rules.has(Expansion::River) {
                order.push(kind("RL"));
            }
            order.extend(land_order);
            self.order = SealedOrder(order);
        }
    }

    /// Places a tile and joins its segments to the neighbours' features.
    /// Returns its slot. Checks nothing.
    fn put(&mut self, kind: TileKind, pos: Pos, rotation: Rotation) -> u16 {
        let def = kind.def();
        let first = self.features.len() as NodeId;
        let slot = self.board.put(kind, pos, rotation, first);
        for (i, segment) in def.segments.iter().enumerate() {
            let open = match segment.kind {
                FeatureKind::Road | FeatureKind::City => segment.edges.count_ones() as u16,
                _ => 0,
            };
            self.features
                .add(slot, i as u8, segment.kind, open, u16::from(segment.pennant));
        }
        let layout = def.at(rotation);
        for d in Dir::ALL {
            let Some(other) = self.board.at(pos.step(d)).copied() else {
                continue;
            };
            let theirs = other.layout();
            let (a, b) = (
                layout.edge_segment[d.index()],
                theirs.edge_segment[d.opposite().index()],
            );
            if a != NONE && b != NONE {
                self.features
                    .join(first + a as NodeId, other.first_node + b as NodeId, true);
            }
            for h in [
                Half::from_index(2 * d.index()),
                Half::from_index(2 * d.index() + 1),
            ] {
                let (a, b) = (
                    layout.half_segment[h.index()],
                    theirs.half_segment[h.facing().index()],
                );
                if a != NONE && b != NONE {
                    self.features
                        .join(first + a as NodeId, other.first_node + b as NodeId, false);
                }
            }
        }
        slot
    }

    // ---- Reading the state ------------------------------------------------

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    pub fn rules(&self) -> Rules {
        self.setup.rules
    }

    pub fn players(&self) -> usize {
        self.setup.players.len()
    }

    pub fn pending(&self) -> Pending {
        self.pending
    }

    pub fn is_finished(&self) -> bool {
        self.pending == Pending::Finished
    }

    /// Scores in seat order.
    pub fn scores(&self) -> &[u32] {
        &self.scores[..self.players()]
    }

    /// Followers in each player's supply, in seat order.
    pub fn supply(&self) -> &[u8] {
        &self.supply[..self.players()]
    }

    /// Tiles drawn so far; during a turn, its index is `draws() - 1`.
    pub fn draws(&self) -> u16 {
        self.draws
    }

    /// Tiles still in the bag.
    pub fn bag_left(&self) -> u16 {
        self.bag_left
    }

    /// How many of `kind` are still in the bag (public: the order is not).
    pub fn in_bag(&self, kind: TileKind) -> u16 {
        self.bag[kind.index()]
    }

    pub fn tiles(&self) -> &[PlacedTile] {
        self.board.tiles()
    }

    pub fn tile_at(&self, pos: Pos) -> Option<&PlacedTile> {
        self.board.at(pos)
    }

    /// The tile placed in the current turn.
    pub fn current_tile(&self) -> Option<&PlacedTile> {
        self.current.map(|slot| self.board.tile(slot))
    }

    /// Followers on the board, in the order they were deployed.
    pub fn followers(&self) -> impl Iterator<Item = Follower> + '_ {
        self.followers.iter().map(|s| {
            let node = self.features.node(s.node);
            let tile = self.board.tile(node.tile);
            Follower {
                owner: s.owner,
                at: tile.pos,
                place: canonical_place(tile, node.segment),
                kind: node.kind,
            }
        })
    }

    /// The City of Carcassonne: the quarters and the count, when the Count
    /// is in play.
    pub fn city(&self) -> Option<&City> {
        self.city.as_ref()
    }

    /// Every player with the highest score (B-E1); the winners of a game
    /// that ended normally with every seat still in. See [`Game::winners`].
    pub fn leaders(&self) -> Seats {
        let best = self.scores().iter().copied().max().unwrap_or(0);
        let mut seats = Seats::default();
        for (i, &s) in self.scores().iter().enumerate() {
            if s == best {
                seats.insert(Seat(i as u8));
            }
        }
        seats
    }

    /// Bytes this state holds on the heap and inline.
    pub fn memory_bytes(&self) -> usize {
        size_of::<Game>()
            + self.board.heap_bytes()
            + self.features.heap_bytes()
            + self.followers.capacity() * size_of::<Standing>()
            + self.order.0.capacity() * size_of::<TileKind>()
            + self.completed.capacity() * size_of::<NodeId>()
            + self.setup.players.iter().map(|p| p.capacity()).sum::<usize>()
    }

    // ---- Apply --------------------------------------------------------------

    /// Folds one event in, at the time of the last one. Events come from
    /// [`Game::decide`] (or a store of them), so they are legal; `apply`
    /// cannot fail.
    pub fn apply(&mut self, event: &Event) {
        self.apply_observed(event, &mut ());
    }

    /// [`Game::apply`], reporting every effect to `observer`.
    pub fn apply_observed(&mut self, event: &Event, observer: &mut impl Observer) {
        self.apply_at(event, self.time, observer);
    }

    /// Folds one event in that was stored at `at` (ms since the Unix
    /// epoch), reporting its effects to `observer`: the clock that ran
    /// until then is charged (T-2), and the next one starts at `at`. A time
    /// earlier than the last event's counts as that one (time never goes
    /// back). Cannot fail.
    pub fn apply_at(&mut self, event: &Event, at: u64, observer: &mut impl Observer) {
        if let Event::Created(setup) = event {
            *self = Game::created_at(setup.clone(), at, observer);
            return;
        }
        let at = at.max(self.time);
        self.time = at;
        let owner = self.decision_owner();
        if let (Some(clocks), Some(seat)) = (&mut self.clocks, owner) {
            // T-10: the time the server was down counts for nobody.
            let until = match *event {
                Event::Resumed { down_since_ms } => down_since_ms.min(at),
                _ => at,
            };
            clocks.charge(seat, until);
        }
        if let Some(seat) = owner
            && answers_for(event, seat)
        {
            self.played.insert(seat);
        }
        self.fold_in(event, observer);
        if let Some(clocks) = &mut self.clocks {
            // A pause, or another seat resigning, leaves the pending
            // decision pending: its limit keeps what it has used (T-4).
            let same_decision = match *event {
                Event::Resumed { .. } => true,
                Event::Resigned(seat) => Some(seat) != owner,
                _ => false,
            };
            if !same_decision {
                clocks.spent = 0;
            }
            clocks.since = at;
            // T-3: a seat that answered hands over once the game waits for
            // someone else.
            // (Under `auto`, the decisions the timeout took for the seat
            // added it already, T-7.)
            if let Some(seat) = owner
                && answers_for(event, seat)
                && !matches!(event, Event::TimedOut(_))
                && self.out[seat.index()].is_none()
                && self.pending.actor() != Some(Actor::Seat(seat))
            {
                clocks.add_increment(seat);
            }
        }
    }

    /// The fold proper: what an event does to the board and the turn.
    fn fold_in(&mut self, event: &Event, observer: &mut impl Observer) {
        match (event, self.pending) {
            (Event::Created(setup), _) => *self = Game::created(setup.clone(), observer),
            (Event::Drawn(tile), Pending::Draw { player }) => self.drawn(*tile, player, observer),
            (&Event::TilePlaced { pos, rotation }, Pending::PlaceTile { player, tile }) => {
                self.placed(tile, pos, rotation);
                self.pending = Pending::PlaceFollower { player };
            }
            (Event::FollowerPlaced(place), Pending::PlaceFollower { player }) => {
                if let Some(place) = place {
                    self.deploy(player, *place);
                }
                self.after_follower_decision(player, observer);
            }
            (&Event::FollowerMoved(target), Pending::Redeploy { player, placer }) => {
                self.move_from_city(player, target);
                self.after_redeploy_move(player, placer, observer);
            }
            (Event::Passed, Pending::Redeploy { placer, .. }) => self.after_redeploy_pass(placer, observer),
            (&Event::DeployedToCarcassonne { quarter, count }, Pending::DeployToCarcassonne { player }) => {
                self.deploy_to_city(player, quarter, count);
                self.end_turn(player, self.next_seat(player), observer);
            }
            (Event::Passed, Pending::DeployToCarcassonne { player }) => {
                self.end_turn(player, self.next_seat(player), observer);
            }
            (&Event::FollowerMoved(target), Pending::FinalRound { player }) => {
                self.move_from_city(player, target);
                self.next_in_final_round(player, observer);
            }
            (Event::Passed, Pending::FinalRound { player }) => self.leave_final_round(player, observer),
            (&Event::TimedOut(seat), _) => self.timed_out(seat, observer),
            (&Event::Resigned(seat), _) => self.go_out(seat, OutReason::Resigned, observer),
            (&Event::Aborted(seat), _) => self.end(Ending::Aborted(seat), observer),
            (Event::Resumed { .. }, _) => {}
            // Unreachable for events that `decide` produced.
            _ => debug_assert!(false, "event {event:?} does not fit {:?}", self.pending),
        }
    }

    /// After the follower decision of `player`'s turn: the Count's
    /// redeploy round before scoring (C-6), or the scoring.
    pub(crate) fn after_follower_decision(&mut self, player: Seat, observer: &mut impl Observer) {
        self.rounds.offset = 0;
        if self.city.is_none() || !self.ask_next_redeployer(player) {
            self.score_and_offer_deploy(player, observer);
        }
    }

    fn drawn(&mut self, tile: TileKind, player: Seat, observer: &mut impl Observer) {
        self.bag[tile.index()] = self.bag[tile.index()].saturating_sub(1);
        self.bag_left = self.bag_left.saturating_sub(1);
        self.draws += 1;
        if self.has_placement(tile) {
            self.pending = Pending::PlaceTile { player, tile };
        } else {
            // B-T2, R-6: the tile leaves the game; the same player draws again.
            observer.effect(Effect::Discarded(tile));
            self.end_turn(player, player, observer);
        }
    }

    fn placed(&mut self, tile: TileKind, pos: Pos, rotation: Rotation) {
        let slot = self.put(tile, pos, rotation);
        self.current = Some(slot);
        let placed = *self.board.tile(slot);
        let layout = placed.layout();
        if tile.def().is_river() {
            self.river = self.river.and_then(|end| {
                let out = Dir::ALL
                    .into_iter()
                    .find(|&d| d != end.inflow && layout.edges[d.index()] == EdgeKind::Water)?;
                Some(RiverEnd {
                    cell: pos.step(out),
                    inflow: out.opposite(),
                    forbidden: end.forbidden,
                })
            });
        }
        // Which features did this placement complete (B-X1..B-X3)?
        self.completed.clear();
        for (i, segment) in placed.def().segments.iter().enumerate() {
            if matches!(segment.kind, FeatureKind::Road | FeatureKind::City) {
                let root = self.features.find(placed.first_node + i as NodeId);
                if self.features.open(root) == 0 && !self.completed.contains(&root) {
                    self.completed.push(root);
                }
            }
        }
        for cell in std::iter::once(pos).chain(pos.ring()) {
            if let Some(node) = self.cloister_node(cell)
                && self.cloister_neighbours(cell) == 8
            {
                self.completed.push(node);
            }
        }
    }

    pub(crate) fn cloister_node(&self, pos: Pos) -> Option<NodeId> {
        let tile = self.board.at(pos)?;
        tile.def().cloister.map(|c| tile.first_node + c as NodeId)
    }

    pub(crate) fn cloister_neighbours(&self, pos: Pos) -> u32 {
        pos.ring()
            .iter()
            .filter(|p| self.board.slot_at(**p).is_some())
            .count() as u32
    }

    fn deploy(&mut self, owner: Seat, place: Place) {
        let Some(tile) = self.current_tile().copied() else {
            return;
        };
        let Some(segment) = segment_at(&tile, place) else {
            return;
        };
        let node = tile.first_node + segment as NodeId;
        let root = self.features.find(node);
        self.features.add_follower(root);
        self.followers.push(Standing { owner, node });
        self.supply[owner.index()] -= 1;
    }

    /// The turn of `last` is over: `next` draws, or the last tile is gone
    /// (B-E1) and the game ends, after the Count's final round (C-9).
    pub(crate) fn end_turn(&mut self, last: Seat, next: Seat, observer: &mut impl Observer) {
        self.current = None;
        self.completed.clear();
        if self.bag_left > 0 {
            self.pending = Pending::Draw { player: next };
        } else if self.city.is_some() {
            self.start_final_round(last);
        } else {
            self.finish(observer);
        }
    }

    /// Final scoring, and the game is over.
    pub(crate) fn finish(&mut self, observer: &mut impl Observer) {
        self.final_scoring(observer);
        self.end(Ending::Normal, observer);
    }

    /// The game is over, for this reason.
    pub(crate) fn end(&mut self, ending: Ending, observer: &mut impl Observer) {
        self.current = None;
        self.completed.clear();
        self.pending = Pending::Finished;
        self.ending = Some(ending);
        observer.effect(Effect::Finished);
    }

    // ---- Driving a game -----------------------------------------------------

    /// The event the engine produces by itself next, if any: the next draw
    /// of a game with a seed.
    pub fn automatic(&self) -> Option<Event> {
        match self.pending {
            Pending::Draw { .. } => self.order.0.get(self.draws as usize).map(|&t| Event::Drawn(t)),
            _ => None,
        }
    }

    /// Decides `command`, applies its events, then every automatic event
    /// after them, all at the time of the last event. Returns all of them;
    /// effects go to `observer`.
    pub fn execute(
        &mut self,
        actor: Actor,
        command: &Command,
        observer: &mut impl Observer,
    ) -> Result<Vec<Event>, PlayError> {
        self.execute_at(self.time, actor, command, observer)
    }

    /// [`Game::execute`] at `at` (ms since the Unix epoch).
    pub fn execute_at(
        &mut self,
        at: u64,
        actor: Actor,
        command: &Command,
        observer: &mut impl Observer,
    ) -> Result<Vec<Event>, PlayError> {
        let mut events = Vec::with_capacity(4);
        self.execute_into(at, actor, command, &mut events, observer)?;
        Ok(events)
    }

    /// [`Game::execute_at`], appending the events to `events`: a playout
    /// that reuses one buffer allocates nothing. On an error nothing
    /// changes.
    pub fn execute_into(
        &mut self,
        at: u64,
        actor: Actor,
        command: &Command,
        events: &mut Vec<Event>,
        observer: &mut impl Observer,
    ) -> Result<(), PlayError> {
        let decided = events.len();
        self.decide_at_into(at, actor, command, events)?;
        for event in &events[decided..] {
            self.apply_at(event, at, observer);
        }
        self.run_automatic(events, observer);
        Ok(())
    }

    /// Applies automatic events until a player must decide; appends them
    /// to `events`.
    pub fn run_automatic(&mut self, events: &mut Vec<Event>, observer: &mut impl Observer) {
        while let Some(event) = self.automatic() {
            self.apply_observed(&event, observer);
            events.push(event);
        }
    }

    /// Folds a game's events: the first must be `Created`.
    pub fn fold<'a>(events: impl IntoIterator<Item = &'a Event>) -> Option<Game> {
        let mut events = events.into_iter();
        let Some(Event::Created(setup)) = events.next() else {
            return None;
        };
        let mut game = Game::new(setup.clone());
        for event in events {
            game.apply(event);
        }
        Some(game)
    }
}

pub(crate) fn river_outflow_ok(layout: &Rotated, end: RiverEnd) -> bool {
    Dir::ALL
        .into_iter()
        .filter(|&d| d != end.inflow && layout.edges[d.index()] == EdgeKind::Water)
        .all(|d| d != end.forbidden)
}

/// A kind of the catalogue by name; the names used here are all in it.
pub(crate) fn kind(name: &str) -> TileKind {
    TileKind::from_name(name).unwrap_or_else(|| unreachable!("{name} is in the catalogue"))
}

pub(crate) fn is_land(kind: TileKind) -> bool {
    BASE_COUNTS.iter().any(|(name, _)| *name == kind.name())
}

/// The segment a place names on a placed tile.
pub(crate) fn segment_at(tile: &PlacedTile, place: Place) -> Option<u8> {
    let layout = tile.layout();
    let segment = match place {
        Place::Edge(d) => layout.edge_segment[d.index()],
        Place::Half(h) => layout.half_segment[h.index()],
        Place::Cloister => tile.def().cloister.unwrap_or(NONE),
    };
    (segment != NONE).then_some(segment)
}

/// The canonical name of a segment on a placed tile: its first edge in
/// N E S W order, its first half-edge from Nw clockwise, or `cloister`.
pub(crate) fn canonical_place(tile: &PlacedTile, segment: u8) -> Place {
    let layout = tile.layout();
    if let Some(d) = Dir::ALL
        .into_iter()
        .find(|d| layout.edge_segment[d.index()] == segment)
    {
        return Place::Edge(d);
    }
    if let Some(h) = Half::ALL
        .into_iter()
        .find(|h| layout.half_segment[h.index()] == segment)
    {
        return Place::Half(h);
    }
    Place::Cloister
}

/// Whether `event` answers the decision `owner` owed: a decision of its
/// own, or its timeout or resignation.
fn answers_for(event: &Event, owner: Seat) -> bool {
    match *event {
        Event::TilePlaced { .. }
        | Event::FollowerPlaced(_)
        | Event::FollowerMoved(_)
        | Event::Passed
        | Event::DeployedToCarcassonne { .. } => true,
        Event::TimedOut(seat) | Event::Resigned(seat) => seat == owner,
        Event::Created(_) | Event::Drawn(_) | Event::Aborted(_) | Event::Resumed { .. } => false,
    }
}
