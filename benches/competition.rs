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
//!    over, while they GET a game's (`/api/games/{id}/archive`), and while
//!    they GET its verification (`/api/games/{id}/verify`).
//!    Figures: Act p50 and p99 in each phase and their ratio to the
//!    baseline's, the archives served and their median latency. The
//!    flooding clients accept gzip, as browsers do.
//!
//! `COMPETITION_THREADS` [the number of cores] sets the runtime's
//! workers.

// A bench: a failure should stop it loudly.
#![allow(clippy::unwrap_used)]

// Shared with the other benches, which use the rest of it.
#[allow(dead_code)]
mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use carcassonne::players::Registration;
use carcassonne::proto;
use carcassonne::proto::player_service_client::PlayerServiceClient;
use carcassonne::proto::tournament_service_client::TournamentServiceClient;
use carcassonne::server::{ServerConfig, serve};
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tonic::transport::Channel;

use support::games::{create_game, play};
use support::stats::percentile;
use support::{connect, env};

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

/// Part 1, the bound: a burst of twice `rate` anonymous registrations on a
/// server that takes `rate` a minute.
async fn registration_rate(settings: &Settings, dir: &std::path::Path) {
    let (addr, stop, server) = start(ServerConfig {
        data: dir.join("rated"),
        registration: Registration::Open,
        registration_rate: std::num::NonZeroU32::new(settings.rate),
        ..ServerConfig::default()
    })
    .await;
    let mut players = PlayerServiceClient::new(connect(addr, 1).await.remove(0));
    let (mut taken, mut refused) = (0, Vec::new());
    for n in 0..2 * settings.rate {
        let request = proto::RegisterPlayerRequest {
            name: format!("burst{n:05}"),
        };
        match players.register_player(request).await {
            Ok(_) => taken += 1,
            Err(status) => refused.push(status.code()),
        }
    }
    let _ = stop.send(());
    server.await.unwrap();
    println!();
    println!(
        "registration rate: a burst of {} on a server taking {} a minute",
        2 * settings.rate,
        settings.rate
    );
    line("registered", taken.to_string());
    line(
        "refused, RESOURCE_EXHAUSTED",
        refused
            .iter()
            .filter(|c| **c == tonic::Code::ResourceExhausted)
            .count()
            .to_string(),
    );
    line(
        "refused otherwise",
        refused
            .iter()
            .filter(|c| **c != tonic::Code::ResourceExhausted)
            .count()
            .to_string(),
    );
}

type HttpClient = Client<HttpConnector, Empty<Bytes>>;

fn http_client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new()).build(connector)
}

/// A round robin of `house_bots` house bots, played by the server to its
/// end; returns its id and one of its games' ids.
async fn finished_tournament(addr: SocketAddr, house_bots: usize) -> (String, String) {
    let channel = connect(addr, 1).await.remove(0);
    let mut players = PlayerServiceClient::new(channel.clone());
    let organiser = players
        .register_player(with_key(
            proto::RegisterPlayerRequest {
                name: "Organiser".to_owned(),
            },
            ADMIN_KEY,
        ))
        .await
        .unwrap()
        .into_inner()
        .api_key;
    players
        .set_organiser(with_key(
            proto::SetOrganiserRequest {
                name: "players/Organiser".to_owned(),
                organiser: true,
            },
            ADMIN_KEY,
        ))
        .await
        .unwrap();
    let mut tournaments = TournamentServiceClient::new(channel);
    let request = proto::CreateTournamentRequest {
        request_id: "competition-bench-archive".to_owned(),
        title: "Archive bench".to_owned(),
        house_bots: vec!["random".to_owned(); house_bots],
        format: proto::TournamentFormat::RoundRobin as i32,
        time_control: Some(proto::TimeControl {
            decision_ms: 10_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        ..Default::default()
    };
    let created = tournaments
        .create_tournament(with_key(request, &organiser))
        .await
        .unwrap()
        .into_inner()
        .tournament
        .unwrap();
    loop {
        let now = tournaments
            .get_tournament(proto::GetTournamentRequest {
                name: created.name.clone(),
            })
            .await
            .unwrap()
            .into_inner()
            .tournament
            .unwrap();
        if now.status == proto::TournamentStatus::Finished as i32 {
            let game = now.paired_rounds[0].tables[0].games[0].game.clone();
            return (
                created.name.trim_start_matches("tournaments/").to_owned(),
                game.trim_start_matches("games/").to_owned(),
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Ordinary games played one after another for `seconds`: every Act's
/// latency (µs).
async fn acts_for(channel: Channel, seconds: f64, phase: u64) -> Vec<u64> {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut latencies = Vec::new();
    let mut n = 0;
    while Instant::now() < deadline {
        n += 1;
        let game = create_game(
            channel.clone(),
            format!("competition-bench-game-{phase}-{n}"),
            phase * 1000 + n,
            None,
        )
        .await;
        let (_, _, durations) = play(channel.clone(), &game, usize::MAX, Duration::ZERO, n).await;
        latencies.extend(durations.into_iter().map(|d| d as u64));
    }
    latencies.sort_unstable();
    latencies
}

/// `clients` HTTP clients GET `url` over and over until `stop`: each
/// answer's latency (µs) and the bytes of the last.
async fn flood(url: String, clients: usize, stop: Arc<tokio::sync::Notify>) -> (Vec<u64>, usize) {
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (url, done) = (url.clone(), done.clone());
            tokio::spawn(async move {
                let client = http_client();
                let mut latencies = Vec::new();
                let mut size = 0;
                while !done.load(Ordering::Relaxed) {
                    let sent = Instant::now();
                    // As browsers ask: gzip if the server will.
                    let request = http::Request::get(&url)
                        .header(http::header::ACCEPT_ENCODING, "gzip")
                        .body(Empty::new())
                        .unwrap();
                    let response = client.request(request).await.unwrap();
                    assert_eq!(response.status(), 200, "{url}");
                    size = response.into_body().collect().await.unwrap().to_bytes().len();
                    latencies.push(sent.elapsed().as_micros() as u64);
                }
                (latencies, size)
            })
        })
        .collect();
    stop.notified().await;
    done.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    let mut size = 0;
    for task in tasks {
        let (mine, bytes) = task.await.unwrap();
        latencies.extend(mine);
        size = size.max(bytes);
    }
    latencies.sort_unstable();
    (latencies, size)
}

/// Part 2.
async fn archives(settings: &Settings, dir: &std::path::Path) {
    let (addr, stop, server) = start(ServerConfig {
        data: dir.join("archives"),
        admin_key: Some(ADMIN_KEY.to_owned()),
        ..ServerConfig::default()
    })
    .await;
    let started = Instant::now();
    let (tournament, game) = finished_tournament(addr, settings.house_bots).await;
    let played_for = started.elapsed();
    let channel = connect(addr, 1).await.remove(0);
    let phases = [
        ("alone (baseline)", None),
        (
            "tournament archive GETs",
            Some(format!("http://{addr}/api/tournaments/{tournament}/archive")),
        ),
        (
            "game archive GETs",
            Some(format!("http://{addr}/api/games/{game}/archive")),
        ),
        (
            "game verify GETs",
            Some(format!("http://{addr}/api/games/{game}/verify")),
        ),
    ];
    let mut results = Vec::new();
    for (phase, (label, url)) in phases.iter().enumerate() {
        let stop_flood = Arc::new(tokio::sync::Notify::new());
        let flooding = url
            .clone()
            .map(|url| tokio::spawn(flood(url, settings.gets, stop_flood.clone())));
        let acts = acts_for(channel.clone(), settings.seconds, phase as u64).await;
        stop_flood.notify_one();
        let flooded = match flooding {
            Some(task) => Some(task.await.unwrap()),
            None => None,
        };
        results.push((label, acts, flooded));
    }
    let _ = stop.send(());
    server.await.unwrap();

    println!();
    println!(
        "archives: a round robin of {} house bots, played in {:.1} s; {} s of an ordinary game per phase, {} HTTP clients flooding",
        settings.house_bots,
        played_for.as_secs_f64(),
        settings.seconds,
        settings.gets
    );
    let (base_p50, base_p99) = (percentile(&results[0].1, 0.50), percentile(&results[0].1, 0.99));
    for (label, acts, flooded) in &results {
        let (p50, p99) = (percentile(acts, 0.50), percentile(acts, 0.99));
        line(&format!("Act p50, {label} ({} acts)", acts.len()), ms(p50));
        line(&format!("Act p99, {label}"), ms(p99));
        line(
            &format!("Act p50 / p99 against the baseline, {label}"),
            format!(
                "{:.2} / {:.2}",
                p50 as f64 / base_p50 as f64,
                p99 as f64 / base_p99 as f64
            ),
        );
        if let Some((latencies, size)) = flooded {
            line(
                &format!("{label}: answers ({size} bytes each)"),
                latencies.len().to_string(),
            );
            line(
                &format!("{label}: median latency"),
                ms(percentile(latencies, 0.50)),
            );
        }
    }
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
        registration_rate(&settings, dir.path()).await;
        archives(&settings, dir.path()).await;
    });
}
