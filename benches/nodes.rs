//! Several server nodes on one PostgreSQL database: Act throughput with 1,
//! 2 and 3 nodes, and how soon a watcher on one node sees what another
//! node acknowledged. `cargo bench --bench nodes`.
//!
//! It starts its own throwaway PostgreSQL 15 (the store tests' cluster,
//! `crates/store/tests/it/pg.rs`: Debian's postgresql-15, run as `nobody`
//! in a temporary directory on a free port; without it the bench says so
//! and measures nothing) and the real binary as child processes: one
//! `carcassonne serve` on the sled store (the baseline), and for N = 1 to
//! `NODES_MAX` a set of N `serve --store URL` nodes on a database of
//! their own, each on its own port. Every node runs for the whole bench;
//! a set not measured is idle (its heartbeat, and a poll every 250 ms).
//!
//! 1. Throughput: random bots (`support::games`) create games and play
//!    them to their end, one after another, `NODES_GAMES` games in flight
//!    with at most `NODES_CALLS` calls in flight among them, over
//!    `NODES_CONNECTIONS` connections in all, the same for every
//!    configuration (a set of N nodes gets a share of them each). With
//!    several nodes the calls are spread two ways:
//!    - per game: game i is created and played on node i mod N, so each
//!      node's cache holds its games' latest version, and the other nodes
//!      only follow its appends (every node reads every append once, for
//!      its subscribers);
//!    - per call: call k of game i (GetLegalActions or Act) goes to node
//!      (i + k) mod N, so consecutive Acts of a game go to different nodes:
//!      every Act finds its node's cached game stale and folds it again
//!      from the database (the honest case of nodes sharing games behind
//!      a load balancer that knows nothing of games).
//!
//!    The baselines, in the same run: the same bots on the sled node, and
//!    the health service's Check (no store) on it with the same calls in
//!    flight. Each round measures every configuration once, in an order
//!    rotated from round to round, so that the drift of 2 noisy cores
//!    weighs on all alike; the summary gives medians over rounds, and
//!    each round's ratio to the sled baseline and to one PostgreSQL node,
//!    their median. Act p50 and p99 are over every round's Acts. Beside
//!    them, the CPU time per call answered of the servers measured, of
//!    PostgreSQL (its postmaster and every backend) and of this process
//!    (the clients), from `/proc`, and the machine's busy cores. Every node
//!    and the database share the machine's cores: more nodes here add
//!    work (each node reads every append for its subscribers), not cores.
//! 2. Cross-node delivery: on the set of two nodes A and B,
//!    `NODES_LATENCY_GAMES` games created on A, each with a WatchGame
//!    watcher on A and one on B opened before the first move, then played
//!    through A, all at once. For each Act acknowledged on A: the time from
//!    just before the Act call to each watcher receiving the event of the
//!    last version that Act produced (the Act's own events and the draw
//!    after it). The watcher on A is the same-node baseline; per Act, how
//!    much later B's watcher had it than A's is what crossing nodes costs
//!    (the notification and B's read of the append). Twice: paced
//!    (`NODES_LATENCY_PAUSE_MS` between a game's actions) and flat out.
//!    Every watcher must get every event once, in order. Target: p99
//!    under 50 ms across nodes.
//!
//! 3. Disk use per finished game: `NODES_DISK_GAMES` complete 2-player
//!    base games of random bots, 16 at a time, on a node of a fresh
//!    database of its own, and the same on a fresh sled node: how much the
//!    database grew (`pg_database_size`: tables, indexes, free space in
//!    their pages), the write-ahead log written meanwhile (the whole
//!    cluster's, the idle nodes' heartbeats included), and the sled
//!    node's data directory (the files' lengths), each per game.
//!
//! Environment (defaults in brackets): `NODES_SECONDS` [8] (measured
//! seconds of play per configuration and round), `NODES_BASELINE_SECONDS`
//! [2] (of health Checks per round), `NODES_WARMUP_SECONDS` [1] (before
//! each), `NODES_ROUNDS` [3], `NODES_GAMES` [64], `NODES_CALLS` [32],
//! `NODES_CONNECTIONS` [6], `NODES_MAX` [3] (node sets of 1 to this many),
//! `NODES_LATENCY_GAMES` [8], `NODES_LATENCY_PAUSE_MS` [20],
//! `NODES_DISK_GAMES` [100], `NODES_THREADS` [the number of cores] (the clients' tokio threads). The
//! cluster and the sled store live under `TMPDIR`.

// A bench: a failure should stop it loudly, and clippy's
// `allow-unwrap-in-tests` does not cover benches.
#![allow(clippy::unwrap_used)]

// Shared with the other benches, which use the rest of it.
#[allow(dead_code)]
mod support;

// The throwaway cluster of the store's tests; the bench needs only part
// of it.
#[allow(dead_code)]
#[path = "../crates/store/tests/it/pg.rs"]
mod pg;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, watch_game_response::Message as W};
use tokio::sync::Semaphore;
use tokio_stream::StreamExt as _;
use tonic::Code;
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use support::child::{ChildServer, stat_fields, ticks_millis};
use support::games::{Acted, Bot, Created, Route, create_game};
use support::stats::{median, percentile};
use support::verdict::{P99_SAMPLE, Target};
use support::{connect, env};

const CROSS_NODE_P99_TARGET: Duration = Duration::from_millis(50);

struct Settings {
    seconds: u64,
    baseline_seconds: u64,
    warmup_seconds: u64,
    rounds: usize,
    games: usize,
    calls: usize,
    connections: usize,
    max_nodes: usize,
    latency_games: usize,
    latency_pause: Duration,
    disk_games: usize,
    threads: usize,
}

impl Settings {
    fn from_env() -> Settings {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let settings = Settings {
            seconds: env("NODES_SECONDS", 8),
            baseline_seconds: env("NODES_BASELINE_SECONDS", 2),
            warmup_seconds: env("NODES_WARMUP_SECONDS", 1),
            rounds: env("NODES_ROUNDS", 3),
            games: env("NODES_GAMES", 64),
            calls: env("NODES_CALLS", 32),
            connections: env("NODES_CONNECTIONS", 6),
            max_nodes: env("NODES_MAX", 3),
            latency_games: env("NODES_LATENCY_GAMES", 8),
            latency_pause: Duration::from_millis(env("NODES_LATENCY_PAUSE_MS", 20)),
            disk_games: env("NODES_DISK_GAMES", 100),
            threads: env("NODES_THREADS", cores),
        };
        assert!(settings.seconds > 0 && settings.baseline_seconds > 0 && settings.rounds > 0);
        assert!(settings.games > 0 && settings.calls > 0 && settings.connections > 0);
        assert!(
            settings.max_nodes >= 2,
            "NODES_MAX: at least 2 (the latency needs two nodes)"
        );
        assert!(settings.latency_games > 0 && settings.disk_games > 0 && settings.threads > 0);
        settings
    }
}

/// How a set of several nodes shares the games.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spread {
    /// Game i on node i mod N.
    Games,
    /// Call k of game i on node (i + k) mod N.
    Calls,
}

/// One configuration measured.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Config {
    Sled,
    Pg {
        nodes: usize,
        spread: Spread,
    },
    /// The health service's Check on the sled node.
    Health,
}

impl Config {
    fn label(self) -> String {
        match self {
            Config::Sled => "sled, 1 node".to_owned(),
            Config::Pg { nodes: 1, .. } => "PostgreSQL, 1 node".to_owned(),
            Config::Pg {
                nodes,
                spread: Spread::Games,
            } => format!("PostgreSQL, {nodes} nodes, per game"),
            Config::Pg {
                nodes,
                spread: Spread::Calls,
            } => format!("PostgreSQL, {nodes} nodes, per call"),
            Config::Health => "health Check (sled node)".to_owned(),
        }
    }
}

/// The servers: the sled node, and the sets of 1 to `NODES_MAX` nodes,
/// each on a database of its own, in the cluster listening on `port`.
struct Servers {
    sled: ChildServer,
    /// `sets[n - 1]`: the set of n nodes.
    sets: Vec<Vec<ChildServer>>,
    port: String,
    /// A node on a database of its own, and a sled node, for the disk use.
    disk_pg: ChildServer,
    disk_sled: ChildServer,
}

/// What the disk phase's stores hold, in bytes.
#[derive(Clone, Copy)]
struct DiskUse {
    database: i64,
    wal_lsn: i64,
    sled: u64,
}

impl DiskUse {
    fn now(admin: &mut postgres::Client, sled_dir: &std::path::Path) -> DiskUse {
        let row = admin
            .query_one(
                "SELECT pg_database_size(current_database()), pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint",
                &[],
            )
            .unwrap();
        DiskUse {
            database: row.get(0),
            wal_lsn: row.get(1),
            sled: files_length(sled_dir),
        }
    }
}

/// The lengths of the files under `dir`, summed.
fn files_length(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                files_length(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

/// CPU time used so far, in milliseconds.
#[derive(Clone, Copy, Default)]
struct Cpu {
    /// By the servers measured.
    servers: f64,
    /// By the PostgreSQL cluster: its postmaster, its live processes and
    /// those it has reaped.
    postgres: f64,
    /// By this process: the clients.
    clients: f64,
    /// By the whole machine, every core and every process, ours or not.
    machine: f64,
}

impl Cpu {
    fn now(servers: &Servers, config: Config) -> Cpu {
        let measured: Vec<&ChildServer> = match config {
            Config::Sled | Config::Health => vec![&servers.sled],
            Config::Pg { nodes, .. } => servers.sets[nodes - 1].iter().collect(),
        };
        let own = stat_fields(std::process::id()).unwrap();
        Cpu {
            servers: measured.iter().map(|server| server.cpu_millis()).sum(),
            postgres: postgres_cpu_millis(&servers.port),
            clients: ticks_millis(own[11].parse::<u64>().unwrap() + own[12].parse::<u64>().unwrap()),
            machine: machine_cpu_millis(),
        }
    }

    fn since(self, before: Cpu) -> Cpu {
        Cpu {
            servers: self.servers - before.servers,
            postgres: self.postgres - before.postgres,
            clients: self.clients - before.clients,
            machine: self.machine - before.machine,
        }
    }
}

/// Busy time of every core, from the first line of `/proc/stat` (user,
/// nice, system, irq, softirq and steal; not idle or iowait).
fn machine_cpu_millis() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let ticks: Vec<u64> = stat
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .map(|n| n.parse().unwrap())
        .collect();
    ticks_millis(ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7])
}

/// The CPU time of the PostgreSQL cluster listening on `port`: its
/// postmaster (the `postgres` process started with `-p port`) with the
/// children it has reaped, and its live children.
fn postgres_cpu_millis(port: &str) -> f64 {
    let mut processes = Vec::new();
    let mut postmaster = None;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.trim() == "postgres")
            && let Some(fields) = stat_fields(pid)
        {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            if args
                .windows(2)
                .any(|pair| pair[0] == b"-p" && pair[1] == port.as_bytes())
            {
                postmaster = Some(pid);
            }
            processes.push((pid, fields));
        }
    }
    let postmaster = postmaster.expect("the cluster's postmaster is not running");
    let ticks = |fields: &[String], from: usize, to: usize| -> u64 {
        fields[from..=to].iter().map(|n| n.parse::<u64>().unwrap()).sum()
    };
    let mut total = 0;
    for (pid, fields) in &processes {
        if *pid == postmaster {
            // utime, stime, cutime, cstime.
            total += ticks(fields, 11, 14);
        } else if fields[1] == postmaster.to_string() {
            total += ticks(fields, 11, 12);
        }
    }
    ticks_millis(total)
}

/// The connections to every server: the sled node's, and for each set of
/// N nodes each node's share.
struct Channels {
    sled: Vec<Channel>,
    /// `sets[n - 1][node]`.
    sets: Vec<Vec<Vec<Channel>>>,
}

impl Channels {
    /// Where game `i` of `config` sends its calls.
    fn route(&self, config: Config, i: usize, permits: &Arc<Semaphore>) -> Route {
        let channels = match config {
            Config::Sled | Config::Health => vec![self.sled[i % self.sled.len()].clone()],
            Config::Pg { nodes, spread } => {
                let set = &self.sets[nodes - 1];
                let per_node = set[0].len();
                match spread {
                    Spread::Games => vec![set[i % nodes][(i / nodes) % per_node].clone()],
                    Spread::Calls => (0..nodes)
                        .map(|k| set[(i + k) % nodes][i % per_node].clone())
                        .collect(),
                }
            }
        };
        Route {
            channels,
            permits: Some(permits.clone()),
        }
    }
}

/// When a slice measures: calls that start at or after `start` and end
/// by `end` count; nothing starts after `end`.
#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    end: Instant,
}

impl Window {
    fn after_warmup(warmup: u64, seconds: u64) -> Window {
        let start = Instant::now() + Duration::from_secs(warmup);
        Window {
            start,
            end: start + Duration::from_secs(seconds),
        }
    }

    fn contains(&self, started: Instant, ended: Instant) -> bool {
        started >= self.start && ended <= self.end
    }

    fn seconds(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }
}

/// What one configuration's slice saw.
#[derive(Default)]
struct Tally {
    /// The latencies of the measured calls (Acts, or health Checks).
    latencies: Vec<Duration>,
    /// Every call answered, warm-up included: what the CPU time is spent on.
    answered: u64,
    stale: u64,
    /// Failed calls by code (as `i32`: `Code` is not `Ord`).
    errors: BTreeMap<i32, u64>,
    games_finished: u64,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.latencies.extend(other.latencies);
        self.answered += other.answered;
        self.stale += other.stale;
        for (code, count) in other.errors {
            *self.errors.entry(code).or_default() += count;
        }
        self.games_finished += other.games_finished;
    }
}

/// One bot: creates games and plays each to its end through its route
/// until the window ends.
async fn bot(route: Route, window: Window, tag: String) -> Tally {
    let mut tally = Tally::default();
    let mut round = 0u64;
    while Instant::now() < window.end {
        round += 1;
        let game = {
            let _permit = route.permits.as_ref().unwrap().acquire().await.unwrap();
            create_game(route.channels[0].clone(), format!("{tag}-{round}"), round, None).await
        };
        let player = Bot {
            until: Some(window.end),
            ..Bot::new(route.clone(), round)
        };
        let played = player
            .play(&game, |acted| {
                tally.answered += 1;
                if window.contains(acted.sent, acted.returned) {
                    tally.latencies.push(acted.returned - acted.sent);
                }
            })
            .await;
        match played {
            Ok(played) => {
                tally.stale += played.stale;
                tally.games_finished += u64::from(played.finished);
            }
            Err(status) => *tally.errors.entry(status.code() as i32).or_default() += 1,
        }
    }
    tally
}

/// One caller of the health service's Check.
async fn check_health(channel: Channel, window: Window) -> Tally {
    let mut client = HealthClient::new(channel);
    let mut tally = Tally::default();
    while Instant::now() < window.end {
        let started = Instant::now();
        let result = client
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await;
        let ended = Instant::now();
        tally.answered += u64::from(result.is_ok());
        match result {
            Ok(_) if window.contains(started, ended) => tally.latencies.push(ended - started),
            Ok(_) => {}
            Err(status) => *tally.errors.entry(status.code() as i32).or_default() += 1,
        }
    }
    tally
}

/// One configuration's slice of a round; its calls per second, tally and
/// the CPU time it took.
async fn slice(
    settings: &Settings,
    servers: &Servers,
    channels: &Channels,
    config: Config,
    tag: &str,
) -> (f64, Tally, Cpu) {
    let before = Cpu::now(servers, config);
    let (seconds, workers) = match config {
        Config::Health => (settings.baseline_seconds, settings.calls),
        _ => (settings.seconds, settings.games),
    };
    let window = Window::after_warmup(settings.warmup_seconds, seconds);
    let permits = Arc::new(Semaphore::new(settings.calls));
    let tasks: Vec<_> = (0..workers)
        .map(|i| match config {
            Config::Health => tokio::spawn(check_health(
                channels.sled[i % channels.sled.len()].clone(),
                window,
            )),
            _ => tokio::spawn(bot(
                channels.route(config, i, &permits),
                window,
                format!("{tag}-{i}"),
            )),
        })
        .collect();
    let mut tally = Tally::default();
    for task in tasks {
        tally.merge(task.await.unwrap());
    }
    let cpu = Cpu::now(servers, config).since(before);
    (tally.latencies.len() as f64 / window.seconds(), tally, cpu)
}

/// A configuration's figures over the rounds.
#[derive(Default)]
struct Measured {
    per_second: Vec<f64>,
    tally: Tally,
    /// Per round: CPU milliseconds per call answered, and the machine's
    /// busy cores.
    cpu_per_call: Vec<Cpu>,
    busy_cores: Vec<f64>,
    /// Per round: the cores that the servers, PostgreSQL and the clients
    /// kept busy together.
    our_cores: Vec<f64>,
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn throughput(settings: &Settings, servers: &Servers, channels: &Channels) -> Vec<(Config, Measured)> {
    let mut configs = vec![Config::Sled, Config::Health];
    for nodes in 1..=settings.max_nodes {
        configs.push(Config::Pg {
            nodes,
            spread: Spread::Games,
        });
        if nodes > 1 {
            configs.push(Config::Pg {
                nodes,
                spread: Spread::Calls,
            });
        }
    }
    let mut measured: Vec<(Config, Measured)> = configs.iter().map(|&c| (c, Measured::default())).collect();
    for round in 0..settings.rounds {
        println!();
        println!("round {} of {}:", round + 1, settings.rounds);
        // The order rotates, so that no configuration always follows the
        // same one or comes at the same point of the machine's drift.
        for k in 0..configs.len() {
            let index = (k + round) % configs.len();
            let config = configs[index];
            let started = Instant::now();
            let (per_second, tally, cpu) =
                slice(settings, servers, channels, config, &format!("r{round}-c{index}")).await;
            let wall = started.elapsed().as_secs_f64() * 1e3;
            let mut sorted = tally.latencies.clone();
            sorted.sort_unstable();
            println!(
                "  {:<34} {:>9.0} calls/s  p50 {:>9}  p99 {:>9}  {} stale, {} failed",
                config.label(),
                per_second,
                ms(percentile(&sorted, 0.50)),
                ms(percentile(&sorted, 0.99)),
                tally.stale,
                tally.errors.values().sum::<u64>(),
            );
            let entry = &mut measured[index].1;
            entry.per_second.push(per_second);
            let calls = tally.answered.max(1) as f64;
            entry.cpu_per_call.push(Cpu {
                servers: cpu.servers / calls,
                postgres: cpu.postgres / calls,
                clients: cpu.clients / calls,
                machine: cpu.machine / calls,
            });
            entry.busy_cores.push(cpu.machine / wall);
            entry
                .our_cores
                .push((cpu.servers + cpu.postgres + cpu.clients) / wall);
            entry.tally.merge(tally);
        }
    }
    measured
}

/// What a watcher received: each version and when, and whether the
/// stream was whole (every version once, in order, to the game's end).
struct Received {
    at: HashMap<i64, Instant>,
    whole: bool,
}

/// A watcher of `name` from `from`; says when its snapshot is in, then
/// reads until the game ends (or nothing came for 10 s).
async fn watcher(
    channel: Channel,
    name: String,
    from: i64,
    ready: tokio::sync::mpsc::Sender<()>,
) -> Received {
    let mut client = WatchServiceClient::new(channel);
    let mut stream = client
        .watch_game(proto::WatchGameRequest {
            name,
            from_version: Some(from),
            keep_alive_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let mut received = Received {
        at: HashMap::new(),
        whole: true,
    };
    let mut last = from;
    let mut ended = false;
    while let Ok(message) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
        let Some(message) = message else {
            ended = true;
            break;
        };
        match message.unwrap().message.unwrap() {
            W::Snapshot(_) => ready.send(()).await.unwrap(),
            W::Event(event) => {
                let now = Instant::now();
                let version = event.event.unwrap().version;
                received.whole &= version == last + 1;
                last = version;
                received.at.insert(version, now);
            }
            W::KeepAlive(_) => {}
            W::FellBehind(_) => {
                received.whole = false;
                break;
            }
        }
    }
    received.whole &= ended;
    received
}

/// The delivery latencies of one run, from just before each Act.
struct Delivery {
    acts: usize,
    /// Act acknowledged on A.
    acked: Vec<Duration>,
    same_node: Vec<Duration>,
    cross_node: Vec<Duration>,
    /// Per Act, how much later the watcher on B had it than the one on A,
    /// in microseconds (negative: sooner).
    b_after_a: Vec<i64>,
    /// Acts whose last version a watcher never received.
    missed: usize,
    broken_watchers: usize,
    seconds: f64,
}

/// Games played through `a` with watchers on `a` and `b`.
async fn delivery(
    settings: &Settings,
    a: &ChildServer,
    b: &ChildServer,
    pause: Duration,
    tag: &str,
) -> Delivery {
    let bots = connect(a.addr, 1).await.remove(0);
    let on_a = connect(a.addr, 1).await.remove(0);
    let on_b = connect(b.addr, 1).await.remove(0);
    let mut games: Vec<Created> = Vec::new();
    for i in 0..settings.latency_games {
        games.push(create_game(bots.clone(), format!("{tag}-{i}"), 0x1a7 + i as u64, None).await);
    }
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(2 * games.len());
    let mut watchers = Vec::new();
    for game in &games {
        let mut pair = Vec::new();
        for channel in [&on_a, &on_b] {
            pair.push(tokio::spawn(watcher(
                channel.clone(),
                game.name.clone(),
                game.version,
                ready_tx.clone(),
            )));
        }
        watchers.push(pair);
    }
    drop(ready_tx);
    for _ in 0..2 * games.len() {
        ready_rx.recv().await.unwrap();
    }
    let started = Instant::now();
    let games = Arc::new(games);
    let players: Vec<_> = (0..games.len())
        .map(|i| {
            let (games, channel) = (games.clone(), bots.clone());
            tokio::spawn(async move {
                let bot = Bot {
                    pause,
                    ..Bot::new(Route::one(channel), 0xde1 + i as u64)
                };
                let mut acts: Vec<Acted> = Vec::new();
                let played = bot.play(&games[i], |acted| acts.push(acted)).await.unwrap();
                assert!(played.finished && played.stale == 0, "{}", games[i].name);
                acts
            })
        })
        .collect();
    let mut result = Delivery {
        acts: 0,
        acked: Vec::new(),
        same_node: Vec::new(),
        cross_node: Vec::new(),
        b_after_a: Vec::new(),
        missed: 0,
        broken_watchers: 0,
        seconds: 0.0,
    };
    let mut played = Vec::new();
    for player in players {
        played.push(player.await.unwrap());
    }
    result.seconds = started.elapsed().as_secs_f64();
    for (acts, pair) in played.into_iter().zip(watchers) {
        let mut received = Vec::new();
        for watcher in pair {
            let watcher = watcher.await.unwrap();
            result.broken_watchers += usize::from(!watcher.whole);
            received.push(watcher.at);
        }
        for act in acts {
            result.acts += 1;
            result.acked.push(act.returned - act.sent);
            for (at, into) in received
                .iter()
                .zip([&mut result.same_node, &mut result.cross_node])
            {
                match at.get(&act.last) {
                    // Never before the Act was sent; `saturating` only guards
                    // the arithmetic.
                    Some(when) => into.push(when.saturating_duration_since(act.sent)),
                    None => result.missed += 1,
                }
            }
            if let (Some(on_a), Some(on_b)) = (received[0].get(&act.last), received[1].get(&act.last)) {
                result.b_after_a.push(if on_b >= on_a {
                    (*on_b - *on_a).as_micros() as i64
                } else {
                    -((*on_a - *on_b).as_micros() as i64)
                });
            }
        }
    }
    for latencies in [&mut result.acked, &mut result.same_node, &mut result.cross_node] {
        latencies.sort_unstable();
    }
    result.b_after_a.sort_unstable();
    result
}

fn main() {
    let settings = Settings::from_env();
    let Some(cluster) = pg::cluster() else {
        println!("nodes: PostgreSQL 15 is not installed (/usr/lib/postgresql/15/bin): nothing measured");
        return;
    };
    let began = Instant::now();
    // Before the runtime: the PostgreSQL driver blocks, and would panic on
    // an async worker.
    let urls: Vec<String> = (0..settings.max_nodes).map(|_| cluster.database()).collect();
    let disk_url = cluster.database();
    let port = urls[0]
        .split_whitespace()
        .find_map(|pair| pair.strip_prefix("port="))
        .unwrap()
        .to_owned();
    let servers = Servers {
        sled: ChildServer::start(),
        sets: urls
            .iter()
            .enumerate()
            .map(|(n, url)| {
                (0..=n)
                    .map(|_| ChildServer::start_with(&["--store", url]))
                    .collect()
            })
            .collect(),
        port,
        disk_pg: ChildServer::start_with(&["--store", &disk_url]),
        disk_sled: ChildServer::start(),
    };
    let mut disk_admin = cluster.admin(&disk_url);
    let disk_before = DiskUse::now(&mut disk_admin, &servers.disk_sled.data_dir());
    let mut admin = cluster.admin(&urls[0]);
    let show = |admin: &mut postgres::Client, name: &str| -> String {
        admin.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
    };
    println!(
        "nodes: PostgreSQL {} on 127.0.0.1:{} (fsync {}, synchronous_commit {}, shared_buffers {}), \
         on the same cores as the servers and the clients",
        show(&mut admin, "server_version"),
        servers.port,
        show(&mut admin, "fsync"),
        show(&mut admin, "synchronous_commit"),
        show(&mut admin, "shared_buffers"),
    );
    drop(admin);
    let runtime = support::runtime(settings.threads);
    runtime.block_on(run(&settings, &servers));
    let disk_after = DiskUse::now(&mut disk_admin, &servers.disk_sled.data_dir());
    drop(servers);
    disk_summary(settings.disk_games, disk_before, disk_after);
    println!();
    println!("nodes: {:.0} s in all", began.elapsed().as_secs_f64());
}

async fn run(settings: &Settings, servers: &Servers) {
    let mut channels = Channels {
        sled: connect(servers.sled.addr, settings.connections).await,
        sets: Vec::new(),
    };
    for set in &servers.sets {
        let per_node = settings.connections.div_ceil(set.len());
        let mut nodes = Vec::new();
        for node in set {
            nodes.push(connect(node.addr, per_node).await);
        }
        channels.sets.push(nodes);
    }
    println!(
        "nodes: {} games and {} calls in flight over {} connections in all, {} client threads on {} cores; \
         {} rounds of {} s per configuration (health Check {} s), {} s warm-up each",
        settings.games,
        settings.calls,
        settings.connections,
        settings.threads,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        settings.rounds,
        settings.seconds,
        settings.baseline_seconds,
        settings.warmup_seconds,
    );
    let measured = throughput(settings, servers, &channels).await;

    let (a, b) = (&servers.sets[1][0], &servers.sets[1][1]);
    let paced = delivery(settings, a, b, settings.latency_pause, "paced").await;
    let flat_out = delivery(settings, a, b, Duration::ZERO, "flat-out").await;

    summary(settings, measured, &[("paced", &paced), ("flat out", &flat_out)]);

    for server in [&servers.disk_pg, &servers.disk_sled] {
        play_to_the_end(server, settings.disk_games).await;
    }
}

/// Plays `count` complete games on `server`, 16 at a time.
async fn play_to_the_end(server: &ChildServer, count: usize) {
    let channels = connect(server.addr, 2).await;
    let at_once = Arc::new(Semaphore::new(16));
    let mut games = tokio::task::JoinSet::new();
    for i in 0..count {
        let permit = at_once.clone().acquire_owned().await.unwrap();
        let channel = channels[i % channels.len()].clone();
        games.spawn(async move {
            let game = create_game(channel.clone(), format!("disk-{i}"), i as u64, None).await;
            let played = Bot::new(Route::one(channel), i as u64)
                .play(&game, |_| {})
                .await
                .unwrap();
            assert!(played.finished, "disk game {i} did not finish");
            drop(permit);
        });
    }
    while let Some(done) = games.join_next().await {
        done.unwrap();
    }
}

fn disk_summary(games: usize, before: DiskUse, after: DiskUse) {
    let per_game = |bytes: f64| format!("{:.1} KB", bytes / games as f64 / 1e3);
    println!();
    println!("Disk use per finished game ({games} complete 2-player base games of random bots)");
    println!(
        "  PostgreSQL database (tables, indexes): {}",
        per_game((after.database - before.database) as f64)
    );
    println!(
        "  PostgreSQL write-ahead log written:    {}",
        per_game((after.wal_lsn - before.wal_lsn) as f64)
    );
    println!(
        "  sled data directory (baseline):        {}",
        per_game(after.sled as f64 - before.sled as f64)
    );
}

fn summary(settings: &Settings, mut measured: Vec<(Config, Measured)>, deliveries: &[(&str, &Delivery)]) {
    let per_round = |config: Config, measured: &[(Config, Measured)]| -> Vec<f64> {
        measured
            .iter()
            .find(|(c, _)| *c == config)
            .map(|(_, m)| m.per_second.clone())
            .unwrap()
    };
    let sled = per_round(Config::Sled, &measured);
    let one_pg = per_round(
        Config::Pg {
            nodes: 1,
            spread: Spread::Games,
        },
        &measured,
    );
    // A ratio per round, then their median: both sides of each ratio were
    // measured a minute apart at most.
    let ratio = |of: &[f64], to: &[f64]| -> f64 {
        let mut ratios: Vec<f64> = of.iter().zip(to).map(|(a, b)| a / b).collect();
        median(&mut ratios)
    };
    println!();
    println!(
        "Act calls/s: {} games and {} calls in flight over {} connections; median of {} rounds of {} s",
        settings.games, settings.calls, settings.connections, settings.rounds, settings.seconds
    );
    println!(
        "{:<34} {:>9} {:>17} {:>8} {:>8} {:>10} {:>10} {:>7} {:>7}",
        "configuration", "calls/s", "rounds' range", "vs sled", "vs 1 PG", "p50", "p99", "stale", "failed"
    );
    for (config, m) in &mut measured {
        let range = format!(
            "{:.0}-{:.0}",
            m.per_second.iter().copied().fold(f64::INFINITY, f64::min),
            m.per_second.iter().copied().fold(0.0, f64::max)
        );
        let (vs_sled, vs_pg) = match config {
            Config::Health => ("".to_owned(), "".to_owned()),
            _ => (
                format!("{:.2}", ratio(&m.per_second, &sled)),
                format!("{:.2}", ratio(&m.per_second, &one_pg)),
            ),
        };
        m.tally.latencies.sort_unstable();
        let latencies = &m.tally.latencies;
        println!(
            "{:<34} {:>9.0} {:>17} {:>8} {:>8} {:>10} {:>10} {:>7} {:>7}",
            config.label(),
            median(&mut m.per_second.clone()),
            range,
            vs_sled,
            vs_pg,
            ms(percentile(latencies, 0.50)),
            ms(percentile(latencies, 0.99)),
            m.tally.stale,
            m.tally.errors.values().sum::<u64>(),
        );
        for (code, count) in &m.tally.errors {
            println!(
                "  {}: {count} calls failed with {:?}",
                config.label(),
                Code::from(*code)
            );
        }
    }

    println!();
    println!(
        "CPU per call answered (ms, median of the rounds; whole slices, warm-up included), and the cores busy"
    );
    println!(
        "{:<34} {:>9} {:>10} {:>9} {:>9} {:>12} {:>13}",
        "configuration", "servers", "PostgreSQL", "clients", "machine", "cores busy", "of them ours"
    );
    for (config, m) in &measured {
        let part = |f: fn(&Cpu) -> f64| median(&mut m.cpu_per_call.iter().map(f).collect::<Vec<_>>());
        println!(
            "{:<34} {:>9.3} {:>10.3} {:>9.3} {:>9.3} {:>12.2} {:>13.2}",
            config.label(),
            part(|c| c.servers),
            part(|c| c.postgres),
            part(|c| c.clients),
            part(|c| c.machine),
            median(&mut m.busy_cores.clone()),
            median(&mut m.our_cores.clone()),
        );
    }

    println!();
    println!(
        "Delivery to a watcher, from just before the Act on node A to the event of its last version; \
         {} games played through A at once",
        settings.latency_games
    );
    println!(
        "{:<34} {:>7} {:>10} {:>10} {:>10} {:>10}  target (p99 < {})",
        "run",
        "acts",
        "p50",
        "p90",
        "p99",
        "max",
        ms(CROSS_NODE_P99_TARGET)
    );
    for (name, d) in deliveries {
        let pause = if *name == "paced" {
            format!("{name}, {} ms pause", settings.latency_pause.as_millis())
        } else {
            (*name).to_owned()
        };
        println!(
            "{pause}: {} Acts in {:.1} s, {} watchers broken, {} deliveries missed",
            d.acts, d.seconds, d.broken_watchers, d.missed
        );
        let rows = [
            ("  Act acknowledged on A", &d.acked, false),
            ("  watcher on A (same node)", &d.same_node, false),
            ("  watcher on B (other node)", &d.cross_node, true),
        ];
        for (label, latencies, judged) in rows {
            let p99 = percentile(latencies, 0.99);
            let verdict = if judged {
                let whole = d.broken_watchers == 0 && d.missed == 0;
                Target {
                    size: None,
                    min_sample: P99_SAMPLE,
                }
                .judge(0, latencies.len(), whole && p99 < CROSS_NODE_P99_TARGET)
                .to_string()
            } else {
                String::new()
            };
            println!(
                "{label:<34} {:>7} {:>10} {:>10} {:>10} {:>10}  {verdict}",
                latencies.len(),
                ms(percentile(latencies, 0.50)),
                ms(percentile(latencies, 0.90)),
                ms(p99),
                ms(latencies.last().copied().unwrap_or_default()),
            );
        }
        let lag = |p: f64| format!("{:.2} ms", percentile(&d.b_after_a, p) as f64 / 1e3);
        println!(
            "{:<34} {:>7} {:>10} {:>10} {:>10} {:>10}",
            "  B's watcher after A's",
            d.b_after_a.len(),
            lag(0.50),
            lag(0.90),
            lag(0.99),
            lag(1.0),
        );
    }
}
