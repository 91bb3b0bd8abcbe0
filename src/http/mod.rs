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
use tower_http::set_header::SetResponseHeaderLayer;

pub use self::grpc_web::GrpcWebOrHttpLayer;
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
/// sites. On every answer, so that a picture or JSON opened on its own is
/// as confined as the page.
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
        .layer(SetResponseHeaderLayer::overriding(
            http::header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            http::header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            http::header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
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
