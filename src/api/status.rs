//! The one table from errors to gRPC statuses. Every status carries a
//! message a person understands and an `ErrorInfo` (domain
//! `carcassonne.v1`) whose reason a program can branch on.

use std::collections::HashMap;

use carcassonne_engine::PlayError;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

pub const DOMAIN: &str = "carcassonne.v1";

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    #[error("{field}: {message}")]
    InvalidArgument { field: String, message: String },
    #[error("{rule}: {message}")]
    Rule { rule: String, message: String },
    #[error("{0}")]
    WrongDecision(String),
    #[error("the game is over")]
    GameFinished,
    #[error("the game is at version {actual}, not {expected}: reload it and decide again")]
    StaleVersion { expected: i64, actual: i64 },
    #[error("no seat token: send \"authorization: Bearer <token>\" in the metadata")]
    MissingToken,
    #[error("the token does not belong to a seat of this game")]
    BadToken,
    #[error("it is seat {expected}'s decision, not seat {seat}'s")]
    NotYourTurn { seat: u32, expected: u32 },
    #[error("no game is named games/{0}")]
    NotFound(String),
    /// A retried creation: the game exists, and its tokens were shown once.
    #[error("{0} was already created by this request id; its seat tokens were shown once")]
    AlreadyExists(String),
    /// A creation's request id sent again with other fields.
    #[error("{0}")]
    RequestIdReused(String),
    #[error("{0}")]
    Exhausted(String),
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("the stored game is damaged: {0}")]
    Corrupt(String),
    /// Our own bug or an IO failure: nothing to do for the client but retry
    /// later. The message is logged; the client sees a generic one.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    /// An engine refusal, from the point of view of `seat`.
    pub fn from_play(error: PlayError) -> ApiError {
        match error {
            PlayError::Rule { rule, message } => ApiError::Rule {
                rule: rule.as_str().to_owned(),
                message,
            },
            PlayError::NotYourTurn { expected, actor } => {
                let seat_of = |a: carcassonne_engine::Actor| match a {
                    carcassonne_engine::Actor::Seat(s) => u32::from(s.0),
                    carcassonne_engine::Actor::Dealer => u32::MAX,
                };
                ApiError::NotYourTurn {
                    seat: seat_of(actor),
                    expected: seat_of(expected),
                }
            }
            PlayError::WrongDecision { .. } => ApiError::WrongDecision(error.to_string()),
            PlayError::Finished => ApiError::GameFinished,
        }
    }

    fn code_and_reason(&self) -> (Code, &'static str) {
        match self {
            ApiError::InvalidArgument { .. } => (Code::InvalidArgument, "INVALID_ARGUMENT"),
            ApiError::Rule { .. } => (Code::FailedPrecondition, "RULE_VIOLATION"),
            ApiError::WrongDecision(_) => (Code::FailedPrecondition, "WRONG_DECISION"),
            ApiError::GameFinished => (Code::FailedPrecondition, "GAME_FINISHED"),
            ApiError::StaleVersion { .. } => (Code::Aborted, "STALE_VERSION"),
            ApiError::MissingToken => (Code::Unauthenticated, "MISSING_TOKEN"),
            ApiError::BadToken => (Code::PermissionDenied, "BAD_TOKEN"),
            ApiError::NotYourTurn { .. } => (Code::PermissionDenied, "NOT_YOUR_TURN"),
            ApiError::NotFound(_) => (Code::NotFound, "GAME_NOT_FOUND"),
            ApiError::AlreadyExists(_) => (Code::AlreadyExists, "GAME_ALREADY_CREATED"),
            ApiError::RequestIdReused(_) => (Code::AlreadyExists, "REQUEST_ID_REUSED"),
            ApiError::Exhausted(_) => (Code::ResourceExhausted, "RESOURCE_EXHAUSTED"),
            ApiError::ShuttingDown => (Code::Unavailable, "SHUTTING_DOWN"),
            ApiError::Corrupt(_) => (Code::DataLoss, "CORRUPT_GAME"),
            ApiError::Internal(_) => (Code::Internal, "INTERNAL"),
        }
    }

    fn metadata(&self) -> HashMap<String, String> {
        let mut metadata = HashMap::new();
        match self {
            ApiError::InvalidArgument { field, .. } => {
                metadata.insert("field".to_owned(), field.clone());
            }
            ApiError::Rule { rule, .. } => {
                metadata.insert("rule".to_owned(), rule.clone());
            }
            ApiError::StaleVersion { actual, .. } => {
                metadata.insert("version".to_owned(), actual.to_string());
            }
            ApiError::NotYourTurn { expected, .. } => {
                metadata.insert("seat".to_owned(), expected.to_string());
            }
            ApiError::AlreadyExists(name) => {
                metadata.insert("name".to_owned(), name.clone());
            }
            _ => {}
        }
        metadata
    }
}

impl From<ApiError> for Status {
    fn from(error: ApiError) -> Status {
        let (code, reason) = error.code_and_reason();
        if let ApiError::Internal(detail) = &error {
            tracing::error!(%detail, "internal error");
        }
        let details = ErrorDetails::with_error_info(reason, DOMAIN, error.metadata());
        let mut status = Status::with_error_details(code, error.to_string(), details);
        if let ApiError::Rule { rule, .. } = &error
            && let Ok(value) = rule.parse()
        {
            // The rule id in the plain metadata too, for clients without
            // rich error support.
            status.metadata_mut().insert("carcassonne-rule", value);
        }
        status
    }
}
