//! What the clocks cost, and how punctually timeouts come.
//! `cargo bench --bench clocks`.
//!
//! 1. Idle: two `carcassonne serve` processes in the same run, each with
//!    `CLOCKS_GAMES` running 2-player games created over gRPC and left
//!    alone: the baseline's without a time control, the other's with one
//!    (a day a decision, so that nothing falls due during the run).
//!    - memory: each server's VmRSS per game, from before its games to
//!      after them (settled); the difference is what a clock adds to a
//!      game (its state in the folded game, its deadline in the
//!      timekeeper);
//!    - CPU while nobody plays: each server's CPU time (user and system,
//!      `/proc/<pid>/stat`) over `CLOCKS_IDLE_SECONDS`, both measured over
//!      the same windows, `CLOCKS_IDLE_ROUNDS` of them; medians;
//!    - a restart: each server killed (SIGKILL) and started again on its
//!      data; the time until it listens, which for the clocked one
//!      includes resuming every game's clocks (T-10).
//! 2. Punctuality under load: the whole server in-process on a loopback
//!    port (as in `load.rs`), `CLOCKS_LOAD_GAMES` games played by bots as
//!    fast as the server answers, while `CLOCKS_TIMEOUTS` clocked games
//!    created meanwhile time out one after another, their deadlines spread
//!    over `CLOCKS_LOAD_SECONDS`. For each timeout, from its deadline to:
//!    - the timeout's stored time (when the server decided it);
//!    - the moment it was durable, by the server's own account (the
//!      timekeeper's log line "timed out" says `late_ms` once the store
//!      acknowledged it; this process reads it with a tracing layer): a
//!      timeout is stored when it is durable, as every action is, so the
//!      target, p99 under 50 ms at 256 games playing, is judged on this
//!      one;
//!    - the moment a WatchGame stream of the game, opened once it was
//!      created, delivers the timeout (durable, and published to its
//!      watchers).
//!
//!    The baseline in the same run: the latency of the bots' Act calls
//!    meanwhile (from the call to its answer, which also waits until the
//!    action is durable).
//!
//! Environment (defaults in brackets): `CLOCKS_GAMES` [10000],
//! `CLOCKS_IDLE_SECONDS` [10], `CLOCKS_IDLE_ROUNDS` [3],
//! `CLOCKS_LOAD_GAMES` [256], `CLOCKS_TIMEOUTS` [1000],
//! `CLOCKS_LOAD_SECONDS` [20], `CLOCKS_THREADS` [the number of cores],
//! `CLOCKS_DURABILITY` [flush] (the in-process server's store, as in
//! `load.rs`), `CLOCKS_WAL_MIB` [16] (its write-ahead log).
//! `CLOCKS_GAMES=0` skips part 1, `CLOCKS_TIMEOUTS=0` part 2. The stores
//! live in temporary directories under `TMPDIR`.

// A bench: a failure should stop it loudly, and clippy's
// `allow-unwrap-in-tests` does not cover benches.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, game_event::Event as E, watch_game_response::Message as W};
use carcassonne::server::{ServerConfig, serve};
use tokio_stream::StreamExt as _;
use tonic::transport::Channel;

use support::child::ChildServer;
use support::games::{create_game, play};
use support::stats::{median, percentile};
use support::verdict::{P99_SAMPLE, Target};
use support::{Rng, connect, env};

const PUNCTUALITY_P99_TARGET: Duration = Duration::from_millis(50);

struct Settings {
    games: usize,
    idle_seconds: u64,
    idle_rounds: usize,
    load_games: usize,
    timeouts: usize,
    load_seconds: u64,
    threads: usize,
    durability: carcassonne_store::Durability,
}

impl Settings {
    fn from_env() -> Settings {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Settings {
            games: env("CLOCKS_GAMES", 10_000),
            idle_seconds: env("CLOCKS_IDLE_SECONDS", 10),
            idle_rounds: env("CLOCKS_IDLE_ROUNDS", 3),
            load_games: env("CLOCKS_LOAD_GAMES", 256),
            timeouts: env("CLOCKS_TIMEOUTS", 1000),
            load_seconds: env("CLOCKS_LOAD_SECONDS", 20),
            threads: env("CLOCKS_THREADS", cores),
            durability: support::durability("CLOCKS_DURABILITY"),
        }
    }
}

fn unix_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_micros() as i64
}

fn per_decision(decision_ms: u32) -> proto::TimeControl {
    proto::TimeControl {
        main_ms: 0,
        increment_ms: 0,
        decision_ms,
        on_timeout: proto::TimeoutRule::Forfeit as i32,
    }
}

/// Creates `count` games on `channels`, 64 at a time; their names and
/// first deadlines.
async fn create_many(
    channels: &[Channel],
    prefix: &str,
    count: usize,
    control: impl Fn(usize) -> Option<proto::TimeControl>,
) -> Vec<(String, i64)> {
    let mut created = Vec::with_capacity(count);
    for chunk in (0..count).collect::<Vec<_>>().chunks(64) {
        let tasks: Vec<_> = chunk
            .iter()
            .map(|&i| {
                let mut client = GameServiceClient::new(channels[i % channels.len()].clone());
                let request = proto::CreateGameRequest {
                    request_id: format!("{prefix}-{i}-{}", unix_micros()),
                    players: vec!["Bot 0".to_owned(), "Bot 1".to_owned()],
                    seed: Rng(i as u64).seed(),
                    time_control: control(i),
                    ..Default::default()
                };
                tokio::spawn(async move { client.create_game(request).await.unwrap().into_inner() })
            })
            .collect();
        for task in tasks {
            let game = task.await.unwrap().game.unwrap();
            let deadline = game.pending.map_or(0, |p| p.deadline_ms);
            created.push((game.name, deadline));
        }
    }
    created
}

struct Idle {
    games: usize,
    bytes_per_game: f64,
    clocked_bytes_per_game: f64,
    cpu_ms_per_s: f64,
    clocked_cpu_ms_per_s: f64,
    restart: Duration,
    clocked_restart: Duration,
}

async fn idle(settings: &Settings) -> Option<Idle> {
    if settings.games == 0 {
        return None;
    }
    let mut plain = ChildServer::start();
    let mut clocked = ChildServer::start();
    let (plain_channels, clocked_channels) = (connect(plain.addr, 8).await, connect(clocked.addr, 8).await);
    let plain_before = plain.settled_rss().await;
    let clocked_before = clocked.settled_rss().await;
    create_many(&plain_channels, "plain", settings.games, |_| None).await;
    create_many(&clocked_channels, "clocked", settings.games, |_| {
        Some(per_decision(86_400_000))
    })
    .await;
    let plain_after = plain.settled_rss().await;
    let clocked_after = clocked.settled_rss().await;
    let per_game = |before: u64, after: u64| (after as f64 - before as f64) / settings.games as f64;
    let (mut plain_cpu, mut clocked_cpu) = (Vec::new(), Vec::new());
    for _ in 0..settings.idle_rounds {
        let (p0, c0) = (plain.cpu_millis(), clocked.cpu_millis());
        tokio::time::sleep(Duration::from_secs(settings.idle_seconds)).await;
        let (p1, c1) = (plain.cpu_millis(), clocked.cpu_millis());
        plain_cpu.push((p1 - p0) / settings.idle_seconds as f64);
        clocked_cpu.push((c1 - c0) / settings.idle_seconds as f64);
    }
    drop((plain_channels, clocked_channels));
    let restart = plain.kill_and_restart();
    let clocked_restart = clocked.kill_and_restart();
    Some(Idle {
        games: settings.games,
        bytes_per_game: per_game(plain_before, plain_after),
        clocked_bytes_per_game: per_game(clocked_before, clocked_after),
        cpu_ms_per_s: median(&mut plain_cpu),
        clocked_cpu_ms_per_s: median(&mut clocked_cpu),
        restart,
        clocked_restart,
    })
}

struct Punctuality {
    load_games: usize,
    timeouts: usize,
    /// From the deadline to the stored time, ms.
    stored: Vec<i64>,
    /// From the deadline to the moment the timeout was durable, ms.
    durable: Vec<i64>,
    /// From the deadline to a watcher's receipt of the timeout, µs.
    seen: Vec<i64>,
    bot_actions: u64,
    /// The bots' Act latencies meanwhile (games ended in the window), µs.
    acts: Vec<i64>,
}

async fn punctuality(settings: &Settings) -> Option<Punctuality> {
    if settings.timeouts == 0 {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServerConfig {
        data: dir.path().join("data"),
        store: carcassonne_store::StoreConfig {
            log_capacity_bytes: env("CLOCKS_WAL_MIB", 16) << 20,
            ..carcassonne_store::StoreConfig::with_durability(settings.durability)
        },
        ..ServerConfig::default()
    };
    let server = tokio::spawn(serve(config, listener, async {
        let _ = stopped.await;
    }));
    let channels = connect(addr, 8).await;
    // Streams of their own, within the streams a connection may hold.
    let per_connection = carcassonne::server::ConnectionLimits::default().max_streaming_calls_per_connection;
    let watch_channels = connect(addr, settings.timeouts.div_ceil(per_connection)).await;

    // The load: bots playing game after game, flat out.
    let playing = Arc::new(AtomicBool::new(true));
    let actions = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let measuring = Arc::new(AtomicBool::new(false));
    let acts: Arc<std::sync::Mutex<Vec<i64>>> = Arc::default();
    let bots: Vec<_> = (0..settings.load_games)
        .map(|i| {
            let (channel, playing, actions) = (
                channels[i % channels.len()].clone(),
                playing.clone(),
                actions.clone(),
            );
            let (measuring, acts) = (measuring.clone(), acts.clone());
            tokio::spawn(async move {
                let mut round = 0u64;
                while playing.load(Ordering::Relaxed) {
                    let game = create_game(
                        channel.clone(),
                        format!("bot-{i}-{round}"),
                        (i as u64) << 20 | round,
                        None,
                    )
                    .await;
                    let (_, _, latencies) =
                        play(channel.clone(), &game, usize::MAX, Duration::ZERO, round).await;
                    actions.fetch_add(latencies.len() as u64, Ordering::Relaxed);
                    if measuring.load(Ordering::Relaxed) {
                        acts.lock().unwrap().extend(latencies);
                    }
                    round += 1;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;

    // The clocked games, created under load: game i falls due a moment
    // after the first one, so that the deadlines cover the window evenly.
    let window_ms = settings.load_seconds * 1000;
    // Time to create them all and open their watchers before the first
    // falls due.
    let margin_ms = 5_000 + settings.timeouts as u64 * 5;
    let step = window_ms / settings.timeouts as u64;
    let clocked = create_many(&channels, "clocked", settings.timeouts, |i| {
        Some(per_decision((margin_ms + i as u64 * step) as u32))
    })
    .await;
    // A watcher on each: when its timeout reaches a watcher of the game.
    let seen_at: Arc<std::sync::Mutex<HashMap<String, i64>>> = Arc::default();
    let mut watchers = Vec::with_capacity(clocked.len());
    for (i, (name, _)) in clocked.iter().enumerate() {
        let mut client = WatchServiceClient::new(watch_channels[i % watch_channels.len()].clone());
        let mut stream = client
            .watch_game(proto::WatchGameRequest {
                name: name.clone(),
                from_version: None,
                keep_alive_ms: 0,
            })
            .await
            .unwrap()
            .into_inner();
        let (name, seen_at) = (name.clone(), seen_at.clone());
        watchers.push(tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                if let Some(W::Event(watched)) = message.message
                    && matches!(watched.event.and_then(|e| e.event), Some(E::TimedOut(_)))
                {
                    seen_at.lock().unwrap().insert(name, unix_micros());
                    return;
                }
            }
        }));
    }
    let actions_before = actions.load(Ordering::Relaxed);
    measuring.store(true, Ordering::Relaxed);
    let last_deadline = clocked.iter().map(|(_, deadline)| *deadline).max().unwrap_or(0);
    while (unix_micros() / 1000) < last_deadline + 2_000 {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let bot_actions = actions.load(Ordering::Relaxed) - actions_before;
    measuring.store(false, Ordering::Relaxed);
    let mut acts = std::mem::take(&mut *acts.lock().unwrap());
    acts.sort_unstable();
    playing.store(false, Ordering::Relaxed);

    // The stored times, from each game's last event.
    let mut stored = Vec::with_capacity(clocked.len());
    let mut seen = Vec::with_capacity(clocked.len());
    let mut reader = GameServiceClient::new(channels[0].clone());
    let seen_at = seen_at.lock().unwrap().clone();
    for (name, deadline) in &clocked {
        let game = reader
            .get_game(proto::GetGameRequest { name: name.clone() })
            .await
            .unwrap()
            .into_inner()
            .game
            .unwrap();
        assert_eq!(
            game.ending.as_ref().map(|e| e.reason()),
            Some(proto::EndReason::OutOfTime),
            "{name} did not time out"
        );
        stored.push(game.clock_time_ms - deadline);
        let seen_at = seen_at
            .get(name)
            .unwrap_or_else(|| panic!("{name} timed out before its watcher was open"));
        seen.push(seen_at - deadline * 1000);
    }
    for bot in bots {
        bot.abort();
    }
    for watcher in watchers {
        watcher.abort();
    }
    drop(channels);
    let _ = stop.send(());
    server.await.unwrap().unwrap();
    stored.sort_unstable();
    seen.sort_unstable();
    let mut durable = std::mem::take(&mut *DURABLE_LATE_MS.lock().unwrap());
    durable.sort_unstable();
    Some(Punctuality {
        load_games: settings.load_games,
        timeouts: clocked.len(),
        stored,
        durable,
        seen,
        bot_actions,
        acts,
    })
}

/// `late_ms` of every "timed out" line the timekeeper logs.
static DURABLE_LATE_MS: std::sync::Mutex<Vec<i64>> = std::sync::Mutex::new(Vec::new());

/// Keeps the `late_ms` of the timekeeper's "timed out" lines.
struct LateTimeouts;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for LateTimeouts {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        struct Late(Option<u64>);
        impl tracing::field::Visit for Late {
            fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
                if field.name() == "late_ms" {
                    self.0 = Some(value);
                }
            }
            fn record_debug(&mut self, _: &tracing::field::Field, _: &dyn std::fmt::Debug) {}
        }
        let mut late = Late(None);
        event.record(&mut late);
        if let Some(ms) = late.0 {
            DURABLE_LATE_MS.lock().unwrap().push(ms as i64);
        }
    }
}

fn main() {
    use tracing_subscriber::layer::SubscriberExt as _;
    let only_timeouts = tracing_subscriber::filter::Targets::new()
        .with_target("carcassonne::games::timekeeper", tracing::Level::INFO);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(
        tracing_subscriber::Layer::with_filter(LateTimeouts, only_timeouts),
    ))
    .unwrap();
    let settings = Settings::from_env();
    let runtime = support::runtime(settings.threads);
    runtime.block_on(run(settings));
}

async fn run(settings: Settings) {
    if let Some(idle) = idle(&settings).await {
        println!(
            "idle: {} running games each, without and with a clock",
            idle.games
        );
        println!(
            "  memory per game: {:.0} bytes without a clock, {:.0} with one: the clock adds {:.0} bytes",
            idle.bytes_per_game,
            idle.clocked_bytes_per_game,
            idle.clocked_bytes_per_game - idle.bytes_per_game
        );
        println!(
            "  CPU while nobody plays (median of {} windows of {} s): {:.3} ms/s without clocks, {:.3} ms/s with {} clocks (ratio {:.2})",
            settings.idle_rounds,
            settings.idle_seconds,
            idle.cpu_ms_per_s,
            idle.clocked_cpu_ms_per_s,
            idle.games,
            idle.clocked_cpu_ms_per_s / idle.cpu_ms_per_s.max(f64::MIN_POSITIVE)
        );
        println!(
            "  restart after SIGKILL until listening: {:.2} s without clocks, {:.2} s resuming {} clocks",
            idle.restart.as_secs_f64(),
            idle.clocked_restart.as_secs_f64(),
            idle.games
        );
    }
    if let Some(p) = punctuality(&settings).await {
        let ms = |micros: i64| format!("{:.1} ms", micros as f64 / 1000.0);
        println!(
            "punctuality: {} timeouts while {} games played ({} bot actions meanwhile, {:.0}/s)",
            p.timeouts,
            p.load_games,
            p.bot_actions,
            p.bot_actions as f64 / settings.load_seconds as f64
        );
        println!(
            "  deadline to stored time: p50 {} ms, p99 {} ms, max {} ms",
            percentile(&p.stored, 0.50),
            percentile(&p.stored, 0.99),
            p.stored.last().copied().unwrap_or(0)
        );
        let target = Target {
            size: Some((256, "games playing")),
            min_sample: P99_SAMPLE,
        };
        let durable_p99 = percentile(&p.durable, 0.99);
        let verdict = target.judge(
            p.load_games as u64,
            p.durable.len(),
            durable_p99 < PUNCTUALITY_P99_TARGET.as_millis() as i64,
        );
        println!(
            "  deadline to durable (the server's log, {} timeouts): p50 {} ms, p99 {durable_p99} ms, max {} ms (target p99 < {} ms: {verdict})",
            p.durable.len(),
            percentile(&p.durable, 0.50),
            p.durable.last().copied().unwrap_or(0),
            PUNCTUALITY_P99_TARGET.as_millis()
        );
        println!(
            "  baseline, the bots' Act meanwhile ({} calls, each answered once durable): p50 {}, p99 {}, max {}",
            p.acts.len(),
            ms(percentile(&p.acts, 0.50)),
            ms(percentile(&p.acts, 0.99)),
            ms(p.acts.last().copied().unwrap_or(0))
        );
        println!(
            "  deadline to a watcher of the game: p50 {}, p99 {}, max {}",
            ms(percentile(&p.seen, 0.50)),
            ms(percentile(&p.seen, 0.99)),
            ms(p.seen.last().copied().unwrap_or(0)),
        );
    }
}
