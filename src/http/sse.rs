//! The watch streams as server-sent events, for a browser's
//! `EventSource`: the very streams of WatchGame, WatchServer and
//! WatchTournament (same feed, catch-up, spectator delay, keep-alives,
//! `fell_behind`), each message one SSE event whose `data` is the
//! message's JSON and whose `id` is where a client resumes after it: the
//! game's version it brings the watcher to, the store's position, or the
//! tournament's version. A reconnecting `EventSource` sends the last id as
//! `Last-Event-ID` and resumes right after it, without a second snapshot:
//! it misses nothing and sees nothing twice. A game or a tournament that
//! ended at that version answers 204, which stops the reconnecting.

use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::Poll;

use axum::extract::{Path, RawQuery, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use http::HeaderMap;
use lru::LruCache;
use serde::Serialize;
use tokio_stream::{Stream, StreamExt as _};

use super::error::{self, Failed};
use super::{Http, game_name, grpc_request, query, tournament_name};
use crate::proto::tournament_service_server::TournamentService as _;
use crate::proto::watch_game_response::Message as G;
use crate::proto::watch_server_response::Message as S;
use crate::proto::watch_service_server::WatchService as _;
use crate::proto::{self, WatchGameResponse, WatchServerResponse, WatchTournamentResponse};
use crate::server::WatchService;

type Messages<T> = Pin<Box<dyn Stream<Item = Result<T, tonic::Status>> + Send>>;

/// The `Last-Event-ID` a reconnecting `EventSource` sends, if any.
fn last_event_id(headers: &HeaderMap) -> Result<Option<i64>, Failed> {
    let Some(value) = headers.get("last-event-id") else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or_default().trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse().map(Some).map_err(|_| {
        error::invalid(
            "Last-Event-ID",
            format!("not a number: {}", crate::api::status::quote(text)),
        )
    })
}

/// Where a stream resumes: a reconnection's `Last-Event-ID`, which takes
/// the place of the query parameter `field`, or that parameter.
fn resume_from(
    headers: &HeaderMap,
    params: &std::collections::HashMap<String, String>,
    field: &str,
) -> Result<Option<i64>, Failed> {
    match last_event_id(headers)? {
        Some(id) => Ok(Some(id)),
        None => error::integer(params, field),
    }
}

/// `GET /api/games/{id}/watch?from_version=N&keep_alive_ms=M`: WatchGame.
pub async fn watch_game(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    let params = query(raw.as_deref());
    let resume = last_event_id(&headers)?;
    let request = proto::WatchGameRequest {
        name: game_name(&id),
        // A reconnection resumes where the last one stopped, whatever the
        // URL it first started from.
        from_version: match resume {
            Some(version) => Some(version),
            None => error::integer(&params, "from_version")?,
        },
        keep_alive_ms: error::integer(&params, "keep_alive_ms")?.unwrap_or(0),
    };
    let mut messages: Messages<WatchGameResponse> = http
        .watch
        .watch_game(grpc_request(&headers, request))
        .await?
        .into_inner();
    let mut first = None;
    if resume.is_some() {
        // The watcher has the game at that version: no second snapshot.
        match messages.next().await {
            Some(Ok(WatchGameResponse {
                message: Some(G::Snapshot(_)),
            })) => {}
            other => first = other,
        }
        if first.is_none() {
            match poll_once(&mut messages).await {
                Poll::Ready(None) => return Ok(http::StatusCode::NO_CONTENT.into_response()),
                Poll::Ready(Some(message)) => first = Some(message),
                Poll::Pending => {}
            }
        }
    }
    let messages = tokio_stream::iter(first).chain(messages);
    let name: Arc<str> = Arc::from(game_name(&id));
    let json = move |message: &WatchGameResponse| match &message.message {
        Some(G::Event(event)) => http.event_json.of(&name, message, event),
        _ => to_json(message),
    };
    Ok(events(messages, game_event_id, json).into_response())
}

/// `GET /api/server/watch?from_position=N&keep_alive_ms=M`: WatchServer.
pub async fn watch_server(
    State(http): State<Arc<Http>>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    server_events(&http.watch, &headers, raw.as_deref()).await
}

/// WatchServer's stream as it is (no task of its own: a page that goes
/// drops it), its messages as events.
async fn server_events(
    watch: &WatchService,
    headers: &HeaderMap,
    raw_query: Option<&str>,
) -> Result<Response, Failed> {
    let params = query(raw_query);
    let from_position = resume_from(headers, &params, "from_position")?;
    let request = proto::WatchServerRequest {
        from_position,
        keep_alive_ms: error::integer(&params, "keep_alive_ms")?.unwrap_or(0),
    };
    let messages: Messages<WatchServerResponse> = watch
        .watch_server(grpc_request(headers, request))
        .await?
        .into_inner();
    Ok(events(messages, server_event_id, to_json).into_response())
}

/// `GET /api/tournaments/{id}/watch?after_version=N`: WatchTournament, the
/// tournament and its standings now, then after every change, each event's
/// id the tournament's version. `after_version` (or a reconnection's
/// `Last-Event-ID`, which takes its place) is the version the watcher has:
/// the first message comes only if the tournament changed since, and a
/// tournament that finished at that version answers 204.
pub async fn watch_tournament(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<Response, Failed> {
    let params = query(raw.as_deref());
    let after = resume_from(&headers, &params, "after_version")?;
    let request = proto::WatchTournamentRequest {
        name: tournament_name(&id),
    };
    let mut messages: Messages<WatchTournamentResponse> = http
        .tournament
        .watch_tournament(grpc_request(&headers, request))
        .await?
        .into_inner();
    let mut first = None;
    if let Some(after) = after {
        match messages.next().await {
            // The watcher has this one: the next change, if there is one.
            Some(Ok(message)) if message.version == after => {
                if message.standings.as_ref().is_some_and(|s| s.r#final) {
                    return Ok(http::StatusCode::NO_CONTENT.into_response());
                }
            }
            other => first = other,
        }
    }
    let messages = tokio_stream::iter(first).chain(messages);
    Ok(events(messages, |message| Some(message.version), to_json).into_response())
}

fn to_json<T: Serialize>(message: &T) -> Arc<str> {
    Arc::from(serde_json::to_string(message).unwrap_or_default())
}

/// The JSON of the game events sent lately, by game and version. Every
/// watcher of a game is sent the very same message for an event (the
/// feed builds it once, for players and spectators alike, spectators
/// only later), so a thousand pages cost one serialisation per event,
/// not a thousand.
pub struct EventJson {
    kept: Mutex<Kept>,
}

/// Each event's JSON by its game's name and its version.
type Kept = LruCache<(Arc<str>, i64), Arc<str>>;

/// Events whose JSON is kept: the recent events of the games watched.
const EVENTS_KEPT: usize = 1024;

impl Default for EventJson {
    fn default() -> EventJson {
        EventJson {
            kept: Mutex::new(LruCache::new(
                NonZeroUsize::new(EVENTS_KEPT).unwrap_or(NonZeroUsize::MIN),
            )),
        }
    }
}

impl EventJson {
    /// The JSON of `message`, the event `event` of game `name`.
    fn of(&self, name: &Arc<str>, message: &WatchGameResponse, event: &proto::WatchedEvent) -> Arc<str> {
        let Some(version) = event.event.as_ref().map(|e| e.version) else {
            return to_json(message);
        };
        let key = (name.clone(), version);
        if let Some(json) = self.kept().get(&key) {
            return json.clone();
        }
        let json = to_json(message);
        self.kept().put(key, json.clone());
        json
    }

    fn kept(&self) -> MutexGuard<'_, Kept> {
        // Plain strings: a panic elsewhere cannot leave the cache
        // half-updated.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The stream's next message if it is ready now, without waiting.
async fn poll_once<T>(messages: &mut Messages<T>) -> Poll<Option<Result<T, tonic::Status>>> {
    std::future::poll_fn(|cx| Poll::Ready(messages.as_mut().poll_next(cx))).await
}

/// The game version a watch message brings its watcher to.
fn game_event_id(message: &WatchGameResponse) -> Option<i64> {
    match message.message.as_ref()? {
        G::Snapshot(game) => Some(game.version),
        G::Event(event) => event.event.as_ref().map(|e| e.version),
        G::KeepAlive(version) | G::FellBehind(version) => Some(*version),
    }
}

/// The store position a server stream's client resumes after.
fn server_event_id(message: &WatchServerResponse) -> Option<i64> {
    match message.message.as_ref()? {
        S::Event(event) => Some(event.position),
        S::KeepAlive(position) | S::FellBehind(position) => Some(*position),
    }
}

/// Each message as an SSE event with its id; a status that ends the
/// stream as a `status` event with the error's JSON (not `error`: that is
/// the name of `EventSource`'s own event for a lost connection, and a page
/// must tell the two apart).
fn events<T: Serialize + Send + 'static>(
    messages: impl Stream<Item = Result<T, tonic::Status>> + Send + 'static,
    id: fn(&T) -> Option<i64>,
    json: impl Fn(&T) -> Arc<str> + Send + 'static,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>> + Send + 'static> {
    let events = messages.map(move |message| {
        Ok(match message {
            Ok(message) => {
                let event = Event::default().data(json(&message));
                match id(&message) {
                    Some(id) => event.id(id.to_string()),
                    None => event,
                }
            }
            Err(status) => Event::default().event("status").data(Failed(status).json()),
        })
    });
    Sse::new(events)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::routing::get;
    use carcassonne_engine::{Rules, Seed, Setup};
    use carcassonne_store::{EventStore, GameId, MemoryStore, RequestId};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpStream;

    use super::*;
    use crate::games::{Acting, Games, NewGame};

    /// `/api/server/watch` of `watch` served over HTTP/1.1 on a loopback
    /// port, as the server serves it.
    async fn served(watch: Arc<WatchService>) -> std::net::SocketAddr {
        let router = axum::Router::new().route(
            "/api/server/watch",
            get(move |headers: HeaderMap, RawQuery(raw): RawQuery| {
                let watch = watch.clone();
                async move { server_events(&watch, &headers, raw.as_deref()).await }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(
            tonic::transport::Server::builder()
                .accept_http1(true)
                .add_routes(tonic::service::Routes::from(router))
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
        );
        addr
    }

    /// A lobby page's stream: its answer's head read, its events not.
    async fn lobby_page(addr: std::net::SocketAddr) -> TcpStream {
        let mut connection = TcpStream::connect(addr).await.unwrap();
        let request = format!("GET /api/server/watch HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        connection.write_all(request.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(connection.read(&mut byte).await.unwrap(), 1);
            head.push(byte[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        connection
    }

    /// Waits, without anything else happening meanwhile, until `done`.
    async fn until(what: &str, mut done: impl FnMut() -> bool) {
        for _ in 0..500 {
            if done() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{what}: not within 5 s");
    }

    /// A game of two guests in `games`, played `actions` actions; its
    /// seats' tokens.
    async fn played(games: &Games, id: &GameId, actions: usize) -> Vec<String> {
        let setup = Setup {
            rules: Rules::default(),
            players: vec!["A".to_owned(), "B".to_owned()],
            tiles: None,
            seed: Some(Seed::from_u64(1)),
            time_control: None,
        };
        let request = RequestId::new(format!("create-{id}")).unwrap();
        let created = games.create(id, &request, NewGame::guests(setup, 0)).unwrap();
        let tokens: Vec<String> = created.tokens.into_iter().flatten().collect();
        act(games, id, &tokens, actions).await;
        tokens
    }

    /// `actions` actions in game `id`, the first legal one each time.
    async fn act(games: &Games, id: &GameId, tokens: &[String], actions: usize) {
        for _ in 0..actions {
            let loaded = games.load(id).unwrap();
            let seat = loaded.game.pending().player().unwrap();
            let command = loaded.game.legal_commands()[0];
            let request = RequestId::new(format!("r{}", loaded.version)).unwrap();
            let token = &tokens[usize::from(seat.0)];
            let Acting::InFlight(written) = games.act(id, token, loaded.version, &request, &command).unwrap()
            else {
                panic!("a new request id is not a retry");
            };
            games.settle(written).await.unwrap();
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_lobby_page_that_leaves_takes_its_stream_and_its_work_along() {
        let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
        let games = Arc::new(Games::new(store, 16));
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let key = Arc::new(carcassonne_archive::SigningKey::from_secret_bytes([7; 32]));
        let watch = Arc::new(WatchService::new(games.clone(), stopping, 16, key));
        let addr = served(watch.clone()).await;
        // Games running before the pages open: a stream would meet them
        // mid-way and read them.
        let mut running = Vec::new();
        for n in 0..3 {
            let id = GameId::new(format!("running-{n}")).unwrap();
            let tokens = played(&games, &id, 3).await;
            running.push((id, tokens));
        }
        let count = 10;
        let mut pages = Vec::new();
        for _ in 0..count {
            pages.push(lobby_page(addr).await);
        }
        until("every page follows", || watch.server_stream_followers() == count).await;
        // The pages close, without reading anything: their streams go, and
        // the shared classification with the last one, before anything
        // else happens.
        drop(pages);
        until("no page follows", || watch.server_stream_followers() == 0).await;
        // Moves that change nothing the stream tells: nobody works on them.
        let (folds, classified) = (games.folds(), watch.server_stream_events_classified());
        for (id, tokens) in &running {
            act(&games, id, tokens, 1).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            (games.folds(), watch.server_stream_events_classified()),
            (folds, classified),
            "work after the pages left"
        );
    }
}
