//! Game records, `carcassonne-record/1` of `docs/record-format.md`.
//!
//! - `json`: reading (with the JSON path of the first problem) and
//!   writing the JSON shape. This is the one boundary between record JSON
//!   and the engine: the raw shape becomes validated types there and
//!   nowhere else.
//! - `replay`: playing a record through the rules (with the turn index and
//!   rule id of the first illegal turn), and the checks of its claims.
//! - `write`: a game's events (and their times) written back as a record.

mod json;
mod replay;
mod write;

use std::fmt;

pub use replay::Replay;

use crate::clock::TimeControl;
use crate::geometry::{Place, Pos, Rotation};
use crate::model::{Ending, PlayError, Quarter, Seat, SetupError, Target};
use crate::rules::{RuleId, Rules, id};
use crate::tiles::TileKind;

/// The `format` of every record this module reads and writes.
pub const FORMAT: &str = "carcassonne-record/1";

/// A record, parsed and validated in shape (not yet replayed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub rules: Rules,
    pub players: Vec<String>,
    /// A bag of one's own (`tiles`), in catalogue order.
    pub tiles: Option<Vec<(TileKind, u16)>>,
    pub turns: Vec<Turn>,
    /// The moves of the Count's final round (C-9), when written.
    pub final_round: Option<Vec<FinalMove>>,
    /// The scores the record claims, checked by [`Record::verify`].
    pub final_scores: Option<Vec<u32>>,
    /// The game's time control (T-1); with one, `timeline` is required.
    pub time_control: Option<TimeControl>,
    /// When the game was created, in ms since the Unix epoch: the first
    /// decision's clock starts there (T-2). Required with a `timeline`.
    pub created_at: Option<u64>,
    /// The time of every decision and every interruption (timeouts,
    /// resignations, aborts, resumptions), in the order they were stored.
    pub timeline: Option<Vec<TimelineEntry>>,
    /// How the game ended, as the record claims it; checked by
    /// [`Record::verify`].
    pub result: Option<Outcome>,
}

/// One entry of a record's timeline: a decision that `turns` or
/// `final_round` describe, or an interruption, at its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimelineEntry {
    /// Ms since the Unix epoch.
    pub at: u64,
    /// `None`: the next decision of the turns, in order.
    pub interruption: Option<Interruption>,
}

/// What happened between decisions (T-5, T-8, T-9, T-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// The server timed out this seat's pending decision (T-5).
    Timeout(Seat),
    /// This seat resigned (T-8).
    Resign(Seat),
    /// This seat aborted the game (T-9).
    Abort(Seat),
    /// The server was down from this time until the entry's (T-10).
    Resume { down_since_ms: u64 },
}

impl fmt::Display for Interruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Interruption::Timeout(seat) => write!(f, "the timeout of {seat}"),
            Interruption::Resign(seat) => write!(f, "the resignation of {seat}"),
            Interruption::Abort(seat) => write!(f, "the abort by {seat}"),
            Interruption::Resume { down_since_ms } => {
                write!(f, "the resumption after a downtime from {down_since_ms} ms")
            }
        }
    }
}

/// How a game ended and its ranking (T-11), as a record claims them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub ending: Ending,
    /// Each seat's rank, 1 the best; `None` for an aborted game.
    pub ranks: Option<Vec<u8>>,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.ending.name())?;
        if let Some(seat) = self.ending.seat() {
            write!(f, " ({seat})")?;
        }
        if let Some(ranks) = &self.ranks {
            write!(f, ", ranks {ranks:?}")?;
        }
        Ok(())
    }
}

/// One drawn tile and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// The tile fit nowhere (B-T2).
    Discarded {
        tile: TileKind,
    },
    Placed(Placed),
    /// The tile was never placed: its player went out first, and it left
    /// the game (T-6), or the game ended first (T-6, T-9).
    Abandoned {
        tile: TileKind,
    },
}

/// A placed tile and the decisions of its turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    pub tile: TileKind,
    pub pos: Pos,
    pub rotation: Rotation,
    pub follower: Option<Place>,
    /// The Count's redeploy round (C-6), in the order made.
    pub redeploy: Vec<Redeploy>,
    /// The Count's deploy after scoring (C-3, C-5).
    pub carcassonne: Option<Deploy>,
}

impl Placed {
    pub fn new(tile: TileKind, pos: Pos, rotation: Rotation, follower: Option<Place>) -> Placed {
        Placed {
            tile,
            pos,
            rotation,
            follower,
            redeploy: Vec::new(),
            carcassonne: None,
        }
    }
}

/// A follower moved from Carcassonne onto a feature completed this turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redeploy {
    pub player: Seat,
    pub to: Target,
}

/// A follower deployed to a quarter, and where the count went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deploy {
    pub quarter: Quarter,
    pub count: Option<Quarter>,
}

/// One decision of the final round (C-9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinalMove {
    Move { player: Seat, to: Target },
    Pass { player: Seat },
}

impl FinalMove {
    pub fn player(&self) -> Seat {
        match *self {
            FinalMove::Move { player, .. } | FinalMove::Pass { player } => player,
        }
    }
}

impl Turn {
    pub fn tile(&self) -> TileKind {
        match self {
            Turn::Discarded { tile } | Turn::Abandoned { tile } => *tile,
            Turn::Placed(placed) => placed.tile,
        }
    }
}

/// Why a record was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not JSON, or not of the record's shape: the JSON path of the problem.
    #[error("{path}: {message}")]
    Shape { path: String, message: String },
    /// A turn breaks a rule; errors of `final_round` have the index equal
    /// to the number of turns.
    #[error("turn {turn}: {rule}: {message}")]
    Rule {
        turn: usize,
        rule: RuleId,
        message: String,
    },
    /// A turn the rules cannot even ask for (a decision out of place).
    #[error("turn {turn}: {message}")]
    Turn { turn: usize, message: String },
    #[error("{field}: {0}", field = .0.field())]
    Setup(#[from] SetupError),
    #[error("final_scores: the record claims {claimed:?}, but its turns score {actual:?}")]
    WrongScores { claimed: Vec<u32>, actual: Vec<u32> },
    /// `actual` is `None` for a game still running.
    #[error(
        "result: the record claims {claimed}, but its turns give {}",
        actual.as_ref().map_or_else(|| "a game in progress".to_owned(), Outcome::to_string)
    )]
    WrongResult {
        claimed: Outcome,
        actual: Option<Outcome>,
    },
}

impl RecordError {
    fn shape(path: impl Into<String>, message: impl Into<String>) -> RecordError {
        RecordError::Shape {
            path: path.into(),
            message: message.into(),
        }
    }

    fn rule(turn: usize, rule: RuleId, message: impl Into<String>) -> RecordError {
        RecordError::Rule {
            turn,
            rule,
            message: message.into(),
        }
    }

    fn play(turn: usize, error: PlayError) -> RecordError {
        match error {
            PlayError::Rule { rule, message } => RecordError::Rule { turn, rule, message },
            other => RecordError::Turn {
                turn,
                message: other.to_string(),
            },
        }
    }

    /// An error of the decision or interruption of `timeline[index]`, `what`
    /// at `at`: the time rules (T-…) name the entry; the others read as
    /// they would without a timeline.
    fn timed(turn: usize, index: usize, what: &str, at: u64, error: PlayError) -> RecordError {
        match error {
            PlayError::Rule { rule, message } if rule.as_str().starts_with("T-") => RecordError::Rule {
                turn,
                rule,
                message: format!("timeline[{index}]: {message}"),
            },
            PlayError::OutOfTime { seat, deadline_ms } => RecordError::Rule {
                turn,
                rule: id::T_4,
                message: format!(
                    "timeline[{index}]: {what} at {at} ms comes at or after {seat}'s deadline, {deadline_ms} ms: only its timeout may come then"
                ),
            },
            PlayError::Finished => RecordError::Turn {
                turn,
                message: format!("timeline[{index}]: {what}: the game is over"),
            },
            other => RecordError::play(turn, other),
        }
    }
}
