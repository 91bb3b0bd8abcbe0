//! The write-ahead log: what an open replays from it, and what it refuses.

use std::path::Path;

use carcassonne_store::*;

use crate::support::{event, game, open, request};

/// Copies the store's files as a crash would leave them: whatever the
/// processes had written, synced or not.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn a_store_copied_while_running_opens_with_every_acknowledged_append() {
    let running = tempfile::tempdir().unwrap();
    let store = open(running.path(), Durability::Flush);
    let g = game("g1");
    for seq in 0..20 {
        store
            .append(&g, seq, &request(&format!("r{seq}")), &[event(&[seq as u8; 50])])
            .unwrap();
    }
    // sled flushes on its own every 500 ms: right after the appends, most
    // of them are only in its memory and in the log.
    let image = tempfile::tempdir().unwrap();
    copy_dir(running.path(), image.path());
    drop(store);
    let reopened = open(image.path(), Durability::Flush);
    let events = reopened.read_game(&g, 1).unwrap();
    assert_eq!(events.len(), 20);
    assert!(events.iter().zip(0..).all(|(e, i)| e.payload == [i as u8; 50]));
    assert!(reopened.verify_all().unwrap().is_ok());
    assert_eq!(reopened.last_position(), 20);
    // And it goes on from there.
    reopened
        .append(&g, 20, &request("r20"), &[event(b"more")])
        .unwrap();
}

#[test]
fn a_log_that_does_not_continue_what_sled_has_is_reported_not_replayed() {
    // A log holding positions 3 and 4 ...
    let first = tempfile::tempdir().unwrap();
    let store = open(first.path(), Durability::Flush);
    let g = game("g1");
    store
        .append(&g, 0, &request("a"), &[event(b"1"), event(b"2")])
        .unwrap();
    drop(store);
    let store = open(first.path(), Durability::Flush);
    store
        .append(&g, 2, &request("b"), &[event(b"3"), event(b"4")])
        .unwrap();
    let log = std::fs::read(first.path().join("wal")).unwrap();
    assert!(!log.is_empty());
    drop(store);
    // ... beside a sled that lost everything after position 1.
    let second = tempfile::tempdir().unwrap();
    let store = open(second.path(), Durability::Flush);
    store
        .append(&game("g2"), 0, &request("c"), &[event(b"x")])
        .unwrap();
    drop(store);
    std::fs::write(second.path().join("wal"), log).unwrap();
    match SledStore::open(second.path(), crate::support::config(Durability::Flush)) {
        Err(StoreError::CorruptIndex { position, detail }) => {
            assert_eq!(position, 2);
            assert!(detail.contains("goes on from position 3"), "{detail}");
        }
        other => panic!("expected CorruptIndex, got {other:?}"),
    }
}

/// A small log goes round many times (a checkpoint each time it is three
/// quarters full, or when a group does not fit): whatever the copy catches,
/// the entries left from earlier rounds behind the newest ones are told
/// apart, and every acknowledged append is there.
#[test]
fn a_log_written_round_many_times_replays_only_its_newest_entries() {
    let running = tempfile::tempdir().unwrap();
    let config = StoreConfig {
        log_capacity_bytes: 4096,
        ..crate::support::config(Durability::Flush)
    };
    let store = SledStore::open(running.path(), config.clone()).unwrap();
    let games: Vec<GameId> = (0..4).map(|i| game(&format!("g{i}"))).collect();
    let mut images = Vec::new();
    for round in 0..60u64 {
        for g in &games {
            store
                .append(g, round, &RequestId::none(), &[event(&[round as u8; 120])])
                .unwrap();
        }
        if round % 15 == 14 {
            let image = tempfile::tempdir().unwrap();
            copy_dir(running.path(), image.path());
            images.push((image, (round + 1) * 4));
        }
    }
    drop(store);
    for (image, appended) in images {
        let reopened = SledStore::open(image.path(), config.clone()).unwrap();
        assert_eq!(reopened.last_position(), appended);
        let report = reopened.verify_all().unwrap();
        assert!(report.is_ok() && report.events == appended, "{report:?}");
    }
}
