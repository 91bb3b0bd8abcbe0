//! The JSON endpoints: each calls the gRPC method of the same name and
//! answers its response message as canonical proto3 JSON.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use serde::Serialize;

use super::error::{self, Failed};
use super::{Http, game_name, grpc_request, query, tournament_name};
use crate::proto::game_service_server::GameService as _;
use crate::proto::tournament_service_server::TournamentService as _;
use crate::proto::watch_service_server::WatchService as _;
use crate::proto::{self, GameStatus};

/// `message` as JSON. What a seat's token showed is the caller's alone.
pub fn json<T: Serialize>(headers: &HeaderMap, message: &T) -> Response {
    let cache = if headers.contains_key(http::header::AUTHORIZATION) {
        "private, no-cache"
    } else {
        "no-cache"
    };
    match serde_json::to_string(message) {
        Ok(body) => (
            [
                (http::header::CONTENT_TYPE, "application/json"),
                (http::header::CACHE_CONTROL, cache),
                (http::header::VARY, "authorization"),
            ],
            body,
        )
            .into_response(),
        Err(error) => {
            Failed::from(crate::api::status::ApiError::Internal(format!("json: {error}"))).into_response()
        }
    }
}

/// `GET /api/health`: the gRPC health of the whole server; 503 unless
/// SERVING.
pub async fn health(State(http): State<Arc<Http>>) -> Response {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_server::Health as _;
    let request = tonic::Request::new(tonic_health::pb::HealthCheckRequest::default());
    let status = match http.health.check(request).await {
        Ok(answer) => ServingStatus::try_from(answer.into_inner().status).unwrap_or(ServingStatus::Unknown),
        Err(_) => ServingStatus::Unknown,
    };
    let code = if status == ServingStatus::Serving {
        http::StatusCode::OK
    } else {
        http::StatusCode::SERVICE_UNAVAILABLE
    };
    let body = format!("{{\"status\":\"{}\"}}", status.as_str_name());
    (
        code,
        [
            (http::header::CONTENT_TYPE, "application/json"),
            (http::header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

/// A listing's `status`: the enum's name (`GAME_STATUS_RUNNING`), its
/// short name (`running`), or its number.
fn status_filter(text: &str) -> Result<i32, Failed> {
    let upper = text.trim().to_ascii_uppercase();
    if let Ok(number) = upper.parse() {
        return Ok(number);
    }
    GameStatus::from_str_name(&upper)
        .or_else(|| GameStatus::from_str_name(&format!("GAME_STATUS_{upper}")))
        .map(|status| status as i32)
        .ok_or_else(|| {
            error::invalid(
                "status",
                format!(
                    "running, finished or unspecified, not {}",
                    crate::api::status::quote(text)
                ),
            )
        })
}

/// `GET /api/games?status=&page_size=&page_token=`: ListGames.
pub async fn list_games(
    State(http): State<Arc<Http>>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    let params = query(raw.as_deref());
    let request = proto::ListGamesRequest {
        status: params
            .get("status")
            .map(|s| status_filter(s))
            .transpose()?
            .unwrap_or(0),
        page_size: error::integer(&params, "page_size")?.unwrap_or(0),
        page_token: params.get("page_token").cloned().unwrap_or_default(),
    };
    let answer = http.game.list_games(grpc_request(&headers, request)).await?;
    Ok(json(&headers, answer.get_ref()))
}

/// `GET /api/games/{id}`: GetGame; with `?version=N`, GetGameAtVersion.
pub async fn get_game(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    let params = query(raw.as_deref());
    let name = game_name(&id);
    match error::integer::<i64>(&params, "version")? {
        None => {
            let request = proto::GetGameRequest { name };
            let answer = http.game.get_game(grpc_request(&headers, request)).await?;
            Ok(json(&headers, answer.get_ref()))
        }
        Some(version) => {
            let request = proto::GetGameAtVersionRequest { name, version };
            let answer = http
                .watch
                .get_game_at_version(grpc_request(&headers, request))
                .await?;
            Ok(json(&headers, answer.get_ref()))
        }
    }
}

/// `GET /api/games/{id}/export`: ExportGame.
pub async fn export_game(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failed> {
    let export = export(&http, &id, &headers).await?;
    Ok(json(&headers, &export))
}

async fn export(http: &Http, id: &str, headers: &HeaderMap) -> Result<proto::ExportGameResponse, Failed> {
    let request = proto::ExportGameRequest { name: game_name(id) };
    Ok(http
        .watch
        .export_game(grpc_request(headers, request))
        .await?
        .into_inner())
}

/// `GET /api/games/{id}/verify?seed_sha256=`: the game's export (as the
/// caller may see it) checked by VerifyGame: the record, and for a
/// finished game its event log against the revealed seed, and against the
/// commitment `seed_sha256` if the caller gives one (the one it was shown
/// while the game ran; this server's own would be computed from the very
/// seed it exports, so without one the answer's `commitmentChecked` is
/// false).
pub async fn verify_game(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    let commitment = query(raw.as_deref()).remove("seed_sha256").unwrap_or_default();
    let export = export(&http, &id, &headers).await?;
    let request = proto::VerifyGameRequest {
        record_json: export.record_json,
        events: export.events,
        seed: export.seed,
        name: game_name(&id),
        seed_sha256: commitment,
    };
    let answer = http.watch.verify_game(grpc_request(&headers, request)).await?;
    Ok(json(&headers, answer.get_ref()))
}

/// `GET /api/games/{id}/archive`: ExportGameArchive, the archive's chunks
/// joined into one tar (`application/x-tar`), as a file to save.
pub async fn game_archive(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failed> {
    use tokio_stream::StreamExt as _;
    let request = proto::ExportGameArchiveRequest { name: game_name(&id) };
    let chunks = http
        .watch
        .export_game_archive(grpc_request(&headers, request))
        .await?
        .into_inner()
        .map(|chunk| chunk.map(|c| bytes::Bytes::from(c.chunk)));
    Ok(tar_download(&id, chunks))
}

/// `GET /api/tournaments/{id}/archive`: ExportTournamentArchive, as one
/// `application/x-tar` file.
pub async fn tournament_archive(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failed> {
    use tokio_stream::StreamExt as _;
    let request = proto::ExportTournamentArchiveRequest {
        name: tournament_name(&id),
    };
    let chunks = http
        .tournament
        .export_tournament_archive(grpc_request(&headers, request))
        .await?
        .into_inner()
        .map(|chunk| chunk.map(|c| bytes::Bytes::from(c.chunk)));
    Ok(tar_download(&id, chunks))
}

/// An archive's chunks as the download of `{id}.tar`.
fn tar_download(
    id: &str,
    chunks: impl tokio_stream::Stream<Item = Result<bytes::Bytes, tonic::Status>> + Send + 'static,
) -> Response {
    // The id named a game or a tournament that exists: printable ASCII
    // without spaces.
    let file = format!("attachment; filename=\"{}.tar\"", id.replace(['"', '\\'], "_"));
    (
        [
            (http::header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (http::header::CONTENT_DISPOSITION, file),
            (http::header::CACHE_CONTROL, "no-cache".to_owned()),
        ],
        axum::body::Body::from_stream(chunks),
    )
        .into_response()
}

/// `GET /api/server/key`: GetServerKey.
pub async fn server_key(State(http): State<Arc<Http>>, headers: HeaderMap) -> Result<Response, Failed> {
    let request = proto::GetServerKeyRequest {};
    let answer = http.watch.get_server_key(grpc_request(&headers, request)).await?;
    Ok(json(&headers, answer.get_ref()))
}

/// `GET /api/tournaments?page_size=&page_token=`: ListTournaments.
pub async fn list_tournaments(
    State(http): State<Arc<Http>>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    let params = query(raw.as_deref());
    let request = proto::ListTournamentsRequest {
        page_size: error::integer(&params, "page_size")?.unwrap_or(0),
        page_token: params.get("page_token").cloned().unwrap_or_default(),
    };
    let answer = http
        .tournament
        .list_tournaments(grpc_request(&headers, request))
        .await?;
    Ok(json(&headers, answer.get_ref()))
}

/// `GET /api/tournaments/{id}`: GetTournament (the seed only once it is
/// finished, as over gRPC: the same view).
pub async fn get_tournament(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failed> {
    let request = proto::GetTournamentRequest {
        name: tournament_name(&id),
    };
    let answer = http
        .tournament
        .get_tournament(grpc_request(&headers, request))
        .await?;
    Ok(json(&headers, answer.get_ref()))
}

/// `GET /api/tournaments/{id}/standings`: GetStandings.
pub async fn get_standings(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failed> {
    let request = proto::GetStandingsRequest {
        name: tournament_name(&id),
    };
    let answer = http
        .tournament
        .get_standings(grpc_request(&headers, request))
        .await?;
    Ok(json(&headers, answer.get_ref()))
}
