//! The one error type of the store.
//!
//! Variants fall in two groups, told apart by [`StoreError::is_caller_error`]:
//! what the caller did wrong or must react to (a conflict, a bad id, a game
//! that does not exist, an argument out of bounds), and what went wrong on
//! our side (IO, a damaged envelope). The gRPC layer maps the first group to
//! status codes its clients act on and the second to `UNAVAILABLE` (the
//! storage failed: IO, a full disk) or `DATA_LOSS` (a damaged envelope).

use std::fmt;

/// Where a damaged envelope was found: the game and the sequence number of
/// the first event that failed its checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    /// The game id as read (it may itself be the damaged part).
    pub game: String,
    /// The sequence number of the first bad event of that game.
    pub seq: u64,
    /// What check failed, for a human.
    pub detail: String,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "game {:?} event {}: {}", self.game, self.seq, self.detail)
    }
}

/// Everything a store call can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Optimistic concurrency: the caller expected the game to stand at
    /// `expected` but another append got there first. Nothing was written.
    #[error("conflict on game {game}: expected sequence {expected}, the game is at {actual}")]
    Conflict {
        /// The game appended to.
        game: String,
        /// The last sequence number the caller had seen.
        expected: u64,
        /// The game's last sequence number now.
        actual: u64,
    },
    /// A game id that is empty, too long or not printable ASCII.
    #[error("invalid game id: {0}")]
    InvalidGameId(String),
    /// A request id that is too long or not printable ASCII.
    #[error("invalid request id: {0}")]
    InvalidRequestId(String),
    /// An argument out of bounds: an empty append, a payload too large, a
    /// malformed page token.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The game has no events.
    #[error("game {0} not found")]
    NotFound(String),
    /// A stored envelope failed its checks (hash, chain, framing): the data
    /// on disk is damaged or was tampered with.
    #[error("corrupt envelope: game {game:?} event {seq}: {detail}")]
    Corrupt {
        /// The game as read.
        game: String,
        /// The sequence number of the first bad event.
        seq: u64,
        /// What check failed.
        detail: String,
    },
    /// The global index (position → event) is damaged at `position`.
    #[error("corrupt global index at position {position}: {detail}")]
    CorruptIndex {
        /// The global position whose entry is bad.
        position: u64,
        /// What check failed.
        detail: String,
    },
    /// The storage engine or the file system failed.
    #[error("storage IO error: {0}")]
    Io(#[from] std::io::Error),
    /// A copy of a whole store was asked into a store that already holds
    /// events (`PgStore::import_from`); nothing was written.
    #[error("the target store is not empty: {0}")]
    NotEmpty(String),
    /// The store cannot take appends now: its disk is (nearly) full, a
    /// write or sync failed and stopped it, or it was closed. Reads of what
    /// is stored keep working. The reason names the cause, for the log.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
}

impl StoreError {
    /// True for errors the caller caused or must handle (conflict, bad id,
    /// not found, bad argument); false for failures of the store itself.
    pub fn is_caller_error(&self) -> bool {
        match self {
            StoreError::Conflict { .. }
            | StoreError::InvalidGameId(_)
            | StoreError::InvalidRequestId(_)
            | StoreError::InvalidArgument(_)
            | StoreError::NotFound(_)
            | StoreError::NotEmpty(_) => true,
            StoreError::Corrupt { .. }
            | StoreError::CorruptIndex { .. }
            | StoreError::Io(_)
            | StoreError::Unavailable(_) => false,
        }
    }

    pub(crate) fn corrupt(game: &str, seq: u64, detail: impl Into<String>) -> Self {
        StoreError::Corrupt {
            game: game.to_owned(),
            seq,
            detail: detail.into(),
        }
    }

    /// The damaged event, if this error is about one.
    pub fn corruption(&self) -> Option<Corruption> {
        match self {
            StoreError::Corrupt { game, seq, detail } => Some(Corruption {
                game: game.clone(),
                seq: *seq,
                detail: detail.clone(),
            }),
            _ => None,
        }
    }
}

impl From<sled::Error> for StoreError {
    fn from(error: sled::Error) -> Self {
        // sled's own `Corruption` carries a disk offset, not an event: the
        // callers that know which game they were reading turn it into
        // `Corrupt` (see `sled_store::read`); elsewhere it is an IO error.
        StoreError::Io(std::io::Error::other(error))
    }
}

/// The result type of every store call.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
