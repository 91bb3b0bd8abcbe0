//! Rule-by-rule tests: each is named after the rule of `docs/rules.md`
//! it pins down (`b_t1_...` for B-T1).
//!
//! Every test builds a small board turn by turn with [`given`], in the
//! style of rust-analyzer's data-driven `check`: one line per turn,
//!
//! ```text
//! KIND X Y ROTATION [PLACE]      e.g. "E 0 1 180 S": an E at (0,1), turned
//!                                 180 degrees, with a knight on its S edge
//! KIND -                         the dealer draws KIND and it fits nowhere
//!                                 (B-T2): it must be discarded
//! ```
//!
//! Turns are played in the order the game asks for them (seat order, B-T5):
//! the dealer draws KIND, the player places it and deploys a follower on
//! PLACE (an edge `N E S W`, a half-edge `Nw Ne En Es Se Sw Ws Wn`, or
//! `cloister`) or none. A turn the engine refuses panics with the
//! `PlayError` and the board, so a wrong test setup fails loudly.
//!
//! The bag holds exactly the land tiles of the turns: `play_to_end` empties
//! it, so the game ends and final scoring runs; `play` leaves one spare tile
//! in it, so the game goes on and only scoring during play has happened.
//!
//! The base game starts with the tile D at (0,0), rotation 0: its city faces
//! north, its road runs from west to east, its south edge is field.
//!
//! With the Count (C-*), the decisions owed after a tile are steps of their
//! own, written where the game asks for them; each names the seat that
//! decides, and the step fails unless the game waits for exactly that
//! decision of that seat:
//!
//! ```text
//! redeploy SEAT X Y PLACE        before scoring, SEAT moves a follower from
//!                                 Carcassonne onto the feature at PLACE of
//!                                 the tile at (X,Y) (C-6)
//! redeploy SEAT pass             SEAT ends their part of the round (C-6)
//! deploy SEAT QUARTER [COUNT]    after scoring, SEAT deploys a follower from
//!                                 supply to QUARTER and moves the count to
//!                                 COUNT (C-3, C-5)
//! deploy SEAT pass               SEAT declines the deploy
//! final SEAT X Y PLACE           a move of the final round (C-9)
//! final SEAT pass                SEAT leaves the final round (CD-3)
//! ```
//!
//! QUARTER and COUNT are `castle`, `blacksmith`, `cathedral`, `market`.
//! Before each step, every command `legal_commands` lists must be accepted
//! by `decide`. Steps draw no tile, so they add nothing to the bag.

mod base;
mod count;
mod errors;
mod farmers;
mod river;
mod seeds;
pub mod time;

use carcassonne_engine::*;

/// The rules no test can pin down yet, each with the reason. The coverage
/// test below fails when one of them gains a test named after it (then
/// take it off this list) or is no rule of `docs/rules.md`.
const UNTESTABLE: [(&str, &str); 2] = [
    (
        "C-12",
        "the big follower comes with Inns and Cathedrals, which the engine does not have: every follower counts one",
    ),
    (
        "CD-6",
        "the double turn comes with the builder (Traders and Builders), which the engine does not have; \
         without one, a deploy once a turn and once a round of turns are the same",
    ),
];

/// The test names of this binary (the last part of each path), listed by
/// the binary itself: coverage comes from the names, never from source.
fn test_names() -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(&exe)
        .args(["--list", "--format", "terse"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
    assert!(output.status.success(), "{}: --list failed", exe.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(|path| path.rsplit("::").next().unwrap_or(path).to_owned())
        .collect()
}

/// The prefix of the tests of a rule: `B-T1` is pinned by `b_t1_...`.
fn test_prefix(rule: &str) -> String {
    format!("{}_", rule.to_lowercase().replace('-', "_"))
}

#[test]
fn every_rule_of_docs_rules_md_names_a_test_unless_listed_untestable() {
    let rules = super::docs::defined_rule_ids();
    let names = test_names();
    assert!(
        names
            .iter()
            .any(|n| n == "every_rule_of_docs_rules_md_names_a_test_unless_listed_untestable"),
        "the test list does not hold this test: {names:?}"
    );
    let tested = |rule: &str| {
        let prefix = test_prefix(rule);
        names.iter().any(|n| n.starts_with(&prefix))
    };
    let untestable = |rule: &str| UNTESTABLE.iter().any(|(id, _)| *id == rule);
    let missing: Vec<&str> = rules
        .iter()
        .copied()
        .filter(|rule| !tested(rule) && !untestable(rule))
        .collect();
    assert!(
        missing.is_empty(),
        "rules of docs/rules.md with no test named after them (`b_t1_...` for B-T1): {missing:?}"
    );
    for (rule, why) in UNTESTABLE {
        assert!(
            rules.contains(&rule),
            "{rule} is listed as untestable ({why}) but is no rule of docs/rules.md"
        );
        assert!(
            !tested(rule),
            "{rule} is listed as untestable ({why}) but a test is named after it: take it off the list"
        );
    }
}

#[test]
fn the_engine_knows_exactly_the_rules_of_docs_rules_md() {
    use std::collections::BTreeSet;
    let defined = super::docs::defined_rule_ids();
    let doc: BTreeSet<&str> = defined.iter().copied().collect();
    assert_eq!(
        doc.len(),
        defined.len(),
        "docs/rules.md defines an id twice: {defined:?}"
    );
    let engine: BTreeSet<&str> = id::ALL.iter().map(|rule| rule.as_str()).collect();
    assert_eq!(engine.len(), id::ALL.len(), "id::ALL names an id twice");
    let only_engine: Vec<&&str> = engine.difference(&doc).collect();
    let only_doc: Vec<&&str> = doc.difference(&engine).collect();
    assert!(
        only_engine.is_empty() && only_doc.is_empty(),
        "ids of the engine that docs/rules.md does not define: {only_engine:?}; \
         rules of docs/rules.md the engine does not know (rules::id): {only_doc:?}"
    );
    // Every id the rules cite is one they define.
    let cited: Vec<&str> = super::docs::mentioned_rule_ids(super::docs::RULES_MD)
        .into_iter()
        .filter(|rule| !doc.contains(rule))
        .collect();
    assert!(cited.is_empty(), "docs/rules.md cites undefined ids: {cited:?}");
}

// ---- Vocabulary -------------------------------------------------------------

pub fn kind(name: &str) -> TileKind {
    TileKind::from_name(name).unwrap_or_else(|| panic!("no tile kind {name:?}"))
}

pub fn place(name: &str) -> Place {
    Place::from_name(name).unwrap_or_else(|| panic!("no follower place {name:?}"))
}

pub fn rotation(degrees: i64) -> Rotation {
    Rotation::from_degrees(degrees).unwrap_or_else(|| panic!("no rotation {degrees}"))
}

pub fn pos(x: i32, y: i32) -> Pos {
    Pos::new(x, y)
}

pub fn is_land(kind: TileKind) -> bool {
    BASE_COUNTS.iter().any(|(name, _)| *name == kind.name())
}

/// A score change as tests compare it: seats, points each, rule.
pub type Score = (Vec<u8>, u32, RuleId);

pub fn seat_list(seats: Seats) -> Vec<u8> {
    seats.iter().map(|s| s.0).collect()
}

pub fn river() -> Rules {
    Rules::default().with(Expansion::River)
}

/// The classic rules with The Count of Carcassonne: the City is laid at
/// setup, CO7 at (0,0) (C-1).
pub fn count() -> Rules {
    Rules::default().with(Expansion::Count)
}

pub fn quarter(name: &str) -> Quarter {
    Quarter::from_name(name).unwrap_or_else(|| panic!("no quarter {name:?}"))
}

/// The words that begin a Count step rather than a tile (see the module doc).
const STEPS: [&str; 3] = ["redeploy", "deploy", "final"];

fn is_step(line: &str) -> bool {
    line.split_whitespace().next().is_some_and(|w| STEPS.contains(&w))
}

/// A Count step (see the module doc) as the seat that decides it, its
/// command, and the name of the decision it answers.
pub fn step(spec: &str) -> (Seat, Command, &'static str) {
    let words: Vec<&str> = spec.split_whitespace().collect();
    let number = |w: &str| w.parse::<i32>().unwrap_or_else(|_| panic!("`{spec}`: {w}?"));
    let seat = |w: &str| Seat(w.parse::<u8>().unwrap_or_else(|_| panic!("`{spec}`: seat {w}?")));
    let target = |x: &str, y: &str, at: &str| {
        Command::MoveFromCarcassonne(Target {
            pos: pos(number(x), number(y)),
            place: place(at),
        })
    };
    match words[..] {
        ["redeploy", s, "pass"] => (seat(s), Command::Pass, "redeploy from Carcassonne"),
        ["redeploy", s, x, y, at] => (seat(s), target(x, y, at), "redeploy from Carcassonne"),
        ["deploy", s, "pass"] => (seat(s), Command::Pass, "deploy to Carcassonne"),
        ["deploy", s, q, ref count @ ..] if count.len() <= 1 => {
            let command = Command::DeployToCarcassonne {
                quarter: quarter(q),
                count: count.first().map(|c| quarter(c)),
            };
            (seat(s), command, "deploy to Carcassonne")
        }
        ["final", s, "pass"] => (seat(s), Command::Pass, "final round"),
        ["final", s, x, y, at] => (seat(s), target(x, y, at), "final round"),
        _ => panic!("`{spec}` is no Count step (see the module doc)"),
    }
}

/// A two-player base game whose bag holds `bag` (kind, count), for tests
/// that play a turn step by step.
pub fn table(bag: &[(&str, u16)]) -> Table {
    Table::new(
        Rules::default(),
        2,
        bag.iter().map(|&(name, count)| (kind(name), count)).collect(),
    )
}

// ---- Given: a board built turn by turn ----------------------------------------

pub struct Given {
    rules: Rules,
    players: usize,
    time_control: Option<TimeControl>,
    turns: Vec<String>,
}

/// The turns of a game, one line each (see the module doc).
pub fn given<S: AsRef<str>>(turns: &[S]) -> Given {
    Given {
        rules: Rules::default(),
        players: 2,
        time_control: None,
        turns: turns.iter().map(|t| t.as_ref().to_string()).collect(),
    }
}

impl Given {
    pub fn players(mut self, players: usize) -> Given {
        self.players = players;
        self
    }

    pub fn rules(mut self, rules: Rules) -> Given {
        self.rules = rules;
        self
    }

    /// Plays with this time control (T-1); every turn at time 0 unless the
    /// test moves [`Table::now`].
    pub fn clock(mut self, control: TimeControl) -> Given {
        self.time_control = Some(control);
        self
    }

    /// Plays the turns; one spare tile stays in the bag, so the game goes on.
    pub fn play(self) -> Table {
        self.run(1)
    }

    /// Plays the turns with nothing else in the bag: the game ends after
    /// the last one (B-E1) and final scoring runs.
    pub fn play_to_end(self) -> Table {
        self.run(0)
    }

    /// Plays the turns before the first line equal to `line`, which must
    /// be one of them; the bag still holds the tiles of all the turns (and
    /// one spare), so the test can go on with `Table::turn` from `line`.
    pub fn play_until(self, line: &str) -> Table {
        let Some(stop) = self.turns.iter().position(|t| t == line) else {
            panic!("`{line}` is not among the turns");
        };
        let mut table = self.table(1);
        for turn in &self.turns[..stop] {
            table.turn(turn);
        }
        table
    }

    /// The table before any turn, with the bag these turns need.
    pub fn table(&self, spare: u16) -> Table {
        let mut bag: Vec<(TileKind, u16)> = Vec::new();
        let kinds = self
            .turns
            .iter()
            .filter(|t| !is_step(t))
            .map(|t| kind(t.split_whitespace().next().unwrap_or("")));
        for k in kinds.chain(std::iter::repeat_n(kind("B"), spare as usize)) {
            if !is_land(k) {
                continue; // River tiles are in the bag by the rules (R-1).
            }
            match bag.iter_mut().find(|(b, _)| *b == k) {
                Some((_, count)) => *count += 1,
                None => bag.push((k, 1)),
            }
        }
        Table::with_clock(self.rules, self.players, bag, self.time_control)
    }

    fn run(self, spare: u16) -> Table {
        let mut table = self.table(spare);
        for turn in &self.turns {
            table.turn(turn);
        }
        table
    }
}

/// A game being played, and every effect it has had.
pub struct Table {
    pub game: Game,
    pub effects: Vec<Effect>,
    /// The time every command is decided and applied at, in ms (T-2).
    pub now: u64,
}

impl Table {
    pub fn new(rules: Rules, players: usize, bag: Vec<(TileKind, u16)>) -> Table {
        Table::with_clock(rules, players, bag, None)
    }

    pub fn with_clock(
        rules: Rules,
        players: usize,
        bag: Vec<(TileKind, u16)>,
        time_control: Option<TimeControl>,
    ) -> Table {
        let setup = Setup {
            rules,
            players: (0..players).map(|i| format!("P{i}")).collect(),
            tiles: Some(bag),
            seed: None,
            time_control,
        };
        if let Err(err) = Game::check_setup(&setup) {
            panic!("bad setup: {err}");
        }
        Table {
            game: Game::new(setup),
            effects: Vec::new(),
            now: 0,
        }
    }

    /// The player whose turn it is.
    pub fn seat(&self) -> Seat {
        self.game
            .pending()
            .player()
            .unwrap_or_else(|| panic!("the game is over"))
    }

    pub fn execute(&mut self, actor: Actor, command: Command) -> Result<Vec<Event>, PlayError> {
        self.game.execute_at(self.now, actor, &command, &mut self.effects)
    }

    pub fn try_draw(&mut self, tile: &str) -> Result<Vec<Event>, PlayError> {
        self.execute(Actor::Dealer, Command::Draw(kind(tile)))
    }

    pub fn try_place(&mut self, x: i32, y: i32, degrees: i64) -> Result<Vec<Event>, PlayError> {
        let command = Command::PlaceTile {
            pos: pos(x, y),
            rotation: rotation(degrees),
        };
        self.execute(Actor::Seat(self.seat()), command)
    }

    pub fn try_follow(&mut self, at: Option<&str>) -> Result<Vec<Event>, PlayError> {
        let command = Command::PlaceFollower(at.map(place));
        self.execute(Actor::Seat(self.seat()), command)
    }

    pub fn draw(&mut self, tile: &str) {
        if let Err(err) = self.try_draw(tile) {
            self.fail(&format!("draw {tile}"), err);
        }
    }

    pub fn place(&mut self, x: i32, y: i32, degrees: i64) {
        if let Err(err) = self.try_place(x, y, degrees) {
            self.fail(&format!("place at ({x},{y}) {degrees}"), err);
        }
    }

    pub fn follow(&mut self, at: Option<&str>) {
        if let Err(err) = self.try_follow(at) {
            self.fail(&format!("follower {at:?}"), err);
        }
    }

    /// Plays one turn, or one Count step, written as in the module doc.
    pub fn turn(&mut self, spec: &str) {
        if is_step(spec) {
            return self.step(spec);
        }
        let words: Vec<&str> = spec.split_whitespace().collect();
        match words[..] {
            [tile, "-"] => {
                let before = self.effects.len();
                self.draw(tile);
                if !self.effects[before..].contains(&Effect::Discarded(kind(tile))) {
                    self.fail(spec, "the tile was not discarded");
                }
            }
            [tile, x, y, degrees, ref follower @ ..] if follower.len() <= 1 => {
                let number = |w: &str| w.parse::<i32>().unwrap_or_else(|_| panic!("`{spec}`: {w}?"));
                self.draw(tile);
                self.place(number(x), number(y), i64::from(number(degrees)));
                self.follow(follower.first().copied());
            }
            _ => panic!("`{spec}` is not `KIND X Y ROTATION [PLACE]` nor `KIND -`"),
        }
    }

    /// Plays one Count step (see the module doc): the game must wait for
    /// that decision of that seat, and every command it lists as legal
    /// must be accepted.
    pub fn step(&mut self, spec: &str) {
        let (seat, command, decision) = step(spec);
        let pending = self.game.pending();
        if pending.name() != decision || pending.player() != Some(seat) {
            self.fail(spec, format!("the game waits for {pending:?}"));
        }
        self.check_legal_commands(spec);
        if let Err(err) = self.execute(Actor::Seat(seat), command) {
            self.fail(spec, err);
        }
    }

    /// Every command `legal_commands` lists is accepted by `decide`.
    pub fn check_legal_commands(&self, what: &str) {
        let Some(actor) = self.game.pending().actor() else {
            return;
        };
        for command in self.game.legal_commands() {
            if let Err(err) = self.game.decide(actor, &command) {
                self.fail(
                    what,
                    format!("legal_commands lists {command:?}, decide refuses it: {err}"),
                );
            }
        }
    }

    /// The City of Carcassonne: the game must be played with the Count.
    pub fn city(&self) -> City {
        *self
            .game
            .city()
            .unwrap_or_else(|| panic!("no Count in this game"))
    }

    /// Followers in `quarter`, in seat order.
    pub fn quarter(&self, name: &str) -> Vec<u8> {
        self.city().quarters[quarter(name).index()][..self.game.players()].to_vec()
    }

    /// The quarter where the count stands.
    pub fn count(&self) -> &'static str {
        self.city().count.name()
    }

    fn fail(&self, what: &str, err: impl std::fmt::Display) -> ! {
        panic!("{what}: {err}\n{}", render::board(&self.game))
    }

    /// Every score change so far, in order.
    pub fn scored(&self) -> Vec<Score> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Scored(s) => Some((seat_list(s.players), s.points, s.rule)),
                _ => None,
            })
            .collect()
    }

    /// The score changes of one rule.
    pub fn scored_by(&self, rule: RuleId) -> Vec<Score> {
        self.scored().into_iter().filter(|s| s.2 == rule).collect()
    }

    /// The features completed so far, in order.
    pub fn completed(&self) -> Vec<FeatureRef> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Completed(f) => Some(*f),
                _ => None,
            })
            .collect()
    }

    pub fn scores(&self) -> Vec<u32> {
        self.game.scores().to_vec()
    }

    pub fn supply(&self) -> Vec<u8> {
        self.game.supply().to_vec()
    }

    /// Followers on the board as (owner, x, y, place).
    pub fn followers(&self) -> Vec<(u8, i32, i32, &'static str)> {
        self.game
            .followers()
            .map(|f| (f.owner.0, f.at.x, f.at.y, f.place.name()))
            .collect()
    }

    /// The legal follower places on the tile just placed, by name.
    pub fn follower_places(&self) -> Vec<&'static str> {
        self.game
            .legal_follower_places()
            .into_iter()
            .map(Place::name)
            .collect()
    }
}
