//! HTTP on the server's port: the JSON endpoints answer what the gRPC
//! calls answer (games and tournaments), the SSE streams carry exactly the
//! gRPC streams' messages (resumable by `Last-Event-ID`), and the board
//! pictures follow the visibility of the gRPC reads, with their caching
//! headers.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use carcassonne::players::Registration;
use carcassonne::proto::{self, watch_game_response::Message as W, watch_server_response::Message as S};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tokio_stream::StreamExt as _;

use crate::bots::{ADMIN_KEY, league_server, organiser, register, tournaments_client};
use crate::support::{
    TestServer, create, delayed_request, export_request, game, game_at, new_game, play, play_step,
    play_to_end, start, watch, watch_request, with_token,
};
use crate::tournaments::tournament_request;

/// An HTTP answer, read whole.
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap())
            .unwrap_or_default()
    }

    pub fn json<T: serde::de::DeserializeOwned>(&self) -> T {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The error body's reason.
    pub fn reason(&self) -> String {
        let error: serde_json::Value = self.json();
        error["reason"].as_str().unwrap_or_default().to_owned()
    }
}

fn http_client(http2: bool) -> Client<HttpConnector, Empty<Bytes>> {
    Client::builder(TokioExecutor::new())
        .http2_only(http2)
        .build_http()
}

fn request(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> http::Request<Empty<Bytes>> {
    let mut request = http::Request::get(format!("{}{path}", server.url()));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(Empty::new()).unwrap()
}

/// `GET path` with `headers`, over HTTP/1.1.
pub async fn get(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> Answer {
    get_over(false, server, path, headers).await
}

async fn get_over(http2: bool, server: &TestServer, path: &str, headers: &[(&str, &str)]) -> Answer {
    let response = http_client(http2)
        .request(request(server, path, headers))
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    Answer {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes(),
    }
}

/// `Authorization: Bearer <token>`.
fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// One server-sent event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

/// An SSE stream, read event by event.
pub struct Events {
    pub status: u16,
    pub headers: http::HeaderMap,
    body: hyper::body::Incoming,
    buffer: String,
}

impl Events {
    /// The next event; `None` once the stream ends.
    pub async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = Event::default();
                let mut any = false;
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    match field {
                        "id" => event.id = Some(value.to_owned()),
                        "event" => event.event = Some(value.to_owned()),
                        "data" => event.data.push_str(value),
                        _ => continue,
                    }
                    any = true;
                }
                if any {
                    return Some(event);
                }
                continue;
            }
            let frame = self.body.frame().await?.unwrap();
            if let Ok(data) = frame.into_data() {
                self.buffer.push_str(std::str::from_utf8(&data).unwrap());
            }
        }
    }

    /// The next event as a WatchGame message, with its id.
    pub async fn next_game(&mut self) -> Option<(i64, proto::WatchGameResponse)> {
        let event = self.next().await?;
        assert_eq!(event.event, None, "{event:?}");
        let message: proto::WatchGameResponse = serde_json::from_str(&event.data).unwrap();
        Some((event.id.unwrap().parse().unwrap(), message))
    }
}

/// Opens an SSE stream at `path`.
pub async fn events(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> Events {
    let response = http_client(false)
        .request(request(server, path, headers))
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    Events {
        status: parts.status.as_u16(),
        headers: parts.headers,
        body,
        buffer: String::new(),
    }
}

/// A game's id, from its name.
fn id(name: &str) -> &str {
    name.strip_prefix("games/").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_json_endpoints_answer_what_the_grpc_calls_answer() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let health = get(&server, "/api/health", &[]).await;
    assert_eq!(
        (health.status, health.text()),
        (200, r#"{"status":"SERVING"}"#.to_owned())
    );
    let delay = 3;
    let (name, tokens) = create(&mut client, delayed_request("http-json", delay, &[], 7)).await;
    let head = play(&mut client, &name, &tokens, 12).await;
    let path = format!("/api/games/{}", id(&name));

    // GetGame, as a spectator (delayed) and as a seat.
    let spectator = get(&server, &path, &[]).await;
    assert_eq!(spectator.status, 200);
    assert!(spectator.header("content-type").starts_with("application/json"));
    let seen: proto::GetGameResponse = spectator.json();
    assert_eq!(seen.game.as_ref(), Some(&game(&mut client, &name).await));
    assert_eq!(seen.game.unwrap().version, head - i64::from(delay));
    let player = get(&server, &path, &[("authorization", &bearer(&tokens[1]))]).await;
    let grpc = client
        .get_game(with_token(
            proto::GetGameRequest { name: name.clone() },
            &tokens[1],
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(player.json::<proto::GetGameResponse>(), grpc);
    assert_eq!(grpc.game.unwrap().version, head);
    assert!(player.header("cache-control").contains("private"));
    // Proto JSON: lowerCamelCase fields, int64 as strings, enums by name.
    let raw: serde_json::Value = player.json();
    assert!(raw["game"]["version"].is_string(), "{raw}");
    assert!(
        raw["game"]["status"]
            .as_str()
            .unwrap()
            .starts_with("GAME_STATUS_"),
        "{raw}"
    );
    assert!(raw["game"].get("seedSha256").is_some(), "{raw}");

    // GetGameAtVersion: what a spectator may see, and no further.
    let visible = head - i64::from(delay);
    for version in [1, 5, visible] {
        let answer = get(&server, &format!("{path}?version={version}"), &[]).await;
        let grpc = game_at(&mut w, &name, version).await.unwrap();
        assert_eq!(answer.json::<proto::GetGameAtVersionResponse>().game, Some(grpc));
    }
    let beyond = get(&server, &format!("{path}?version={}", visible + 1), &[]).await;
    let grpc = game_at(&mut w, &name, visible + 1).await.unwrap_err();
    assert_eq!((beyond.status, grpc.code()), (400, tonic::Code::InvalidArgument));
    assert_eq!(beyond.reason(), "INVALID_ARGUMENT");
    let error: serde_json::Value = beyond.json();
    assert_eq!(error["code"], "INVALID_ARGUMENT");
    assert_eq!(error["message"], grpc.message());
    let as_player = get(
        &server,
        &format!("{path}?version={head}"),
        &[("authorization", &bearer(&tokens[0]))],
    )
    .await;
    assert_eq!(as_player.status, 200);
    for bad in ["abc", "0", "-1", "99999"] {
        let answer = get(&server, &format!("{path}?version={bad}"), &[]).await;
        assert_eq!(answer.status, 400, "version {bad}: {}", answer.text());
    }

    // ListGames, with its filters.
    let (other, other_tokens) = new_game(&mut client, "http-json-other", 8).await;
    play_to_end(&mut client, &other, &other_tokens).await;
    for (query, status) in [
        ("", proto::GameStatus::Unspecified),
        ("?status=running", proto::GameStatus::Running),
        ("?status=GAME_STATUS_FINISHED", proto::GameStatus::Finished),
    ] {
        let answer = get(&server, &format!("/api/games{query}"), &[]).await;
        let grpc = client
            .list_games(proto::ListGamesRequest {
                status: status as i32,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(answer.json::<proto::ListGamesResponse>(), grpc, "{query}");
    }
    let paged = get(&server, "/api/games?page_size=1", &[]).await;
    let paged: proto::ListGamesResponse = paged.json();
    assert_eq!(paged.games.len(), 1);
    let next = get(
        &server,
        &format!("/api/games?page_size=1&page_token={}", paged.next_page_token),
        &[],
    )
    .await;
    assert_eq!(next.json::<proto::ListGamesResponse>().games.len(), 1);
    assert_eq!(get(&server, "/api/games?status=sideways", &[]).await.status, 400);
    assert_eq!(get(&server, "/api/games?page_size=1000", &[]).await.status, 400);

    // ExportGame and VerifyGame, of a running and of a finished game.
    for (game_name, token) in [(&name, &tokens[0]), (&other, &other_tokens[0])] {
        let answer = get(&server, &format!("/api/games/{}/export", id(game_name)), &[]).await;
        let grpc = w
            .export_game(export_request(game_name))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(answer.json::<proto::ExportGameResponse>(), grpc);
        let as_seat = get(
            &server,
            &format!("/api/games/{}/export", id(game_name)),
            &[("authorization", &bearer(token))],
        )
        .await;
        let grpc = w
            .export_game(with_token(export_request(game_name), token))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(as_seat.json::<proto::ExportGameResponse>(), grpc);
        let verified: proto::VerifyGameResponse =
            get(&server, &format!("/api/games/{}/verify", id(game_name)), &[])
                .await
                .json();
        assert!(verified.ok, "{verified:?}");
        assert_eq!(verified.finished, game_name == &other);
    }

    // Errors: the gRPC status's code and reason, by the one table.
    let unknown = get(&server, "/api/games/nosuchgame", &[]).await;
    assert_eq!(
        (unknown.status, unknown.reason()),
        (404, "GAME_NOT_FOUND".to_owned())
    );
    let unknown = get(&server, "/api/games/nosuchgame/export", &[]).await;
    assert_eq!(unknown.status, 404);
    let bad_token = get(&server, &path, &[("authorization", "Bearer not-a-seat")]).await;
    assert_eq!(
        (bad_token.status, bad_token.reason()),
        (403, "BAD_TOKEN".to_owned())
    );
    let bad_name = get(&server, "/api/games/NOT%20A%20NAME", &[]).await;
    assert_eq!(
        (bad_name.status, bad_name.reason()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let nowhere = get(&server, "/api/nowhere", &[]).await;
    assert_eq!(
        (nowhere.status, nowhere.reason()),
        (404, "PATH_NOT_FOUND".to_owned())
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_its_assets_are_served_over_http_1_and_2() {
    let (server, _client) = start().await;
    for http2 in [false, true] {
        for path in ["/", "/games/g0123", "/tournaments/t0123"] {
            let page = get_over(http2, &server, path, &[]).await;
            assert_eq!(page.status, 200, "{path}");
            assert!(page.header("content-type").starts_with("text/html"), "{path}");
            assert!(page.text().to_ascii_lowercase().starts_with("<!doctype html"));
            // Confined: the page's own scripts only, never framed elsewhere,
            // nothing sniffed into another type.
            let policy = page.header("content-security-policy");
            assert!(policy.contains("default-src 'self'"), "{path}: {policy:?}");
            assert!(policy.contains("frame-ancestors 'self'"), "{path}: {policy:?}");
            assert_eq!(page.header("x-content-type-options"), "nosniff", "{path}");
            let etag = page.header("etag").to_owned();
            let again = get_over(http2, &server, path, &[("if-none-match", &etag)]).await;
            assert_eq!(again.status, 304);
        }
        let missing = get_over(http2, &server, "/assets/no-such-file.js", &[]).await;
        assert_eq!(missing.status, 404);
        let health = get_over(http2, &server, "/api/health", &[]).await;
        assert_eq!(health.status, 200);
    }
    for escape in [
        "/assets/../Cargo.toml",
        "/assets/%2e%2e/Cargo.toml",
        "/assets//etc/passwd",
    ] {
        assert_eq!(get(&server, escape, &[]).await.status, 404, "{escape}");
    }
    server.stop().await;
}

/// Every message of a gRPC WatchGame to its end.
async fn grpc_messages(
    mut stream: tonic::Streaming<proto::WatchGameResponse>,
) -> Vec<proto::WatchGameResponse> {
    let mut messages = Vec::new();
    while let Some(message) = stream.next().await {
        messages.push(message.unwrap());
    }
    messages
}

/// Every event of an SSE watch to its end, keep-alives left out, checking
/// that each id is the version its message brings the watcher to.
async fn sse_messages(mut events: Events) -> Vec<proto::WatchGameResponse> {
    let mut messages = Vec::new();
    while let Some((id, message)) = events.next_game().await {
        let version = match message.message.as_ref().unwrap() {
            W::Snapshot(game) => game.version,
            W::Event(event) => event.event.as_ref().unwrap().version,
            W::KeepAlive(_) => continue,
            W::FellBehind(v) => panic!("fell behind at {v}"),
        };
        assert_eq!(id, version);
        messages.push(message);
    }
    messages
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_watcher_sees_exactly_the_events_of_grpc_watch_game_behind_by_the_delay() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let delay = 5;
    let (name, tokens) = create(
        &mut client,
        delayed_request("http-sse", delay, &[proto::Expansion::River], 4),
    )
    .await;
    let head = play(&mut client, &name, &tokens, 20).await;
    let path = format!("/api/games/{}/watch", id(&name));
    // Spectators from now and from version 3, a seat from now: each by
    // gRPC and by SSE at the same time.
    let seat = bearer(&tokens[0]);
    let mut pairs = Vec::new();
    for (query, from, token) in [
        ("", None, None),
        ("?from_version=3", Some(3), None),
        ("", None, Some(&tokens[0])),
    ] {
        let grpc = match token {
            Some(token) => watch(&mut w, with_token(watch_request(&name, from), token)).await,
            None => watch(&mut w, watch_request(&name, from)).await,
        };
        let headers: Vec<(&str, &str)> = token
            .map(|_| ("authorization", seat.as_str()))
            .into_iter()
            .collect();
        let sse = events(&server, &format!("{path}{query}"), &headers).await;
        assert_eq!(sse.status, 200);
        assert!(
            sse.headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        pairs.push((
            query,
            token.is_some(),
            tokio::spawn(grpc_messages(grpc)),
            tokio::spawn(sse_messages(sse)),
        ));
    }
    play_to_end(&mut client, &name, &tokens).await;
    for (query, is_seat, grpc, sse) in pairs {
        let (grpc, sse) = (grpc.await.unwrap(), sse.await.unwrap());
        let grpc: Vec<_> = grpc
            .into_iter()
            .filter(|m| !matches!(m.message, Some(W::KeepAlive(_))))
            .collect();
        assert_eq!(sse, grpc, "{query} seat {is_seat}");
        let Some(W::Snapshot(snapshot)) = &sse[0].message else {
            panic!("no snapshot")
        };
        let expected = match (query, is_seat) {
            ("", false) => head - i64::from(delay),
            ("", true) => head,
            _ => 3,
        };
        assert_eq!(snapshot.version, expected, "{query} seat {is_seat}");
        assert!(
            matches!(&sse.last().unwrap().message, Some(W::Event(e)) if e.event.as_ref().unwrap().finished)
        );
    }
    // Errors before the stream: as WatchGame's.
    let beyond = get(&server, &format!("{path}?from_version=0"), &[]).await;
    assert_eq!(
        (beyond.status, beyond.reason()),
        (400, "INVALID_ARGUMENT".to_owned())
    );
    let unknown = get(&server, "/api/games/nosuchgame/watch", &[]).await;
    assert_eq!(unknown.status, 404);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn last_event_id_resumes_an_sse_watch_missing_nothing_and_repeating_nothing() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let (name, tokens) = new_game(&mut client, "http-resume", 9).await;
    let path = format!("/api/games/{}/watch?from_version=1&keep_alive_ms=1000", id(&name));
    let whole = tokio::spawn(grpc_messages(watch(&mut w, watch_request(&name, Some(1))).await));
    let mut seen: Vec<proto::WatchGameResponse> = Vec::new();
    let mut last_id: Option<i64> = None;
    // Connect, read a few events, drop the connection, play on, reconnect
    // with the last id, as a browser's EventSource does.
    loop {
        let headers: Vec<(&str, String)> = last_id
            .map(|id| ("last-event-id", id.to_string()))
            .into_iter()
            .collect();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut sse = events(&server, &path, &headers).await;
        if sse.status == 204 {
            break;
        }
        assert_eq!(sse.status, 200);
        let mut read = 0;
        while read < 7 {
            let Some((id, message)) = sse.next_game().await else {
                break;
            };
            if matches!(message.message, Some(W::KeepAlive(_))) {
                // Caught up: play on.
                break;
            }
            if last_id.is_some() {
                assert!(
                    !matches!(message.message, Some(W::Snapshot(_))),
                    "a second snapshot"
                );
            }
            last_id = Some(id);
            seen.push(message);
            read += 1;
        }
        drop(sse);
        for step in 0..5 {
            if play_step(&mut client, &name, &tokens, step).await.is_none() {
                break;
            }
        }
    }
    let whole: Vec<_> = whole.await.unwrap();
    assert!(whole.len() > 100);
    assert_eq!(seen, whole, "every message once, in order");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lobby_stream_announces_a_created_game_and_streams_end_when_the_server_stops() {
    let (server, mut client) = start().await;
    let (first, _) = new_game(&mut client, "http-lobby-first", 1).await;
    let mut lobby = events(&server, "/api/server/watch?keep_alive_ms=1000", &[]).await;
    assert_eq!(lobby.status, 200);
    // From now: the first game is not announced again.
    let (name, tokens) = new_game(&mut client, "http-lobby", 2).await;
    let position = loop {
        let event = tokio::time::timeout(Duration::from_secs(10), lobby.next())
            .await
            .unwrap()
            .unwrap();
        let message: proto::WatchServerResponse = serde_json::from_str(&event.data).unwrap();
        let id: i64 = event.id.unwrap().parse().unwrap();
        match message.message.unwrap() {
            S::Event(change) => {
                assert_ne!(change.name, first);
                assert_eq!(id, change.position);
                assert_eq!(
                    (change.name.as_str(), change.change),
                    (name.as_str(), proto::GameChange::Created as i32)
                );
                break id;
            }
            S::KeepAlive(at) => assert_eq!(id, at),
            S::FellBehind(at) => panic!("fell behind at {at}"),
        }
    };
    // Resuming after that position with Last-Event-ID: the game's start.
    play(&mut client, &name, &tokens, 2).await;
    let mut resumed = events(
        &server,
        "/api/server/watch",
        &[("last-event-id", &position.to_string())],
    )
    .await;
    let event = resumed.next().await.unwrap();
    let message: proto::WatchServerResponse = serde_json::from_str(&event.data).unwrap();
    let Some(S::Event(change)) = message.message else {
        panic!("{message:?}")
    };
    assert_eq!(
        (change.name, change.change),
        (name.clone(), proto::GameChange::Started as i32)
    );
    // A game's watch stream too: both end when the server stops.
    let mut watching = events(&server, &format!("/api/games/{}/watch", id(&name)), &[]).await;
    assert!(watching.next().await.is_some(), "the snapshot");
    tokio::time::timeout(Duration::from_secs(10), server.stop())
        .await
        .expect("the server stops with streams open");
    for stream in [&mut lobby, &mut resumed, &mut watching] {
        let rest = tokio::time::timeout(Duration::from_secs(5), async {
            while stream.next().await.is_some() {}
        });
        rest.await.expect("the stream ended");
    }
}

/// `path`'s picture with `headers`.
async fn picture(server: &TestServer, path: &str, headers: &[(&str, &str)]) -> Answer {
    get(server, path, headers).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn board_pictures_show_what_the_grpc_reads_show_with_their_caching_headers() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let delay = 4;
    let (name, tokens) = create(
        &mut client,
        delayed_request("http-board", delay, &[proto::Expansion::River], 5),
    )
    .await;
    let head = play(&mut client, &name, &tokens, 16).await;
    let visible = head - i64::from(delay);
    let board = format!("/games/{}/board", id(&name));
    let seat = bearer(&tokens[1]);
    for format in ["svg", "png"] {
        let content_type = format!("image/{}", if format == "svg" { "svg+xml" } else { "png" });
        // A spectator: up to the version GetGameAtVersion allows.
        let at_visible = picture(&server, &format!("{board}.{format}?version={visible}"), &[]).await;
        assert_eq!(at_visible.status, 200, "{}", at_visible.text());
        assert!(game_at(&mut w, &name, visible).await.is_ok());
        assert_eq!(at_visible.header("content-type"), content_type);
        assert_eq!(
            at_visible.header("cache-control"),
            "public, max-age=31536000, immutable"
        );
        // The same version asked with a seat's token: the same picture,
        // but an answer to a token is for no shared cache.
        let seat_visible = picture(
            &server,
            &format!("{board}.{format}?version={visible}"),
            &[("authorization", &seat)],
        )
        .await;
        assert_eq!(seat_visible.body, at_visible.body);
        assert_eq!(
            seat_visible.header("cache-control"),
            "private, max-age=31536000, immutable"
        );
        let beyond = picture(&server, &format!("{board}.{format}?version={}", visible + 1), &[]).await;
        let grpc = game_at(&mut w, &name, visible + 1).await.unwrap_err();
        assert_eq!((beyond.status, grpc.code()), (400, tonic::Code::InvalidArgument));
        // No version: the latest a spectator may see, revalidated.
        let latest = picture(&server, &format!("{board}.{format}"), &[]).await;
        assert_eq!(latest.status, 200);
        assert_eq!(latest.header("cache-control"), "no-cache");
        assert_eq!(latest.body, at_visible.body, "the picture at the visible version");
        let etag = latest.header("etag").to_owned();
        let unchanged = picture(&server, &format!("{board}.{format}"), &[("if-none-match", &etag)]).await;
        assert_eq!((unchanged.status, unchanged.body.len()), (304, 0));
        // A seat sees it now, privately.
        let now = picture(
            &server,
            &format!("{board}.{format}?version={head}"),
            &[("authorization", &seat)],
        )
        .await;
        assert_eq!(now.status, 200);
        assert_eq!(
            now.header("cache-control"),
            "private, max-age=31536000, immutable"
        );
        // The seat's picture, rendered and kept, is still no spectator's.
        let hidden = picture(&server, &format!("{board}.{format}?version={head}"), &[]).await;
        assert_eq!(hidden.status, 400);
        let latest_seat = picture(&server, &format!("{board}.{format}"), &[("authorization", &seat)]).await;
        assert_eq!(latest_seat.body, now.body);
        assert_eq!(latest_seat.header("cache-control"), "private, no-cache");
        // A named version revalidates by its ETag too.
        let etag = at_visible.header("etag").to_owned();
        let again = picture(
            &server,
            &format!("{board}.{format}?version={visible}"),
            &[("if-none-match", &etag)],
        )
        .await;
        assert_eq!(again.status, 304);
        // Bad versions, unknown games, bad tokens.
        for bad in ["abc", "0", "-3", "1.5", "100000"] {
            let answer = picture(&server, &format!("{board}.{format}?version={bad}"), &[]).await;
            assert_eq!(
                (answer.status, answer.reason()),
                (400, "INVALID_ARGUMENT".to_owned()),
                "{bad}"
            );
        }
        let unknown = picture(&server, &format!("/games/nosuchgame/board.{format}"), &[]).await;
        assert_eq!(
            (unknown.status, unknown.reason()),
            (404, "GAME_NOT_FOUND".to_owned())
        );
        let stranger = picture(
            &server,
            &format!("{board}.{format}"),
            &[("authorization", "Bearer nobody")],
        )
        .await;
        assert_eq!(stranger.status, 403);
        let coordinates = picture(&server, &format!("{board}.{format}?coordinates=true"), &[]).await;
        assert_eq!(coordinates.status, 200);
        assert_ne!(coordinates.header("etag"), latest.header("etag"));
        let bad_flag = picture(&server, &format!("{board}.{format}?coordinates=maybe"), &[]).await;
        assert_eq!(bad_flag.status, 400);
    }
    let png = picture(&server, &format!("{board}.png"), &[]).await;
    assert!(png.body.starts_with(b"\x89PNG\r\n\x1a\n"));
    let svg = picture(&server, &format!("{board}.svg"), &[]).await;
    assert!(svg.text().contains("<svg"));
    // A finished game: every version is public, the last one included.
    play_to_end(&mut client, &name, &tokens).await;
    let last = game(&mut client, &name).await.version;
    for format in ["svg", "png"] {
        let end = picture(&server, &format!("{board}.{format}?version={last}"), &[]).await;
        assert_eq!(end.status, 200);
        assert_eq!(end.header("cache-control"), "public, max-age=31536000, immutable");
        let latest = picture(&server, &format!("{board}.{format}"), &[]).await;
        assert_eq!(latest.body, end.body);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_games_pictures_are_private_to_its_seats() {
    // Given a duplicate-bag tournament's game, sealed while its round runs
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Boss").await;
    let names = ["Ada", "Brun", "Cleo", "Dora"];
    let mut keys = Vec::new();
    for name in names {
        keys.push(register(&server, name).await);
    }
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    // Nobody acts, and the clock allows ten minutes: the round runs on.
    let request = proto::CreateTournamentRequest {
        duplicate_bags: true,
        rounds: 1,
        time_control: Some(proto::TimeControl {
            decision_ms: 600_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        ..tournament_request("http-sealed-pictures", &names)
    };
    let tournament = tournaments_client(&server)
        .await
        .create_tournament(with_token(request, &boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    let table = &tournament.paired_rounds[0].tables[0];
    let game = &table.games[0].game;
    let player = table.players[0].strip_prefix("players/").unwrap();
    let key = &keys[names.iter().position(|n| *n == player).unwrap()];
    let seat = bearer(key);
    let board = format!("/games/{}/board", id(game));
    for format in ["svg", "png"] {
        // When a spectator asks for its picture
        let spectator = picture(&server, &format!("{board}.{format}?version=1"), &[]).await;
        // Then it is refused
        assert_eq!(spectator.reason(), "GAME_SEALED");
        // And when one of its seats asks, for a version and for the latest
        for path in [format!("{board}.{format}?version=1"), format!("{board}.{format}")] {
            let own = picture(&server, &path, &[("authorization", &seat)]).await;
            // Then the seat sees it, for no shared cache to keep
            assert_eq!(own.status, 200, "{path}: {}", own.text());
            let cache = own.header("cache-control");
            assert!(cache.starts_with("private"), "{path}: {cache}");
            assert!(!cache.contains("public"), "{path}: {cache}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_to_an_unknown_service_stays_unimplemented_beside_the_http_routes() {
    let (server, _client) = start().await;
    let channel = tonic::transport::Endpoint::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let codec = tonic_prost::ProstCodec::<proto::GetGameRequest, proto::GetGameResponse>::default();
    let path = http::uri::PathAndQuery::from_static("/carcassonne.v1.NoSuchService/GetGame");
    let status = grpc
        .unary(tonic::Request::new(proto::GetGameRequest::default()), path, codec)
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);
    // The same path without gRPC's content type is a plain 404.
    let plain = get(&server, "/carcassonne.v1.NoSuchService/GetGame", &[]).await;
    assert_eq!(plain.status, 404);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_gzipped_for_clients_that_accept_it_but_never_event_streams_or_pngs() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "http-gzip", 2).await;
    play(&mut client, &name, &tokens, 8).await;
    let gzip = [("accept-encoding", "gzip")];
    let paths = [
        "/assets/game.js".to_owned(),
        format!("/api/games/{}", id(&name)),
        format!("/games/{}/board.svg?version=6", id(&name)),
    ];
    for path in &paths {
        let plain = get(&server, path, &[]).await;
        let zipped = get(&server, path, &gzip).await;
        assert_eq!((plain.status, zipped.status), (200, 200), "{path}");
        assert_eq!(plain.header("content-encoding"), "", "{path}");
        assert_eq!(zipped.header("content-encoding"), "gzip", "{path}");
        assert!(zipped.body.len() < plain.body.len(), "{path}: no smaller");
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&zipped.body[..]), &mut unzipped)
            .unwrap();
        assert_eq!(unzipped, plain.body, "{path}: gzip of other bytes");
    }
    let png = get(
        &server,
        &format!("/games/{}/board.png?version=6", id(&name)),
        &gzip,
    )
    .await;
    assert_eq!((png.status, png.header("content-encoding")), (200, ""));
    // An event stream's events leave at once, uncompressed.
    let mut watching = events(&server, &format!("/api/games/{}/watch", id(&name)), &gzip).await;
    assert_eq!(watching.status, 200);
    assert_eq!(watching.headers.get("content-encoding"), None);
    assert!(
        watching.next_game().await.is_some(),
        "the snapshot, readable as it is"
    );
}

/// A Swiss of one round between `players` (registered already), created by
/// the organiser whose key is `boss`. No one acts and the clock allows ten
/// minutes a decision: it changes only when the organiser withdraws
/// players, whose seats then resign.
async fn waiting_tournament(
    server: &TestServer,
    boss: &str,
    request_id: &str,
    players: &[&str],
) -> proto::Tournament {
    let mut client = tournaments_client(server).await;
    let request = proto::CreateTournamentRequest {
        request_id: request_id.to_owned(),
        title: format!("Open {request_id}"),
        participants: players.iter().map(|p| format!("players/{p}")).collect(),
        format: proto::TournamentFormat::Swiss as i32,
        rounds: 1,
        time_control: Some(proto::TimeControl {
            decision_ms: 600_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        ..Default::default()
    };
    client
        .create_tournament(with_token(request, boss))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap()
}

/// The organiser withdraws the first player of every table of the
/// tournament's first round: every game resigns, and the one round ends.
async fn withdraw_one_per_table(server: &TestServer, boss: &str, tournament: &proto::Tournament) {
    let mut client = tournaments_client(server).await;
    for table in &tournament.paired_rounds[0].tables {
        let request = proto::WithdrawPlayerRequest {
            name: tournament.name.clone(),
            player: table.players[0].clone(),
        };
        client.withdraw_player(with_token(request, boss)).await.unwrap();
    }
}

/// A tournament's id, from its name.
fn tournament_id(name: &str) -> &str {
    name.strip_prefix("tournaments/").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tournaments_and_standings_are_served_as_over_grpc_with_the_seed_only_at_the_end() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Boss").await;
    let names = ["Ada", "Brun", "Cleo", "Dora"];
    let mut keys = vec![boss.clone(), ADMIN_KEY.to_owned()];
    for name in names {
        keys.push(register(&server, name).await);
    }
    let four = waiting_tournament(&server, &boss, "http-tournament-four", &names).await;
    let two = waiting_tournament(&server, &boss, "http-tournament-two", &names[..2]).await;
    let mut client = tournaments_client(&server).await;

    // The list, whole and by pages: ListTournaments.
    let all = get(&server, "/api/tournaments", &[]).await;
    assert_eq!(all.status, 200, "{}", all.text());
    assert!(all.header("content-type").starts_with("application/json"));
    let grpc = client
        .list_tournaments(proto::ListTournamentsRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(all.json::<proto::ListTournamentsResponse>(), grpc);
    assert_eq!(grpc.tournaments.len(), 2);
    let first: proto::ListTournamentsResponse =
        get(&server, "/api/tournaments?page_size=1", &[]).await.json();
    assert_eq!(first.tournaments.len(), 1);
    assert!(!first.next_page_token.is_empty());
    let second: proto::ListTournamentsResponse = get(
        &server,
        &format!(
            "/api/tournaments?page_size=1&page_token={}",
            first.next_page_token
        ),
        &[],
    )
    .await
    .json();
    assert_eq!(second.tournaments.len(), 1);
    assert_eq!(second.next_page_token, "");
    let listed: BTreeSet<_> = first
        .tournaments
        .iter()
        .chain(&second.tournaments)
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(listed, BTreeSet::from([four.name.clone(), two.name.clone()]));
    for bad in ["page_size=1000", "page_size=-1", "page_size=many"] {
        let answer = get(&server, &format!("/api/tournaments?{bad}"), &[]).await;
        assert_eq!(
            (answer.status, answer.reason()),
            (400, "INVALID_ARGUMENT".to_owned()),
            "{bad}"
        );
    }

    // One tournament: GetTournament, the seed sealed while it runs.
    let path = format!("/api/tournaments/{}", tournament_id(&four.name));
    let running = get(&server, &path, &[]).await;
    assert_eq!(running.status, 200, "{}", running.text());
    let grpc = client
        .get_tournament(proto::GetTournamentRequest {
            name: four.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(running.json::<proto::GetTournamentResponse>(), grpc);
    let raw: serde_json::Value = running.json();
    let shown = &raw["tournament"];
    assert_eq!(shown["status"], "TOURNAMENT_STATUS_RUNNING", "{raw}");
    assert_eq!(shown["format"], "TOURNAMENT_FORMAT_SWISS", "{raw}");
    assert_eq!(shown["seed"], "", "the seed is sealed while it runs: {raw}");
    assert_eq!(shown["seedSha256"].as_str().unwrap().len(), 64, "{raw}");
    assert_eq!(shown["participants"].as_array().unwrap().len(), 4, "{raw}");
    let tables = shown["pairedRounds"][0]["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2, "{raw}");
    for table in tables {
        let game = &table["games"][0];
        assert!(game["game"].as_str().unwrap().starts_with("games/"), "{raw}");
        assert_eq!(game["ended"], false, "{raw}");
    }
    assert_eq!(shown["withdrawn"], serde_json::json!([]), "{raw}");

    // Its standings: GetStandings.
    let standings = get(&server, &format!("{path}/standings"), &[]).await;
    assert_eq!(standings.status, 200, "{}", standings.text());
    let grpc = client
        .get_standings(proto::GetStandingsRequest {
            name: four.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(standings.json::<proto::GetStandingsResponse>(), grpc);
    let table = grpc.standings.unwrap();
    assert!(!table.r#final);
    assert_eq!(table.standings.len(), 4);
    assert_eq!(
        table.standings.iter().map(|s| s.rank).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );

    // Nothing secret: no key, no key's hash.
    let bodies = [all.text(), running.text(), standings.text()];
    for body in &bodies {
        for key in &keys {
            assert!(!body.contains(key.as_str()), "a key in {body}");
            let hash = carcassonne::games::auth::hex(&carcassonne::games::auth::hash(key));
            assert!(!body.contains(&hash), "a key's hash in {body}");
        }
    }

    // No archive while it runs: its seed is sealed.
    let early = get(&server, &format!("{path}/archive"), &[]).await;
    assert_eq!(
        (early.status, early.reason()),
        (400, "TOURNAMENT_STATE".to_owned()),
        "{}",
        early.text()
    );

    // An unknown tournament: 404 with its reason, on every route.
    for suffix in ["", "/standings", "/watch", "/archive"] {
        for id in ["nosuchtournament", "not%20an%20id"] {
            let unknown = get(&server, &format!("/api/tournaments/{id}{suffix}"), &[]).await;
            assert_eq!(
                (unknown.status, unknown.reason()),
                (404, "TOURNAMENT_NOT_FOUND".to_owned()),
                "{id}{suffix}: {}",
                unknown.text()
            );
            let error: serde_json::Value = unknown.json();
            assert_eq!(error["code"], "NOT_FOUND", "{error}");
            assert!(
                error["message"].as_str().unwrap().contains("no tournament"),
                "{error}"
            );
        }
    }

    // The end: the seed is revealed, the standings are final, and what
    // was served while it ran held none of it.
    withdraw_one_per_table(&server, &boss, &four).await;
    let end = crate::tournaments::finish(&server, &four.name, Duration::from_secs(60)).await;
    let ended: proto::GetTournamentResponse = get(&server, &path, &[]).await.json();
    let ended = ended.tournament.unwrap();
    assert_eq!(Some(&ended), end.tournament.as_ref());
    assert_eq!(ended.status, proto::TournamentStatus::Finished as i32);
    assert_eq!(ended.seed.len(), 64);
    assert_eq!(ended.withdrawn.len(), 2);
    assert!(ended.paired_rounds[0].tables.iter().all(|t| t.games[0].ended));
    for body in &bodies {
        assert!(!body.contains(&ended.seed), "the seed before the end: {body}");
    }
    let standings: proto::GetStandingsResponse = get(&server, &format!("{path}/standings"), &[]).await.json();
    let standings = standings.standings.unwrap();
    assert!(standings.r#final);
    // Its signed archive, as ExportTournamentArchive gives it.
    let archive = get(&server, &format!("{path}/archive"), &[]).await;
    assert_eq!(archive.status, 200, "{}", archive.text());
    assert_eq!(archive.header("content-type"), "application/x-tar");
    let opened = carcassonne_archive::Archive::open(&archive.body, None).unwrap();
    assert_eq!(
        opened.manifest().subject,
        four.name.trim_start_matches("tournaments/")
    );
    assert_eq!(Some(&standings), end.standings.as_ref());
    // The players who stayed won their games: a point each, first.
    for standing in &standings.standings[..2] {
        assert_eq!(
            (standing.points.as_str(), standing.withdrawn),
            ("1", false),
            "{standing:?}"
        );
    }
    server.stop().await;
}

/// The next event of a tournament's SSE stream as a WatchTournament
/// message, with its id.
async fn next_tournament_event(events: &mut Events) -> Option<(i64, proto::WatchTournamentResponse)> {
    let event = tokio::time::timeout(Duration::from_secs(30), events.next())
        .await
        .expect("an event within 30 s")?;
    assert_eq!(event.event, None, "{event:?}");
    let message: proto::WatchTournamentResponse = serde_json::from_str(&event.data).unwrap();
    Some((event.id.unwrap().parse().unwrap(), message))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_tournament_watch_is_watch_tournament_resumable_after_its_last_id() {
    let (server, _dir) = league_server(Registration::Open).await;
    let boss = organiser(&server, "Boss").await;
    let names = ["Ada", "Brun", "Cleo", "Dora"];
    for name in names {
        register(&server, name).await;
    }
    let created = waiting_tournament(&server, &boss, "http-tournament-watch", &names).await;
    let path = format!("/api/tournaments/{}/watch", tournament_id(&created.name));
    let mut client = tournaments_client(&server).await;
    let mut grpc = client
        .watch_tournament(proto::WatchTournamentRequest {
            name: created.name.clone(),
        })
        .await
        .unwrap()
        .into_inner();

    // The first message: WatchTournament's, its id the tournament's version.
    let mut sse = events(&server, &path, &[]).await;
    assert_eq!(sse.status, 200);
    assert!(
        sse.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let (first_id, first) = next_tournament_event(&mut sse).await.unwrap();
    let from_grpc = grpc.next().await.unwrap().unwrap();
    assert_eq!(first, from_grpc);
    assert_eq!(first_id, first.version);
    assert!(first.version > 0);
    assert_eq!(first.tournament.as_ref().unwrap().seed, "");
    assert!(!first.standings.as_ref().unwrap().r#final);
    drop(sse);

    // Reopened after that id: nothing until the tournament changes.
    let last = first_id.to_string();
    for (query, headers) in [
        (format!("?after_version={last}"), vec![]),
        (String::new(), vec![("last-event-id", last.as_str())]),
    ] {
        let mut resumed = events(&server, &format!("{path}{query}"), &headers).await;
        assert_eq!(resumed.status, 200, "{query}");
        let quiet = tokio::time::timeout(Duration::from_millis(500), resumed.next()).await;
        assert!(quiet.is_err(), "{query}: nothing new, yet {quiet:?}");
    }
    let mut resumed = events(&server, &path, &[("last-event-id", last.as_str())]).await;
    // One withdrawal: a change, then (its seat resigned) a result.
    let table = &created.paired_rounds[0].tables[0];
    client
        .withdraw_player(with_token(
            proto::WithdrawPlayerRequest {
                name: created.name.clone(),
                player: table.players[0].clone(),
            },
            &boss,
        ))
        .await
        .unwrap();
    let (id, changed) = next_tournament_event(&mut resumed).await.unwrap();
    assert!(id > first_id, "{id} after {first_id}");
    assert_eq!(id, changed.version);
    assert_eq!(
        changed.tournament.as_ref().unwrap().withdrawn,
        [table.players[0].clone()]
    );
    // The end: the last message is final, with the seed, and the stream ends.
    withdraw_one_per_table_but_the_first(&server, &boss, &created).await;
    let mut last_id = id;
    let mut last_message = changed;
    while let Some((id, message)) = next_tournament_event(&mut resumed).await {
        assert!(id > last_id, "{id} after {last_id}");
        assert_eq!(id, message.version);
        (last_id, last_message) = (id, message);
    }
    assert!(last_message.standings.as_ref().unwrap().r#final);
    assert_eq!(last_message.tournament.as_ref().unwrap().seed.len(), 64);
    let mut grpc_last = from_grpc;
    while let Some(message) = grpc.next().await {
        grpc_last = message.unwrap();
    }
    assert_eq!(last_message, grpc_last, "the same end as WatchTournament's");
    // Resuming after the end: 204, which stops a browser's reconnecting;
    // after an earlier id: the final message, then the end.
    let after_end = events(&server, &path, &[("last-event-id", &last_id.to_string())]).await;
    assert_eq!(after_end.status, 204);
    let after_end = get(&server, &format!("{path}?after_version={last_id}"), &[]).await;
    assert_eq!(after_end.status, 204);
    let mut late = events(&server, &path, &[("last-event-id", &first_id.to_string())]).await;
    assert_eq!(late.status, 200);
    assert_eq!(
        next_tournament_event(&mut late).await,
        Some((last_id, last_message))
    );
    assert_eq!(next_tournament_event(&mut late).await, None);
    // A resumption that is not a number names what is wrong.
    let bad = get(&server, &format!("{path}?after_version=soon"), &[]).await;
    assert_eq!((bad.status, bad.reason()), (400, "INVALID_ARGUMENT".to_owned()));
    server.stop().await;
}

/// Withdraws the first player of every table but the first (whose player
/// the test withdrew already).
async fn withdraw_one_per_table_but_the_first(
    server: &TestServer,
    boss: &str,
    tournament: &proto::Tournament,
) {
    let mut rest = tournament.clone();
    rest.paired_rounds[0].tables.remove(0);
    withdraw_one_per_table(server, boss, &rest).await;
}
