//! Watching and replaying games: fan-out latency, replay throughput and
//! the server's memory per watcher. `cargo bench --bench watch`.
//!
//! 1. Fan-out: the whole server in-process on a loopback port (as in
//!    `load.rs`), one game, `WATCH_WATCHERS` WatchGame streams over
//!    `WATCH_CHANNELS` connections, opened before the first move, while a
//!    bot on a connection of its own plays the game to its end (Act with a
//!    random legal action, the legal actions coming from the previous
//!    Act's answer). Every (event, watcher) pair gives a delivery latency,
//!    measured two ways:
//!    - from the event's `time_ms` (the store's clock when it appended the
//!      event, before the durable commit) to the watcher's receipt, on the
//!      same wall clock: end to end, it includes the commit and up to 1 ms
//!      of truncation of `time_ms`; the target is judged on this one;
//!    - from the moment the Act call that produced the event returned to
//!      the bot: the watchers' copy and the Act answer leave the server at
//!      about the same time, so this one can be negative and flatters.
//!
//!    Every watcher must get every event exactly once and in order.
//! 2. Replay: ReplayGame of that finished game with `interval_ms` 0,
//!    events per second from the call to the last message, median of
//!    `WATCH_REPLAY_RUNS` runs; the baseline is a tonic server in the same
//!    process on another loopback port whose `replay_game` streams the same
//!    messages, cloned from a real replay and built beforehand.
//! 3. Memory: the real binary as a child process (`carcassonne serve`),
//!    its VmRSS from `/proc/<pid>/status` before and after opening
//!    `WATCH_MEM_WATCHERS` watchers on one game (played to its middle
//!    first), and before and after watching `WATCH_MEM_GAMES` freshly
//!    created games (one watcher each). Client buffers are in this process,
//!    not in the figures.
//!
//! 4. Server streams: what an open, unread WatchServer stream and
//!    `/api/server/watch` SSE stream cost the real binary while
//!    `WATCH_LOBBY_GAMES` games run, and what they cost once cancelled
//!    (`watch/server_streams.rs` says how).
//!
//! Environment (defaults in brackets): `WATCH_WATCHERS` [1000],
//! `WATCH_CHANNELS` [16], `WATCH_PAUSE_MS` [0] (the bot's pause between
//! actions; 0 plays flat out), `WATCH_REPLAY_RUNS` [15],
//! `WATCH_MEM_WATCHERS` [1000], `WATCH_MEM_GAMES` [1000], `WATCH_THREADS`
//! [the number of cores], `WATCH_DURABILITY` [flush] (the in-process
//! server's store: `flush`, `written` or `none`, as in `load.rs`; `none` is
//! for finding out what the disk costs, not a figure to quote). The stores live in temporary directories under
//! `TMPDIR`. `WATCH_REPLAY_RUNS=0` skips the replay, `WATCH_MEM_WATCHERS=0`
//! and `WATCH_MEM_GAMES=0` their part of the memory (both: the child
//! server), to measure the fan-out alone on a busy machine.
//! `WATCH_LOBBY_GAMES` [300], `WATCH_LOBBY_STREAMS` [1500] (of each kind,
//! opened in 3 batches), `WATCH_LOBBY_ROUNDS` [3] (rounds of play measured
//! before the streams and after their cancellation);
//! `WATCH_LOBBY_STREAMS=0` skips the server streams.

// A bench: a failure should stop it loudly, and clippy's
// `allow-unwrap-in-tests` does not cover benches.
#![allow(clippy::unwrap_used)]

#[path = "watch/server_streams.rs"]
mod server_streams;
mod support;

use std::net::SocketAddr;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::watch_service_server::{WatchService, WatchServiceServer};
use carcassonne::proto::{self, watch_game_response::Message as W};
use carcassonne::server::{ServerConfig, serve};
use carcassonne_store::{Durability, StoreConfig};
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;

use support::child::ChildServer;
use support::games::{create_game, play};
use support::stats::{median, percentile};
use support::verdict::{P99_SAMPLE, Target};
use support::{connect, env};
use tonic::{Request, Response, Status};

const LATENCY_P99_TARGET: Duration = Duration::from_millis(20);
const REPLAY_RATIO_TARGET: f64 = 0.25;
/// The most an open server stream may cost, whatever the server holds.
const SERVER_STREAM_BYTES_TARGET: f64 = 64.0 * 1024.0;
/// The server streams' target is stated with this many games running.
const SERVER_STREAMS_SIZE: Option<(u64, &str)> = Some((300, "games"));

struct Settings {
    watchers: usize,
    channels: usize,
    pause: Duration,
    replay_runs: usize,
    mem_watchers: usize,
    mem_games: usize,
    lobby_games: usize,
    lobby_streams: usize,
    lobby_rounds: usize,
    threads: usize,
    durability: Durability,
}

impl Settings {
    fn from_env() -> Settings {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let settings = Settings {
            watchers: env("WATCH_WATCHERS", 1000),
            channels: env("WATCH_CHANNELS", 16),
            pause: Duration::from_millis(env("WATCH_PAUSE_MS", 0)),
            replay_runs: env("WATCH_REPLAY_RUNS", 15),
            mem_watchers: env("WATCH_MEM_WATCHERS", 1000),
            mem_games: env("WATCH_MEM_GAMES", 1000),
            lobby_games: env("WATCH_LOBBY_GAMES", 300),
            lobby_streams: env("WATCH_LOBBY_STREAMS", 1500),
            lobby_rounds: env("WATCH_LOBBY_ROUNDS", 3).max(1),
            threads: env("WATCH_THREADS", cores),
            durability: support::durability("WATCH_DURABILITY"),
        };
        assert!(settings.watchers > 0 && settings.channels > 0 && settings.threads > 0);

        settings
    }
}

fn unix_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
}

/// What one watcher received: per event, its version, its `time_ms`, and
/// when it arrived (wall clock in microseconds, and monotonic).
struct Received {
    snapshot: i64,
    events: Vec<(i64, i64, i64, Instant)>,
    fell_behind: Option<i64>,
}

/// Opens a watch stream from `from`, reports once the snapshot is in, and
/// reads the stream to its end.
async fn watch_to_end(
    channel: Channel,
    name: String,
    from: Option<i64>,
    ready: tokio::sync::mpsc::Sender<()>,
) -> Received {
    let mut client = WatchServiceClient::new(channel);
    let mut stream = client
        .watch_game(proto::WatchGameRequest {
            name,
            from_version: from,
            keep_alive_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut received = Received {
        snapshot: 0,
        events: Vec::with_capacity(256),
        fell_behind: None,
    };
    while let Some(message) = stream.next().await {
        match message.unwrap().message.unwrap() {
            W::Snapshot(game) => {
                received.snapshot = game.version;
                ready.send(()).await.unwrap();
            }
            W::Event(event) => {
                let (at, now) = (unix_micros(), Instant::now());
                let event = event.event.unwrap();
                received.events.push((event.version, event.time_ms, at, now));
            }
            W::KeepAlive(_) => {}
            W::FellBehind(v) => {
                received.fell_behind = Some(v);
                break;
            }
        }
    }
    received
}

struct FanOut {
    watchers: usize,
    events: i64,
    pairs: usize,
    /// From `time_ms` to receipt, microseconds.
    stored_p50: i64,
    stored_p99: i64,
    stored_max: i64,
    /// From the Act's return to receipt, microseconds (may be negative).
    act_p50: i64,
    act_p99: i64,
    /// Watchers that missed, repeated or reordered an event, or fell behind.
    bad_watchers: usize,
    play_seconds: f64,
    /// Deliveries timed from an Act's return.
    act_pairs: usize,
    /// Act calls timed.
    act_calls: usize,
    /// The Act calls' own latency, microseconds.
    act_call_p50: i64,
    act_call_p99: i64,
}

async fn fan_out(settings: &Settings, addr: SocketAddr) -> (FanOut, String) {
    let channels = connect(addr, settings.channels).await;
    let bot = connect(addr, 1).await.remove(0);
    let game = create_game(bot.clone(), "watched".to_owned(), 7, None).await;
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(settings.watchers);
    let watchers: Vec<_> = (0..settings.watchers)
        .map(|i| {
            tokio::spawn(watch_to_end(
                channels[i % channels.len()].clone(),
                game.name.clone(),
                Some(game.version),
                ready_tx.clone(),
            ))
        })
        .collect();
    drop(ready_tx);
    for _ in 0..settings.watchers {
        ready_rx.recv().await.unwrap();
    }
    let started = Instant::now();
    let (act_times, last, mut act_latencies) = play(bot, &game, usize::MAX, settings.pause, 0xb07).await;
    let play_seconds = started.elapsed().as_secs_f64();
    let expected: Vec<i64> = (game.version + 1..=last).collect();
    let mut stored = Vec::new();
    let mut from_act = Vec::new();
    let mut bad_watchers = 0;
    for watcher in watchers {
        let received = watcher.await.unwrap();
        let versions: Vec<i64> = received.events.iter().map(|e| e.0).collect();
        if received.snapshot != game.version || versions != expected || received.fell_behind.is_some() {
            bad_watchers += 1;
        }
        for (version, time_ms, at, now) in received.events {
            stored.push(at - time_ms * 1000);
            if let Some(returned) = act_times.get(&version) {
                from_act.push(if now >= *returned {
                    (now - *returned).as_micros() as i64
                } else {
                    -((*returned - now).as_micros() as i64)
                });
            }
        }
    }
    stored.sort_unstable();
    from_act.sort_unstable();
    act_latencies.sort_unstable();
    let figures = FanOut {
        watchers: settings.watchers,
        events: last - game.version,
        pairs: stored.len(),
        stored_p50: percentile(&stored, 0.50),
        stored_p99: percentile(&stored, 0.99),
        stored_max: stored.last().copied().unwrap_or(0),
        act_p50: percentile(&from_act, 0.50),
        act_p99: percentile(&from_act, 0.99),
        bad_watchers,
        play_seconds,
        act_pairs: from_act.len(),
        act_calls: act_latencies.len(),
        act_call_p50: percentile(&act_latencies, 0.50),
        act_call_p99: percentile(&act_latencies, 0.99),
    };
    (figures, game.name)
}

/// Replays `name` once; returns the steps and the seconds from the call to
/// the last message.
async fn replay_once(channel: Channel, name: &str) -> (Vec<proto::ReplayGameResponse>, f64) {
    let mut client = WatchServiceClient::new(channel);
    let started = Instant::now();
    let mut stream = client
        .replay_game(proto::ReplayGameRequest {
            name: name.to_owned(),
            from_version: Some(1),
            to_version: None,
            interval_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut steps = Vec::new();
    while let Some(step) = stream.next().await {
        steps.push(step.unwrap());
    }
    (steps, started.elapsed().as_secs_f64())
}

/// The baseline: a WatchService whose `replay_game` streams messages built
/// beforehand.
struct Baseline {
    steps: Arc<Vec<proto::ReplayGameResponse>>,
}

type Steps =
    std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<proto::ReplayGameResponse, Status>> + Send>>;
type Never<T> = std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<T, Status>> + Send>>;

#[tonic::async_trait]
impl WatchService for Baseline {
    type WatchGameStream = Never<proto::WatchGameResponse>;
    type WatchServerStream = Never<proto::WatchServerResponse>;
    type ReplayGameStream = Steps;
    type ExportGameArchiveStream = Never<proto::ExportGameArchiveResponse>;

    async fn watch_game(
        &self,
        _: Request<proto::WatchGameRequest>,
    ) -> Result<Response<Self::WatchGameStream>, Status> {
        Err(Status::unimplemented("baseline"))
    }

    async fn watch_server(
        &self,
        _: Request<proto::WatchServerRequest>,
    ) -> Result<Response<Self::WatchServerStream>, Status> {
        Err(Status::unimplemented("baseline"))
    }

    async fn replay_game(
        &self,
        _: Request<proto::ReplayGameRequest>,
    ) -> Result<Response<Self::ReplayGameStream>, Status> {
        let steps: Vec<_> = self.steps.iter().cloned().map(Ok).collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(steps))))
    }

    async fn get_game_at_version(
        &self,
        _: Request<proto::GetGameAtVersionRequest>,
    ) -> Result<Response<proto::GetGameAtVersionResponse>, Status> {
        Err(Status::unimplemented("baseline"))
    }

    async fn export_game(
        &self,
        _: Request<proto::ExportGameRequest>,
    ) -> Result<Response<proto::ExportGameResponse>, Status> {
        Err(Status::unimplemented("baseline"))
    }

    async fn verify_game(
        &self,
        _: Request<proto::VerifyGameRequest>,
    ) -> Result<Response<proto::VerifyGameResponse>, Status> {
        Err(Status::unimplemented("baseline"))
    }

    async fn export_game_archive(
        &self,
        _: Request<proto::ExportGameArchiveRequest>,
    ) -> Result<Response<Self::ExportGameArchiveStream>, Status> {
        Err(Status::unimplemented("baseline"))
    }

    async fn get_server_key(
        &self,
        _: Request<proto::GetServerKeyRequest>,
    ) -> Result<Response<proto::GetServerKeyResponse>, Status> {
        Err(Status::unimplemented("baseline"))
    }
}

struct Replay {
    events: usize,
    replay_per_second: f64,
    baseline_per_second: f64,
}

async fn replay(settings: &Settings, addr: SocketAddr, name: &str) -> Option<Replay> {
    if settings.replay_runs == 0 {
        return None;
    }
    let channel = connect(addr, 1).await.remove(0);
    // Warm up, and keep the messages of a real replay for the baseline.
    let (steps, _) = replay_once(channel.clone(), name).await;
    for _ in 0..2 {
        replay_once(channel.clone(), name).await;
    }
    let mut rates = Vec::new();
    for _ in 0..settings.replay_runs {
        let (got, seconds) = replay_once(channel.clone(), name).await;
        assert_eq!(got.len(), steps.len());
        rates.push(got.len() as f64 / seconds);
    }
    let replay_per_second = median(&mut rates);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let baseline_addr = listener.local_addr().unwrap();
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let events = steps.len();
    let service = WatchServiceServer::new(Baseline {
        steps: Arc::new(steps),
    });
    let server = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            }),
    );
    let baseline_channel = connect(baseline_addr, 1).await.remove(0);
    for _ in 0..3 {
        replay_once(baseline_channel.clone(), name).await;
    }
    let mut rates = Vec::new();
    for _ in 0..settings.replay_runs {
        let (got, seconds) = replay_once(baseline_channel.clone(), name).await;
        assert_eq!(got.len(), events);
        rates.push(got.len() as f64 / seconds);
    }
    let baseline_per_second = median(&mut rates);
    drop(baseline_channel);
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    Some(Replay {
        events,
        replay_per_second,
        baseline_per_second,
    })
}

struct Memory {
    watchers: usize,
    game_version: i64,
    per_watcher: f64,
    games: usize,
    per_created_game: f64,
    per_watched_game: f64,
    rss_start: u64,
    rss_end: u64,
}

/// Opens a watcher on each game (by index, round robin over the channels),
/// waits for every snapshot, and returns the readers, which keep the
/// streams open.
async fn open_watchers(channels: &[Channel], names: &[String]) -> Vec<tokio::task::JoinHandle<Received>> {
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(names.len().max(1));
    let handles: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            tokio::spawn(watch_to_end(
                channels[i % channels.len()].clone(),
                name.clone(),
                None,
                ready_tx.clone(),
            ))
        })
        .collect();
    drop(ready_tx);
    for _ in 0..names.len() {
        ready_rx.recv().await.unwrap();
    }
    handles
}

async fn memory(settings: &Settings) -> Option<Memory> {
    if settings.mem_watchers == 0 && settings.mem_games == 0 {
        return None;
    }
    let server = ChildServer::start();
    let channels = connect(server.addr, settings.channels).await;
    // One game, played to about its middle (a watcher holds the folded
    // game, so a game in progress is the honest size).
    let game = create_game(channels[0].clone(), "memory".to_owned(), 11, None).await;
    let (_, game_version, _) = play(channels[0].clone(), &game, 70, Duration::ZERO, 0x11).await;
    // One watcher first, so that what every stream needs once is paid.
    let warm = open_watchers(&channels, std::slice::from_ref(&game.name)).await;
    let rss_start = server.settled_rss().await;
    let names = vec![game.name.clone(); settings.mem_watchers];
    let one_game = open_watchers(&channels, &names).await;
    let after_watchers = server.settled_rss().await;
    let per_watcher = (after_watchers as f64 - rss_start as f64) / settings.mem_watchers.max(1) as f64;

    // Many games: created (64 at a time), then one watcher each.
    let mut names = Vec::with_capacity(settings.mem_games);
    for chunk in (0..settings.mem_games).collect::<Vec<_>>().chunks(64) {
        let created: Vec<_> = chunk
            .iter()
            .map(|&i| {
                tokio::spawn(create_game(
                    channels[i % channels.len()].clone(),
                    format!("m{i}"),
                    1000 + i as u64,
                    None,
                ))
            })
            .collect();
        for task in created {
            names.push(task.await.unwrap().name);
        }
    }
    let after_create = server.settled_rss().await;
    let many = open_watchers(&channels, &names).await;
    let rss_end = server.settled_rss().await;
    let per_created_game = (after_create as f64 - after_watchers as f64) / settings.mem_games.max(1) as f64;
    let per_watched_game = (rss_end as f64 - after_create as f64) / settings.mem_games.max(1) as f64;
    for handle in warm.into_iter().chain(one_game).chain(many) {
        handle.abort();
    }
    drop(channels);
    drop(server);
    Some(Memory {
        watchers: settings.mem_watchers,
        game_version,
        per_watcher,
        games: settings.mem_games,
        per_created_game,
        per_watched_game,
        rss_start,
        rss_end,
    })
}

fn main() {
    let settings = Settings::from_env();
    let runtime = support::runtime(settings.threads);
    runtime.block_on(run(settings));
}

fn ms(micros: i64) -> String {
    format!("{:.2} ms", micros as f64 / 1e3)
}

/// A latency, or `none` for a figure of no sample.
fn ms_of(sample: usize, micros: i64) -> String {
    if sample == 0 {
        "none".to_owned()
    } else {
        ms(micros)
    }
}

/// The fan-out targets are stated for 1,000 watchers.
const FAN_OUT_SIZE: Option<(u64, &str)> = Some((1_000, "watchers"));

async fn run(settings: Settings) {
    println!(
        "watch: {} watchers over {} connections, bot pause {} ms, {} tokio threads on {} cores, \
         durability {:?} (fan-out and replay)",
        settings.watchers,
        settings.channels,
        settings.pause.as_millis(),
        settings.threads,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        settings.durability,
    );
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let limit = settings.watchers.max(1024);
    let config = ServerConfig {
        data: dir.path().join("data"),
        max_streams_per_connection: u32::try_from(limit + 16).unwrap(),
        max_calls_per_connection: limit + 16,
        store: StoreConfig {
            durability: settings.durability,
            ..StoreConfig::default()
        },
        ..ServerConfig::default()
    };
    let server = tokio::spawn(serve(config, listener, async {
        let _ = stopped.await;
    }));

    let (fan, name) = fan_out(&settings, addr).await;
    let replayed = replay(&settings, addr, &name).await;
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    let mem = memory(&settings).await;
    let lobby = if settings.lobby_streams == 0 {
        None
    } else {
        Some(
            server_streams::measure(
                settings.lobby_games,
                settings.lobby_streams,
                settings.lobby_rounds,
                settings.channels,
            )
            .await,
        )
    };

    println!();
    println!(
        "fan-out: {} watchers, {} events in {:.2} s of play, {} deliveries, {} watchers wrong",
        fan.watchers, fan.events, fan.play_seconds, fan.pairs, fan.bad_watchers
    );
    if let Some(replayed) = &replayed {
        println!(
            "replay: {} events per replay, median of {} runs",
            replayed.events, settings.replay_runs
        );
    }
    if let Some(mem) = &mem {
        println!(
            "memory: child server RSS {:.1} MiB -> {:.1} MiB; {} watchers on one game at version {}, \
             {} games at creation",
            mem.rss_start as f64 / 1048576.0,
            mem.rss_end as f64 / 1048576.0,
            mem.watchers,
            mem.game_version,
            mem.games
        );
    }
    println!();
    println!("{:<44} {:>14} {:>12} {:>8}", "figure", "value", "target", "");
    let line = |label: &str, value: String, target: &str, status: &str| {
        println!("{label:<44} {value:>14} {target:>12} {status:>8}");
    };
    let watchers = fan.watchers as u64;
    let p99 = Target {
        size: FAN_OUT_SIZE,
        min_sample: P99_SAMPLE,
    }
    .judge(
        watchers,
        fan.pairs,
        fan.stored_p99 < LATENCY_P99_TARGET.as_micros() as i64,
    );
    // A latency that has no target of its own.
    let latency = |label: &str, sample: usize, micros: i64| line(label, ms_of(sample, micros), "", "");
    latency("delivery p50 (from time_ms)", fan.pairs, fan.stored_p50);
    line(
        "delivery p99 (from time_ms)",
        ms_of(fan.pairs, fan.stored_p99),
        "< 20 ms",
        &p99.to_string(),
    );
    latency("delivery max (from time_ms)", fan.pairs, fan.stored_max);
    latency("delivery p50 (from Act's return)", fan.act_pairs, fan.act_p50);
    latency("delivery p99 (from Act's return)", fan.act_pairs, fan.act_p99);
    latency(
        "  (Act call p50, with the watchers)",
        fan.act_calls,
        fan.act_call_p50,
    );
    latency(
        "  (Act call p99, with the watchers)",
        fan.act_calls,
        fan.act_call_p99,
    );
    // Judged on the deliveries checked: no watcher or no event checks
    // nothing.
    let in_order = Target {
        size: FAN_OUT_SIZE,
        min_sample: 1,
    }
    .judge(watchers, fan.pairs, fan.bad_watchers == 0);
    line(
        "every event once, in order",
        format!("{}/{}", fan.watchers - fan.bad_watchers, fan.watchers),
        "all",
        &in_order.to_string(),
    );
    if let Some(replayed) = &replayed {
        let ratio = replayed.replay_per_second / replayed.baseline_per_second;
        line(
            "ReplayGame events/s",
            format!("{:.0}", replayed.replay_per_second),
            "",
            "",
        );
        line(
            "baseline messages/s",
            format!("{:.0}", replayed.baseline_per_second),
            "",
            "",
        );
        // Timed runs of a replay with events in it, of any game's size.
        let runs = if replayed.events == 0 {
            0
        } else {
            settings.replay_runs
        };
        let verdict = Target {
            size: None,
            min_sample: 1,
        }
        .judge(0, runs, ratio >= REPLAY_RATIO_TARGET);
        line(
            "replay / baseline",
            format!("{ratio:.3}"),
            ">= 0.25",
            &verdict.to_string(),
        );
    }
    if let Some(lobby) = &lobby {
        print_server_streams(lobby, &line);
    }
    let Some(mem) = &mem else { return };
    let bytes = |measured: bool, value: f64| {
        if measured {
            format!("{value:.0}")
        } else {
            "skipped".to_owned()
        }
    };
    line(
        "server bytes per watcher",
        bytes(mem.watchers > 0, mem.per_watcher),
        "",
        "",
    );
    line(
        "server bytes per created game (cached)",
        bytes(mem.games > 0, mem.per_created_game),
        "",
        "",
    );
    line(
        "server bytes per watched game (1 watcher)",
        bytes(mem.games > 0, mem.per_watched_game),
        "",
        "",
    );
}

fn print_server_streams(lobby: &server_streams::ServerStreams, line: &impl Fn(&str, String, &str, &str)) {
    let kib = |bytes: f64| format!("{:.1} KiB", bytes / 1024.0);
    let batches = |figures: &[f64]| {
        figures
            .iter()
            .map(|&bytes| format!("{:.1}", bytes / 1024.0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "server streams: {} games running, {} streams of each kind opened unread in {} batches; \
         child server RSS {:.1} MiB -> {:.1} MiB; per-stream KiB by batch: gRPC [{}], SSE [{}]",
        lobby.games,
        lobby.streams,
        server_streams::BATCHES,
        lobby.rss_start as f64 / 1048576.0,
        lobby.rss_peak as f64 / 1048576.0,
        batches(&lobby.per_grpc_batches),
        batches(&lobby.per_sse_batches),
    );
    let target = Target {
        size: SERVER_STREAMS_SIZE,
        min_sample: server_streams::BATCHES,
    };
    for (label, per, figures) in [
        (
            "WatchServer bytes per open stream",
            lobby.per_grpc,
            &lobby.per_grpc_batches,
        ),
        (
            "/api/server/watch bytes per open stream",
            lobby.per_sse,
            &lobby.per_sse_batches,
        ),
    ] {
        let verdict = target.judge(
            lobby.games as u64,
            figures.len(),
            per < SERVER_STREAM_BYTES_TARGET,
        );
        line(label, kib(per), "< 64 KiB", &verdict.to_string());
    }
    line("  (WatchServer: opening alone)", kib(lobby.open_grpc), "", "");
    line(
        "  (/api/server/watch: opening alone)",
        kib(lobby.open_sse),
        "",
        "",
    );
    line(
        "  (shared: first streams + classification)",
        kib(lobby.shared),
        "",
        "",
    );
    line(
        "  (a round's RSS growth without them)",
        kib(lobby.round_growth),
        "",
        "",
    );
    line(
        "idle CPU ms/s before streams",
        format!("{:.1}", lobby.idle_before),
        "",
        "",
    );
    line(
        "idle CPU ms/s after cancelling them",
        format!("{:.1}", lobby.idle_after),
        "",
        "",
    );
    line(
        "round CPU ms (no new game), before / after",
        format!("{:.0} / {:.0}", lobby.round_cpu, lobby.round_cpu_after),
        "",
        "",
    );
    line(
        "  ratio after / before",
        format!("{:.2}", lobby.round_cpu_after / lobby.round_cpu.max(1.0)),
        "",
        "",
    );
}
