//! The one table from errors to gRPC statuses. Every status carries a
//! message a person understands and an `ErrorInfo` (domain
//! `carcassonne.v1`) whose reason a program can branch on.

use std::collections::HashMap;

use carcassonne_engine::PlayError;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

pub const DOMAIN: &str = "carcassonne.v1";

/// The most characters of a client's input an error message quotes.
pub const MAX_QUOTE: usize = 32;
/// The longest status message, in bytes: the message travels twice in the
/// response headers (`grpc-message` and the details), and standard clients
/// refuse headers of more than a few KB.
pub const MAX_MESSAGE: usize = 512;

/// A client's input as an error message quotes it: escaped, and at most
/// [`MAX_QUOTE`] characters of it, with the whole length when cut.
pub fn quote(input: &str) -> String {
    let mut chars = input.chars();
    let head: String = chars.by_ref().take(MAX_QUOTE).collect();
    if chars.next().is_none() {
        format!("{head:?}")
    } else {
        format!("{head:?}... ({} bytes)", input.len())
    }
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn truncated(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max.saturating_sub(3);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    #[error("{field}: {message}")]
    InvalidArgument { field: String, message: String },
    /// A bot level no built-in bot has (`CreateGameRequest.bots`,
    /// `CreateTournamentRequest.house_bots`: the field).
    #[error(
        "{field}: no built-in bot has the level {}: \"random\", \"greedy\", \"search\" or \"search:N\" (N from 1 to {})",
        quote(.level),
        carcassonne_bots::MAX_ITERATIONS
    )]
    UnknownBotLevel { field: &'static str, level: String },
    #[error("{rule}: {message}")]
    Rule { rule: String, message: String },
    #[error("{0}")]
    WrongDecision(String),
    #[error("the game is over")]
    GameFinished,
    /// Only a finished game's seed may be revealed, in its archive.
    #[error(
        "games/{0} is still running: only a finished game can be archived (its seed is sealed until it ends)"
    )]
    GameNotFinished(String),
    /// A duplicate-bag game read by someone outside its seats while its
    /// tournament round runs: it would show other tables their tiles.
    #[error(
        "games/{0} draws the same tiles as other tables of its tournament round: only its players may see it until the round is over"
    )]
    Sealed(String),
    /// The pending decision's deadline passed before the action could be
    /// stored: the server stored the timeout instead (T-4, T-5).
    #[error(
        "T-4: seat {seat}'s time ran out at {deadline_ms} (ms since the Unix epoch): the action \
         came too late, and the server stored the timeout"
    )]
    OutOfTime { seat: u32, deadline_ms: u64 },
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
    /// A request id already met on another request (an Act of another
    /// seat, action or version; a CreateGame with other fields): a retry
    /// must repeat its request exactly.
    #[error(
        "request id {} was already used for another request: repeat a request exactly to get \
         its answer, or use a new id",
        quote(.0)
    )]
    RequestIdReused(String),
    /// A body that is no request of the method: not protobuf, cut short, or
    /// framed wrongly. The message is the decoder's.
    #[error("malformed request: {0}")]
    MalformedRequest(String),
    #[error("the request is larger than {method} accepts ({limit} bytes)")]
    RequestTooLarge { method: String, limit: usize },
    #[error("no player is named players/{}", quote(.0))]
    PlayerNotFound(String),
    #[error("the name {} is taken (names are unique regardless of case)", quote(.0))]
    NameTaken(String),
    #[error("registration needs the server's admin key")]
    RegistrationClosed,
    #[error(
        "this server registers at most {per_minute} players a minute without its admin key; retry in {retry_after_ms} ms"
    )]
    RegistrationRate { per_minute: u32, retry_after_ms: u64 },
    #[error("only the server's admin key may do this")]
    NotAdmin,
    #[error("only an organiser may do this")]
    NotOrganiser,
    #[error("the key is no registered player's: send \"authorization: Bearer <api key>\"")]
    UnknownKey,
    #[error("no tournament is named tournaments/{}", quote(.0))]
    TournamentNotFound(String),
    /// A tournament refuses what its state does not allow (withdrawing
    /// twice, exporting a running one, ...).
    #[error("{0}")]
    TournamentState(String),
    /// A game that would seat a registered player, or be rated, without
    /// the consent of every registered player in it.
    #[error(
        "{0}: a registered player is seated only by their own key, or by a challenge they accept \
         (ChallengeService), or by a tournament"
    )]
    ConsentRequired(String),
    #[error("no challenge is named challenges/{}", quote(.0))]
    ChallengeNotFound(String),
    /// A challenge refuses what its state does not allow.
    #[error("{0}")]
    Challenge(carcassonne_competition::ChallengeError),
    #[error(
        "a player may have at most {0} open challenges: cancel one, or wait for one to be taken up or lapse"
    )]
    TooManyChallenges(usize),
    #[error("{0}")]
    Exhausted(String),
    /// A streaming call (a watch, a replay, an export) past the streams
    /// open at once on the caller's connection or on the whole server.
    #[error("{}", too_many_streams(*.per_connection, *.limit))]
    TooManyStreams { per_connection: bool, limit: usize },
    /// A new game with bot seats while the running ones already commit
    /// all the bots' decision time the server has.
    #[error(
        "the server's bots are busy: its running bot games commit {committed_ms} ms of decisions of the \
         {capacity_ms} it can owe at once; try again later, or with lighter bots (random, greedy, search:N \
         with a smaller N)"
    )]
    BotsBusy { committed_ms: u64, capacity_ms: u64 },
    #[error("the server is shutting down")]
    ShuttingDown,
    #[error("the stored game is damaged: {0}")]
    Corrupt(String),
    /// The event store cannot write (a full disk, a failed write): nothing
    /// was stored, reads go on, a retry later may succeed. The cause is
    /// logged; the client is told only that it is the storage.
    #[error("storage unavailable: the server cannot write to its event store now; try again later")]
    StorageUnavailable(String),
    /// Our own bug or an IO failure: nothing to do for the client but retry
    /// later. The message is logged; the client sees a generic one.
    #[error("internal error")]
    Internal(String),
}

/// The message of [`ApiError::TooManyStreams`].
fn too_many_streams(per_connection: bool, limit: usize) -> String {
    if per_connection {
        format!(
            "this connection already has {limit} streams open (watches, replays, exports), the most \
             one connection may: end one first, or open this one on another connection"
        )
    } else {
        format!("the server has {limit} streams open, the most it serves at once: try again later")
    }
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
            PlayError::OutOfTime { seat, deadline_ms } => ApiError::OutOfTime {
                seat: u32::from(seat.0),
                deadline_ms,
            },
        }
    }

    fn code_and_reason(&self) -> (Code, &'static str) {
        match self {
            ApiError::InvalidArgument { .. } => (Code::InvalidArgument, "INVALID_ARGUMENT"),
            ApiError::UnknownBotLevel { .. } => (Code::InvalidArgument, "UNKNOWN_BOT_LEVEL"),
            ApiError::Rule { .. } => (Code::FailedPrecondition, "RULE_VIOLATION"),
            ApiError::WrongDecision(_) => (Code::FailedPrecondition, "WRONG_DECISION"),
            ApiError::GameFinished => (Code::FailedPrecondition, "GAME_FINISHED"),
            ApiError::GameNotFinished(_) => (Code::FailedPrecondition, "GAME_NOT_FINISHED"),
            ApiError::Sealed(_) => (Code::FailedPrecondition, "GAME_SEALED"),
            ApiError::OutOfTime { .. } => (Code::FailedPrecondition, "OUT_OF_TIME"),
            ApiError::StaleVersion { .. } => (Code::Aborted, "STALE_VERSION"),
            ApiError::MissingToken => (Code::Unauthenticated, "MISSING_TOKEN"),
            ApiError::BadToken => (Code::PermissionDenied, "BAD_TOKEN"),
            ApiError::NotYourTurn { .. } => (Code::PermissionDenied, "NOT_YOUR_TURN"),
            ApiError::NotFound(_) => (Code::NotFound, "GAME_NOT_FOUND"),
            ApiError::AlreadyExists(_) => (Code::AlreadyExists, "GAME_ALREADY_CREATED"),
            ApiError::RequestIdReused(_) => (Code::AlreadyExists, "REQUEST_ID_REUSED"),
            ApiError::MalformedRequest(_) => (Code::InvalidArgument, "MALFORMED_REQUEST"),
            ApiError::RequestTooLarge { .. } => (Code::ResourceExhausted, "REQUEST_TOO_LARGE"),
            ApiError::PlayerNotFound(_) => (Code::NotFound, "PLAYER_NOT_FOUND"),
            ApiError::NameTaken(_) => (Code::AlreadyExists, "NAME_TAKEN"),
            ApiError::RegistrationClosed => (Code::PermissionDenied, "REGISTRATION_CLOSED"),
            ApiError::RegistrationRate { .. } => (Code::ResourceExhausted, "REGISTRATION_RATE"),
            ApiError::NotAdmin => (Code::PermissionDenied, "NOT_ADMIN"),
            ApiError::NotOrganiser => (Code::PermissionDenied, "NOT_ORGANISER"),
            ApiError::UnknownKey => (Code::Unauthenticated, "UNKNOWN_KEY"),
            ApiError::TournamentNotFound(_) => (Code::NotFound, "TOURNAMENT_NOT_FOUND"),
            ApiError::TournamentState(_) => (Code::FailedPrecondition, "TOURNAMENT_STATE"),
            ApiError::ConsentRequired(_) => (Code::PermissionDenied, "CONSENT_REQUIRED"),
            ApiError::ChallengeNotFound(_) => (Code::NotFound, "CHALLENGE_NOT_FOUND"),
            ApiError::Challenge(error) => {
                use carcassonne_competition::ChallengeError as E;
                match error {
                    E::Closed(_) => (Code::FailedPrecondition, "CHALLENGE_CLOSED"),
                    E::Expired => (Code::FailedPrecondition, "CHALLENGE_EXPIRED"),
                    E::NotInvited(_) => (Code::PermissionDenied, "NOT_INVITED"),
                    E::AlreadySeated(_) => (Code::FailedPrecondition, "ALREADY_SEATED"),
                    E::NotAnOpenSeat(_) => (Code::FailedPrecondition, "SEAT_NOT_OPEN"),
                    E::NotChallenger => (Code::PermissionDenied, "NOT_CHALLENGER"),
                    E::ChallengerDeclines => (Code::FailedPrecondition, "CHALLENGER_DECLINES"),
                }
            }
            ApiError::TooManyChallenges(_) => (Code::ResourceExhausted, "TOO_MANY_CHALLENGES"),
            ApiError::Exhausted(_) => (Code::ResourceExhausted, "RESOURCE_EXHAUSTED"),
            ApiError::TooManyStreams { .. } => (Code::ResourceExhausted, "TOO_MANY_STREAMS"),
            ApiError::BotsBusy { .. } => (Code::ResourceExhausted, "BOTS_BUSY"),
            ApiError::ShuttingDown => (Code::Unavailable, "SHUTTING_DOWN"),
            ApiError::Corrupt(_) => (Code::DataLoss, "CORRUPT_GAME"),
            ApiError::StorageUnavailable(_) => (Code::Unavailable, "STORAGE_UNAVAILABLE"),
            ApiError::Internal(_) => (Code::Internal, "INTERNAL"),
        }
    }

    fn metadata(&self) -> HashMap<String, String> {
        let mut metadata = HashMap::new();
        match self {
            ApiError::InvalidArgument { field, .. } => {
                metadata.insert("field".to_owned(), field.clone());
            }
            ApiError::UnknownBotLevel { field, .. } => {
                metadata.insert("field".to_owned(), (*field).to_owned());
            }
            ApiError::Rule { rule, .. } => {
                metadata.insert("rule".to_owned(), rule.clone());
            }
            ApiError::OutOfTime { seat, deadline_ms } => {
                metadata.insert("seat".to_owned(), seat.to_string());
                metadata.insert("deadline_ms".to_owned(), deadline_ms.to_string());
                metadata.insert("rule".to_owned(), carcassonne_engine::id::T_4.as_str().to_owned());
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
            ApiError::PlayerNotFound(name) | ApiError::NameTaken(name) => {
                metadata.insert("name".to_owned(), format!("players/{name}"));
            }
            ApiError::TournamentNotFound(name) => {
                metadata.insert("name".to_owned(), format!("tournaments/{name}"));
            }
            ApiError::ChallengeNotFound(name) => {
                metadata.insert("name".to_owned(), format!("challenges/{name}"));
            }
            ApiError::TooManyChallenges(limit) => {
                metadata.insert("limit".to_owned(), limit.to_string());
            }
            ApiError::RequestTooLarge { limit, .. } => {
                metadata.insert("limit".to_owned(), limit.to_string());
            }
            ApiError::TooManyStreams {
                per_connection,
                limit,
            } => {
                metadata.insert("limit".to_owned(), limit.to_string());
                let scope = if *per_connection { "connection" } else { "server" };
                metadata.insert("scope".to_owned(), scope.to_owned());
            }
            ApiError::RegistrationRate { retry_after_ms, .. } => {
                metadata.insert("retry_after_ms".to_owned(), retry_after_ms.to_string());
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
        if let ApiError::StorageUnavailable(detail) = &error {
            tracing::warn!(%detail, "storage unavailable");
        }
        let metadata: HashMap<String, String> = error
            .metadata()
            .into_iter()
            .map(|(key, value)| (key, truncated(value, MAX_QUOTE * 4)))
            .collect();
        let details = ErrorDetails::with_error_info(reason, DOMAIN, metadata);
        let message = truncated(error.to_string(), MAX_MESSAGE);
        let mut status = Status::with_error_details(code, message, details);
        let rule = match &error {
            ApiError::Rule { rule, .. } => Some(rule.as_str()),
            ApiError::OutOfTime { .. } => Some(carcassonne_engine::id::T_4.as_str()),
            _ => None,
        };
        if let Some(Ok(value)) = rule.map(str::parse) {
            // The rule id in the plain metadata too, for clients without
            // rich error support.
            status.metadata_mut().insert("carcassonne-rule", value);
        }
        status
    }
}

/// The one table from gRPC codes to the HTTP API's answers: the HTTP
/// status (as `google.rpc.Code` documents them) and the code's name, so
/// that an HTTP client meets exactly the errors of gRPC.
pub fn http_of(code: Code) -> (u16, &'static str) {
    match code {
        Code::Ok => (200, "OK"),
        Code::Cancelled => (499, "CANCELLED"),
        Code::Unknown => (500, "UNKNOWN"),
        Code::InvalidArgument => (400, "INVALID_ARGUMENT"),
        Code::DeadlineExceeded => (504, "DEADLINE_EXCEEDED"),
        Code::NotFound => (404, "NOT_FOUND"),
        Code::AlreadyExists => (409, "ALREADY_EXISTS"),
        Code::PermissionDenied => (403, "PERMISSION_DENIED"),
        Code::ResourceExhausted => (429, "RESOURCE_EXHAUSTED"),
        Code::FailedPrecondition => (400, "FAILED_PRECONDITION"),
        Code::Aborted => (409, "ABORTED"),
        Code::OutOfRange => (400, "OUT_OF_RANGE"),
        Code::Unimplemented => (501, "UNIMPLEMENTED"),
        Code::Internal => (500, "INTERNAL"),
        Code::Unavailable => (503, "UNAVAILABLE"),
        Code::DataLoss => (500, "DATA_LOSS"),
        Code::Unauthenticated => (401, "UNAUTHENTICATED"),
    }
}

/// A status's `ErrorInfo`: its reason and metadata, if it has one.
pub fn error_info(status: &Status) -> Option<(String, HashMap<String, String>)> {
    let details = status.get_error_details();
    let info = details.error_info()?;
    Some((info.reason.clone(), info.metadata.clone()))
}
