//! HTTP on the server's port: the board pictures' throughput against the
//! health check, and server-sent events to many pages following one game.
//! `cargo bench --bench http`.
//!
//! The whole server runs in-process on a loopback port (as in `load.rs`
//! and `watch.rs`); the clients are HTTP/1.1 connections with keep-alive,
//! as browsers open them.
//!
//! 1. Pictures: a 5-player River+Count game played to its end by random
//!    legal actions, then rounds of `HTTP_SECONDS` each of `GET
//!    /api/health` (the baseline), `GET /games/{id}/board.svg?version=N`
//!    and `.png` (N: the last version, rendered once and then kept by the
//!    server; and N: every version in turn, so that each request
//!    renders), from `HTTP_CLIENTS` connections at once; the
//!    five kinds alternate for `HTTP_ROUNDS` rounds. Figures: requests/s
//!    (median of the rounds), the requests' median latency, and each
//!    picture's ratio to the health check.
//! 2. Fan-out: `HTTP_PAGES` SSE streams (`/api/games/{id}/watch`), each on
//!    a connection of its own, opened before the first move of a 2-player
//!    game that a bot then plays to its end over gRPC. Every (event, page)
//!    pair gives a delivery latency from the event's `time_ms` (the store's
//!    clock at its append) to the page's receipt, on the same wall clock;
//!    the target is p99 < 50 ms for 1,000 pages. Every page must see every
//!    event once, in order, each SSE id its version. The bot plays flat
//!    out unless `HTTP_PAUSE_MS` says how long it thinks between actions.
//!
//! Environment (defaults in brackets): `HTTP_SECONDS` [2], `HTTP_ROUNDS`
//! [3], `HTTP_CLIENTS` [8], `HTTP_PAGES` [1000], `HTTP_PAUSE_MS` [0],
//! `HTTP_THREADS` [the number
//! of cores], `HTTP_DURABILITY` [flush] (as in `load.rs`).

// A bench: a failure should stop it loudly.
#![allow(clippy::unwrap_used)]

mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, DecisionKind};
use carcassonne::server::{ServerConfig, serve};
use carcassonne_store::StoreConfig;
use http_body_util::{BodyExt as _, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use tonic::Request;
use tonic::transport::Channel;

use support::stats::{median, percentile};
use support::verdict::{P99_SAMPLE, Target};
use support::{Rng, connect, env};

const DELIVERY_P99_TARGET: Duration = Duration::from_millis(50);
/// The fan-out target is stated for 1,000 pages.
const FAN_OUT_SIZE: Option<(u64, &str)> = Some((1_000, "pages"));

type HttpClient = Client<HttpConnector, Empty<Bytes>>;

fn http_client() -> HttpClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(usize::MAX)
        .build(connector)
}

fn unix_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
}

/// A game created with `players` bots and `expansions`, played by random
/// legal actions until it ends or `max_actions` were taken, `pause`
/// between them. Returns the name and the last version.
async fn create(
    channel: Channel,
    players: usize,
    expansions: &[proto::Expansion],
    seed: u64,
) -> (String, Vec<String>, i64) {
    let mut client = GameServiceClient::new(channel);
    let created = client
        .create_game(proto::CreateGameRequest {
            request_id: format!("http-bench-{seed}"),
            players: (0..players).map(|i| format!("Bot {i}")).collect(),
            rules: Some(proto::RuleOptions {
                expansions: expansions.iter().map(|e| *e as i32).collect(),
                ..Default::default()
            }),
            seed: Rng(seed).seed(),
            tiles: Vec::new(),
            spectator_delay: 0,
            time_control: None,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let game = created.game.unwrap();
    let tokens = created
        .tokens
        .iter()
        .map(|t| format!("Bearer {}", t.token))
        .collect();
    (game.name, tokens, game.version)
}

async fn play(channel: Channel, name: &str, tokens: &[String], seed: u64, pause: Duration) -> i64 {
    let mut client = GameServiceClient::new(channel);
    let mut rng = Rng(seed);
    let legal = client
        .get_legal_actions(proto::GetLegalActionsRequest {
            name: name.to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    let (mut version, mut pending, mut actions) =
        (legal.version, legal.pending.unwrap_or_default(), legal.actions);
    while pending.kind != DecisionKind::Unspecified as i32 {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let mut request = Request::new(proto::ActRequest {
            name: name.to_owned(),
            expected_version: version,
            request_id: format!("v{version}"),
            action: Some(actions[rng.below(actions.len())]),
            view: proto::GameView::Basic as i32,
        });
        request
            .metadata_mut()
            .insert("authorization", tokens[pending.seat as usize].parse().unwrap());
        let answer = client.act(request).await.unwrap().into_inner();
        version = answer.version;
        pending = answer.game.and_then(|g| g.pending).unwrap_or_default();
        actions = answer.legal_actions;
    }
    version
}

/// Requests per second and the median latency (µs) of `GET url` from
/// `clients` connections for `seconds`; a `{v}` in `url` is replaced by
/// a version of `2..=last` that changes with every request.
async fn throughput(url: &str, last: i64, clients: usize, seconds: f64) -> (f64, i64, usize) {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|n| {
            let template = url.to_owned();
            tokio::spawn(async move {
                // One client each: a connection of its own.
                let client = http_client();
                let mut latencies = Vec::new();
                let mut version = 2 + (n as i64 * 31) % (last - 1);
                while Instant::now() < deadline {
                    version = 2 + (version - 2 + 1) % (last - 1);
                    let url = template.replace("{v}", &version.to_string());
                    let sent = Instant::now();
                    let request = http::Request::get(&url).body(Empty::new()).unwrap();
                    let response = client.request(request).await.unwrap();
                    assert_eq!(response.status(), 200, "{url}");
                    let body = response.into_body().collect().await.unwrap().to_bytes();
                    assert!(!body.is_empty());
                    latencies.push(sent.elapsed().as_micros() as i64);
                }
                latencies
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_unstable();
    let median = latencies.get(latencies.len() / 2).copied().unwrap_or(0);
    (latencies.len() as f64 / elapsed, median, latencies.len())
}

/// The first integer string value of `"field":"…"` in `json`.
fn field(json: &str, field: &str) -> Option<i64> {
    let key = format!("\"{field}\":\"");
    let start = json.find(&key)? + key.len();
    let end = start + json[start..].find('"')?;
    json[start..end].parse().ok()
}

/// What one page received: per event, its SSE id, its version, its
/// `time_ms` and the wall clock at receipt (µs).
struct Page {
    snapshot: Option<i64>,
    events: Vec<(i64, i64, i64, i64)>,
    other: usize,
}

/// Opens an SSE watch of `name` after `from`, says when it is open, and
/// reads it to its end. Receipt times are taken before any parsing.
async fn page(client: HttpClient, url: String, ready: tokio::sync::mpsc::Sender<()>) -> Page {
    let request = http::Request::get(&url).body(Empty::new()).unwrap();
    let response = client.request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();
    let mut buffer = String::new();
    let mut page = Page {
        snapshot: None,
        events: Vec::with_capacity(256),
        other: 0,
    };
    while let Some(frame) = body.frame().await {
        let at = unix_micros();
        let Ok(data) = frame.unwrap().into_data() else {
            continue;
        };
        buffer.push_str(std::str::from_utf8(&data).unwrap());
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut id = None;
            let mut json = "";
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("id: ").or_else(|| line.strip_prefix("id:")) {
                    id = value.trim().parse::<i64>().ok();
                } else if let Some(value) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:"))
                {
                    json = value;
                }
            }
            if json.starts_with("{\"snapshot\"") {
                page.snapshot = id;
                ready.send(()).await.unwrap();
            } else if json.starts_with("{\"event\"") {
                let (version, time_ms) = (field(json, "version").unwrap(), field(json, "timeMs").unwrap());
                page.events.push((id.unwrap(), version, time_ms, at));
            } else {
                page.other += 1;
            }
        }
    }
    page
}

struct FanOut {
    pages: usize,
    events: i64,
    pairs: usize,
    p50: i64,
    p99: i64,
    max: i64,
    bad_pages: usize,
}

async fn fan_out(addr: SocketAddr, pages: usize, pause: Duration) -> FanOut {
    let bot = connect(addr, 1).await.remove(0);
    let (name, tokens, version) = create(bot.clone(), 2, &[], 0x5e).await;
    let url = format!(
        "http://{addr}/api/games/{}/watch?from_version={version}",
        &name["games/".len()..]
    );
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(pages);
    let tasks: Vec<_> = (0..pages)
        .map(|_| tokio::spawn(page(http_client(), url.clone(), ready_tx.clone())))
        .collect();
    drop(ready_tx);
    for _ in 0..pages {
        ready_rx.recv().await.unwrap();
    }
    let last = play(bot, &name, &tokens, 0xb07, pause).await;
    let expected: Vec<i64> = (version + 1..=last).collect();
    let mut delays = Vec::new();
    let mut bad_pages = 0;
    for task in tasks {
        let page = task.await.unwrap();
        let versions: Vec<i64> = page.events.iter().map(|e| e.1).collect();
        let ids_right = page.events.iter().all(|e| e.0 == e.1);
        if page.snapshot != Some(version) || versions != expected || !ids_right || page.other > 0 {
            bad_pages += 1;
        }
        delays.extend(page.events.iter().map(|&(_, _, time_ms, at)| at - time_ms * 1000));
    }
    delays.sort_unstable();
    FanOut {
        pages,
        events: last - version,
        pairs: delays.len(),
        p50: percentile(&delays, 0.50),
        p99: percentile(&delays, 0.99),
        max: delays.last().copied().unwrap_or(0),
        bad_pages,
    }
}

fn ms(micros: i64) -> String {
    format!("{:.2} ms", micros as f64 / 1e3)
}

async fn run() {
    let seconds: f64 = env("HTTP_SECONDS", 2.0);
    let rounds: usize = env("HTTP_ROUNDS", 3);
    let clients: usize = env("HTTP_CLIENTS", 8);
    let pages: usize = env("HTTP_PAGES", 1000);
    let pause = Duration::from_millis(env("HTTP_PAUSE_MS", 0));
    println!(
        "http: pictures {rounds} rounds of {seconds} s from {clients} connections; {pages} SSE pages, bot pause {} ms; {} cores",
        pause.as_millis(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServerConfig {
        data: dir.path().join("data"),
        store: StoreConfig {
            durability: support::durability("HTTP_DURABILITY"),
            ..StoreConfig::default()
        },
        ..ServerConfig::default()
    };
    let server = tokio::spawn(serve(config, listener, async {
        let _ = stopped.await;
    }));

    // 1. Pictures of a finished 5-player River+Count game.
    let bot = connect(addr, 1).await.remove(0);
    let expansions = [proto::Expansion::River, proto::Expansion::Count];
    let (name, tokens, _) = create(bot.clone(), 5, &expansions, 0x9c).await;
    let last = play(bot, &name, &tokens, 0x9c, Duration::ZERO).await;
    let id = &name["games/".len()..];
    let kinds = [
        ("health", format!("http://{addr}/api/health")),
        (
            "board.svg",
            format!("http://{addr}/games/{id}/board.svg?version={last}"),
        ),
        (
            "board.png",
            format!("http://{addr}/games/{id}/board.png?version={last}"),
        ),
        // Every version in turn: each request renders.
        (
            "board.svg, every version",
            format!("http://{addr}/games/{id}/board.svg?version={{v}}"),
        ),
        (
            "board.png, every version",
            format!("http://{addr}/games/{id}/board.png?version={{v}}"),
        ),
    ];
    let mut per_second = vec![Vec::new(); kinds.len()];
    let mut medians = vec![Vec::new(); kinds.len()];
    let mut counts = vec![0; kinds.len()];
    for _ in 0..rounds {
        for (k, (_, url)) in kinds.iter().enumerate() {
            let (rate, median_latency, count) = throughput(url, last, clients, seconds).await;
            per_second[k].push(rate);
            medians[k].push(median_latency as f64);
            counts[k] += count;
        }
    }
    let png_bytes = {
        let client = http_client();
        let request = http::Request::get(&kinds[2].1).body(Empty::new()).unwrap();
        let response = client.request(request).await.unwrap();
        response.into_body().collect().await.unwrap().to_bytes().len()
    };

    // 2. SSE pages following one game live.
    let fan = fan_out(addr, pages, pause).await;
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    println!();
    println!("pictures of {name} at version {last} (5 players, River + Count); PNG {png_bytes} bytes");
    println!("{:<44} {:>14} {:>12} {:>8}", "figure", "value", "target", "");
    let line = |label: &str, value: String, target: &str, status: &str| {
        println!("{label:<44} {value:>14} {target:>12} {status:>8}");
    };
    let rates: Vec<f64> = per_second.iter_mut().map(|r| median(r)).collect();
    for (k, (kind, _)) in kinds.iter().enumerate() {
        line(
            &format!("{kind} requests/s (median of rounds)"),
            format!("{:.0}", rates[k]),
            "",
            "",
        );
        let latency = median(&mut medians[k]) as i64;
        line(&format!("{kind} median latency"), ms(latency), "", "");
        line(&format!("{kind} requests"), counts[k].to_string(), "", "");
    }
    for (k, (kind, _)) in kinds.iter().enumerate().skip(1) {
        line(
            &format!("{kind} / health"),
            format!("{:.3}", rates[k] / rates[0]),
            "",
            "",
        );
    }
    println!();
    println!(
        "fan-out: {} pages, {} events, {} deliveries, {} pages wrong",
        fan.pages, fan.events, fan.pairs, fan.bad_pages
    );
    let p99 = Target {
        size: FAN_OUT_SIZE,
        min_sample: P99_SAMPLE,
    }
    .judge(
        fan.pages as u64,
        fan.pairs,
        fan.p99 < DELIVERY_P99_TARGET.as_micros() as i64,
    );
    line("SSE delivery p50 (from time_ms)", ms(fan.p50), "", "");
    line(
        "SSE delivery p99 (from time_ms)",
        ms(fan.p99),
        "< 50 ms",
        &p99.to_string(),
    );
    line("SSE delivery max (from time_ms)", ms(fan.max), "", "");
    let in_order = Target {
        size: FAN_OUT_SIZE,
        min_sample: 1,
    }
    .judge(fan.pages as u64, fan.pairs, fan.bad_pages == 0);
    line(
        "every event once, in order, id = version",
        format!("{}/{}", fan.pages - fan.bad_pages, fan.pages),
        "all",
        &in_order.to_string(),
    );
}

fn main() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = support::runtime(env("HTTP_THREADS", cores));
    runtime.block_on(run());
}
