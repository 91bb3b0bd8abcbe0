//! The PostgreSQL store against PostgreSQL itself.
//! `cargo bench -p carcassonne-store --bench postgres`.
//!
//! Starts a throwaway PostgreSQL 15 cluster (as the tests do: `fsync` and
//! `synchronous_commit` on, the store's defaults), and measures:
//!
//! 1. Appends per second: `writers` threads, each appending one event of
//!    120 bytes with a request id at a time to a game of its own, through
//!    one `PgStore` (its pool of 16 connections), against a baseline on the
//!    same database at the same concurrency: plain single-row `INSERT`
//!    transactions (autocommit), each thread on a connection of its own.
//!    Baseline and store alternate in slices, so that the drift of a noisy
//!    machine weighs on both alike; medians of the slices and their ratio.
//! 2. Delivery: from just before an append through one store ("node A")
//!    to a subscriber of another store on the same database ("node B")
//!    receiving it: p50 and p99, against a subscriber of node A itself;
//!    appends 10 ms apart, then back to back.
//!
//! Environment (defaults in brackets): `PG_BENCH_WRITERS` [1,64]: a list,
//! one measurement per entry; `PG_BENCH_SECONDS` [2]: seconds a slice;
//! `PG_BENCH_SLICES` [5]: slices of each side per entry;
//! `PG_BENCH_DELIVERIES` [500]: appends timed for delivery;
//! `PG_BENCH_CONNECTIONS` [16]: the store's pool;
//! `PG_BENCH_WAITS` [0]: 1 prints what the store's sessions waited on.

// A bench: a failed step should stop it loudly.
#![allow(clippy::unwrap_used)]

#[path = "../tests/it/pg.rs"]
mod pg;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use carcassonne_store::{Actor, Durability, EventStore, GameId, NewEvent, PgStore, RequestId, StoreConfig};

const PAYLOAD: [u8; 120] = [7; 120];

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn event() -> NewEvent {
    NewEvent {
        actor: Actor::Seat(1),
        schema: 1,
        payload: PAYLOAD.to_vec(),
    }
}

fn open(url: &str) -> PgStore {
    let config = StoreConfig {
        postgres_connections: env("PG_BENCH_CONNECTIONS", 16),
        ..StoreConfig::with_durability(Durability::Flush)
    };
    PgStore::open(url, config).unwrap()
}

/// Runs `writers` threads of `work` for `seconds`; operations per second.
fn rate(writers: usize, seconds: f64, work: impl Fn(usize, &AtomicBool) -> u64 + Sync) -> f64 {
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let done: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|writer| {
                let (work, stop) = (&work, &stop);
                scope.spawn(move || work(writer, stop))
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::SeqCst);
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    done as f64 / started.elapsed().as_secs_f64()
}

fn baseline_slice(url: &str, writers: usize, seconds: f64) -> f64 {
    let mut clients: Vec<_> = (0..writers)
        .map(|_| std::sync::Mutex::new(postgres::Client::connect(url, postgres::NoTls).unwrap()))
        .collect();
    let rate = rate(writers, seconds, |writer, stop| {
        let mut client = clients[writer].lock().unwrap();
        let statement = client
            .prepare("INSERT INTO baseline (game, payload) VALUES ($1, $2)")
            .unwrap();
        let game = format!("baseline-{writer}");
        let mut done = 0;
        while !stop.load(Ordering::Relaxed) {
            client.execute(&statement, &[&game, &&PAYLOAD[..]]).unwrap();
            done += 1;
        }
        done
    });
    clients.clear();
    rate
}

fn store_slice(store: &PgStore, writers: usize, seconds: f64, slice: u64) -> f64 {
    static REQUESTS: AtomicU64 = AtomicU64::new(0);
    let sampler = std::thread::spawn(move || sample_waits(seconds));
    let rate = rate(writers, seconds, |writer, stop| {
        let game = GameId::new(format!("w{writers}-s{slice}-{writer}")).unwrap();
        let mut version = 0;
        while !stop.load(Ordering::Relaxed) {
            let request = RequestId::new(format!("r{}", REQUESTS.fetch_add(1, Ordering::Relaxed))).unwrap();
            let event = event();
            store.append(&game, version, &request, &[event]).unwrap();
            version += 1;
        }
        version
    });
    for (samples, what) in sampler.join().unwrap() {
        println!("    {samples:>5} samples: {what}");
    }
    rate
}

static URL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// With `PG_BENCH_WAITS=1`: what the store's sessions were doing during a
/// slice (`pg_stat_activity` sampled every 5 ms), the most frequent first.
fn sample_waits(seconds: f64) -> Vec<(u32, String)> {
    if env("PG_BENCH_WAITS", 0) != 1 {
        return Vec::new();
    }
    let mut client = postgres::Client::connect(URL.get().unwrap(), postgres::NoTls).unwrap();
    let mut seen = std::collections::HashMap::new();
    let end = Instant::now() + Duration::from_secs_f64(seconds * 0.9);
    while Instant::now() < end {
        let rows = client
            .query(
                "SELECT concat_ws(' ', state, wait_event_type, wait_event, '|', left(query, 40)) \
                 FROM pg_stat_activity WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid()",
                &[],
            )
            .unwrap();
        for row in rows {
            *seen.entry(row.get::<_, String>(0)).or_insert(0) += 1;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut seen: Vec<(u32, String)> = seen.into_iter().map(|(what, n)| (n, what)).collect();
    seen.sort_by(|a, b| b.cmp(a));
    seen.truncate(8);
    seen
}

fn appends(url: &str, writers: usize, seconds: f64, slices: u64) {
    let store = open(url);
    let (mut baseline, mut ours) = (Vec::new(), Vec::new());
    for slice in 0..slices {
        // Alternate which side goes first.
        if slice % 2 == 0 {
            baseline.push(baseline_slice(url, writers, seconds));
            ours.push(store_slice(&store, writers, seconds, slice));
        } else {
            ours.push(store_slice(&store, writers, seconds, slice));
            baseline.push(baseline_slice(url, writers, seconds));
        }
    }
    let (baseline, ours) = (median(&mut baseline), median(&mut ours));
    println!(
        "appends, {writers:>2} writer(s): store {ours:>7.0}/s, baseline INSERT+COMMIT {baseline:>7.0}/s, ratio {:.2}x",
        ours / baseline
    );
}

/// Delivery of `count` appends made `pause` apart (each after its last
/// was delivered to both subscribers).
fn delivery(url: &str, count: usize, pause: Duration) {
    let (node_a, node_b) = (open(url), open(url));
    let game = GameId::new(format!("delivery-{}", pause.as_millis())).unwrap();
    let mut here = node_a.subscribe_game(&game);
    let mut there = node_b.subscribe_game(&game);
    let (mut same, mut other) = (Vec::new(), Vec::new());
    for version in 0..count as u64 {
        std::thread::sleep(pause);
        let started = Instant::now();
        node_a
            .append(&game, version, &RequestId::none(), &[event()])
            .unwrap();
        for (receiver, times) in [(&mut here, &mut same), (&mut there, &mut other)] {
            loop {
                match receiver.try_recv() {
                    Ok(event) => {
                        assert_eq!(event.seq, version + 1);
                        times.push(started.elapsed());
                        break;
                    }
                    Err(carcassonne_store::broadcast::error::TryRecvError::Empty) => {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                    Err(error) => panic!("{error}"),
                }
            }
        }
    }
    let spacing = match pause.as_millis() {
        0 => "back to back".to_string(),
        millis => format!("{millis} ms apart"),
    };
    for (name, times) in [("the same node", &mut same), ("another node", &mut other)] {
        times.sort();
        println!(
            "delivery to a subscriber on {name:<13}: p50 {:>6.2} ms, p99 {:>6.2} ms ({} appends {spacing})",
            percentile(times, 0.5).as_secs_f64() * 1e3,
            percentile(times, 0.99).as_secs_f64() * 1e3,
            times.len()
        );
    }
}

fn main() {
    let Some(cluster) = pg::cluster() else {
        println!("PostgreSQL 15 is not installed (apt-get install postgresql-15): nothing measured");
        return;
    };
    let url = cluster.database();
    URL.set(url.clone()).unwrap();
    let mut admin = cluster.admin(&url);
    admin
        .batch_execute(
            "CREATE TABLE baseline (id BIGSERIAL PRIMARY KEY, game TEXT NOT NULL, payload BYTEA NOT NULL)",
        )
        .unwrap();
    let writers: Vec<usize> = std::env::var("PG_BENCH_WRITERS")
        .unwrap_or_else(|_| "1,64".into())
        .split(',')
        .map(|w| w.trim().parse().unwrap())
        .collect();
    let seconds = env("PG_BENCH_SECONDS", 2.0);
    let slices = env("PG_BENCH_SLICES", 5);
    for writers in writers {
        appends(&url, writers, seconds, slices);
    }
    let deliveries = env("PG_BENCH_DELIVERIES", 500);
    // Paced, as moves are; back to back, each append meets the notifier's
    // gap since the last one's notification (`NOTIFY_GAP`).
    delivery(&url, deliveries, Duration::from_millis(10));
    delivery(&url, deliveries, Duration::ZERO);
}
