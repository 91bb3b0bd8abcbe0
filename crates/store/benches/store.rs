//! Durable append throughput against a raw `fdatasync` baseline, measured
//! in the same run on the same disk. `cargo bench -p carcassonne-store`.
//!
//! - `baseline_file_append_fdatasync`: 200 bytes appended to a file, then
//!   `File::sync_data`: the floor of one durable write.
//! - `durable_append_one_writer`: one thread appending one 200-byte event
//!   per call to one game, `Durability::Flush`.
//! - `durable_append_64_games`: 64 threads each appending to its own game;
//!   group commit shares the flushes. Throughput is in the items/s column.
//! - `durable_append_64_games_async`: the same 64 games as tasks on a
//!   2-thread tokio runtime, each awaiting its acknowledgement
//!   (`Written::acknowledged`), as the gRPC server does: no thread waits
//!   for the disk.
//! - `written_*`: the same with `Durability::Written` (the write-ahead log
//!   written, not synced).
//! - `memory_append` and `sled_append_no_flush`: the cost without a disk
//!   sync, for scale.
//!
//! Disk space per game is printed by the `disk_usage` example.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use carcassonne_store::{
    Actor, Durability, EventStore, GameId, MemoryStore, NewEvent, RequestId, SledStore, StoreConfig,
};
use divan::Bencher;
use divan::counter::ItemsCount;

fn main() {
    divan::main();
}

const PAYLOAD_LEN: usize = 200;
const WRITERS: usize = 64;
const APPENDS_PER_WRITER: usize = 32;

fn event() -> NewEvent {
    NewEvent {
        actor: Actor::Seat(0),
        schema: 1,
        payload: vec![7; PAYLOAD_LEN],
    }
}

#[divan::bench(sample_count = 200, sample_size = 5)]
fn baseline_file_append_fdatasync(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut file: File = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.path().join("log"))
        .expect("open");
    let record = [7u8; PAYLOAD_LEN];
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        file.write_all(&record).expect("write");
        file.sync_data().expect("fdatasync");
    });
}

/// One writer, one game, one event per append to a sled store.
fn one_writer(bencher: Bencher, durability: Durability) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SledStore::open(dir.path(), StoreConfig::with_durability(durability)).expect("open");
    append_to_one_game(bencher, &store);
}

/// Appends one event per call to one game: `expected` is the last sequence
/// number, as a client would send it.
fn append_to_one_game(bencher: Bencher, store: &dyn EventStore) {
    let game = GameId::new("bench-game").expect("id");
    let events = [event()];
    let mut last_seq = 0;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let request = RequestId::new(format!("r{last_seq}")).expect("id");
        last_seq = store
            .append(&game, last_seq, &request, &events)
            .expect("append")
            .last_seq;
    });
}

/// The games of the many-writer benchmarks, and where each stands.
fn bench_games() -> (Vec<GameId>, Vec<AtomicU64>) {
    let games = (0..WRITERS)
        .map(|i| GameId::new(format!("bench-game-{i}")).expect("id"))
        .collect();
    let versions = (0..WRITERS).map(|_| AtomicU64::new(0)).collect();
    (games, versions)
}

#[divan::bench(sample_count = 200, sample_size = 5)]
fn durable_append_one_writer(bencher: Bencher) {
    one_writer(bencher, Durability::Flush);
}

#[divan::bench(sample_count = 200, sample_size = 5)]
fn written_append_one_writer(bencher: Bencher) {
    one_writer(bencher, Durability::Written);
}

#[divan::bench(sample_count = 200, sample_size = 20)]
fn sled_append_no_flush(bencher: Bencher) {
    one_writer(bencher, Durability::None);
}

#[divan::bench(sample_count = 200, sample_size = 20)]
fn memory_append(bencher: Bencher) {
    append_to_one_game(bencher, &MemoryStore::default());
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn durable_append_64_games(bencher: Bencher) {
    many_writers(bencher, Durability::Flush);
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn written_append_64_games(bencher: Bencher) {
    many_writers(bencher, Durability::Written);
}

#[divan::bench(sample_count = 20, sample_size = 1)]
fn durable_append_64_games_async(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Arc::new(SledStore::open(dir.path(), StoreConfig::default()).expect("open"));
    let (games, versions) = bench_games();
    let (games, versions) = (Arc::new(games), Arc::new(versions));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    bencher
        .counter(ItemsCount::new(WRITERS * APPENDS_PER_WRITER))
        .bench_local(|| {
            runtime.block_on(async {
                let tasks: Vec<_> = (0..WRITERS)
                    .map(|writer| {
                        let (store, games, versions) = (store.clone(), games.clone(), versions.clone());
                        tokio::spawn(async move {
                            let events = [event()];
                            for _ in 0..APPENDS_PER_WRITER {
                                let last = versions[writer].load(Ordering::Relaxed);
                                let request = RequestId::new(format!("r{last}")).expect("id");
                                let written = store
                                    .write(&games[writer], last, &request, &events)
                                    .expect("write");
                                let appended = written.acknowledged().await.expect("acknowledged");
                                versions[writer].store(appended.last_seq, Ordering::Relaxed);
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("task");
                }
            });
        });
}

/// One sample: 64 threads, each appending 32 events to its own game.
fn many_writers(bencher: Bencher, durability: Durability) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SledStore::open(dir.path(), StoreConfig::with_durability(durability)).expect("open");
    let (games, versions) = bench_games();
    let events = [event()];
    bencher
        .counter(ItemsCount::new(WRITERS * APPENDS_PER_WRITER))
        .bench_local(|| {
            let start = Barrier::new(WRITERS);
            std::thread::scope(|scope| {
                for (game, version) in games.iter().zip(&versions) {
                    let (store, start, events) = (&store, &start, &events);
                    scope.spawn(move || {
                        start.wait();
                        for _ in 0..APPENDS_PER_WRITER {
                            let last = version.load(Ordering::Relaxed);
                            let request = RequestId::new(format!("r{last}")).expect("id");
                            let appended = store.append(game, last, &request, events).expect("append");
                            version.store(appended.last_seq, Ordering::Relaxed);
                        }
                    });
                }
            });
        });
}
