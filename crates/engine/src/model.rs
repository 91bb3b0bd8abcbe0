//! The engine's vocabulary: setup, commands, events, decisions, effects and
//! errors. Plain data; the behaviour is in `game`.

use std::fmt;

use crate::clock::TimeControl;
use crate::geometry::{Place, Pos, Rotation};
use crate::rules::{RuleId, Rules, id};
use crate::shuffle::Seed;
use crate::tiles::{FeatureKind, TileKind};

/// At most this many players (B-2).
pub const MAX_PLAYERS: usize = 5;
pub(crate) const MAX_PLAYERS_U8: u8 = MAX_PLAYERS as u8;
/// At least this many players (B-2).
pub const MIN_PLAYERS: usize = 2;
/// Followers each player owns (B-2).
pub const FOLLOWERS: u8 = 7;
/// A custom bag holds at most this many tiles.
pub const MAX_BAG: usize = 1000;
/// Coordinates a record or a request may name lie within
/// `-MAX_COORDINATE..=MAX_COORDINATE`. A legal board never comes near: even
/// a bag of [`MAX_BAG`] tiles laid in one line, plus the setup tiles,
/// reaches about 1,020 cells from the origin.
pub const MAX_COORDINATE: i32 = 10_000;

/// A player, by seat: 0 plays the first turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seat(pub u8);

impl Seat {
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// A set of seats (the players a score goes to), as a bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Seats(pub u8);

impl Seats {
    pub fn insert(&mut self, seat: Seat) {
        self.0 |= 1 << seat.0;
    }

    pub fn contains(self, seat: Seat) -> bool {
        self.0 & (1 << seat.0) != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Seat> {
        (0..8).filter(move |i| self.0 & (1 << i) != 0).map(Seat)
    }
}

/// Who acts: a player, or the dealer who draws tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Actor {
    Seat(Seat),
    /// Draws tiles: the engine itself when the game has a seed, or whoever
    /// replays given draws (a record).
    Dealer,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Actor::Seat(s) => s.fmt(f),
            Actor::Dealer => f.write_str("the dealer"),
        }
    }
}

/// Everything fixed when a game is created. The first event carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    pub rules: Rules,
    /// Names in seat order.
    pub players: Vec<String>,
    /// The land tiles shuffled into the bag, by kind; `None` is the full set
    /// of `docs/rules.md` (71 tiles: the 72 less the start tile).
    pub tiles: Option<Vec<(TileKind, u16)>>,
    /// The draw order follows from the seed (B-3). Without one, draws are
    /// given from outside, one `Command::Draw` at a time (records).
    pub seed: Option<Seed>,
    /// The clocks (T-1); `None`: no clock runs and nobody times out.
    pub time_control: Option<TimeControl>,
}

/// A quarter of the City of Carcassonne (C-2). Each feeds one kind of
/// feature: castle to cities, blacksmith to roads, cathedral to cloisters,
/// market to fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Quarter {
    Castle = 0,
    Blacksmith = 1,
    Cathedral = 2,
    Market = 3,
}

impl Quarter {
    pub const ALL: [Quarter; 4] = [
        Quarter::Castle,
        Quarter::Blacksmith,
        Quarter::Cathedral,
        Quarter::Market,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    pub const fn name(self) -> &'static str {
        match self {
            Quarter::Castle => "castle",
            Quarter::Blacksmith => "blacksmith",
            Quarter::Cathedral => "cathedral",
            Quarter::Market => "market",
        }
    }

    pub fn from_name(name: &str) -> Option<Quarter> {
        Quarter::ALL.into_iter().find(|q| q.name() == name)
    }

    /// The kind of feature this quarter's followers may go to.
    pub const fn feeds(self) -> FeatureKind {
        match self {
            Quarter::Castle => FeatureKind::City,
            Quarter::Blacksmith => FeatureKind::Road,
            Quarter::Cathedral => FeatureKind::Cloister,
            Quarter::Market => FeatureKind::Field,
        }
    }

    /// The quarter that feeds features of `kind`.
    pub const fn feeding(kind: FeatureKind) -> Quarter {
        match kind {
            FeatureKind::City => Quarter::Castle,
            FeatureKind::Road => Quarter::Blacksmith,
            FeatureKind::Cloister => Quarter::Cathedral,
            FeatureKind::Field => Quarter::Market,
        }
    }
}

impl fmt::Display for Quarter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A feature on the board, named by a place on one of its tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Target {
    pub pos: Pos,
    pub place: Place,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at {}", self.place, self.pos)
    }
}

/// A decision, as a client asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    /// The dealer draws this tile (only for games without a seed).
    Draw(TileKind),
    /// Place the drawn tile (B-T1).
    PlaceTile { pos: Pos, rotation: Rotation },
    /// Deploy a follower on the tile just placed, or none (B-T3).
    PlaceFollower(Option<Place>),
    /// Move a follower from the quarter that feeds the target's kind onto
    /// it: a redeploy (C-6) or a move of the final round (C-9).
    MoveFromCarcassonne(Target),
    /// End one's redeploys (C-6), decline a deploy (C-3), or leave the
    /// final round (C-9).
    Pass,
    /// Deploy a follower from supply to a quarter, and maybe move the
    /// count (C-3, C-5): `count` is where it goes; `None`, or the quarter
    /// where it stands, leaves it there.
    DeployToCarcassonne {
        quarter: Quarter,
        count: Option<Quarter>,
    },
    /// Leave the game, at any time (T-8).
    Resign,
    /// End the game with no result, before every seat has played (T-9).
    Abort,
    /// The dealer: the pending decision's deadline has passed (T-5).
    TimeOut,
    /// The dealer: the server was down from `down_since_ms` until now, and
    /// that time counts for nobody (T-10).
    Resume { down_since_ms: u64 },
}

impl Command {
    pub const fn name(&self) -> &'static str {
        match self {
            Command::Draw(_) => "draw",
            Command::PlaceTile { .. } => "place a tile",
            Command::PlaceFollower(_) => "place a follower",
            Command::MoveFromCarcassonne(_) => "move a follower from Carcassonne",
            Command::Pass => "pass",
            Command::DeployToCarcassonne { .. } => "deploy to Carcassonne",
            Command::Resign => "resign",
            Command::Abort => "abort",
            Command::TimeOut => "time out",
            Command::Resume { .. } => "resume the clocks",
        }
    }
}

/// What happened: the game's creation, each draw and each decision. Scores
/// and completed features are not events: the fold derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Created(Setup),
    Drawn(TileKind),
    TilePlaced {
        pos: Pos,
        rotation: Rotation,
    },
    /// `None`: no follower this turn. A place is always written in its
    /// canonical name ([`crate::Game::legal_follower_places`]).
    FollowerPlaced(Option<Place>),
    /// The pending player moved a follower from Carcassonne onto a feature
    /// (C-6, C-9); the target is canonical.
    FollowerMoved(Target),
    /// The pending player passed.
    Passed,
    /// The pending player deployed to a quarter (C-3) and maybe moved the
    /// count (C-5): `count` is `None` when it stayed, never the quarter
    /// where it stood.
    DeployedToCarcassonne {
        quarter: Quarter,
        count: Option<Quarter>,
    },
    /// The seat's time ran out (T-5): it goes out (`forfeit`, T-6) or the
    /// server decides for it (`auto`, T-7).
    TimedOut(Seat),
    /// The seat resigned (T-8).
    Resigned(Seat),
    /// The seat aborted the game: it is over with no result (T-9).
    Aborted(Seat),
    /// The server was down from `down_since_ms` until this event: the
    /// pending decision's clock was charged only up to then (T-10).
    Resumed {
        down_since_ms: u64,
    },
}

/// The decision the game waits for, and whose it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pending {
    /// The next tile must be drawn, for `player`.
    Draw {
        player: Seat,
    },
    /// `player` must place `tile`.
    PlaceTile {
        player: Seat,
        tile: TileKind,
    },
    /// `player` may deploy a follower on the tile just placed.
    PlaceFollower {
        player: Seat,
    },
    /// The Count: `player` may move followers from Carcassonne onto the
    /// features `placer`'s tile completed, before they score (C-6).
    Redeploy {
        player: Seat,
        placer: Seat,
    },
    /// The Count: `player` placed a tile that made others score and not
    /// them, and may deploy a follower to Carcassonne (C-3).
    DeployToCarcassonne {
        player: Seat,
    },
    /// The Count: after the last tile, `player` may move one follower from
    /// Carcassonne onto the board, or pass and leave the round (C-9).
    FinalRound {
        player: Seat,
    },
    Finished,
}

impl Pending {
    /// Who must act.
    pub fn actor(&self) -> Option<Actor> {
        match *self {
            Pending::Draw { .. } => Some(Actor::Dealer),
            Pending::Finished => None,
            _ => self.player().map(Actor::Seat),
        }
    }

    /// The player whose turn it is.
    pub fn player(&self) -> Option<Seat> {
        match *self {
            Pending::Draw { player }
            | Pending::PlaceTile { player, .. }
            | Pending::PlaceFollower { player }
            | Pending::Redeploy { player, .. }
            | Pending::DeployToCarcassonne { player }
            | Pending::FinalRound { player } => Some(player),
            Pending::Finished => None,
        }
    }

    pub const fn name(&self) -> &'static str {
        match self {
            Pending::Draw { .. } => "draw",
            Pending::PlaceTile { .. } => "place a tile",
            Pending::PlaceFollower { .. } => "place a follower",
            Pending::Redeploy { .. } => "redeploy from Carcassonne",
            Pending::DeployToCarcassonne { .. } => "deploy to Carcassonne",
            Pending::FinalRound { .. } => "final round",
            Pending::Finished => "none (the game is over)",
        }
    }
}

/// A legal placement of the drawn tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Placement {
    pub pos: Pos,
    pub rotation: Rotation,
}

/// A feature, as effects name it: its kind, a place on its first tile, its
/// size in tiles and its pennants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FeatureRef {
    pub kind: FeatureKind,
    pub at: Pos,
    pub place: Place,
    pub tiles: u16,
    pub pennants: u16,
}

/// What a score is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scored {
    Feature(FeatureRef),
    /// The City of Carcassonne, a completed city for farmers (C-11).
    CityOfCarcassonne,
}

/// Points to every player of `players`, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScoreChange {
    pub players: Seats,
    /// Points each of `players` gets.
    pub points: u32,
    pub rule: RuleId,
    pub scored: Scored,
}

/// What an event caused, derived by the fold (never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Effect {
    /// The drawn tile fit nowhere and left the game (B-T2).
    Discarded(TileKind),
    /// The placement completed a feature (B-X1..B-X3).
    Completed(FeatureRef),
    Scored(ScoreChange),
    /// A follower went back to its owner's supply (B-T4).
    FollowerReturned {
        player: Seat,
        at: Pos,
        place: Place,
    },
    /// `seat` went out (T-6); `abandoned` is the tile it had drawn and not
    /// placed, which left the game.
    Out {
        seat: Seat,
        abandoned: Option<TileKind>,
    },
    /// The server took `command` for `seat`, whose time ran out (T-7).
    DecidedFor {
        seat: Seat,
        command: Command,
    },
    /// The game is over: after final scoring (B-E1), or when a seat went
    /// out and one was left (T-6), or aborted (T-9). [`crate::Game::ending`]
    /// says which.
    Finished,
}

/// Why a seat is out of the game (T-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutReason {
    /// Its time ran out under `forfeit` (T-5).
    OutOfTime,
    /// It resigned (T-8).
    Resigned,
}

/// How a finished game ended (T-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ending {
    /// The last tile was played and final scoring ran (B-E1).
    Normal,
    /// This seat ran out of time and one seat was left (T-6).
    OutOfTime(Seat),
    /// This seat resigned and one seat was left (T-6, T-8).
    Resigned(Seat),
    /// This seat aborted the game: no result (T-9).
    Aborted(Seat),
}

impl Ending {
    /// The name of the reason, as records write it.
    pub const fn name(self) -> &'static str {
        match self {
            Ending::Normal => "normal",
            Ending::OutOfTime(_) => "out_of_time",
            Ending::Resigned(_) => "resigned",
            Ending::Aborted(_) => "aborted",
        }
    }

    /// The seat the ending names (none for a normal end).
    pub const fn seat(self) -> Option<Seat> {
        match self {
            Ending::Normal => None,
            Ending::OutOfTime(s) | Ending::Resigned(s) | Ending::Aborted(s) => Some(s),
        }
    }
}

/// A follower on the board, or in a quarter of Carcassonne.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Follower {
    pub owner: Seat,
    pub at: Pos,
    pub place: Place,
    pub kind: FeatureKind,
}

/// How many followers each player has in each quarter of Carcassonne, and
/// where the count stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct City {
    /// `quarters[q][seat]`: followers of `seat` in quarter `q`.
    pub quarters: [[u8; MAX_PLAYERS]; 4],
    pub count: Quarter,
}

impl City {
    pub fn new() -> City {
        City {
            quarters: [[0; MAX_PLAYERS]; 4],
            count: Quarter::Castle,
        }
    }

    /// Followers of `seat` in Carcassonne.
    pub fn followers_of(&self, seat: Seat) -> u8 {
        self.quarters.iter().map(|q| q[seat.index()]).sum()
    }
}

impl Default for City {
    fn default() -> City {
        City::new()
    }
}

/// Why a command was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlayError {
    /// The command breaks a rule of `docs/rules.md`.
    #[error("{rule}: {message}")]
    Rule { rule: RuleId, message: String },
    #[error("it is {expected}'s decision, not {actor}'s")]
    NotYourTurn { expected: Actor, actor: Actor },
    #[error("the pending decision is \"{pending}\", not \"{command}\"")]
    WrongDecision {
        pending: &'static str,
        command: &'static str,
    },
    #[error("the game is over")]
    Finished,
    /// The pending decision's deadline has passed: from then on only its
    /// timeout may be stored (T-4, T-5).
    #[error("T-4: {seat}'s time ran out at {deadline_ms} (ms since the Unix epoch)")]
    OutOfTime { seat: Seat, deadline_ms: u64 },
}

impl PlayError {
    pub(crate) fn rule(rule: RuleId, message: impl Into<String>) -> PlayError {
        PlayError::Rule {
            rule,
            message: message.into(),
        }
    }

    /// The rule this error names, if it is a rule violation.
    pub fn rule_id(&self) -> Option<RuleId> {
        match self {
            PlayError::Rule { rule, .. } => Some(*rule),
            PlayError::OutOfTime { .. } => Some(id::T_4),
            _ => None,
        }
    }
}

/// Why a game cannot be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetupError {
    #[error("B-2: a game has 2 to 5 players, not {0}")]
    PlayerCount(usize),
    #[error("tile {0} is not a land tile and cannot be in the bag")]
    NotALandTile(TileKind),
    #[error("a bag holds at most {MAX_BAG} tiles, not {0}")]
    BagTooLarge(usize),
    #[error("T-1: {0}")]
    TimeControl(String),
}

impl SetupError {
    /// The part of the setup at fault, as a record field names it.
    pub fn field(&self) -> &'static str {
        match self {
            SetupError::PlayerCount(_) => "players",
            SetupError::NotALandTile(_) | SetupError::BagTooLarge(_) => "tiles",
            SetupError::TimeControl(_) => "time_control",
        }
    }
}
