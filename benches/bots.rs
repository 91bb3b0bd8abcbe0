//! The server's bots under a flood of bot games. `cargo bench --bench bots`.
//!
//! Each round runs two phases, each on a fresh in-process server (on a
//! loopback port, the default bot configuration):
//! - **quiet**: `BOTS_ORDINARY` [4] ordinary games (no bots) played by
//!   clients that take a random legal action every `BOTS_PAUSE_MS` [20]
//!   ms (Act's latency measured), and two games in which a person (the
//!   bench, acting 50 ms after its turn comes) plays a bot: `greedy`
//!   under a 4 s limit a decision, and `search:10000000` under a 2 s
//!   limit, whose budget is 500 ms (a quarter of the limit). A bot's
//!   decision time is read from the stored events: its event's time less
//!   the time of the event before it (when its decision became pending).
//! - **flood**: the same, while `BOTS_FLOOD` [400] CreateGame calls with
//!   five `search:10000000` seats each are attempted at once, and
//!   `BOTS_FLOOD_RATE` [20] more a second after them; the bot games of
//!   the phase are created before the flood.
//!
//! A phase lasts until both bot games end (at most `BOTS_SECONDS` [90]).
//! It prints, per phase, the medians over `BOTS_ROUNDS` [2] rounds of
//! Act's p50 and p99, of the greedy bot's median, p99 and slowest
//! decision, of the search's median and slowest decision, and of the
//! flood's creations taken on and refused (BOTS_BUSY), with the timeouts
//! (which must be none). `BOTS_WORKERS` sets the bots' workers (the
//! server's default: one a core, at most 4); `BOTS_DURABILITY` [flush]
//! the store's (`flush`, `written`, `none`). Targets, judged on every
//! phase's measurements together: no bot seat times out, the search's
//! decisions are stored within their 500 ms budget (the p99: on a machine
//! whose cores are shared a thread may wait tens of milliseconds for one,
//! the slowest is printed), and the greedy bot's p99 during the floods is
//! under 250 ms.

// A bench: a failure should stop it loudly, and clippy's
// `allow-unwrap-in-tests` does not cover benches.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use carcassonne::games::bot_seats::BotConfig;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, game_event::Event as E};
use carcassonne::server::{ServerConfig, serve};
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;
use tonic::{Code, Request};

use support::stats::{median, percentile};
use support::verdict::{P99_SAMPLE, Target};
use support::{Rng, connect, env};

const HEAVY: &str = "search:10000000";
/// A quick bot stays quick under a flood: well within its 1 s budget.
const GREEDY_P99_MS: f64 = 250.0;

struct Settings {
    rounds: usize,
    seconds: u64,
    ordinary: usize,
    pause: Duration,
    flood: usize,
    flood_rate: u64,
    workers: Option<usize>,
    durability: carcassonne_store::Durability,
}

/// What one phase measured.
#[derive(Default)]
struct Phase {
    /// Act latencies of the ordinary games, ms.
    acts: Vec<f64>,
    /// The bots' decision times, ms, from the stored events.
    greedy: Vec<f64>,
    search: Vec<f64>,
    timeouts: usize,
    admitted: u64,
    refused: u64,
    other_errors: u64,
}

fn with_token<T>(message: T, token: &str) -> Request<T> {
    let mut request = Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

fn create_request(
    request_id: String,
    players: usize,
    bots: &[&str],
    rng: &mut Rng,
) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        request_id,
        players: (0..players).map(|i| format!("P{i}")).collect(),
        seed: rng.seed(),
        bots: bots.iter().map(|b| (*b).to_owned()).collect(),
        ..Default::default()
    }
}

fn decision_limit(ms: u32) -> Option<proto::TimeControl> {
    Some(proto::TimeControl {
        decision_ms: ms,
        on_timeout: proto::TimeoutRule::Forfeit as i32,
        ..Default::default()
    })
}

/// A person (seat 0) against the bot `level` under a limit of `limit_ms` a
/// decision, to the game's end: the bot's decision times (ms) and the
/// timeouts, from the stored events.
async fn person_against(channel: Channel, level: &str, limit_ms: u32, seed: u64) -> (Vec<f64>, usize) {
    let mut client = GameServiceClient::new(channel.clone());
    let mut rng = Rng(seed);
    let request = proto::CreateGameRequest {
        time_control: decision_limit(limit_ms),
        ..create_request(format!("person-vs-{level}-{seed}"), 2, &["", level], &mut rng)
    };
    let created = client.create_game(request).await.unwrap().into_inner();
    let (name, token) = (created.game.unwrap().name, created.tokens[0].token.clone());
    loop {
        let request = proto::GetLegalActionsRequest { name: name.clone() };
        let legal = client
            .get_legal_actions(with_token(request, &token))
            .await
            .unwrap()
            .into_inner();
        let Some(pending) = legal.pending.filter(|_| !legal.actions.is_empty()) else {
            break;
        };
        if pending.seat != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        let action = legal.actions[rng.below(legal.actions.len())];
        let request = proto::ActRequest {
            name: name.clone(),
            expected_version: legal.version,
            request_id: format!("person-{}", legal.version),
            action: Some(action),
            view: proto::GameView::Basic as i32,
        };
        let _ = client.act(with_token(request, &token)).await;
    }
    let mut watcher = WatchServiceClient::new(channel);
    let request = proto::ReplayGameRequest {
        name,
        from_version: Some(1),
        to_version: None,
        interval_ms: 0,
    };
    let mut steps = watcher.replay_game(request).await.unwrap().into_inner();
    let mut events = Vec::new();
    while let Some(step) = steps.next().await {
        events.extend(step.unwrap().event);
    }
    let decisions = events
        .windows(2)
        .filter(|pair| pair[1].seat == Some(1))
        .map(|pair| (pair[1].time_ms - pair[0].time_ms) as f64)
        .collect();
    let timeouts = events
        .iter()
        .filter(|e| matches!(e.event, Some(E::TimedOut(_))))
        .count();
    (decisions, timeouts)
}

/// Ordinary games played until `over`: every Act's latency, ms.
async fn ordinary(channel: Channel, pause: Duration, seed: u64, over: Arc<AtomicBool>) -> Vec<f64> {
    let mut latencies = Vec::new();
    let mut n = 0;
    while !over.load(Ordering::SeqCst) {
        let game =
            support::games::create_game(channel.clone(), format!("ordinary-{seed}-{n}"), seed + n, None)
                .await;
        n += 1;
        let bot = support::games::Bot {
            pause,
            ..support::games::Bot::new(support::games::Route::one(channel.clone()), seed + n)
        };
        let over = over.clone();
        let played = bot
            .play(&game, |acted| {
                latencies.push((acted.returned - acted.sent).as_secs_f64() * 1000.0);
            })
            .await;
        if played.is_err() || over.load(Ordering::SeqCst) {
            break;
        }
    }
    latencies
}

/// CreateGame calls of five heavy bots: `burst` at once, then `rate` a
/// second until `over`.
async fn flood(channel: Channel, burst: usize, rate: u64, over: Arc<AtomicBool>) -> (u64, u64, u64) {
    let counts = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
    let attempt = |n: usize| {
        let (mut client, counts) = (GameServiceClient::new(channel.clone()), counts.clone());
        async move {
            let mut rng = Rng(n as u64);
            let request = create_request(format!("flood-{n}"), 5, &[HEAVY; 5], &mut rng);
            let slot = match client.create_game(request).await {
                Ok(_) => 0,
                Err(status) if status.code() == Code::ResourceExhausted => 1,
                Err(_) => 2,
            };
            counts[slot].fetch_add(1, Ordering::SeqCst);
        }
    };
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..burst {
        calls.spawn(attempt(n));
    }
    let mut n = burst;
    while !over.load(Ordering::SeqCst) && rate > 0 {
        tokio::time::sleep(Duration::from_millis(1000 / rate)).await;
        calls.spawn(attempt(n));
        n += 1;
    }
    calls.join_all().await;
    (
        counts[0].load(Ordering::SeqCst),
        counts[1].load(Ordering::SeqCst),
        counts[2].load(Ordering::SeqCst),
    )
}

async fn phase(settings: &Settings, flooded: bool, round: usize) -> Phase {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut bots = BotConfig::default();
    if let Some(workers) = settings.workers {
        bots.workers = workers;
    }
    let config = ServerConfig {
        data: dir.path().to_owned(),
        bots,
        store: carcassonne_store::StoreConfig {
            durability: settings.durability,
            ..carcassonne_store::StoreConfig::default()
        },
        ..ServerConfig::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        serve(config, listener, async {
            let _ = stopped.await;
        })
        .await
        .unwrap();
    });
    let channel = connect(addr, 1).await.remove(0);
    let over = Arc::new(AtomicBool::new(false));
    let ordinary: Vec<_> = (0..settings.ordinary)
        .map(|i| {
            tokio::spawn(ordinary(
                channel.clone(),
                settings.pause,
                (round * 100 + i) as u64 * 1_000,
                over.clone(),
            ))
        })
        .collect();
    let seed = round as u64;
    let greedy = tokio::spawn(person_against(channel.clone(), "greedy", 4_000, seed));
    let search = tokio::spawn(person_against(channel.clone(), HEAVY, 2_000, seed));
    // The bot games are taken on before the flood fills the room.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut measured = Phase::default();
    let flooding = flooded.then(|| {
        let (channel, over) = (channel.clone(), over.clone());
        let (burst, rate) = (settings.flood, settings.flood_rate);
        tokio::spawn(flood(channel, burst, rate, over))
    });
    let limit = tokio::time::sleep(Duration::from_secs(settings.seconds));
    tokio::pin!(limit);
    let both = async {
        let (greedy, search) = (greedy.await.unwrap(), search.await.unwrap());
        (greedy, search)
    };
    tokio::select! {
        ((greedy, greedy_timeouts), (search, search_timeouts)) = both => {
            measured.greedy = greedy;
            measured.search = search;
            measured.timeouts = greedy_timeouts + search_timeouts;
        }
        () = &mut limit => eprintln!("  (the bot games did not end within {} s)", settings.seconds),
    }
    over.store(true, Ordering::SeqCst);
    for task in ordinary {
        measured.acts.extend(task.await.unwrap());
    }
    if let Some(flooding) = flooding {
        let (admitted, refused, other) = flooding.await.unwrap();
        (measured.admitted, measured.refused, measured.other_errors) = (admitted, refused, other);
    }
    let _ = stop.send(());
    server.await.unwrap();
    measured
}

fn summary(mut values: Vec<f64>) -> (f64, f64, f64) {
    if values.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    values.sort_by(f64::total_cmp);
    (
        percentile(&values, 0.5),
        percentile(&values, 0.99),
        values[values.len() - 1],
    )
}

fn main() {
    let settings = Settings {
        rounds: env("BOTS_ROUNDS", 2),
        seconds: env("BOTS_SECONDS", 90),
        ordinary: env("BOTS_ORDINARY", 4),
        pause: Duration::from_millis(env("BOTS_PAUSE_MS", 20)),
        flood: env("BOTS_FLOOD", 400),
        flood_rate: env("BOTS_FLOOD_RATE", 20),
        workers: std::env::var("BOTS_WORKERS")
            .ok()
            .map(|w| w.trim().parse().unwrap()),
        durability: support::durability("BOTS_DURABILITY"),
    };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = support::runtime(cores);
    println!(
        "bots under a flood: {} rounds, {} ordinary games, bots' workers {}",
        settings.rounds,
        settings.ordinary,
        settings.workers.unwrap_or(BotConfig::default().workers)
    );
    let mut figures: [Vec<[f64; 11]>; 2] = [Vec::new(), Vec::new()];
    let (mut all_searches, mut timeouts) = (Vec::new(), 0);
    let mut flooded_greedy = Vec::new();
    for round in 0..settings.rounds {
        for (i, flooded) in [false, true].into_iter().enumerate() {
            let started = Instant::now();
            let measured = runtime.block_on(phase(&settings, flooded, round));
            let (act50, act99, _) = summary(measured.acts.clone());
            let (greedy50, greedy99, greedy_max) = summary(measured.greedy.clone());
            let (search50, _, search_max) = summary(measured.search.clone());
            let row = [
                act50,
                act99,
                greedy50,
                greedy99,
                greedy_max,
                search50,
                search_max,
                measured.timeouts as f64,
                measured.admitted as f64,
                measured.refused as f64,
                measured.other_errors as f64,
            ];
            println!(
                "  round {round} {}: {:.0} s, {} Acts, {} greedy and {} search decisions: {row:.1?}",
                if flooded { "flood" } else { "quiet" },
                started.elapsed().as_secs_f64(),
                measured.acts.len(),
                measured.greedy.len(),
                measured.search.len(),
            );
            figures[i].push(row);
            all_searches.extend(measured.search.iter().copied());
            timeouts += measured.timeouts;
            if flooded {
                flooded_greedy.extend(measured.greedy.iter().copied());
            }
        }
    }
    let column =
        |phase: usize, c: usize| median(&mut figures[phase].iter().map(|row| row[c]).collect::<Vec<_>>());
    println!("medians over rounds (quiet | flood | ratio):");
    for (c, label) in [
        (0, "ordinary game's Act p50, ms"),
        (1, "ordinary game's Act p99, ms"),
        (2, "greedy decision p50, ms"),
        (3, "greedy decision p99, ms"),
        (4, "greedy decision slowest, ms"),
        (5, "search:10000000 decision p50, ms (budget 500)"),
        (6, "search:10000000 decision slowest, ms (budget 500)"),
        (7, "timeouts"),
        (8, "flood creations taken on"),
        (9, "flood creations refused (BOTS_BUSY)"),
        (10, "flood creations failing otherwise"),
    ] {
        let (quiet, flood) = (column(0, c), column(1, c));
        println!("  {label}: {quiet:.1} | {flood:.1} | {:.2}", flood / quiet);
    }
    let p99_target = Target {
        size: None,
        min_sample: P99_SAMPLE,
    };
    let searches = all_searches.len();
    let (_, search_p99, search_slowest) = summary(all_searches);
    println!(
        "target: search:10000000 under a 2 s limit, p99 stored within its 500 ms ({search_p99:.0} ms of {searches}; slowest {search_slowest:.0} ms): {}",
        p99_target.judge(0, searches, search_p99 <= 500.0)
    );
    println!(
        "target: no bot seat out of time ({timeouts} timeouts): {}",
        p99_target.judge(0, searches, timeouts == 0)
    );
    let greedy_sample = flooded_greedy.len();
    let (_, greedy_p99, _) = summary(flooded_greedy);
    println!(
        "target: greedy decisions during the flood, p99 under {GREEDY_P99_MS} ms ({greedy_p99:.0} ms of {greedy_sample}): {}",
        p99_target.judge(0, greedy_sample, greedy_p99 < GREEDY_P99_MS)
    );
}
