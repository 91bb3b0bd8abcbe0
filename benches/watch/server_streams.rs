//! What an open server stream costs (WatchServer over gRPC, and the web
//! lobby's `/api/server/watch` over SSE) while hundreds of games run, and
//! what streams cost once their clients have gone.
//!
//! The real binary as a child process (`carcassonne serve`), its VmRSS and
//! CPU time from `/proc`. `games` games are created and started, and one
//! stream of each kind is opened and read to its end by a client (what
//! every stream needs once, the shared classification of each event, is
//! paid). Then rounds of play: each round takes `ACTIONS_PER_ROUND` random
//! actions in every game and, for the memory, creates
//! `NEW_GAMES_PER_ROUND` games (changes the streams are sent).
//!
//! 1. Memory. For each kind, `BATCHES` batches of `streams / BATCHES`
//!    streams opened from now and never read, each after a round without
//!    them (its RSS growth is the batch's baseline) and followed by a
//!    round: per stream, the RSS growth of opening the batch ("opening
//!    alone"), and of opening it and the round less the baseline round's
//!    (the figure judged); medians of the batches. Then they are all
//!    cancelled.
//! 2. CPU after the clients have gone. `rounds` rounds without new games
//!    (nothing the streams tell changes) and 2 s idle, with no stream but
//!    the first two; then `streams` streams of each kind, read by their
//!    clients through a round, are cancelled (the gRPC streams reset, the
//!    SSE connections closed), and the same 2 s idle and rounds follow:
//!    the CPU time of each, medians, against the same before.

use std::time::Duration;

use carcassonne::proto::{self, watch_service_client::WatchServiceClient};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;

use crate::support::child::ChildServer;
use crate::support::connect;
use crate::support::games::{Created, create_game, play};
use crate::support::stats::median;

/// Random actions in every game per round.
const ACTIONS_PER_ROUND: usize = 4;
/// Games created per round, each a change for the streams.
const NEW_GAMES_PER_ROUND: usize = 10;
/// Batches each kind of stream is opened in.
pub const BATCHES: usize = 3;
/// Games played at once.
const PLAYED_AT_ONCE: usize = 64;
/// Idle time measured before the streams and after their cancellation.
const IDLE: Duration = Duration::from_secs(2);

pub struct ServerStreams {
    pub games: usize,
    pub streams: usize,
    /// The shared part: RSS growth from opening the first stream of each
    /// kind through the warm-up round, bytes.
    pub shared: f64,
    /// Median RSS growth of a baseline round, bytes.
    pub round_growth: f64,
    /// Per open unread stream, median of the batches, bytes (and each
    /// batch's figure).
    pub per_grpc: f64,
    pub per_grpc_batches: Vec<f64>,
    pub per_sse: f64,
    pub per_sse_batches: Vec<f64>,
    /// Per stream, the RSS growth of opening a batch, before any round:
    /// medians of the batches, bytes.
    pub open_grpc: f64,
    pub open_sse: f64,
    /// CPU milliseconds per second while idle, before the streams and
    /// after their cancellation.
    pub idle_before: f64,
    pub idle_after: f64,
    /// CPU milliseconds of a round without new games, medians: before the
    /// streams, and after their cancellation.
    pub round_cpu: f64,
    pub round_cpu_after: f64,
    pub rss_start: u64,
    pub rss_peak: u64,
}

/// The games and how far each was played: a round goes on from there.
struct Tables {
    channels: Vec<Channel>,
    games: Vec<Created>,
    created: usize,
    round: u64,
}

impl Tables {
    /// A round: `ACTIONS_PER_ROUND` actions in every game, and new games if
    /// `create`.
    async fn round(&mut self, create: bool) {
        self.round += 1;
        let round = self.round;
        let mut games = std::mem::take(&mut self.games);
        let mut played = Vec::with_capacity(games.len());
        while !games.is_empty() {
            let at_once: Vec<Created> = games.drain(..PLAYED_AT_ONCE.min(games.len())).collect();
            let tasks: Vec<_> = at_once
                .into_iter()
                .enumerate()
                .map(|(i, mut game)| {
                    let channel = self.channels[i % self.channels.len()].clone();
                    tokio::spawn(async move {
                        let seed = round << 32 | i as u64;
                        let (_, version, _) =
                            play(channel, &game, ACTIONS_PER_ROUND, Duration::ZERO, seed).await;
                        game.version = version;
                        game
                    })
                })
                .collect();
            for task in tasks {
                played.push(task.await.unwrap());
            }
        }
        self.games = played;
        if create {
            for _ in 0..NEW_GAMES_PER_ROUND {
                self.create().await;
            }
        }
    }

    async fn create(&mut self) {
        let n = self.created;
        self.created += 1;
        let channel = self.channels[n % self.channels.len()].clone();
        let game = create_game(channel, format!("lobby-{n}"), 5000 + n as u64, None).await;
        self.games.push(game);
    }
}

async fn grpc_stream(channel: Channel) -> tonic::Streaming<proto::WatchServerResponse> {
    WatchServiceClient::new(channel)
        .watch_server(proto::WatchServerRequest {
            from_position: None,
            keep_alive_ms: 300_000,
        })
        .await
        .unwrap()
        .into_inner()
}

/// `/api/server/watch` on a connection of its own, its answer's head read,
/// its events left unread.
async fn sse_stream(server: &ChildServer) -> TcpStream {
    let mut connection = TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "GET /api/server/watch?keep_alive_ms=300000 HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\r\n",
        server.addr
    );
    connection.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(
            connection.read(&mut byte).await.unwrap(),
            1,
            "the server closed the stream"
        );
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    connection
}

/// A round without new streams (its RSS growth goes to `growth`), then
/// `open` and a round: the RSS growth of opening and the round less the
/// first round's, and of opening alone.
async fn batch_of(
    server: &ChildServer,
    tables: &mut Tables,
    growth: &mut Vec<f64>,
    open: impl std::future::Future<Output = ()>,
) -> (f64, f64) {
    let before = server.settled_rss().await;
    tables.round(true).await;
    let baseline = server.settled_rss().await;
    growth.push(baseline as f64 - before as f64);
    open.await;
    let opened = server.settled_rss().await;
    tables.round(true).await;
    let after = server.settled_rss().await;
    let grown = after as f64 - baseline as f64 - (baseline as f64 - before as f64);
    (grown, opened as f64 - baseline as f64)
}

/// Reads a gRPC stream to its end (or until aborted).
fn drain_grpc(mut stream: tonic::Streaming<proto::WatchServerResponse>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move { while let Some(Ok(_)) = stream.next().await {} })
}

/// Reads an SSE connection to its end (or until aborted).
fn drain_sse(mut connection: TcpStream) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = [0u8; 4096];
        while connection.read(&mut chunk).await.is_ok_and(|n| n > 0) {}
    })
}

/// The CPU milliseconds `work` takes the server.
async fn cpu_of(server: &ChildServer, work: impl std::future::Future<Output = ()>) -> f64 {
    let before = server.cpu_millis();
    work.await;
    // What the server still does for it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    server.cpu_millis() - before
}

/// The CPU milliseconds per second of `IDLE` of the server, and of
/// `rounds` rounds without new games (the median).
async fn cpu_idle_and_rounds(server: &ChildServer, tables: &mut Tables, rounds: usize) -> (f64, f64) {
    let idle = cpu_of(server, tokio::time::sleep(IDLE)).await / IDLE.as_secs_f64();
    let mut cpus = Vec::new();
    for _ in 0..rounds {
        cpus.push(cpu_of(server, tables.round(false)).await);
    }
    (idle, median(&mut cpus))
}

pub async fn measure(games: usize, streams: usize, rounds: usize, channels: usize) -> ServerStreams {
    let server = ChildServer::start();
    let channels = connect(server.addr, channels).await;
    let mut tables = Tables {
        channels: channels.clone(),
        games: Vec::new(),
        created: 0,
        round: 0,
    };
    for _ in 0..games {
        tables.create().await;
    }
    let rss_start = server.settled_rss().await;
    // One stream of each kind, read: the first change proves it live.
    let mut first_grpc = grpc_stream(channels[0].clone()).await;
    let mut first_sse = sse_stream(&server).await;
    tables.create().await;
    let first = first_grpc.next().await.unwrap().unwrap();
    assert!(matches!(
        first.message,
        Some(proto::watch_server_response::Message::Event(_))
    ));
    let mut chunk = [0u8; 512];
    assert!(first_sse.read(&mut chunk).await.unwrap() > 0);
    let first_readers = [drain_grpc(first_grpc), drain_sse(first_sse)];
    // Warm-up: the games started, and met by the shared classification.
    tables.round(true).await;
    let shared = server.settled_rss().await as f64 - rss_start as f64;

    let batch = (streams / BATCHES).max(1);
    let mut growth = Vec::new();
    let mut grpc = Vec::new();
    let (mut per_grpc_batches, mut open_grpc) = (Vec::new(), Vec::new());
    for _ in 0..BATCHES {
        let (grown, opened) = batch_of(&server, &mut tables, &mut growth, async {
            for i in 0..batch {
                grpc.push(grpc_stream(channels[i % channels.len()].clone()).await);
            }
        })
        .await;
        per_grpc_batches.push(grown / batch as f64);
        open_grpc.push(opened / batch as f64);
    }
    let mut sse = Vec::new();
    let (mut per_sse_batches, mut open_sse) = (Vec::new(), Vec::new());
    for _ in 0..BATCHES {
        let (grown, opened) = batch_of(&server, &mut tables, &mut growth, async {
            for _ in 0..batch {
                sse.push(sse_stream(&server).await);
            }
        })
        .await;
        per_sse_batches.push(grown / batch as f64);
        open_sse.push(opened / batch as f64);
    }
    let round_growth = median(&mut growth);
    let rss_peak = server.settled_rss().await;
    drop(grpc);
    drop(sse);

    // CPU: before, then streams read through a round and cancelled.
    let (idle_before, round_cpu) = cpu_idle_and_rounds(&server, &mut tables, rounds).await;
    let mut readers = Vec::new();
    for i in 0..batch * BATCHES {
        readers.push(drain_grpc(
            grpc_stream(channels[i % channels.len()].clone()).await,
        ));
        readers.push(drain_sse(sse_stream(&server).await));
    }
    tables.round(false).await;
    for reader in &readers {
        reader.abort();
    }
    for reader in readers {
        let _ = reader.await;
    }
    let (idle_after, round_cpu_after) = cpu_idle_and_rounds(&server, &mut tables, rounds).await;
    for reader in first_readers {
        reader.abort();
    }
    ServerStreams {
        games,
        streams: batch * BATCHES,
        shared,
        round_growth,
        per_grpc: median(&mut per_grpc_batches.clone()),
        per_grpc_batches,
        per_sse: median(&mut per_sse_batches.clone()),
        per_sse_batches,
        open_grpc: median(&mut open_grpc),
        open_sse: median(&mut open_sse),
        idle_before,
        idle_after,
        round_cpu,
        round_cpu_after,
        rss_start,
        rss_peak,
    }
}
