//! Registered players and tournaments against floods of anonymous calls.
//! `cargo bench --bench competition`.
//!
//! The whole server runs in-process on a loopback port, the sled store
//! durable as in production (as in `load.rs`).
//!
//! 1. Registration: `COMPETITION_PLAYERS` [20000] anonymous
//!    RegisterPlayer calls on a server with open registration and no rate
//!    limit, from `COMPETITION_CLIENTS` [8] connections at once. Figures:
//!    the calls' p50 and p99 while the registry held its first thousand
//!    players and its last thousand, the ratio of the last to the first
//!    (a cost independent of the registry's size: about 1), and the rate
//!    of each thousand. Then, on a server with `--registration-rate`
//!    `COMPETITION_RATE` [60] a minute, a burst of twice that: how many
//!    were let through, and the refusals' code.
//! 2. Archives: a round robin of `COMPETITION_HOUSE_BOTS` [16] house bots
//!    (120 games for 16), played by the server to its end. Then, for
//!    `COMPETITION_SECONDS` [6] each, an ordinary game played by one
//!    client as fast as it answers, its Act calls timed: alone (the
//!    baseline), while `COMPETITION_GETS` [40] HTTP clients GET the
//!    tournament's archive (`/api/tournaments/{id}/archive`) over and
//!    over, and while they GET a game's (`/api/games/{id}/archive`).
//!    Figures: Act p50 and p99 in each phase and their ratio to the
//!    baseline's, the archives served and their median latency.
//!
//! `COMPETITION_THREADS` [the number of cores] sets the runtime's
//! workers.

// A bench: a failure should stop it loudly.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use carcassonne::players::Registration;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::player_service_client::PlayerServiceClient;
use carcassonne::proto::tournament_service_client::TournamentServiceClient;
use carcassonne::proto::{self, DecisionKind};
use carcassonne::server::{ServerConfig, serve};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tonic::transport::Channel;

use support::stats::percentile;
use support::{Rng, connect, env};

const ADMIN_KEY: &str = "the-competition-bench-admin-key-0";

struct Settings {
    players: usize,
    clients: usize,
    rate: u32,
    house_bots: usize,
    seconds: f64,
    gets: usize,
}

fn with_key<T>(message: T, key: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    request
}

/// A server on a loopback port with `config`; stop it with the sender.
async fn start(
    config: ServerConfig,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        serve(config, listener, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    (addr, stop, server)
}

fn ms(micros: u64) -> String {
    format!("{:.2} ms", micros as f64 / 1e3)
}

fn line(label: &str, value: String) {
    println!("{label:<58} {value:>14}");
}

/// Part 1: every call's latency (µs) by the registry's size when it was
/// made, and how long each took from the start.
async fn registration(settings: &Settings, dir: &std::path::Path) {
    let (addr, stop, server) = start(ServerConfig {
        data: dir.join("registry"),
        registration: Registration::Open,
        registration_rate: None,
        ..ServerConfig::default()
    })
    .await;
    let channels = connect(addr, settings.clients).await;
    let next = Arc::new(AtomicUsize::new(0));
    let total = settings.players;
    let tasks: Vec<_> = channels
        .into_iter()
        .map(|channel| {
            let next = next.clone();
            tokio::spawn(async move {
                let mut players = PlayerServiceClient::new(channel);
                let mut timed = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= total {
                        return timed;
                    }
                    let sent = Instant::now();
                    players
                        .register_player(proto::RegisterPlayerRequest {
                            name: format!("p{n:06}"),
                        })
                        .await
                        .unwrap();
                    timed.push((n, sent, sent.elapsed().as_micros() as u64));
                }
            })
        })
        .collect();
    let mut timed = Vec::new();
    for task in tasks {
        timed.extend(task.await.unwrap());
    }
    timed.sort_unstable_by_key(|t| t.0);
    let _ = stop.send(());
    server.await.unwrap();

    let thousand = 1000.min(total / 2).max(1);
    let figures = |slice: &[(usize, Instant, u64)]| {
        let mut latencies: Vec<u64> = slice.iter().map(|t| t.2).collect();
        latencies.sort_unstable();
        let first = slice.iter().map(|t| t.1).min().unwrap();
        let last = slice
            .iter()
            .map(|t| t.1 + Duration::from_micros(t.2))
            .max()
            .unwrap();
        let rate = slice.len() as f64 / (last - first).as_secs_f64();
        (percentile(&latencies, 0.50), percentile(&latencies, 0.99), rate)
    };
    let (first_p50, first_p99, first_rate) = figures(&timed[..thousand]);
    let (last_p50, last_p99, last_rate) = figures(&timed[total - thousand..]);
    println!();
    println!(
        "registration: {total} anonymous players from {} connections",
        settings.clients
    );
    line(&format!("p50, the first {thousand}"), ms(first_p50));
    line(&format!("p50, the last {thousand}"), ms(last_p50));
    line(
        "p50, last / first",
        format!("{:.2}", last_p50 as f64 / first_p50 as f64),
    );
    line(&format!("p99, the first {thousand}"), ms(first_p99));
    line(&format!("p99, the last {thousand}"), ms(last_p99));
    line(
        &format!("registrations/s, the first {thousand}"),
        format!("{first_rate:.0}"),
    );
    line(
        &format!("registrations/s, the last {thousand}"),
        format!("{last_rate:.0}"),
    );
}

fn main() {
    let settings = Settings {
        players: env("COMPETITION_PLAYERS", 20_000),
        clients: env("COMPETITION_CLIENTS", 8),
        rate: env("COMPETITION_RATE", 60),
        house_bots: env("COMPETITION_HOUSE_BOTS", 16),
        seconds: env("COMPETITION_SECONDS", 6.0),
        gets: env("COMPETITION_GETS", 40),
    };
    let threads = env(
        "COMPETITION_THREADS",
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    let runtime = support::runtime(threads);
    let dir = tempfile::tempdir().unwrap();
    println!(
        "competition: {} cores, {threads} runtime workers",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    runtime.block_on(async {
        registration(&settings, dir.path()).await;
    });
}
