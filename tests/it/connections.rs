//! Connections and streams cost the server a bounded amount whatever the
//! callers do: connections that say nothing (or only the HTTP/2 preface)
//! are closed after the first-request deadline and idle ones after the
//! idle timeout, connections past the cap are closed at once while the
//! others go on, and streaming calls past their bound per connection and
//! in total are refused with TOO_MANY_STREAMS while other calls go on.
//! Real sockets on loopback; the deadlines are short here so that the
//! tests run fast.

use std::time::Duration;

use carcassonne::proto;
use carcassonne::server::{ConnectionLimits, ServerConfig};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tonic::Code;

use crate::support::{TestServer, new_game, play, reason, replay_request, watch, watch_request, with_token};

/// What a client of HTTP/2 sends first.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A replay that stays open: a step a minute.
fn slow_replay(name: &str) -> proto::ReplayGameRequest {
    proto::ReplayGameRequest {
        interval_ms: 60_000,
        ..replay_request(name, Some(1), None)
    }
}

/// A server on a store of its own with `limits`.
async fn server_with(limits: ConnectionLimits) -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start_with(ServerConfig {
        data: dir.path().to_owned(),
        connections: limits,
        ..ServerConfig::default()
    })
    .await;
    // Answering: the listener is bound and the services are up.
    drop(server.client().await);
    (server, dir)
}

/// Whether the server closes `stream` before `deadline` (reading and
/// dropping whatever it sends first, such as its HTTP/2 settings).
async fn closed_before(stream: &mut TcpStream, deadline: Instant) -> bool {
    let mut buffer = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// `n` raw connections to the server, each sending `first` (if anything).
async fn raw_connections(server: &TestServer, n: usize, first: &[u8]) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(n);
    for _ in 0..n {
        let mut stream = TcpStream::connect(server.addr).await.unwrap();
        if !first.is_empty() {
            stream.write_all(first).await.unwrap();
        }
        streams.push(stream);
    }
    streams
}

/// How many of `streams` the server closes before `deadline`.
async fn count_closed(streams: Vec<TcpStream>, deadline: Instant) -> usize {
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|mut stream| tokio::spawn(async move { closed_before(&mut stream, deadline).await }))
        .collect();
    let mut closed = 0;
    for task in tasks {
        closed += usize::from(task.await.unwrap());
    }
    closed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_without_a_request_are_closed_after_the_first_request_deadline() {
    // Given a server that gives a new connection 1 s for its first request
    let (server, _dir) = server_with(ConnectionLimits {
        first_request_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(60),
        ..ConnectionLimits::default()
    })
    .await;
    let mut client = server.client().await;
    // When 300 connections send nothing and 200 only the HTTP/2 preface
    let silent = raw_connections(&server, 300, b"").await;
    let preface = raw_connections(&server, 200, PREFACE).await;
    // Then the server closes every one of them soon after the deadline
    let deadline = Instant::now() + Duration::from_secs(6);
    let (silent, preface) = tokio::join!(count_closed(silent, deadline), count_closed(preface, deadline));
    assert_eq!(
        (silent, preface),
        (300, 200),
        "closed of (300 silent, 200 preface)"
    );
    // And a client that makes its calls goes on meanwhile
    let (name, tokens) = new_game(&mut client, "idle-flood", 3).await;
    play(&mut client, &name, &tokens, 4).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_idle_after_its_requests_is_closed_but_not_one_with_a_stream_open() {
    // Given a server that closes connections idle for 2 s
    let (server, _dir) = server_with(ConnectionLimits {
        first_request_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(2),
        ..ConnectionLimits::default()
    })
    .await;
    let mut client = server.client().await;
    let (name, tokens) = new_game(&mut client, "idle-after", 4).await;
    // When an HTTP/1.1 client asks once and then stays silent
    let mut asked = TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "GET /api/games/{} HTTP/1.1\r\nhost: test\r\n\r\n",
        name.trim_start_matches("games/")
    );
    asked.write_all(request.as_bytes()).await.unwrap();
    let started = Instant::now();
    // And another connection keeps a stream open, with nothing to say
    let mut watcher = server.watcher().await;
    let mut stream = watch(&mut watcher, watch_request(&name, None)).await;
    // Then the silent one is closed after about the idle timeout, not before
    assert!(closed_before(&mut asked, started + Duration::from_secs(8)).await);
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    // And the stream's connection is still open: the game's next event arrives
    tokio::time::sleep(Duration::from_secs(2)).await;
    play(&mut client, &name, &tokens, 1).await;
    let next = tokio::time::timeout(Duration::from_secs(5), stream.message())
        .await
        .expect("the watch's event in time")
        .expect("the watch goes on");
    assert!(next.is_some());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_a_connection_is_closed_at_once_while_the_others_go_on() {
    // Given a server that allows 20 connections, one of them a client's
    let (server, _dir) = server_with(ConnectionLimits {
        max_connections: 20,
        first_request_timeout: Duration::from_secs(60),
        ..ConnectionLimits::default()
    })
    .await;
    let mut client = server.client().await;
    let (name, tokens) = new_game(&mut client, "at-the-cap", 5).await;
    // The probe of `server_with` has gone: wait until its slot is free.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut idle = raw_connections(&server, 19, b"").await;
    // When one more connects
    let mut extra = TcpStream::connect(server.addr).await.unwrap();
    // Then it is closed at once
    let soon = Instant::now() + Duration::from_secs(2);
    assert!(
        closed_before(&mut extra, soon).await,
        "a connection past the cap stays open"
    );
    // And the client's connection serves on
    play(&mut client, &name, &tokens, 4).await;
    // And once a connection closes, a new one is served
    drop(idle.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut another = server.client().await;
    play(&mut another, &name, &tokens, 1).await;
    drop(idle);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unread_replays_past_their_bounds_are_refused_while_acts_go_on() {
    // Given a server that allows 10 streams a connection and 25 in all
    let (server, _dir) = server_with(ConnectionLimits {
        max_streaming_calls: 25,
        max_streaming_calls_per_connection: 10,
        ..ConnectionLimits::default()
    })
    .await;
    let mut client = server.client().await;
    let (name, tokens) = new_game(&mut client, "replay-flood", 6).await;
    let version = play(&mut client, &name, &tokens, 6).await;
    // When one connection opens replays it never reads
    let mut flooder = server.watcher().await;
    let mut open = Vec::new();
    for _ in 0..10 {
        let replay = flooder.replay_game(slow_replay(&name)).await.unwrap();
        open.push(replay.into_inner());
    }
    // Then the one past its connection's bound is refused, saying so
    let refused = flooder.replay_game(slow_replay(&name)).await.unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused)),
        (Code::ResourceExhausted, "TOO_MANY_STREAMS".to_owned())
    );
    assert!(refused.message().contains("connection"), "{}", refused.message());
    let details = tonic_types::StatusExt::get_error_details(&refused);
    let info = details.error_info().unwrap();
    assert_eq!(info.metadata.get("limit").map(String::as_str), Some("10"));
    assert_eq!(info.metadata.get("scope").map(String::as_str), Some("connection"));
    // And when other connections open more, the server's bound refuses them
    let mut second = server.watcher().await;
    for _ in 0..10 {
        open.push(second.replay_game(slow_replay(&name)).await.unwrap().into_inner());
    }
    let mut third = server.watcher().await;
    for _ in 0..5 {
        open.push(third.replay_game(slow_replay(&name)).await.unwrap().into_inner());
    }
    let full = third.replay_game(slow_replay(&name)).await.unwrap_err();
    assert_eq!(reason(&full), "TOO_MANY_STREAMS");
    let details = tonic_types::StatusExt::get_error_details(&full);
    let info = details.error_info().unwrap();
    assert_eq!(info.metadata.get("scope").map(String::as_str), Some("server"));
    assert_eq!(info.metadata.get("limit").map(String::as_str), Some("25"));
    // And an event stream over HTTP too, with the JSON error
    let sse = crate::http::get(&server, "/api/server/watch", &[]).await;
    assert_eq!((sse.status, sse.reason()), (429, "TOO_MANY_STREAMS".to_owned()));
    // And meanwhile another client's Act is answered
    let acted = play(&mut client, &name, &tokens, 2).await;
    assert!(acted > version);
    let legal = client
        .get_legal_actions(with_token(
            proto::GetLegalActionsRequest { name: name.clone() },
            &tokens[0],
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(legal.version, acted);
    // And once streams end, their places are free again
    open.truncate(10);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut again = third.replay_game(slow_replay(&name)).await.unwrap().into_inner();
    assert!(again.message().await.unwrap().is_some());
    drop((open, again));
    server.stop().await;
}
