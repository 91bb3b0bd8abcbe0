//! Game records, `carcassonne-record/1` of `docs/record-format.md`.
//!
//! - `json`: reading (with the JSON path of the first problem) and
//!   writing the JSON shape. This is the one boundary between record JSON
//!   and the engine: the raw shape becomes validated types there and
//!   nowhere else.
//! - `replay`: playing a record through the rules (with the turn index and
//!   rule id of the first illegal turn), and writing a game's events back
//!   as a record.

mod json;
mod replay;

pub use replay::Replay;

use crate::geometry::{Place, Pos, Rotation};
use crate::model::{PlayError, Quarter, Seat, SetupError, Target};
use crate::rules::{RuleId, Rules};
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
}

/// One drawn tile and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// The tile fit nowhere (B-T2).
    Discarded {
        tile: TileKind,
    },
    Placed(Placed),
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
            Turn::Discarded { tile } => *tile,
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
}
