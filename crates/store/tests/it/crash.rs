//! Kill a writer at random moments: every acknowledged event survives, in
//! order, with its chain intact, and no append is half there.
//!
//! The writer is this test binary itself, run again with
//! `CARCASSONNE_STORE_CRASH_DIR` set: `crash_writer_child` then appends as
//! fast as it can from four threads (one game each, one to three events per
//! append) and prints `ack GAME FIRST LAST` after each acknowledged append.
//! The parent SIGKILLs it after a random delay, reopens the store and
//! checks it against the acknowledgements.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use carcassonne_store::*;

use crate::support::{Rng, slow_tests};

const CHILD_ENV: &str = "CARCASSONNE_STORE_CRASH_DIR";
const WRITERS: usize = 4;

/// The child's side; does nothing in a normal test run.
#[test]
fn crash_writer_child() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let store = SledStore::open(Path::new(&dir), StoreConfig::default()).unwrap();
    let pid = std::process::id();
    std::thread::scope(|scope| {
        for writer in 0..WRITERS {
            let store = &store;
            scope.spawn(move || {
                let id = GameId::new(format!("crash-{writer}")).unwrap();
                let mut last = store.game(&id).unwrap().map_or(0, |g| g.last_seq);
                for n in 0u64.. {
                    let count = 1 + (n + writer as u64) % 3;
                    let events: Vec<NewEvent> = (0..count)
                        .map(|i| NewEvent {
                            actor: Actor::Seat(writer as u8),
                            schema: 1,
                            payload: format!("{} {i}/{count}", last + 1 + i).into_bytes(),
                        })
                        .collect();
                    let request = RequestId::new(format!("p{pid}-w{writer}-{n}")).unwrap();
                    let appended = store.append(&id, last, &request, &events).unwrap();
                    last = appended.last_seq;
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "ack {id} {} {}", appended.first_seq, appended.last_seq).unwrap();
                    out.flush().unwrap();
                }
            });
        }
    });
}

/// Runs the child for `run_for`, kills it, and returns the complete `ack`
/// lines it printed.
fn run_and_kill(dir: &Path, run_for: Duration) -> Vec<(String, u64, u64)> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "crash::crash_writer_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut acks = Vec::new();
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            // A line cut by the kill has no newline: not an acknowledgement.
            let text = String::from_utf8_lossy(&line).into_owned();
            if let Some(ack) = text.strip_suffix('\n').and_then(|t| t.strip_prefix("ack ")) {
                let fields: Vec<&str> = ack.split(' ').collect();
                acks.push((
                    fields[0].to_owned(),
                    fields[1].parse().unwrap(),
                    fields[2].parse().unwrap(),
                ));
            }
            line.clear();
        }
        acks
    });
    std::thread::sleep(run_for);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    reader.join().unwrap()
}

/// Everything acknowledged is there and every stored append is whole.
fn check(dir: &Path, acknowledged: &BTreeMap<String, u64>) -> u64 {
    let store = SledStore::open(dir, StoreConfig::default()).unwrap();
    let report = store.verify_all().unwrap();
    assert!(report.is_ok(), "{report:?}");
    let mut total = 0;
    for writer in 0..WRITERS {
        let id = GameId::new(format!("crash-{writer}")).unwrap();
        let events = match store.read_game(&id, 1) {
            Ok(events) => events,
            Err(StoreError::NotFound(_)) => Vec::new(),
            Err(error) => panic!("{id}: {error}"),
        };
        let acked = acknowledged.get(id.as_str()).copied().unwrap_or(0);
        assert!(
            events.len() as u64 >= acked,
            "{id}: {} stored, {acked} acknowledged",
            events.len()
        );
        for (event, seq) in events.iter().zip(1u64..) {
            let payload = String::from_utf8(event.payload.clone()).unwrap();
            let (stored_seq, part) = payload.split_once(' ').unwrap();
            assert_eq!(stored_seq.parse::<u64>().unwrap(), seq, "{id}");
            assert_eq!(event.seq, seq);
            let _ = part;
        }
        // No torn append: the last event closes its append.
        if let Some(last) = events.last() {
            let payload = String::from_utf8(last.payload.clone()).unwrap();
            let part = payload.split_once(' ').unwrap().1;
            let (i, n) = part.split_once('/').unwrap();
            assert_eq!(
                i.parse::<u64>().unwrap() + 1,
                n.parse::<u64>().unwrap(),
                "{id}: torn append {payload}"
            );
        }
        total += events.len() as u64;
    }
    let all = store.read_all(1, MAX_READ_LIMIT).unwrap();
    assert_eq!(all.len() as u64, total.min(MAX_READ_LIMIT as u64));
    total
}

#[test]
fn acknowledged_appends_survive_sigkill() {
    let rounds = if slow_tests() { 100 } else { 15 };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(7);
    let mut acknowledged: BTreeMap<String, u64> = BTreeMap::new();
    let mut acks_total = 0;
    for round in 0..rounds {
        let run_for = Duration::from_millis(20 + rng.below(180));
        for (game, _first, last) in run_and_kill(dir.path(), run_for) {
            acks_total += 1;
            let entry = acknowledged.entry(game).or_default();
            *entry = (*entry).max(last);
        }
        let stored = check(dir.path(), &acknowledged);
        println!("round {round}: {run_for:?}, {acks_total} acknowledged so far, {stored} stored");
    }
    // The child really wrote: the test is not vacuous.
    assert!(
        acks_total > rounds,
        "only {acks_total} acknowledgements in {rounds} rounds"
    );
}
