//! Property tests over many seeded random games.
//!
//! Every game is played by a small local PRNG choosing among the engine's
//! legal moves, under six rule sets (classic, `farm_centric_3` with the
//! normal small city, River, River with the modern options, the Count, and
//! River with the Count) and 2 to 5 players, through every decision the
//! game asks for, the Count's included. At every decision the driver checks
//! the invariants below and that `decide` accepts exactly what
//! `legal_commands` lists, under every name the rules give each choice,
//! with the same events; at every placement it checks the legal moves
//! against an oracle written here from docs/rules.md alone (edges,
//! adjacency, connected features).
//!
//! The default run stays well under 20 s in debug. Set
//! `CARCASSONNE_SLOW_TESTS=1` for a run over many more seeds (see
//! [`slow_tests`]); a failure names the case (rules, players, seed, move
//! seed) and the draw, so it can be replayed with [`play`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;

use carcassonne_engine::*;
use proptest::prelude::*;

// ---- Cases --------------------------------------------------------------

/// Whether the slow tests run: `CARCASSONNE_SLOW_TESTS` unset, empty or
/// `0` runs the default ones, `1` the slow ones. Any other value stops the
/// test with a message rather than guessing what was meant. The engine's and
/// the store's tests read the variable with this same function.
pub fn slow_tests() -> bool {
    const NAME: &str = "CARCASSONNE_SLOW_TESTS";
    match std::env::var(NAME) {
        Err(std::env::VarError::NotPresent) => false,
        Ok(value) if value.is_empty() || value == "0" => false,
        Ok(value) if value == "1" => true,
        other => panic!(
            "{NAME} is {other:?}: set it to 1 for the slow tests, or to 0 (or leave it unset) for the default ones"
        ),
    }
}

/// How many seeds per (rules, players) in the default and the slow run.
pub(crate) fn seeds(default: u64, slow_run: u64) -> std::ops::Range<u64> {
    0..if slow_tests() { slow_run } else { default }
}

/// `farm_centric_3` (B-F4) with the small city scoring like any city.
fn modern() -> Rules {
    let mut rules = Rules::default();
    rules.farmers = Farmers::FarmCentric3;
    rules.small_city = SmallCity::Normal;
    rules
}

pub(crate) fn variants() -> [(&'static str, Rules); 6] {
    [
        ("classic", Rules::default()),
        ("modern", modern()),
        ("river", Rules::default().with(Expansion::River)),
        ("river+modern", modern().with(Expansion::River)),
        ("count", Rules::default().with(Expansion::Count)),
        (
            "river+count",
            Rules::default().with(Expansion::River).with(Expansion::Count),
        ),
    ]
}

/// One game: its rules, players, the engine's seed (the draw order, B-3)
/// and the seed of the players' choices.
#[derive(Clone, Copy, Debug)]
struct Case {
    name: &'static str,
    rules: Rules,
    players: usize,
    seed: u64,
    moves: u64,
}

impl Case {
    fn new(variant: (&'static str, Rules), players: usize, seed: u64) -> Case {
        Case {
            name: variant.0,
            rules: variant.1,
            players,
            seed,
            moves: seed ^ 0x5eed_cafe,
        }
    }

    fn setup(&self) -> Setup {
        Setup {
            rules: self.rules,
            players: (0..self.players).map(|i| format!("P{i}")).collect(),
            tiles: None,
            seed: Some(Seed::from_u64(self.seed)),
            time_control: None,
        }
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rules, {} players, seed {}, move seed {}",
            self.name, self.players, self.seed, self.moves
        )
    }
}

/// xorshift64*: the players' choices (not the engine's shuffle).
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 32) as usize * n) >> 32
    }
}

// ---- Playing a game under checks ------------------------------------------

/// A finished game, with what the properties compare.
struct Played {
    game: Game,
    events: Vec<Event>,
    /// The state after creation and after each command, with the number
    /// of events that led to it.
    snapshots: Vec<(usize, Game)>,
}

impl Played {
    /// The draw order as the events show it (B-3).
    fn draws(&self) -> Vec<TileKind> {
        drawn(&self.events)
    }
}

fn drawn(events: &[Event]) -> Vec<TileKind> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Drawn(t) => Some(*t),
            _ => None,
        })
        .collect()
}

/// What the effects of a game added up to so far.
struct Ledger {
    setup_tiles: usize,
    initial_bag: Vec<u16>,
    discarded: Vec<u16>,
    scores: Vec<u32>,
    finished: usize,
}

/// Plays `case` to the end, checking the invariants at every decision;
/// with `moves_checked`, also checks every legal and some illegal moves at
/// every decision (the costly part).
fn play(case: Case, moves_checked: bool) -> Played {
    let setup = case.setup();
    let mut game = Game::new(setup.clone());
    let mut ledger = Ledger {
        setup_tiles: game.tiles().len(),
        initial_bag: TileKind::all().map(|k| game.in_bag(k)).collect(),
        discarded: vec![0; TileKind::all().count()],
        scores: vec![0; case.players],
        finished: 0,
    };
    let mut events = vec![Event::Created(setup)];
    let mut effects = Vec::new();
    game.run_automatic(&mut events, &mut effects);
    let mut rng = XorShift::new(case.moves);
    let mut snapshots = vec![(events.len(), game.clone())];
    let mut previous_scores = vec![0; case.players];
    absorb(case, &game, &effects, &mut ledger);
    check_invariants(case, &game, &ledger, &previous_scores);

    // 71 land tiles + 11 river tiles, two decisions each, and the Count's
    // decisions (a deploy per turn at most, a redeploy per follower in
    // Carcassonne, the final round): a bound, so a game that never ends
    // fails instead of hanging.
    for _ in 0..2000 {
        let Some(player) = game.pending().player() else {
            break;
        };
        let at = format!("{case}, draw {}", game.draws());
        if moves_checked {
            check_decide_agrees_with_listing(&at, &game);
        }
        let command = match game.pending() {
            Pending::PlaceTile { tile, .. } => {
                let legal = game.legal_placements();
                assert!(
                    !legal.is_empty(),
                    "{at}: {tile} waits but has no legal placement (B-T2)"
                );
                if moves_checked {
                    check_placements(&at, &game, player, tile, &legal, &mut rng);
                }
                let m = legal[rng.below(legal.len())];
                Command::PlaceTile {
                    pos: m.pos,
                    rotation: m.rotation,
                }
            }
            Pending::PlaceFollower { .. } => {
                let legal = game.legal_follower_places();
                if moves_checked {
                    check_follower_places(&at, &game, player, &legal);
                }
                Command::PlaceFollower(legal.get(rng.below(legal.len() + 1)).copied())
            }
            // The Count's decisions (C-3, C-6, C-9): any listed choice.
            Pending::Redeploy { .. } | Pending::DeployToCarcassonne { .. } | Pending::FinalRound { .. } => {
                let listed = game.legal_commands();
                assert!(!listed.is_empty(), "{at}: {:?} lists no command", game.pending());
                listed[rng.below(listed.len())]
            }
            other => panic!("{at}: a seeded game never waits for {other:?}"),
        };
        let before = game.clone();
        effects.clear();
        let new = game
            .execute(Actor::Seat(player), &command, &mut effects)
            .unwrap_or_else(|e| panic!("{at}: the listed move {command:?} was refused: {e}"));
        assert_eq!(
            new.first(),
            before
                .decide(Actor::Seat(player), &command)
                .ok()
                .as_ref()
                .and_then(|e| e.first()),
            "{at}: execute's first event is not decide's"
        );
        if let Command::PlaceFollower(Some(place)) = command {
            let tile = before.current_tile().expect("a tile was placed this turn");
            let deployed = game.followers().any(|f| f.at == tile.pos && f.place == place);
            let returned = effects.iter().any(|e| {
                matches!(e, Effect::FollowerReturned { at, place: p, .. } if *at == tile.pos && *p == place)
            });
            assert!(
                deployed || returned,
                "{at}: the follower deployed at {place} of {} is neither on the board nor returned",
                tile.pos
            );
        }
        events.extend(new);
        absorb(case, &game, &effects, &mut ledger);
        check_invariants(case, &game, &ledger, &previous_scores);
        previous_scores = game.scores().to_vec();
        snapshots.push((events.len(), game.clone()));
    }

    check_finished(case, &game, &events, &ledger);
    Played {
        game,
        events,
        snapshots,
    }
}

/// Takes the effects of one command into the ledger; a discarded tile
/// must really fit nowhere (B-T2, R-6).
fn absorb(case: Case, game: &Game, effects: &[Effect], ledger: &mut Ledger) {
    for effect in effects {
        assert_eq!(ledger.finished, 0, "{case}: {effect:?} after Effect::Finished");
        match *effect {
            Effect::Discarded(tile) => {
                ledger.discarded[tile.index()] += 1;
                // Nothing is placed between a discard and the next
                // decision, so the board is the one the tile was tried on.
                assert!(
                    !game.has_placement(tile),
                    "{case}: {tile} was discarded but fits (B-T2)"
                );
                if !tile.def().is_river() {
                    let fits = candidate_cells(game)
                        .into_iter()
                        .flat_map(|pos| Rotation::ALL.map(|r| (pos, r)))
                        .find(|&(pos, r)| verdict(game, tile, pos, r) == Verdict::Fits);
                    assert_eq!(fits, None, "{case}: {tile} was discarded but fits there (B-T2)");
                }
            }
            Effect::Scored(change) => {
                assert!(change.points > 0, "{case}: a score of 0 points: {change:?}");
                for seat in change.players.iter() {
                    assert!(seat.index() < case.players, "{case}: {seat} scores in {change:?}");
                    ledger.scores[seat.index()] += change.points;
                }
            }
            Effect::Finished => ledger.finished += 1,
            Effect::Completed(_) | Effect::FollowerReturned { .. } => {}
            Effect::Out { .. } | Effect::DecidedFor { .. } => {
                panic!("{case}: {effect:?} in a game that nobody leaves and without a clock")
            }
        }
    }
}

/// The invariants that hold between any two decisions.
fn check_invariants(case: Case, game: &Game, ledger: &Ledger, previous_scores: &[u32]) {
    let at = format!("{case}, draw {}", game.draws());

    // B-2, B-T3, B-T4, C-3: each player's followers are on the board, in
    // Carcassonne or in supply, 7 in all.
    for p in 0..case.players {
        let on_board = game.followers().filter(|f| f.owner.index() == p).count();
        let in_city = game
            .city()
            .map_or(0, |c| usize::from(c.followers_of(Seat(p as u8))));
        assert_eq!(
            on_board + in_city + game.supply()[p] as usize,
            FOLLOWERS as usize,
            "{at}: seat {p} has {on_board} followers on the board, {in_city} in Carcassonne and {} in supply",
            game.supply()[p]
        );
    }
    // Every follower stands on a feature of its kind.
    for f in game.followers() {
        let tile = game.tile_at(f.at).expect("a follower stands on a tile");
        let segment = segment_of(tile, f.place).expect("a follower stands on a segment");
        assert_eq!(tile.def().segments[segment as usize].kind, f.kind, "{at}: {f:?}");
        assert_eq!(
            canonical(tile, segment),
            f.place,
            "{at}: {f:?} is not named canonically"
        );
    }

    // Scores never decrease, and are the sum of the score effects.
    for (p, (&now, &before)) in game.scores().iter().zip(previous_scores).enumerate() {
        assert!(
            now >= before,
            "{at}: seat {p}'s score fell from {before} to {now}"
        );
    }
    assert_eq!(
        game.scores(),
        &ledger.scores[..],
        "{at}: scores differ from the score effects"
    );

    // Every tile is on the board, discarded, waiting to be placed, or in
    // the bag.
    let mut placed = vec![0u16; ledger.initial_bag.len()];
    for t in &game.tiles()[ledger.setup_tiles..] {
        placed[t.kind.index()] += 1;
    }
    let pending = match game.pending() {
        Pending::PlaceTile { tile, .. } => Some(tile),
        _ => None,
    };
    for kind in TileKind::all() {
        let k = kind.index();
        let waiting = u16::from(pending == Some(kind));
        assert_eq!(
            placed[k] + ledger.discarded[k] + waiting + game.in_bag(kind),
            ledger.initial_bag[k],
            "{at}: {kind}: {} placed, {} discarded, {waiting} waiting, {} in the bag",
            placed[k],
            ledger.discarded[k],
            game.in_bag(kind)
        );
    }
    let bag: u16 = TileKind::all().map(|k| game.in_bag(k)).sum();
    assert_eq!(game.bag_left(), bag, "{at}: bag_left");
    let discarded: u16 = ledger.discarded.iter().sum();
    let placed: u16 = placed.iter().sum();
    assert_eq!(
        game.draws(),
        placed + discarded + u16::from(pending.is_some()),
        "{at}: draws"
    );
}

fn check_finished(case: Case, game: &Game, events: &[Event], ledger: &Ledger) {
    let at = format!("{case}, end");
    assert_eq!(game.pending(), Pending::Finished, "{at}: the game did not finish");
    assert!(game.is_finished());
    assert_eq!(game.bag_left(), 0, "{at}: tiles left in the bag (B-E1)");
    assert!(TileKind::all().all(|k| game.in_bag(k) == 0), "{at}: bag");
    assert_eq!(
        ledger.finished, 1,
        "{at}: Effect::Finished seen {} times",
        ledger.finished
    );
    assert!(game.legal_placements().is_empty(), "{at}");
    assert!(game.legal_follower_places().is_empty(), "{at}");
    for command in [
        Command::PlaceFollower(None),
        Command::PlaceTile {
            pos: Pos::ORIGIN,
            rotation: Rotation::R0,
        },
    ] {
        assert_eq!(
            game.decide(Actor::Seat(Seat(0)), &command),
            Err(PlayError::Finished),
            "{at}"
        );
    }
    // ten river tiles other than the lake, then the lake, then land.
    if case.rules.has(Expansion::River) {
        let lake = TileKind::from_name("RL").expect("the lake");
        let order = drawn(events);
        let rivers = order
            .iter()
            .take_while(|t| t.def().is_river() && **t != lake)
            .count();
        assert_eq!(rivers, 10, "{at}: river tiles drawn first: {order:?} (R-2)");
        assert_eq!(order.get(10), Some(&lake), "{at}: the lake comes 11th (R-2)");
        assert!(
            order[11..].iter().all(|t| !t.def().is_river()),
            "{at}: river tiles among land tiles (R-2)"
        );
    }
}

// ---- decide and legal_commands agree ----------------------------------------

/// Every command a client could send at this decision, listed or not: each
/// draw, each rotation at every cell next to the board, on every taken cell
/// and far away (the extremes of `i32` too), each follower place and none,
/// each move from Carcassonne onto every place of every tile and of some
/// empty cells, a pass, and each deploy to each quarter with the count
/// staying or going to each quarter.
fn candidate_commands(game: &Game) -> Vec<Command> {
    let mut cells = candidate_cells(game);
    cells.extend(game.tiles().iter().map(|t| t.pos));
    cells.extend([
        Pos::new(1000, -1000),
        Pos::new(i32::MIN, i32::MIN),
        Pos::new(i32::MAX, i32::MIN),
        Pos::new(i32::MIN, i32::MAX),
        Pos::new(i32::MAX, i32::MAX),
    ]);
    let mut commands: Vec<Command> = TileKind::all().map(Command::Draw).collect();
    for &pos in &cells {
        commands.extend(Rotation::ALL.map(|rotation| Command::PlaceTile { pos, rotation }));
    }
    commands.push(Command::PlaceFollower(None));
    commands.extend(PLACES.map(|p| Command::PlaceFollower(Some(p))));
    for &pos in &cells {
        commands.extend(PLACES.map(|place| Command::MoveFromCarcassonne(Target { pos, place })));
    }
    commands.push(Command::Pass);
    for quarter in Quarter::ALL {
        commands.push(Command::DeployToCarcassonne { quarter, count: None });
        commands.extend(Quarter::ALL.map(|q| Command::DeployToCarcassonne {
            quarter,
            count: Some(q),
        }));
    }
    commands
}

/// `decide` accepts exactly what `legal_commands` lists, under every name
/// the rules give each choice: every listed command is accepted, no two
/// listed commands have the same events, every other way of writing a
/// listed choice ([`spellings`]) is accepted with that choice's very
/// events, and every other candidate is refused. Nobody but the pending
/// actor may act.
fn check_decide_agrees_with_listing(at: &str, game: &Game) {
    let actor = game.pending().actor().expect("a pending decision has an actor");
    let listed = game.legal_commands();
    assert!(!listed.is_empty(), "{at}: {:?} lists no command", game.pending());
    let mut outcomes: HashMap<String, Command> = HashMap::new();
    let mut spelled: HashMap<Command, Command> = HashMap::new();
    for command in &listed {
        let events = game
            .decide(actor, command)
            .unwrap_or_else(|e| panic!("{at}: the listed {command:?} is refused: {e}"));
        if let Some(first) = outcomes.insert(format!("{events:?}"), *command) {
            panic!("{at}: {first:?} and {command:?} are both listed, with the events {events:?}");
        }
        for spelling in spellings(game, command) {
            assert_eq!(
                game.decide(actor, &spelling).as_ref(),
                Ok(&events),
                "{at}: {spelling:?} writes the listed {command:?} another way"
            );
            if let Some(other) = spelled.insert(spelling, *command) {
                panic!("{at}: {spelling:?} writes both {other:?} and {command:?}");
            }
        }
    }
    for command in candidate_commands(game) {
        if let Ok(events) = game.decide(actor, &command) {
            assert!(
                spelled.contains_key(&command),
                "{at}: {command:?} is accepted with {events:?}, but it writes no listed command; listed: {listed:?}"
            );
        }
    }
    let others = (0..game.players() as u8)
        .map(|s| Actor::Seat(Seat(s)))
        .chain([Actor::Dealer])
        .filter(|&a| a != actor);
    for other in others {
        assert!(
            matches!(game.decide(other, &listed[0]), Err(PlayError::NotYourTurn { .. })),
            "{at}: {other} made {actor}'s decision {:?}",
            listed[0]
        );
    }
}

/// Every way the rules and docs/record-format.md let one write the choice
/// of `command`, `command` included: a follower by any edge or half-edge
/// of its segment on the tile just placed (B-T3); a move from Carcassonne
/// by any place of the feature on any of its tiles (C-6, C-9: the choice
/// is the feature, found here by walking the board); the count left where
/// it stands by no move or a move to its own quarter (C-5).
fn spellings(game: &Game, command: &Command) -> Vec<Command> {
    match *command {
        Command::PlaceFollower(Some(place)) => {
            let tile = game.current_tile().expect("a tile was placed this turn");
            let segment = segment_of(tile, place);
            PLACES
                .into_iter()
                .filter(|&p| segment_of(tile, p) == segment)
                .map(|p| Command::PlaceFollower(Some(p)))
                .collect()
        }
        Command::MoveFromCarcassonne(target) => {
            let tile = game.tile_at(target.pos).expect("a listed target lies on a tile");
            let segment = segment_of(tile, target.place).expect("a listed target names a segment");
            let mut names = Vec::new();
            for (pos, segment) in feature_of(game, (target.pos, segment)) {
                let tile = game.tile_at(pos).expect("a feature lies on tiles");
                for place in PLACES {
                    if segment_of(tile, place) == Some(segment) {
                        names.push(Command::MoveFromCarcassonne(Target { pos, place }));
                    }
                }
            }
            names
        }
        Command::DeployToCarcassonne { quarter, count: None } => {
            let here = game.city().expect("a deploy is owed only with the Count").count;
            vec![
                *command,
                Command::DeployToCarcassonne {
                    quarter,
                    count: Some(here),
                },
            ]
        }
        _ => vec![*command],
    }
}

// ---- Placements (B-T1, R-3, R-4) -------------------------------------------

/// Why a tile would or would not fit, from the edges alone (B-T1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Occupied,
    Isolated,
    /// The first edge (N E S W) that does not match: ours, the neighbour's.
    Mismatch(EdgeKind, EdgeKind),
    Fits,
}

fn verdict(game: &Game, tile: TileKind, pos: Pos, rotation: Rotation) -> Verdict {
    if game.tile_at(pos).is_some() {
        return Verdict::Occupied;
    }
    let layout = tile.def().at(rotation);
    let mut touches = false;
    for d in Dir::ALL {
        if let Some(other) = game.tile_at(pos.step(d)) {
            touches = true;
            let (ours, theirs) = (
                layout.edges[d.index()],
                other.layout().edges[d.opposite().index()],
            );
            if ours != theirs {
                return Verdict::Mismatch(ours, theirs);
            }
        }
    }
    if touches { Verdict::Fits } else { Verdict::Isolated }
}

/// Every empty cell orthogonally next to a placed tile.
fn candidate_cells(game: &Game) -> Vec<Pos> {
    let cells: BTreeSet<Pos> = game
        .tiles()
        .iter()
        .flat_map(|t| Dir::ALL.map(|d| t.pos.step(d)))
        .filter(|p| game.tile_at(*p).is_none())
        .collect();
    cells.into_iter().collect()
}

fn rule_of(result: Result<Vec<Event>, PlayError>) -> Option<RuleId> {
    result.err().and_then(|e| e.rule_id())
}

/// Every listed placement is accepted; every other placement at a cell
/// next to the board, on a taken cell or away from the board is refused
/// with the rule it breaks. For land tiles, the list is exactly the
/// oracle's.
fn check_placements(
    at: &str,
    game: &Game,
    player: Seat,
    tile: TileKind,
    legal: &[Placement],
    rng: &mut XorShift,
) {
    let actor = Actor::Seat(player);
    let listed: HashSet<Placement> = legal.iter().copied().collect();
    assert_eq!(
        listed.len(),
        legal.len(),
        "{at}: {tile}: a placement is listed twice"
    );
    assert!(game.has_placement(tile), "{at}");
    let river = tile.def().is_river();

    for p in legal {
        let command = Command::PlaceTile {
            pos: p.pos,
            rotation: p.rotation,
        };
        assert_eq!(
            game.decide(actor, &command),
            Ok(vec![Event::TilePlaced {
                pos: p.pos,
                rotation: p.rotation
            }]),
            "{at}: the listed placement {tile} {p:?} is refused"
        );
        assert_eq!(
            verdict(game, tile, p.pos, p.rotation),
            Verdict::Fits,
            "{at}: the listed placement {tile} {p:?} breaks B-T1"
        );
    }

    // Cells next to the board, every rotation.
    for pos in candidate_cells(game) {
        for rotation in Rotation::ALL {
            if listed.contains(&Placement { pos, rotation }) {
                continue;
            }
            let got = rule_of(game.decide(actor, &Command::PlaceTile { pos, rotation }));
            match verdict(game, tile, pos, rotation) {
                Verdict::Mismatch(ours, theirs) => {
                    let water = ours == EdgeKind::Water || theirs == EdgeKind::Water;
                    let want = if water { id::R_3 } else { id::B_T1 };
                    assert_eq!(
                        got,
                        Some(want),
                        "{at}: {tile} at {pos} {rotation}: {ours:?} against {theirs:?}"
                    );
                }
                Verdict::Fits => {
                    assert!(
                        river,
                        "{at}: {tile} fits at {pos} {rotation} but is not listed (B-T1)"
                    );
                    assert!(
                        got == Some(id::R_3) || got == Some(id::R_4),
                        "{at}: {tile} at {pos} {rotation} off the river: {got:?}"
                    );
                }
                v => panic!("{at}: a candidate cell {pos} is {v:?}"),
            }
        }
    }

    // Taken cells.
    let tiles = game.tiles();
    for _ in 0..4 {
        let taken = tiles[rng.below(tiles.len())].pos;
        let rotation = Rotation::ALL[rng.below(4)];
        let got = rule_of(game.decide(actor, &Command::PlaceTile { pos: taken, rotation }));
        assert_eq!(got, Some(id::B_T1), "{at}: {tile} on the taken cell {taken}");
    }

    // Cells touching no tile: around a random tile, and far away.
    let centre = tiles[rng.below(tiles.len())].pos;
    let isolated = (-3..=3)
        .flat_map(|dx| (-3..=3).map(move |dy| Pos::new(centre.x + dx, centre.y + dy)))
        .filter(|&p| verdict(game, tile, p, Rotation::R0) == Verdict::Isolated)
        .take(3)
        .chain([Pos::new(1000, -1000)]);
    for pos in isolated {
        let rotation = Rotation::ALL[rng.below(4)];
        let got = rule_of(game.decide(actor, &Command::PlaceTile { pos, rotation }));
        assert_eq!(got, Some(id::B_T1), "{at}: {tile} at {pos}, touching no tile");
    }

    // Not this player's decision, or not this decision.
    let command = Command::PlaceTile {
        pos: legal[0].pos,
        rotation: legal[0].rotation,
    };
    let other = Seat(((player.index() + 1) % game.players()) as u8);
    for actor in [Actor::Seat(other), Actor::Dealer] {
        assert!(
            matches!(game.decide(actor, &command), Err(PlayError::NotYourTurn { .. })),
            "{at}: {actor} placed for {player}"
        );
    }
    assert!(
        matches!(
            game.decide(Actor::Seat(player), &Command::PlaceFollower(None)),
            Err(PlayError::WrongDecision { .. })
        ),
        "{at}: a follower decision while a tile waits"
    );
}

// ---- Followers (B-T3, R-5) ----------------------------------------------

const PLACES: [Place; 13] = [
    Place::Edge(Dir::N),
    Place::Edge(Dir::E),
    Place::Edge(Dir::S),
    Place::Edge(Dir::W),
    Place::Half(Half::Nw),
    Place::Half(Half::Ne),
    Place::Half(Half::En),
    Place::Half(Half::Es),
    Place::Half(Half::Se),
    Place::Half(Half::Sw),
    Place::Half(Half::Ws),
    Place::Half(Half::Wn),
    Place::Cloister,
];

/// The segment a place names on a placed tile, if any.
fn segment_of(tile: &PlacedTile, place: Place) -> Option<u8> {
    let layout = tile.layout();
    let segment = match place {
        Place::Edge(d) => layout.edge_segment[d.index()],
        Place::Half(h) => layout.half_segment[h.index()],
        Place::Cloister => tile.def().cloister.unwrap_or(u8::MAX),
    };
    (segment != u8::MAX).then_some(segment)
}

/// The first place, in the order of `PLACES`, naming `segment`.
fn canonical(tile: &PlacedTile, segment: u8) -> Place {
    PLACES
        .into_iter()
        .find(|&p| segment_of(tile, p) == Some(segment))
        .expect("every segment has a place")
}

/// The segments (tile position, segment) of the feature holding `start`,
/// found by walking the board (B-X4: fields across half-edges; roads and
/// cities across edges; a cloister alone).
fn feature_of(game: &Game, start: (Pos, u8)) -> HashSet<(Pos, u8)> {
    let mut seen = HashSet::from([start]);
    let mut todo = vec![start];
    while let Some((pos, segment)) = todo.pop() {
        let tile = game.tile_at(pos).expect("a feature lies on tiles");
        let layout = tile.layout();
        let mut links = Vec::new();
        for d in Dir::ALL {
            if layout.edge_segment[d.index()] == segment
                && let Some(other) = game.tile_at(pos.step(d))
            {
                links.push((other.pos, other.layout().edge_segment[d.opposite().index()]));
            }
        }
        for h in Half::ALL {
            if layout.half_segment[h.index()] == segment
                && let Some(other) = game.tile_at(pos.step(h.dir()))
            {
                links.push((other.pos, other.layout().half_segment[h.facing().index()]));
            }
        }
        for link in links {
            assert_ne!(
                link.1,
                u8::MAX,
                "a segment at {pos} continues into nothing at {}",
                link.0
            );
            if seen.insert(link) {
                todo.push(link);
            }
        }
    }
    seen
}

/// Every listed follower place is accepted, and is exactly a segment of
/// the tile just placed whose whole feature holds no follower (B-T3);
/// every other place is refused with B-T3 (R-5 on the river).
fn check_follower_places(at: &str, game: &Game, player: Seat, legal: &[Place]) {
    let actor = Actor::Seat(player);
    let tile = *game.current_tile().expect("a tile was placed this turn");
    let listed: HashSet<Place> = legal.iter().copied().collect();
    assert_eq!(
        listed.len(),
        legal.len(),
        "{at}: a follower place is listed twice"
    );
    assert_eq!(
        game.decide(actor, &Command::PlaceFollower(None)),
        Ok(vec![Event::FollowerPlaced(None)]),
        "{at}: no follower is refused"
    );

    let supply = game.supply()[player.index()];
    let occupied: HashSet<(Pos, u8)> = game
        .followers()
        .map(|f| {
            let t = game.tile_at(f.at).expect("a follower stands on a tile");
            (f.at, segment_of(t, f.place).expect("on a segment"))
        })
        .collect();

    for place in PLACES {
        let got = game.decide(actor, &Command::PlaceFollower(Some(place)));
        let Some(segment) = segment_of(&tile, place) else {
            let water = matches!(place, Place::Edge(d) if tile.layout().edges[d.index()] == EdgeKind::Water);
            let want = if water { id::R_5 } else { id::B_T3 };
            assert_eq!(
                rule_of(got),
                Some(want),
                "{at}: {place} of {} names nothing",
                tile.kind
            );
            assert!(
                !listed.contains(&place),
                "{at}: {place} of {} is listed",
                tile.kind
            );
            continue;
        };
        let name = canonical(&tile, segment);
        let free = feature_of(game, (tile.pos, segment)).is_disjoint(&occupied);
        let expected = supply > 0 && free;
        assert_eq!(
            listed.contains(&name),
            expected,
            "{at}: {place} ({name}) of {} at {}: supply {supply}, feature free {free}, listed {legal:?}",
            tile.kind,
            tile.pos
        );
        if expected {
            assert_eq!(
                got,
                Ok(vec![Event::FollowerPlaced(Some(name))]),
                "{at}: the listed place {place} ({name}) is refused"
            );
        } else {
            assert_eq!(
                rule_of(got),
                Some(id::B_T3),
                "{at}: {place} ({name}) of {}",
                tile.kind
            );
        }
    }
    for place in legal {
        assert_eq!(
            segment_of(&tile, *place).map(|s| canonical(&tile, s)),
            Some(*place),
            "{at}: the listed place {place} is not a canonical name"
        );
    }
    assert!(
        matches!(
            game.decide(
                actor,
                &Command::PlaceTile {
                    pos: tile.pos,
                    rotation: tile.rotation
                }
            ),
            Err(PlayError::WrongDecision { .. })
        ),
        "{at}: a placement while a follower decision waits"
    );
}

// ---- Properties -------------------------------------------------------------

/// No panic, the game ends with an empty bag, followers and tiles are all
/// accounted for, scores never decrease, and every listed move is legal
/// while the others are refused with their rule (B-T1, B-T2, B-T3, B-E1,
///
fn every_move_checked(variant: (&'static str, Rules)) {
    for players in 2..=5 {
        for seed in seeds(5, 100) {
            play(Case::new(variant, players, seed), true);
        }
    }
}

#[test]
fn classic_games_keep_every_invariant() {
    every_move_checked(variants()[0]);
}

#[test]
fn modern_games_keep_every_invariant() {
    every_move_checked(variants()[1]);
}

#[test]
fn river_games_keep_every_invariant() {
    every_move_checked(variants()[2]);
}

#[test]
fn river_modern_games_keep_every_invariant() {
    every_move_checked(variants()[3]);
}

#[test]
fn count_games_keep_every_invariant() {
    every_move_checked(variants()[4]);
}

#[test]
fn river_count_games_keep_every_invariant() {
    every_move_checked(variants()[5]);
}

/// Many more games with the cheap invariants only (no legal-move sweep).
#[test]
fn many_games_keep_the_invariants() {
    for variant in variants() {
        for players in 2..=5 {
            for seed in seeds(16, 400) {
                play(Case::new(variant, players, 1000 + seed), false);
            }
        }
    }
}

/// Folding a game's events gives the state the game had: after every
/// command, and at every prefix of the events (the state apply by apply).
#[test]
fn folding_the_events_gives_the_same_state() {
    for variant in variants() {
        for players in 2..=5 {
            for seed in seeds(2, 25) {
                let case = Case::new(variant, players, 2000 + seed);
                let played = play(case, false);
                assert_eq!(Game::fold(&played.events).as_ref(), Some(&played.game), "{case}");
                for (len, state) in &played.snapshots {
                    assert_eq!(
                        Game::fold(&played.events[..*len]).as_ref(),
                        Some(state),
                        "{case}: fold of the first {len} events"
                    );
                }
                // Every prefix, including those inside a command's events.
                let mut stepwise = Game::fold(&played.events[..1]).expect("Created first");
                for len in 2..=played.events.len() {
                    stepwise.apply(&played.events[len - 1]);
                    assert_eq!(
                        Game::fold(&played.events[..len]).as_ref(),
                        Some(&stepwise),
                        "{case}: fold of the first {len} events"
                    );
                }
                assert_eq!(stepwise, played.game, "{case}");
                assert_eq!(Game::fold(&[]), None);
            }
        }
    }
}

/// B-3: the draw order is a function of the seed alone; the same seed and
/// the same choices give the same game; different seeds differ.
#[test]
fn the_seed_fixes_the_game() {
    for variant in variants() {
        let mut orders: Vec<(u64, Vec<TileKind>)> = Vec::new();
        for seed in seeds(8, 40) {
            let case = Case::new(variant, 2 + (seed as usize % 4), 3000 + seed);
            let a = play(case, false);
            let b = play(case, false);
            assert_eq!(a.events, b.events, "{case}: the same game played twice");
            assert_eq!(a.game, b.game, "{case}: the same game played twice");

            // Other choices, and other players: the same draw order.
            let other = Case {
                moves: case.moves ^ 0xffff,
                players: 2 + (case.players - 1) % 4,
                ..case
            };
            assert_eq!(
                a.draws(),
                play(other, false).draws(),
                "{case} and {other}: draw orders"
            );

            for (s, order) in &orders {
                assert_ne!(
                    order,
                    &a.draws(),
                    "{case}: seeds {s} and {} draw alike",
                    case.seed
                );
            }
            orders.push((case.seed, a.draws()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: if slow_tests() { 500 } else { 16 },
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Bags of one's own, empty ones included: under every rule set the
    /// game always waits for a decision that has a legal choice, `decide`
    /// agrees with `legal_commands` at each, and the game ends (B-E1).
    #[test]
    fn every_custom_bag_reaches_the_end(
        bag in proptest::collection::vec((0usize..BASE_COUNTS.len(), 0u16..4), 0..6),
        seed in any::<u64>(),
        players in 2usize..=5,
        variant in 0usize..6,
    ) {
        let (name, rules) = variants()[variant];
        let tiles: Vec<(TileKind, u16)> = bag
            .iter()
            .map(|&(k, n)| (TileKind::from_name(BASE_COUNTS[k].0).expect("a land tile"), n))
            .collect();
        let setup = Setup {
            rules,
            players: (0..players).map(|i| format!("P{i}")).collect(),
            tiles: Some(tiles.clone()),
            seed: Some(Seed::from_u64(seed)),
            time_control: None,
        };
        prop_assert_eq!(Game::check_setup(&setup), Ok(()));
        let mut game = Game::new(setup);
        game.run_automatic(&mut Vec::new(), &mut ());
        let mut rng = XorShift::new(seed);
        let mut decisions = 0;
        while let Some(actor) = game.pending().actor() {
            let at = format!("{name} rules, {players} players, seed {seed}, bag {tiles:?}, draw {}", game.draws());
            check_decide_agrees_with_listing(&at, &game);
            let listed = game.legal_commands();
            game.execute(actor, &listed[rng.below(listed.len())], &mut ()).expect("a listed command");
            decisions += 1;
            prop_assert!(decisions < 500, "{}: the game does not end", at);
        }
        prop_assert!(game.is_finished());
        prop_assert_eq!(game.bag_left(), 0);
    }

    /// Arbitrary seeds, players and rule sets, every move checked.
    #[test]
    fn arbitrary_seeds_keep_every_invariant(
        seed in any::<u64>(),
        moves in any::<u64>(),
        players in 2usize..=5,
        variant in 0usize..6,
    ) {
        let case = Case { moves, ..Case::new(variants()[variant], players, seed) };
        play(case, true);
    }
}
