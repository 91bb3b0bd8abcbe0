//! HTTP on the server's own port, beside gRPC: the web page and its
//! assets, a JSON API, server-sent event streams and board pictures.
//!
//! Nothing here decides what a caller may see or how a call fails: every
//! JSON endpoint and stream builds a `tonic::Request` (with the caller's
//! `Authorization` header as its metadata) and calls the very service
//! method a gRPC client calls, then writes its answer as the canonical
//! proto3 JSON of the same message (pbjson). Errors are the gRPC statuses,
//! turned into HTTP statuses by the one table of `api::status`. The
//! pictures load a version through `server::audience`, as GetGameAtVersion
//! does. A seat's token travels only in the `Authorization` header, never
//! in a URL, and is never logged.

mod api;
mod board;
mod error;
mod grpc_web;
mod page;
mod sse;

use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use http::HeaderValue;

pub use self::grpc_web::{GrpcWebOrHttpLayer, is_grpc};
use crate::games::Games;
use crate::server::{GameService, TournamentService, WatchService};

/// What the handlers share: the services the gRPC calls are served by.
pub struct Http {
    game: Arc<GameService>,
    watch: Arc<WatchService>,
    tournament: Arc<TournamentService>,
    health: tonic_health::server::HealthService,
    games: Arc<Games>,
    pictures: board::Pictures,
    event_json: sse::EventJson,
}

impl Http {
    pub fn new(
        game: Arc<GameService>,
        watch: Arc<WatchService>,
        tournament: Arc<TournamentService>,
        health: tonic_health::server::HealthService,
        games: Arc<Games>,
    ) -> Http {
        Http {
            game,
            watch,
            tournament,
            health,
            games,
            pictures: board::Pictures::default(),
            event_json: sse::EventJson::default(),
        }
    }
}

/// What the page may load: its own files and answers only (no inline
/// script, nothing from elsewhere), pictures also from `data:` and `blob:`
/// URLs (the record's download), no plugins, and no framing by other
/// sites. On every answer ([`SecurityHeadersLayer`]), so that a picture
/// or JSON opened on its own is as confined as the page.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data: blob:; \
     object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

/// The HTTP routes, to merge with the gRPC services' router. Unknown paths
/// are 404 (gRPC requests to unknown methods stay UNIMPLEMENTED).
///
/// Answers are gzipped for a client that accepts it (the page's scripts,
/// JSON and board pictures shrink several times), except event streams,
/// whose events must leave at once rather than wait for a compressor's
/// block, PNGs, which are compressed already, and archives, which are
/// built once and kept: compressing each download again would cost a
/// flood of downloads the CPU their cache saves.
pub fn router(http: Arc<Http>) -> Router {
    use tower_http::compression::predicate::{NotForContentType, Predicate as _, SizeAbove};
    let worth_compressing = SizeAbove::new(1024)
        .and(NotForContentType::SSE)
        .and(NotForContentType::const_new("image/png"))
        .and(NotForContentType::const_new("application/x-tar"));
    Router::new()
        .route("/", get(page::index))
        .route("/games/{id}", get(page::index))
        .route("/tournaments/{id}", get(page::index))
        .route("/assets/{*file}", get(page::asset))
        .route("/api/health", get(api::health))
        .route("/api/games", get(api::list_games))
        .route("/api/games/{id}", get(api::get_game))
        .route("/api/games/{id}/export", get(api::export_game))
        .route("/api/games/{id}/verify", get(api::verify_game))
        .route("/api/games/{id}/archive", get(api::game_archive))
        .route("/api/games/{id}/watch", get(sse::watch_game))
        .route("/api/server/watch", get(sse::watch_server))
        .route("/api/tournaments", get(api::list_tournaments))
        .route("/api/tournaments/{id}", get(api::get_tournament))
        .route("/api/tournaments/{id}/standings", get(api::get_standings))
        .route("/api/tournaments/{id}/archive", get(api::tournament_archive))
        .route("/api/tournaments/{id}/watch", get(sse::watch_tournament))
        .route("/api/server/key", get(api::server_key))
        .route("/games/{id}/board.svg", get(board::svg))
        .route("/games/{id}/board.png", get(board::png))
        .with_state(http)
        .layer(tower_http::compression::CompressionLayer::new().compress_when(worth_compressing))
}

/// Whether the route of `path` streams (an event stream or an archive's
/// download): `server::streams` bounds these. Every event stream's route
/// ends in `/watch`.
pub fn streams(path: &str) -> bool {
    path.starts_with("/api/") && (path.ends_with("/watch") || path.ends_with("/archive"))
}

/// A failed call's HTTP answer (its JSON error), for a layer that refuses
/// a request before its route.
pub fn failed(status: tonic::Status) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    error::Failed(status).into_response()
}

/// The security headers of every answer (the page, JSON, pictures, event
/// streams, gRPC, 404s, CORS preflights): a layer around the whole
/// server, so that no answer lacks them.
const SECURITY_HEADERS: [(http::HeaderName, &str); 3] = [
    (http::header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
    (http::header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    (http::header::REFERRER_POLICY, "same-origin"),
];

/// The layer of [`SecurityHeaders`].
#[derive(Debug, Clone, Copy, Default)]
pub struct SecurityHeadersLayer;

impl<S> tower::Layer<S> for SecurityHeadersLayer {
    type Service = SecurityHeaders<S>;

    fn layer(&self, inner: S) -> SecurityHeaders<S> {
        SecurityHeaders { inner }
    }
}

/// Sets [`SECURITY_HEADERS`] on every answer.
#[derive(Debug, Clone)]
pub struct SecurityHeaders<S> {
    inner: S,
}

impl<S, Req, B> tower::Service<Req> for SecurityHeaders<S>
where
    S: tower::Service<Req, Response = http::Response<B>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<B>;
    type Error = S::Error;
    type Future =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<http::Response<B>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Req) -> Self::Future {
        let response = self.inner.call(request);
        Box::pin(async move {
            let mut response = response.await?;
            for (name, value) in SECURITY_HEADERS {
                response
                    .headers_mut()
                    .insert(name, HeaderValue::from_static(value));
            }
            Ok(response)
        })
    }
}

/// CORS for pages of other origins, which call the JSON API and gRPC
/// (grpc-web) as the page does: any origin, never with credentials (the
/// server has no cookies: a caller proves who it is with a bearer token
/// in `Authorization`, which a page must set itself), the request headers
/// those calls need, and the gRPC status headers exposed, so that a page
/// reads a failed call's code and reason.
pub fn cors() -> tower_http::cors::CorsLayer {
    use http::{HeaderName, Method};
    use tower_http::cors::{AllowOrigin, CorsLayer};
    CorsLayer::new()
        .allow_origin(AllowOrigin::any())
        .allow_methods([Method::GET, Method::HEAD, Method::POST])
        .allow_headers([
            http::header::AUTHORIZATION,
            http::header::CONTENT_TYPE,
            http::header::ACCEPT,
            http::header::IF_NONE_MATCH,
            HeaderName::from_static("last-event-id"),
            HeaderName::from_static("x-grpc-web"),
            HeaderName::from_static("x-user-agent"),
            HeaderName::from_static("grpc-timeout"),
            HeaderName::from_static("grpc-accept-encoding"),
            HeaderName::from_static("grpc-encoding"),
        ])
        .expose_headers([
            HeaderName::from_static("grpc-status"),
            HeaderName::from_static("grpc-message"),
            HeaderName::from_static("grpc-status-details-bin"),
            http::header::ETAG,
        ])
        .max_age(std::time::Duration::from_secs(2 * 60 * 60))
}

/// The request's `Authorization` header as gRPC metadata on `message`:
/// the service reads the seat token exactly as from a gRPC call.
fn grpc_request<T>(headers: &http::HeaderMap, message: T) -> tonic::Request<T> {
    let mut only = http::HeaderMap::new();
    if let Some(value) = headers.get(http::header::AUTHORIZATION) {
        only.insert(http::header::AUTHORIZATION, value.clone());
    }
    tonic::Request::from_parts(
        tonic::metadata::MetadataMap::from_headers(only),
        tonic::Extensions::default(),
        message,
    )
}

/// The query string's parameters, decoded; a parameter given twice keeps
/// its first value.
fn query(raw: Option<&str>) -> std::collections::HashMap<String, String> {
    let mut params = std::collections::HashMap::new();
    for (key, value) in form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
        params
            .entry(key.into_owned())
            .or_insert_with(|| value.into_owned());
    }
    params
}

/// A game's name from the id in a path.
fn game_name(id: &str) -> String {
    format!("games/{id}")
}

/// A tournament's name from the id in a path.
fn tournament_name(id: &str) -> String {
    format!("tournaments/{id}")
}

/// What answers a path no route knows: UNIMPLEMENTED to a gRPC call (as
/// tonic answers an unknown method), 404 to anything else.
pub async fn fallback(request: http::Request<axum::body::Body>) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    if grpc_web::is_grpc(&request) {
        return tonic::Status::unimplemented("").into_http::<axum::body::Body>();
    }
    let path = crate::api::status::quote(request.uri().path());
    error::not_found(format!("nothing is served at {path}")).into_response()
}
