//! Requests on their way in, before any handler runs: a size cap per
//! method (what the method can need), and the statuses of requests that
//! fail there. tonic's decoder answers a body that is no message of the
//! method (not protobuf, cut short, framed wrongly) with INTERNAL, which
//! the API keeps for its own bugs; such a request is the client's mistake
//! and gets INVALID_ARGUMENT (reason MALFORMED_REQUEST). An oversize one
//! gets RESOURCE_EXHAUSTED (reason REQUEST_TOO_LARGE), where tonic says
//! OUT_OF_RANGE.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::BodyExt as _;
use tonic::body::Body;
use tonic::{Code, Status};

use crate::api::status::ApiError;

const KIB: usize = 1024;

/// The largest request body of each method, in bytes (the gRPC framing
/// included). A name, a request id and an action fit many times over in
/// 1 KiB; a creation's five names of 64 characters and a custom bag in
/// 4 KiB; a record with its event log to verify is as large as an export
/// may be.
const REQUEST_LIMITS: &[(&str, usize)] = &[
    ("/carcassonne.v1.GameService/CreateGame", 4 * KIB),
    ("/carcassonne.v1.GameService/GetGame", KIB),
    ("/carcassonne.v1.GameService/ListGames", KIB),
    ("/carcassonne.v1.GameService/GetLegalActions", KIB),
    ("/carcassonne.v1.GameService/Act", KIB),
    ("/carcassonne.v1.WatchService/WatchGame", KIB),
    ("/carcassonne.v1.WatchService/WatchServer", KIB),
    ("/carcassonne.v1.WatchService/ReplayGame", KIB),
    ("/carcassonne.v1.WatchService/GetGameAtVersion", KIB),
    ("/carcassonne.v1.WatchService/ExportGame", KIB),
    ("/carcassonne.v1.WatchService/ExportGameArchive", KIB),
    ("/carcassonne.v1.WatchService/GetServerKey", KIB),
    (
        "/carcassonne.v1.WatchService/VerifyGame",
        super::MAX_RESPONSE_BYTES,
    ),
    ("/carcassonne.v1.PlayerService/RegisterPlayer", KIB),
    ("/carcassonne.v1.PlayerService/GetPlayer", KIB),
    ("/carcassonne.v1.PlayerService/SetOrganiser", KIB),
    ("/carcassonne.v1.PlayerService/WatchPlayer", KIB),
    ("/carcassonne.v1.PlayerService/GetLeaderboard", KIB),
    ("/carcassonne.v1.PlayerService/GetRatingHistory", KIB),
    // 256 participants' names of up to 32 characters.
    ("/carcassonne.v1.TournamentService/CreateTournament", 16 * KIB),
    ("/carcassonne.v1.TournamentService/GetTournament", KIB),
    ("/carcassonne.v1.TournamentService/ListTournaments", KIB),
    ("/carcassonne.v1.TournamentService/GetStandings", KIB),
    ("/carcassonne.v1.TournamentService/WatchTournament", KIB),
    ("/carcassonne.v1.TournamentService/WithdrawPlayer", KIB),
    ("/carcassonne.v1.TournamentService/ExportTournamentArchive", KIB),
    // Five seats' names and a game's settings.
    ("/carcassonne.v1.ChallengeService/CreateChallenge", 4 * KIB),
    ("/carcassonne.v1.ChallengeService/GetChallenge", KIB),
    ("/carcassonne.v1.ChallengeService/ListChallenges", KIB),
    ("/carcassonne.v1.ChallengeService/AcceptChallenge", KIB),
    ("/carcassonne.v1.ChallengeService/DeclineChallenge", KIB),
    ("/carcassonne.v1.ChallengeService/CancelChallenge", KIB),
    ("/grpc.health.v1.Health/Check", KIB),
    ("/grpc.health.v1.Health/Watch", KIB),
];

/// The largest request body `path` (`/package.Service/Method`) accepts,
/// if it has a limit of its own.
pub fn request_limit(path: &str) -> Option<usize> {
    REQUEST_LIMITS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|&(_, limit)| limit)
}

/// The largest request of any method of a service (`/package.Service/`):
/// the service's message size limit, under which each method has its own.
pub fn largest_request(service: &str) -> usize {
    REQUEST_LIMITS
        .iter()
        .filter(|(path, _)| path.starts_with(service))
        .map(|&(_, limit)| limit)
        .max()
        .unwrap_or(super::MAX_RESPONSE_BYTES)
}

/// What tonic's decoder says (as INTERNAL) about a body that is no request:
/// a protobuf that does not decode, a body without a message or cut short
/// in one, a frame with a bad compression flag, or a grpc-web body that is
/// not base64 or not framed.
const DECODE_FAILURES: &[&str] = &[
    "failed to decode Protobuf message",
    "Missing request message.",
    "Unexpected EOF decoding stream.",
    "protocol error: received message with",
    "Error decompressing",
    "tonic-web: ",
];

/// The layer of [`Intake`].
#[derive(Debug, Clone, Copy, Default)]
pub struct IntakeLayer;

impl<S> tower::Layer<S> for IntakeLayer {
    type Service = Intake<S>;

    fn layer(&self, inner: S) -> Intake<S> {
        Intake { inner }
    }
}

/// Caps each request's body at its method's limit and answers requests that
/// fail before their handler with the client's codes.
#[derive(Debug, Clone)]
pub struct Intake<S> {
    inner: S,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<S, B> tower::Service<http::Request<Body>> for Intake<S>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<B>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    B: Send + 'static,
{
    type Response = http::Response<B>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<B>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let path = request.uri().path();
        let method = path.rsplit('/').next().unwrap_or_default().to_owned();
        let limit = request_limit(path);
        let request = match limit {
            Some(limit) => {
                let method = method.clone();
                request.map(|body| limited(body, method, limit))
            }
            None => request,
        };
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            if let Some(status) = client_error(&response, &method, limit) {
                replace_status(&mut response, status);
            }
            Ok(response)
        })
    }
}

/// A body that fails with REQUEST_TOO_LARGE once it passes `limit` bytes.
fn limited(body: Body, method: String, limit: usize) -> Body {
    Body::new(
        http_body_util::Limited::new(body, limit).map_err(move |error| -> BoxError {
            if error.is::<http_body_util::LengthLimitError>() {
                let method = method.clone();
                Box::new(Status::from(ApiError::RequestTooLarge { method, limit }))
            } else {
                error
            }
        }),
    )
}

/// The status a response should carry instead of tonic's, for a request
/// that failed in tonic's decoder. tonic keeps the status of a call that
/// failed before its body in the response's extensions (and headers).
fn client_error<B>(response: &http::Response<B>, method: &str, limit: Option<usize>) -> Option<Status> {
    let status = response.extensions().get::<Status>()?;
    match status.code() {
        Code::Internal if DECODE_FAILURES.iter().any(|m| status.message().starts_with(m)) => {
            Some(ApiError::MalformedRequest(status.message().to_owned()).into())
        }
        Code::OutOfRange if status.message().contains("message length too large") => Some(match limit {
            Some(limit) => ApiError::RequestTooLarge {
                method: method.to_owned(),
                limit,
            }
            .into(),
            // A service of tonic's without a limit of ours (reflection).
            None => Status::resource_exhausted(status.message()),
        }),
        _ => None,
    }
}

fn replace_status<B>(response: &mut http::Response<B>, status: Status) {
    let headers = response.headers_mut();
    headers.remove(Status::GRPC_MESSAGE);
    headers.remove(Status::GRPC_STATUS_DETAILS);
    if let Err(error) = status.add_header(headers) {
        // Our own statuses always make valid headers; keep tonic's code.
        tracing::error!(%error, "a status that makes no headers");
        return;
    }
    response.extensions_mut().insert(status);
}
