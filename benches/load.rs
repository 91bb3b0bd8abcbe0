//! A load generator: the whole server in-process on a loopback port,
//! driven through tonic clients. `cargo bench --bench load`.
//!
//! It keeps `LOAD_GAMES` games in flight over `LOAD_CONNECTIONS` HTTP/2
//! connections, with at most `LOAD_CALLS` calls in flight among them.
//! Each game is created, then played to its end by a bot
//! (Act with a random legal action as the pending seat, in the basic view:
//! no board, which a random bot does not need; the legal actions
//! coming from the previous Act's answer, or from GetLegalActions at the
//! start and after ABORTED, a stale version), and
//! the bot starts another. It measures Act calls per second and Act's
//! latency (p50, p99), and, in the same run, with the same connections and
//! the same concurrency, a baseline of trivial unary calls: the health
//! service's Check (the ratio's denominator) and GetGame of one game.
//!
//! Environment (defaults in brackets):
//! - `LOAD_SECONDS` [20]: measured seconds of play, per round;
//! - `LOAD_BASELINE_SECONDS` [5]: measured seconds of each baseline, per
//!   round;
//! - `LOAD_SLICES` [4]: the health Check baseline and play alternate in
//!   this many slices, so that the drift of a noisy machine weighs on the
//!   ratio's two sides alike;
//! - `LOAD_WARMUP_SECONDS` [1]: unmeasured seconds before each phase and
//!   slice;
//! - `LOAD_GAMES` [256]: games in flight;
//! - `LOAD_CALLS` [32,256]: calls in flight, in play and in the baselines;
//!   a list runs one round per entry, each with its own baselines, and
//!   ends with a summary. The games are the bots; the calls in flight are
//!   how many of them have a request at the server at once (a bot that
//!   thinks, or a client with a bounded pool). A game waits for a free
//!   call before each of its calls; a latency is timed from the call's
//!   start, not the wait. By Little's law the mean latency is calls in
//!   flight over throughput: with 256 calls in flight, a p99 under 10 ms
//!   would take more than 25,600 calls/s, about what the trivial baseline
//!   call itself reaches on 2 cores, hence the second round;
//! - `LOAD_CONNECTIONS` [8]: client connections;
//! - `LOAD_PLAYERS` [2]: seats per game;
//! - `LOAD_DURABILITY` [flush]: `flush` (the default store: the
//!   write-ahead log written and `fdatasync`ed), `written` (the log written,
//!   not synced) or `none` (no log: acknowledged once in sled's memory;
//!   for finding out what the disk costs, not a figure to quote);
//! - `LOAD_THREADS` [the number of cores]: tokio worker threads, shared by
//!   the server and the clients.
//!
//! The store lives in a temporary directory under `TMPDIR`, so point that
//! at the disk you mean to measure.

// A bench: a failure should stop it loudly, and clippy's
// `allow-unwrap-in-tests` does not cover benches.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use std::time::{Duration, Instant};

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, DecisionKind};
use carcassonne::server::{ServerConfig, serve};
use carcassonne_store::{Durability, StoreConfig};
use tokio::sync::Semaphore;
use tonic::metadata::MetadataValue;
use tonic::transport::Channel;

use support::verdict::{P99_SAMPLE, Target};
use support::{Rng, connect, env};
use tonic::{Code, Request, Status};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

const ACT_P99_TARGET: Duration = Duration::from_millis(10);
const RATIO_TARGET: f64 = 0.25;
/// The targets are stated for 256 games in flight.
const TARGET_SIZE: Option<(u64, &str)> = Some((256, "games in flight"));

struct Settings {
    seconds: u64,
    baseline_seconds: u64,
    warmup_seconds: u64,
    games: usize,
    /// One round per entry.
    calls: Vec<usize>,
    slices: usize,
    connections: usize,
    players: usize,
    durability: Durability,
    threads: usize,
}

impl Settings {
    fn from_env() -> Settings {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let settings = Settings {
            seconds: env("LOAD_SECONDS", 20),
            baseline_seconds: env("LOAD_BASELINE_SECONDS", 5),
            warmup_seconds: env("LOAD_WARMUP_SECONDS", 1),
            games: env("LOAD_GAMES", 256),
            calls: env("LOAD_CALLS", "32,256".to_owned())
                .split(',')
                .map(|calls| {
                    calls
                        .trim()
                        .parse()
                        .expect("LOAD_CALLS: numbers separated by commas")
                })
                .collect(),
            slices: env("LOAD_SLICES", 4),
            connections: env("LOAD_CONNECTIONS", 8),
            players: env("LOAD_PLAYERS", 2),
            durability: support::durability("LOAD_DURABILITY"),
            threads: env("LOAD_THREADS", cores),
        };
        assert!(settings.games > 0 && settings.connections > 0 && settings.threads > 0);
        assert!(!settings.calls.is_empty() && settings.calls.iter().all(|&calls| calls > 0));
        assert!(settings.seconds > 0 && settings.baseline_seconds > 0 && settings.slices > 0);
        settings
    }
}

/// When a phase measures: calls that start at or after `start` and end
/// before `end` count; workers stop at `end`.
#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    end: Instant,
}

impl Window {
    fn after_warmup(warmup: u64, seconds: f64) -> Window {
        let start = Instant::now() + Duration::from_secs(warmup);
        Window {
            start,
            end: start + Duration::from_secs_f64(seconds),
        }
    }

    fn contains(&self, started: Instant, ended: Instant) -> bool {
        started >= self.start && ended <= self.end
    }

    fn over(&self) -> bool {
        Instant::now() >= self.end
    }

    fn seconds(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }
}

/// What one worker saw, merged over workers at the end of a phase.
#[derive(Default)]
struct Tally {
    /// Latencies of the measured calls, per kind of call.
    latencies: BTreeMap<&'static str, Vec<Duration>>,
    /// Failed calls by kind and code (as `i32`: `Code` is not `Ord`);
    /// ABORTED on Act is a stale version.
    errors: BTreeMap<(&'static str, i32), u64>,
    games_finished: u64,
}

impl Tally {
    fn time<T>(
        &mut self,
        window: Window,
        call: &'static str,
        started: Instant,
        result: Result<T, Status>,
    ) -> Result<T, Status> {
        let ended = Instant::now();
        match &result {
            Ok(_) if window.contains(started, ended) => {
                self.latencies.entry(call).or_default().push(ended - started);
            }
            Ok(_) => {}
            Err(status) => *self.errors.entry((call, status.code() as i32)).or_default() += 1,
        }
        result
    }

    fn merge(&mut self, other: Tally) {
        for (call, mut latencies) in other.latencies {
            self.latencies.entry(call).or_default().append(&mut latencies);
        }
        for (key, count) in other.errors {
            *self.errors.entry(key).or_default() += count;
        }
        self.games_finished += other.games_finished;
    }
}

fn create_request(request_id: String, players: usize, rng: &mut Rng) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        request_id,
        players: (0..players).map(|i| format!("Bot {i}")).collect(),
        rules: None,
        seed: rng.seed(),
        tiles: Vec::new(),
        spectator_delay: 0,
        time_control: None,
        ..Default::default()
    }
}

/// One bot: creates games and plays each to its end, until the window ends,
/// each call within one of the `calls` in flight.
async fn play(
    tag: String,
    worker: usize,
    channel: Channel,
    window: Window,
    players: usize,
    calls: Arc<Semaphore>,
) -> Tally {
    let mut client = GameServiceClient::new(channel);
    let mut rng = Rng(0x5eed_0000 + worker as u64);
    let mut tally = Tally::default();
    let mut round = 0;
    'games: while !window.over() {
        round += 1;
        let call = calls.acquire().await.unwrap();
        let started = Instant::now();
        let request = create_request(format!("load-{tag}-{worker}-{round}"), players, &mut rng);
        let result = client.create_game(request).await;
        drop(call);
        let Ok(created) = tally.time(window, "CreateGame", started, result) else {
            continue;
        };
        let created = created.into_inner();
        let name = created.game.unwrap().name;
        let tokens: Vec<MetadataValue<_>> = created
            .tokens
            .iter()
            .map(|t| format!("Bearer {}", t.token).parse().unwrap())
            .collect();
        // The decision to answer: from GetLegalActions at the start and
        // after a stale version, else from the previous Act's answer, which
        // carries the next legal actions (one call per action).
        let mut next: Option<(i64, proto::PendingDecision, Vec<proto::Action>)> = None;
        while !window.over() {
            let (version, pending, actions) = match next.take() {
                Some(decision) => decision,
                None => {
                    let call = calls.acquire().await.unwrap();
                    let started = Instant::now();
                    let request = proto::GetLegalActionsRequest { name: name.clone() };
                    let result = client.get_legal_actions(request).await;
                    drop(call);
                    let Ok(legal) = tally.time(window, "GetLegalActions", started, result) else {
                        continue 'games;
                    };
                    let legal = legal.into_inner();
                    (legal.version, legal.pending.unwrap_or_default(), legal.actions)
                }
            };
            if pending.kind == DecisionKind::Unspecified as i32 {
                tally.games_finished += 1;
                continue 'games;
            }
            let action = actions[rng.below(actions.len())];
            let mut request = Request::new(proto::ActRequest {
                name: name.clone(),
                expected_version: version,
                request_id: format!("v{version}"),
                action: Some(action),
                // The bot needs the pending decision and the legal actions,
                // not the board.
                view: proto::GameView::Basic as i32,
            });
            request
                .metadata_mut()
                .insert("authorization", tokens[pending.seat as usize].clone());
            let call = calls.acquire().await.unwrap();
            let started = Instant::now();
            let result = client.act(request).await;
            drop(call);
            match tally.time(window, "Act", started, result) {
                Ok(answer) => {
                    let answer = answer.into_inner();
                    let pending = answer.game.and_then(|g| g.pending).unwrap_or_default();
                    next = Some((answer.version, pending, answer.legal_actions));
                }
                // A stale version: fresh legal actions, then again.
                Err(status) if status.code() == Code::Aborted => {}
                // Anything else is counted; the bot starts another game.
                Err(_) => continue 'games,
            }
        }
    }
    tally
}

/// One caller of the health service's Check.
async fn check_health(channel: Channel, window: Window) -> Tally {
    let mut client = HealthClient::new(channel);
    let mut tally = Tally::default();
    while !window.over() {
        let started = Instant::now();
        let result = client
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await;
        let _ = tally.time(window, "health Check", started, result);
    }
    tally
}

/// One reader of a game with GetGame.
async fn get_game(channel: Channel, window: Window, name: String) -> Tally {
    let mut client = GameServiceClient::new(channel);
    let mut tally = Tally::default();
    while !window.over() {
        let started = Instant::now();
        let result = client
            .get_game(proto::GetGameRequest { name: name.clone() })
            .await;
        let _ = tally.time(window, "GetGame", started, result);
    }
    tally
}

/// Runs `concurrency` workers spread over the connections, and merges
/// what they saw.
async fn phase<F, Fut>(channels: &[Channel], concurrency: usize, worker: F) -> Tally
where
    F: Fn(usize, Channel) -> Fut,
    Fut: Future<Output = Tally> + Send + 'static,
{
    let tasks: Vec<_> = (0..concurrency)
        .map(|i| tokio::spawn(worker(i, channels[i % channels.len()].clone())))
        .collect();
    let mut total = Tally::default();
    for task in tasks {
        total.merge(task.await.unwrap());
    }
    total
}

/// Calls per second, p50 and p99 of one kind of call in a phase.
struct Figures {
    per_second: f64,
    p50: Duration,
    p99: Duration,
    calls: usize,
}

/// `seconds`: the measured time the tally covers.
fn figures(tally: &mut Tally, call: &str, seconds: f64) -> Figures {
    let mut none = Vec::new();
    let latencies = tally.latencies.get_mut(call).unwrap_or(&mut none);
    latencies.sort_unstable();
    let at = |p: f64| -> Duration {
        if latencies.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((p * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
        latencies[rank - 1]
    };
    Figures {
        per_second: latencies.len() as f64 / seconds,
        p50: at(0.50),
        p99: at(0.99),
        calls: latencies.len(),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

impl Figures {
    /// A percentile, or `none` for a figure of no sample.
    fn ms(&self, value: Duration) -> String {
        if self.calls == 0 {
            "none".to_owned()
        } else {
            ms(value)
        }
    }
}

fn row(label: &str, f: &Figures) {
    println!(
        "{label:<26} {:>12.0} {:>12} {:>12} {:>10}",
        f.per_second,
        f.ms(f.p50),
        f.ms(f.p99),
        f.calls
    );
}

fn errors(label: &str, tally: &Tally) {
    for ((call, code), count) in &tally.errors {
        println!(
            "  {label}: {count} {call} calls failed with {:?}",
            Code::from(*code)
        );
    }
}

fn main() {
    let settings = Settings::from_env();
    let runtime = support::runtime(settings.threads);
    runtime.block_on(run(settings));
}

async fn run(settings: Settings) {
    let dir = tempfile::tempdir().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServerConfig {
        data: dir.path().join("data"),
        store: StoreConfig {
            durability: settings.durability,
            ..StoreConfig::default()
        },
        ..ServerConfig::default()
    };
    let server = tokio::spawn(serve(config, listener, async {
        let _ = stopped.await;
    }));
    let channels = connect(addr, settings.connections).await;
    println!(
        "load: {} games in flight over {} connections, {} tokio threads on {} cores, \
         {}-player games, durability {:?}, store in {}",
        settings.games,
        settings.connections,
        settings.threads,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        settings.players,
        settings.durability,
        dir.path().display(),
    );
    let mut summary = Vec::new();
    for (index, &calls) in settings.calls.iter().enumerate() {
        summary.push(round(&settings, &channels, index, calls).await);
    }
    drop(channels);
    let _ = stop.send(());
    server.await.unwrap().unwrap();

    println!();
    println!(
        "{} games in flight: Act against the health Check baseline, per calls in flight",
        settings.games
    );
    println!(
        "{:>15} {:>14} {:>12} {:>8} {:>10} {:>10}  targets (ratio >= {RATIO_TARGET}, p99 < {})",
        "calls in flight",
        "baseline/s",
        "Act/s",
        "ratio",
        "Act p50",
        "Act p99",
        ms(ACT_P99_TARGET)
    );
    let games = settings.games as u64;
    for line in summary {
        let ratio = line.act.per_second / line.baseline.per_second;
        // A ratio needs both sides measured.
        let ratio_verdict = Target {
            size: TARGET_SIZE,
            min_sample: 1,
        }
        .judge(
            games,
            line.act.calls.min(line.baseline.calls),
            ratio >= RATIO_TARGET,
        );
        let p99_verdict = Target {
            size: TARGET_SIZE,
            min_sample: P99_SAMPLE,
        }
        .judge(games, line.act.calls, line.act.p99 < ACT_P99_TARGET);
        println!(
            "{:>15} {:>14.0} {:>12.0} {:>8.3} {:>10} {:>10}  ratio {ratio_verdict}, p99 {p99_verdict}",
            line.calls,
            line.baseline.per_second,
            line.act.per_second,
            ratio,
            line.act.ms(line.act.p50),
            line.act.ms(line.act.p99),
        );
    }
}

/// The figures of one round, for the summary.
struct Round {
    calls: usize,
    baseline: Figures,
    act: Figures,
}

/// One round at `calls` calls in flight: GetGame's baseline, then the
/// health Check baseline and play, alternating in slices.
async fn round(settings: &Settings, channels: &[Channel], index: usize, calls: usize) -> Round {
    let mut client = GameServiceClient::new(channels[0].clone());
    let mut rng = Rng(1);
    let one = client
        .create_game(create_request(
            format!("baseline-{index}"),
            settings.players,
            &mut rng,
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
        .name;
    let window = Window::after_warmup(settings.warmup_seconds, settings.baseline_seconds as f64);
    let mut read = phase(channels, calls, |_, channel| {
        get_game(channel, window, one.clone())
    })
    .await;
    let read_figures = figures(&mut read, "GetGame", window.seconds());

    // The machine's speed drifts (2 shared, noisy cores): the baseline and
    // play alternate so that the drift weighs on both alike.
    let slices = settings.slices as f64;
    let mut health = Tally::default();
    let mut played = Tally::default();
    let (mut health_seconds, mut play_seconds) = (0.0, 0.0);
    for slice in 0..settings.slices {
        let window = Window::after_warmup(settings.warmup_seconds, settings.baseline_seconds as f64 / slices);
        health.merge(phase(channels, calls, |_, channel| check_health(channel, window)).await);
        health_seconds += window.seconds();

        let window = Window::after_warmup(settings.warmup_seconds, settings.seconds as f64 / slices);
        let players = settings.players;
        let permits = Arc::new(Semaphore::new(calls));
        let tag = format!("{index}-{slice}");
        played.merge(
            phase(channels, settings.games, |i, channel| {
                play(tag.clone(), i, channel, window, players, permits.clone())
            })
            .await,
        );
        play_seconds += window.seconds();
    }
    let health_figures = figures(&mut health, "health Check", health_seconds);
    let act = figures(&mut played, "Act", play_seconds);
    let legal = figures(&mut played, "GetLegalActions", play_seconds);
    let created = figures(&mut played, "CreateGame", play_seconds);

    println!();
    println!("{calls} calls in flight:");
    println!(
        "{:<26} {:>12} {:>12} {:>12} {:>10}",
        "call", "calls/s", "p50", "p99", "calls"
    );
    row("baseline: health Check", &health_figures);
    row("baseline: GetGame", &read_figures);
    row("Act", &act);
    row("  (GetLegalActions)", &legal);
    row("  (CreateGame)", &created);
    errors("baseline", &health);
    errors("baseline", &read);
    errors("play", &played);
    let stale = played
        .errors
        .get(&("Act", Code::Aborted as i32))
        .copied()
        .unwrap_or(0);
    println!(
        "  play: {} games finished in {} s, {stale} stale-version retries",
        played.games_finished, settings.seconds
    );
    Round {
        calls,
        baseline: health_figures,
        act,
    }
}
