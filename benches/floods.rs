//! Floods against the server's bounds on connections and streams: an
//! ordinary game's Act latency while each flood runs, against the same
//! run without it. `cargo bench --bench floods`.
//!
//! The real binary as a child process (`carcassonne serve`, its default
//! limits), so that its memory and CPU time are its own. Each round has
//! three phases of `FLOODS_SECONDS`, in which one bot on a connection of
//! its own plays 2-player games flat out (Act with a random legal action),
//! every Act's latency measured:
//!
//! 1. quiet: nothing else;
//! 2. idle connections: `FLOODS_IDLE` raw TCP connections, half sending
//!    nothing and half only the HTTP/2 preface, opened at the phase's
//!    start and each opened again as soon as the server closes it (after
//!    its first-request deadline, 10 s);
//! 3. replays: `FLOODS_REPLAYS` ReplayGame streams of a finished game (of
//!    about 215 events), never read, over `FLOODS_REPLAY_CONNECTIONS`
//!    connections, all asked at the phase's start and held to its end;
//!    those past the bounds are refused (TOO_MANY_STREAMS).
//!
//! Figures: each phase's Act p50 and p99 (median of the rounds) and its
//! ratio to the quiet phase's, the server's CPU time per phase; for the
//! idle flood how many connections the server closed and refused; for the
//! replays how many were open and refused, and the server's memory per
//! open stream (VmRSS once settled, after opening them, against before).
//!
//! Environment (defaults in brackets): `FLOODS_ROUNDS` [3],
//! `FLOODS_SECONDS` [12], `FLOODS_IDLE` [2000], `FLOODS_REPLAYS` [5000],
//! `FLOODS_REPLAY_CONNECTIONS` [64], `FLOODS_THREADS` [the number of
//! cores].

// A bench: a failure should stop it loudly.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use carcassonne::proto;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tonic::Code;
use tonic::transport::Channel;

use support::child::ChildServer;
use support::games::{Bot, Route, create_game, play};
use support::stats::{median, percentile};
use support::{connect, env};

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

struct Settings {
    rounds: usize,
    seconds: u64,
    idle: usize,
    replays: usize,
    replay_connections: usize,
    threads: usize,
}

impl Settings {
    fn from_env() -> Settings {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let settings = Settings {
            rounds: env("FLOODS_ROUNDS", 3),
            seconds: env("FLOODS_SECONDS", 12),
            idle: env("FLOODS_IDLE", 2000),
            replays: env("FLOODS_REPLAYS", 5000),
            replay_connections: env("FLOODS_REPLAY_CONNECTIONS", 64),
            threads: env("FLOODS_THREADS", cores),
        };
        assert!(settings.rounds > 0 && settings.seconds > 0 && settings.replay_connections > 0);
        settings
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flood {
    Quiet,
    Idle,
    Replays,
}

impl Flood {
    const ALL: [Flood; 3] = [Flood::Quiet, Flood::Idle, Flood::Replays];

    fn name(self) -> &'static str {
        match self {
            Flood::Quiet => "quiet",
            Flood::Idle => "idle connections",
            Flood::Replays => "unread replays",
        }
    }
}

/// What one phase measured.
#[derive(Default)]
struct Phase {
    /// Every Act's latency, in microseconds.
    acts: Vec<i64>,
    cpu_ms: f64,
    /// Idle flood: connections the server closed, connections refused.
    closed: usize,
    refused: usize,
    /// Replays: open and refused streams, server memory per open stream.
    open: usize,
    too_many: usize,
    bytes_per_stream: f64,
}

/// Games played flat out by one bot on `channel` until `until`; every
/// Act's latency in microseconds.
async fn bot(channel: Channel, until: Instant, seed: u64) -> Vec<i64> {
    let mut latencies = Vec::new();
    let mut game = 0u64;
    while Instant::now() < until {
        game += 1;
        let created = create_game(channel.clone(), format!("bot-{seed}-{game}"), seed + game, None).await;
        let bot = Bot {
            until: Some(until),
            ..Bot::new(Route::one(channel.clone()), seed ^ game)
        };
        bot.play(&created, |acted| {
            latencies.push((acted.returned - acted.sent).as_micros() as i64);
        })
        .await
        .unwrap();
    }
    latencies
}

/// Holds `n` raw connections open until `until` (half silent, half with
/// the HTTP/2 preface), opening each again when the server closes it.
/// Returns how many the server closed, and how many connects failed.
async fn idle_flood(addr: SocketAddr, n: usize, until: Instant) -> (usize, usize) {
    let closed = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (closed, refused) = (closed.clone(), refused.clone());
            tokio::spawn(async move {
                let mut buffer = [0u8; 256];
                while Instant::now() < until {
                    let Ok(mut stream) = TcpStream::connect(addr).await else {
                        refused.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    };
                    if i % 2 == 1 && stream.write_all(PREFACE).await.is_err() {
                        continue;
                    }
                    // Until the server closes it, or the phase ends.
                    loop {
                        let read = tokio::time::timeout_at(until.into(), stream.read(&mut buffer)).await;
                        match read {
                            Err(_) => return,
                            Ok(Ok(0) | Err(_)) => {
                                closed.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                            Ok(Ok(_)) => {}
                        }
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    (closed.load(Ordering::Relaxed), refused.load(Ordering::Relaxed))
}

/// Asks `n` ReplayGame streams of `game` over `channels`, reads none of
/// them; returns those open and how many were refused with
/// TOO_MANY_STREAMS.
async fn open_replays(
    channels: &[Channel],
    game: &str,
    n: usize,
) -> (Vec<tonic::Streaming<proto::ReplayGameResponse>>, usize) {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let mut client = WatchServiceClient::new(channels[i % channels.len()].clone());
            let request = proto::ReplayGameRequest {
                name: game.to_owned(),
                from_version: Some(1),
                ..Default::default()
            };
            tokio::spawn(async move { client.replay_game(request).await })
        })
        .collect();
    let mut open = Vec::new();
    let mut refused = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(stream) => open.push(stream.into_inner()),
            Err(status) if status.code() == Code::ResourceExhausted => refused += 1,
            Err(status) => panic!("a replay failed: {status}"),
        }
    }
    (open, refused)
}

async fn phase(
    flood: Flood,
    settings: &Settings,
    server: &ChildServer,
    bot_channel: &Channel,
    replayed: &str,
    seed: u64,
) -> Phase {
    let until = Instant::now() + Duration::from_secs(settings.seconds);
    let cpu_before = server.cpu_millis();
    let acts = tokio::spawn(bot(bot_channel.clone(), until, seed));
    let mut measured = Phase::default();
    match flood {
        Flood::Quiet => {}
        Flood::Idle => {
            (measured.closed, measured.refused) = idle_flood(server.addr, settings.idle, until).await;
        }
        Flood::Replays => {
            let before = server.settled_rss().await;
            let channels = connect(server.addr, settings.replay_connections).await;
            let (open, refused) = open_replays(&channels, replayed, settings.replays).await;
            let after = server.settled_rss().await;
            measured.open = open.len();
            measured.too_many = refused;
            measured.bytes_per_stream = (after as f64 - before as f64) / open.len().max(1) as f64;
            tokio::time::sleep_until(until.into()).await;
            drop(open);
        }
    }
    measured.acts = acts.await.unwrap();
    measured.cpu_ms = server.cpu_millis() - cpu_before;
    // Let the flood's connections and streams go before the next phase.
    tokio::time::sleep(Duration::from_secs(1)).await;
    measured
}

fn ms(micros: f64) -> f64 {
    micros / 1000.0
}

fn main() {
    let settings = Settings::from_env();
    support::runtime(settings.threads).block_on(run(settings));
}

async fn run(settings: Settings) {
    println!(
        "floods: {} rounds of 3 phases of {} s; idle flood {} connections, replay flood {} \
         streams over {} connections; {} tokio threads on {} cores",
        settings.rounds,
        settings.seconds,
        settings.idle,
        settings.replays,
        settings.replay_connections,
        settings.threads,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    );
    let server = ChildServer::start();
    let channel = connect(server.addr, 1).await.remove(0);
    // The replays' game: one whole 2-player game.
    let replayed = create_game(channel.clone(), "replayed".to_owned(), 7, None).await;
    play(channel.clone(), &replayed, usize::MAX, Duration::ZERO, 7).await;
    let bot_channel = connect(server.addr, 1).await.remove(0);

    let mut phases: Vec<Vec<Phase>> = Flood::ALL.iter().map(|_| Vec::new()).collect();
    for round in 0..settings.rounds {
        for (k, &flood) in Flood::ALL.iter().enumerate() {
            let seed = (round * 10 + k) as u64 * 1000;
            let measured = phase(flood, &settings, &server, &bot_channel, &replayed.name, seed).await;
            let mut acts = measured.acts.clone();
            acts.sort_unstable();
            println!(
                "round {} {:>16}: {:>6} Acts, p50 {:>7.2} ms, p99 {:>7.2} ms, server CPU {:>7.0} ms",
                round + 1,
                flood.name(),
                acts.len(),
                ms(percentile(&acts, 0.5) as f64),
                ms(percentile(&acts, 0.99) as f64),
                measured.cpu_ms,
            );
            phases[k].push(measured);
        }
    }

    let p = |phase: &Phase, q: f64| {
        let mut acts = phase.acts.clone();
        acts.sort_unstable();
        ms(percentile(&acts, q) as f64)
    };
    let median_of = |k: usize, f: &dyn Fn(&Phase) -> f64| {
        let mut values: Vec<f64> = phases[k].iter().map(f).collect();
        median(&mut values)
    };
    let quiet_p50 = median_of(0, &|ph| p(ph, 0.5));
    let quiet_p99 = median_of(0, &|ph| p(ph, 0.99));
    println!();
    println!("Act latency, median of {} rounds:", settings.rounds);
    println!(
        "{:>18} {:>10} {:>10} {:>12} {:>12} {:>14}",
        "phase", "p50 ms", "p99 ms", "p50 / quiet", "p99 / quiet", "server CPU ms"
    );
    for (k, flood) in Flood::ALL.iter().enumerate() {
        let p50 = median_of(k, &|ph| p(ph, 0.5));
        let p99 = median_of(k, &|ph| p(ph, 0.99));
        println!(
            "{:>18} {:>10.2} {:>10.2} {:>12.2} {:>12.2} {:>14.0}",
            flood.name(),
            p50,
            p99,
            p50 / quiet_p50,
            p99 / quiet_p99,
            median_of(k, &|ph| ph.cpu_ms),
        );
    }
    println!();
    println!(
        "idle flood: {} connections held; closed by the server per phase {:.0} (median), refused {:.0}",
        settings.idle,
        median_of(1, &|ph| ph.closed as f64),
        median_of(1, &|ph| ph.refused as f64),
    );
    println!(
        "replay flood: {} asked; open {:.0}, refused with TOO_MANY_STREAMS {:.0} (medians); \
         server memory per open stream {:.1} KB",
        settings.replays,
        median_of(2, &|ph| ph.open as f64),
        median_of(2, &|ph| ph.too_many as f64),
        median_of(2, &|ph| ph.bytes_per_stream) / 1024.0,
    );
}
