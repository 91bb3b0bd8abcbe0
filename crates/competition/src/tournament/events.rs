//! What happens to a tournament: its events, and the commands that
//! produce them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::spec::Spec;
use crate::codec::{hex32, json_codec};
use crate::name::PlayerName;

/// One table of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// The seat order of the table's game 0 (game g rotates it left by g).
    pub players: Vec<PlayerName>,
    /// The ids of the table's games, `games_per_match` of them.
    pub games: Vec<String>,
}

/// How a tournament game ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GameResult {
    /// A played game: per seat, its rank (1 the best, equal ranks tied, as
    /// the engine's ranking gives) and its score.
    Ranked { ranks: Vec<u8>, scores: Vec<u32> },
    /// A game that did not count: no points for anyone.
    Aborted,
}

/// What happened to a tournament. `Debug` never prints the seed.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TournamentEvent {
    /// The tournament exists: its spec, its sealed seed (64 hex digits in
    /// JSON) and the pairing algorithm's version (`pairing/1`).
    Created {
        spec: Spec,
        #[serde(with = "hex32")]
        seed: [u8; 32],
        pairing: String,
    },
    /// Round `round` (1-based) is paired.
    RoundPaired {
        round: u32,
        tables: Vec<Table>,
        byes: Vec<PlayerName>,
    },
    GameEnded {
        game: String,
        result: GameResult,
    },
    /// The player plays no further round.
    Withdrawn {
        player: PlayerName,
    },
    Finished,
}

json_codec!(TournamentEvent);

impl fmt::Debug for TournamentEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TournamentEvent::Created {
                spec,
                seed: _,
                pairing,
            } => f
                .debug_struct("Created")
                .field("spec", spec)
                .field("seed", &format_args!("sealed"))
                .field("pairing", pairing)
                .finish(),
            TournamentEvent::RoundPaired { round, tables, byes } => f
                .debug_struct("RoundPaired")
                .field("round", round)
                .field("tables", tables)
                .field("byes", byes)
                .finish(),
            TournamentEvent::GameEnded { game, result } => f
                .debug_struct("GameEnded")
                .field("game", game)
                .field("result", result)
                .finish(),
            TournamentEvent::Withdrawn { player } => {
                f.debug_struct("Withdrawn").field("player", player).finish()
            }
            TournamentEvent::Finished => f.write_str("Finished"),
        }
    }
}

/// What may be asked of a running tournament.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TournamentCommand {
    /// Record how a paired game ended.
    RecordResult { game: String, result: GameResult },
    /// Take a participant out of every later round.
    Withdraw { player: PlayerName },
    /// Pair the next round, or finish, once the current round is complete.
    Advance,
}

/// Why a tournament command is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TournamentError {
    #[error("the tournament has finished")]
    Finished,
    #[error("no game {0} in this tournament")]
    UnknownGame(String),
    #[error("game {0} already has a result")]
    AlreadyRecorded(String),
    #[error("game {game} has {expected} seats, the result has {got}")]
    WrongSeatCount {
        game: String,
        expected: usize,
        got: usize,
    },
    #[error("game {game}: ranks run from 1 to the number of seats")]
    InvalidRanks { game: String },
    #[error("{0} is not a participant")]
    NotAParticipant(PlayerName),
    #[error("{0} has already withdrawn")]
    AlreadyWithdrawn(PlayerName),
}
