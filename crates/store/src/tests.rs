//! Unit tests: the envelope format, ids, page tokens, the chain check, group
//! commit and subscriptions. Whole-store behaviour is in `tests/it`.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use crate::chain::{self, ChainCheck, Head};
use crate::config::Durability;
use crate::hub::Hub;
use crate::sled_store::commit::{Disk, GroupCommit};
use crate::store::{page_token_after, parse_page_token};
use crate::*;

fn game(id: &str) -> GameId {
    GameId::new(id).unwrap()
}

fn new_event(payload: &[u8]) -> NewEvent {
    NewEvent {
        actor: Actor::Seat(2),
        schema: 7,
        payload: payload.to_vec(),
    }
}

/// Three chained events of one game, with their envelopes.
fn chained() -> Vec<(StoredEvent, Vec<u8>)> {
    let events = [new_event(b"one"), new_event(b""), new_event(&[0xff; 100])];
    chain::build(
        &game("g-1"),
        &RequestId::new("req-9").unwrap(),
        Head::EMPTY,
        41,
        1_700_000_000_000,
        &events,
    )
}

#[test]
fn records_round_trip_and_chain_from_zero() {
    let built = chained();
    assert_eq!(built[0].0.prev_hash, Hash::ZERO);
    for (i, (event, bytes)) in built.iter().enumerate() {
        assert_eq!(bytes[0], envelope::CURRENT_FORMAT);
        assert_eq!(&envelope::decode(bytes).unwrap(), event);
        assert_eq!(event.seq, i as u64 + 1);
        assert_eq!(event.position, 41 + i as u64);
        if i > 0 {
            assert_eq!(event.prev_hash, built[i - 1].0.hash);
        }
        assert_eq!(bytes.len(), envelope::encoded_len(3, 5, event.payload.len()));
    }
}

/// What the PostgreSQL store patches in the database: the previous hash
/// and the position, at the offsets the envelope module gives.
#[test]
fn the_previous_hash_and_the_position_are_where_the_format_says() {
    for (event, bytes) in chained() {
        let prev_at = envelope::PREV_HASH_AT;
        assert_eq!(bytes[prev_at..prev_at + 32], event.prev_hash.0);
        let position_at = envelope::position_at(event.game.as_str().len());
        assert_eq!(bytes[position_at..position_at + 8], event.position.to_le_bytes());
    }
}

#[test]
fn every_flipped_bit_of_a_record_is_detected() {
    let (_, bytes) = &chained()[0];
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            assert!(envelope::decode(&damaged).is_err(), "byte {at} bit {bit}");
        }
    }
}

#[test]
fn truncated_or_padded_records_are_errors_not_panics() {
    let (_, bytes) = &chained()[2];
    for len in 0..bytes.len() {
        assert!(envelope::decode(&bytes[..len]).is_err(), "length {len}");
    }
    let mut padded = bytes.clone();
    padded.push(0);
    assert!(envelope::decode(&padded).is_err());
    assert!(
        envelope::decode(&[9, 1, 2])
            .unwrap_err()
            .contains("unknown envelope format 9")
    );
}

#[test]
fn game_ids_are_bounded_printable_ascii() {
    assert!(GameId::new("0b6f4a1e-9c7d-4e7b-8a51-3f2d7c9e1a22").is_ok());
    assert!(GameId::new("a").is_ok());
    assert!(GameId::new("x".repeat(MAX_GAME_ID_LEN)).is_ok());
    for bad in ["", "with space", "tab\t", "nul\0", "é", "line\n"] {
        assert!(
            matches!(GameId::new(bad), Err(StoreError::InvalidGameId(_))),
            "{bad:?}"
        );
    }
    assert!(GameId::new("x".repeat(MAX_GAME_ID_LEN + 1)).is_err());
    assert!(RequestId::new("").unwrap().is_none());
    assert!(RequestId::new("x".repeat(MAX_REQUEST_ID_LEN)).is_ok());
    assert!(matches!(
        RequestId::new("x".repeat(MAX_REQUEST_ID_LEN + 1)),
        Err(StoreError::InvalidRequestId(_))
    ));
    assert!(RequestId::new("a b").is_err());
}

/// The streams of one kind are listed from their prefix on, whatever
/// sorts before or after them, across pages.
#[test]
fn streams_with_a_prefix_are_listed_and_no_others() {
    let store = MemoryStore::default();
    let mut ids = vec![
        "@a/1".to_owned(),
        "@c/1".to_owned(),
        "a-game".to_owned(),
        "@b".to_owned(),
    ];
    // More than a page of the kind asked for.
    ids.extend((0..DEFAULT_PAGE_SIZE + 3).map(|n| format!("@b/{n:04}")));
    for id in &ids {
        store
            .append(&game(id), 0, &RequestId::none(), &[new_event(b"x")])
            .unwrap();
    }
    let listed: Vec<String> = streams_with_prefix(&store, "@b/")
        .unwrap()
        .into_iter()
        .map(|(rest, summary)| {
            assert_eq!(summary.game.as_str(), format!("@b/{rest}"));
            rest
        })
        .collect();
    let expected: Vec<String> = (0..DEFAULT_PAGE_SIZE + 3).map(|n| format!("{n:04}")).collect();
    assert_eq!(listed, expected);
    assert!(streams_with_prefix(&store, "@z/").unwrap().is_empty());
}

#[test]
fn page_tokens_round_trip_and_reject_garbage() {
    let id = game("game-42_~!");
    assert_eq!(parse_page_token(&page_token_after(&id)).unwrap(), id);
    for bad in ["", "g1.", "g1.6", "g1.zz", "x1.6161", "g1.2020", "g1.é"] {
        assert!(
            matches!(parse_page_token(bad), Err(StoreError::InvalidArgument(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn appends_are_bounded() {
    let id = game("g");
    let none = RequestId::none();
    assert!(chain::check_batch(&id, &none, &[]).is_err());
    let many = vec![new_event(b"x"); MAX_EVENTS_PER_APPEND + 1];
    assert!(chain::check_batch(&id, &none, &many).is_err());
    let large = new_event(&vec![0; MAX_APPEND_BYTES]);
    assert!(chain::check_batch(&id, &none, &[large]).is_err());
    let fits = new_event(&vec![0; MAX_APPEND_BYTES - envelope::encoded_len(1, 0, 0)]);
    assert!(chain::check_batch(&id, &none, &[fits]).is_ok());
}

#[test]
fn chain_check_names_the_first_bad_event() {
    let built = chained();
    let corrupt_seq = |error: StoreError| error.corruption().map(|c| (c.game, c.seq));

    // A gap: event 2 missing.
    let mut check = ChainCheck::new("g-1", 1);
    check.next(1, &built[0].1).unwrap();
    let error = check.next(3, &built[2].1).unwrap_err();
    assert_eq!(corrupt_seq(error), Some(("g-1".into(), 2)));

    // An envelope stored under the wrong sequence number.
    let mut check = ChainCheck::new("g-1", 2);
    let error = check.next(2, &built[2].1).unwrap_err();
    assert_eq!(corrupt_seq(error), Some(("g-1".into(), 2)));

    // An envelope of another game.
    let error = ChainCheck::new("g-2", 1).next(1, &built[0].1).unwrap_err();
    assert_eq!(corrupt_seq(error), Some(("g-2".into(), 1)));

    // A valid envelope that does not link: event 2 of another chain.
    let other = chain::build(
        &game("g-1"),
        &RequestId::none(),
        Head::EMPTY,
        1,
        0,
        &[new_event(b"a"), new_event(b"b")],
    );
    let mut check = ChainCheck::new("g-1", 1);
    check.next(1, &built[0].1).unwrap();
    let error = check.next(2, &other[1].1).unwrap_err();
    assert!(error.to_string().contains("chain broken"), "{error}");
}

#[test]
fn errors_separate_callers_faults_from_ours() {
    let conflict = StoreError::Conflict {
        game: "g".into(),
        expected: 1,
        actual: 2,
    };
    assert!(conflict.is_caller_error());
    assert!(StoreError::NotFound("g".into()).is_caller_error());
    assert!(!StoreError::corrupt("g", 1, "x").is_caller_error());
    assert!(!StoreError::Io(std::io::Error::other("disk")).is_caller_error());
}

fn stored(position: u64) -> Arc<StoredEvent> {
    let mut event = chained()[0].0.clone();
    event.position = position;
    Arc::new(event)
}

/// A disk for the committer that keeps what it was given, takes its time
/// to sync, and fails when told to.
#[derive(Clone, Default)]
struct FakeDisk(Arc<std::sync::Mutex<DiskLog>>);

#[derive(Default)]
struct DiskLog {
    log: Vec<u8>,
    /// What went to "sled".
    applied: Vec<u8>,
    syncs: usize,
    checkpoints: usize,
    acknowledged: u64,
    fail_syncs: bool,
    fail_checkpoints: bool,
    panic_on_apply: bool,
}

impl FakeDisk {
    fn log(&self) -> std::sync::MutexGuard<'_, DiskLog> {
        self.0.lock().unwrap()
    }
}

impl Disk for FakeDisk {
    fn write_log(&mut self, entries: &[u8]) -> std::io::Result<()> {
        self.log().log.extend_from_slice(entries);
        Ok(())
    }

    fn apply(&mut self, entries: &[u8], _: crate::sled_store::wal::Apply) -> std::io::Result<()> {
        let mut log = self.log();
        assert!(!log.panic_on_apply, "injected: a bug in sled");
        log.applied.extend_from_slice(entries);
        Ok(())
    }

    fn sync(&mut self) -> std::io::Result<()> {
        std::thread::sleep(Duration::from_millis(2));
        let mut log = self.log();
        if log.fail_syncs {
            return Err(std::io::Error::other("injected: disk full"));
        }
        log.syncs += 1;
        Ok(())
    }

    fn note_acknowledged(&mut self, position: u64) -> std::io::Result<()> {
        self.log().acknowledged = position;
        Ok(())
    }

    fn wants_checkpoint(&self) -> bool {
        false
    }

    fn checkpoint(&mut self, position: u64) -> std::io::Result<()> {
        let mut log = self.log();
        if log.fail_checkpoints {
            return Err(std::io::Error::other("injected: sled's flush failed"));
        }
        log.checkpoints += 1;
        log.acknowledged = position;
        Ok(())
    }
}

/// A committer on a fake disk, started.
fn committer(
    durability: Durability,
    recovered: u64,
) -> (Arc<GroupCommit>, FakeDisk, std::thread::JoinHandle<()>) {
    let commit = GroupCommit::new(durability, recovered, Hub::new(1024));
    let disk = FakeDisk::default();
    let thread = commit.start(Box::new(disk.clone())).unwrap();
    (commit, disk, thread)
}

/// Writes the event at `position` as the store's writer would.
fn write(commit: &Arc<GroupCommit>, position: u64) -> Written {
    commit.written(
        |log| log.extend_from_slice(&position.to_le_bytes()),
        vec![stored(position)],
    );
    let appended = Appended {
        first_seq: position,
        last_seq: position,
        first_position: position,
        last_position: position,
        time_millis: 0,
    };
    Written::pending(appended, commit.clone())
}

/// Polls a future to its end on this thread.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

#[test]
fn group_commit_shares_syncs_and_publishes_in_order() {
    let (commit, disk, thread) = committer(Durability::Flush, 0);
    let mut all = commit.hub.subscribe_all();
    let writers = 16;
    let next = std::sync::Mutex::new(0u64);
    let start = Barrier::new(writers);
    std::thread::scope(|scope| {
        for writer in 0..writers {
            let (commit, next, start) = (&commit, &next, &start);
            scope.spawn(move || {
                start.wait();
                for _ in 0..10 {
                    let written = {
                        // The store's writer lock: positions in order.
                        let mut next = next.lock().unwrap();
                        *next += 1;
                        write(commit, *next)
                    };
                    let position = written.appended().last_position;
                    // Half the writers wait as threads, half as futures.
                    let appended = if writer % 2 == 0 {
                        written.wait()
                    } else {
                        block_on(written.acknowledged())
                    };
                    assert_eq!(appended.unwrap().last_position, position);
                    assert!(commit.durable() >= position);
                }
            });
        }
    });
    commit.stop();
    thread.join().unwrap();
    let disk = disk.log();
    assert!(
        disk.syncs < writers * 10 / 2,
        "{} syncs for 160 appends",
        disk.syncs
    );
    let logged: Vec<u64> = disk
        .log
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(
        logged,
        (1..=160).collect::<Vec<_>>(),
        "the log holds every entry in order"
    );
    assert_eq!(disk.applied, disk.log, "sled gets exactly what the log got");
    assert_eq!(disk.acknowledged, 160);
    assert_eq!(disk.checkpoints, 1, "stopping checkpoints once");
    for position in 1..=160 {
        assert_eq!(all.try_recv().unwrap().position, position);
    }
}

#[test]
fn a_failed_sync_acknowledges_nothing_and_stops_the_store() {
    let (commit, disk, thread) = committer(Durability::Flush, 5);
    let mut all = commit.hub.subscribe_all();
    disk.log().fail_syncs = true;
    let failed = write(&commit, 6).wait();
    assert!(
        matches!(&failed, Err(StoreError::Unavailable(e)) if e.contains("injected: disk full")),
        "{failed:?}"
    );
    assert_eq!(commit.durable(), 5);
    assert!(all.try_recv().is_err(), "nothing published");
    assert!(commit.failure().is_some());
    // A sync that failed may have lost pages the next one would not see:
    // nothing after it is trusted either, even once the disk recovers.
    disk.log().fail_syncs = false;
    assert!(matches!(
        block_on(write(&commit, 7).acknowledged()),
        Err(StoreError::Unavailable(_))
    ));
    assert!(matches!(commit.checkpoint(), Err(StoreError::Unavailable(_))));
    assert_eq!(commit.durable(), 5);
    commit.stop();
    thread.join().unwrap();
}

#[test]
fn a_failed_checkpoint_is_reported_to_its_caller() {
    let (commit, disk, thread) = committer(Durability::Flush, 0);
    write(&commit, 1).wait().unwrap();
    disk.log().fail_checkpoints = true;
    let result = commit.checkpoint();
    assert!(
        matches!(&result, Err(StoreError::Unavailable(e)) if e.contains("injected: sled's flush failed")),
        "{result:?}"
    );
    assert!(commit.failure().is_some());
    commit.stop();
    thread.join().unwrap();
}

#[test]
fn a_panicking_committer_stops_the_store_and_wakes_every_waiter() {
    let (commit, disk, thread) = committer(Durability::Flush, 0);
    disk.0.lock().unwrap().panic_on_apply = true;
    let waited = write(&commit, 1).wait();
    assert!(
        matches!(&waited, Err(StoreError::Unavailable(e)) if e.contains("panicked")),
        "{waited:?}"
    );
    assert!(commit.failure().is_some_and(|f| f.contains("panicked")));
    assert!(matches!(
        block_on(write(&commit, 2).acknowledged()),
        Err(StoreError::Unavailable(_))
    ));
    assert!(matches!(commit.checkpoint(), Err(StoreError::Unavailable(_))));
    assert!(thread.join().is_err(), "the committer panicked");
}

#[test]
fn a_checkpoint_covers_everything_written_whatever_the_durability() {
    let (commit, disk, thread) = committer(Durability::Written, 0);
    let mut all = commit.hub.subscribe_all();
    let written = write(&commit, 1);
    written.wait().unwrap();
    commit.checkpoint().unwrap();
    let (syncs, checkpoints) = {
        let log = disk.log();
        (log.syncs, log.checkpoints)
    };
    assert_eq!((syncs, checkpoints), (0, 1), "Written does not sync");
    assert_eq!(all.try_recv().unwrap().position, 1);
    commit.stop();
    thread.join().unwrap();
    assert_eq!(disk.log().checkpoints, 2);
}

#[test]
fn without_durability_groups_go_to_sled_only_and_a_checkpoint_covers_what_was_queued() {
    let (commit, disk, thread) = committer(Durability::None, 0);
    // Queued without waiting: the checkpoint must still cover all three.
    let written: Vec<Written> = (1..=3).map(|position| write(&commit, position)).collect();
    commit.checkpoint().unwrap();
    {
        let log = disk.log();
        assert_eq!(log.applied.len(), 3 * 8, "every entry applied");
        assert!(log.log.is_empty(), "no log written");
        assert_eq!((log.syncs, log.acknowledged), (0, 3));
    }
    for written in written {
        written.wait().unwrap();
    }
    commit.stop();
    thread.join().unwrap();
}

#[test]
fn a_lagging_subscriber_is_told_and_resumes() {
    let hub = Hub::new(4);
    let mut slow = hub.subscribe_all();
    hub.publish((1..=10).map(stored));
    assert!(matches!(
        slow.try_recv(),
        Err(broadcast::error::TryRecvError::Lagged(6))
    ));
    assert_eq!(slow.try_recv().unwrap().position, 7);
}

#[test]
fn game_channels_nobody_listens_to_are_dropped() {
    let hub = Hub::new(4);
    let receiver = hub.subscribe_game(&game("g-1"));
    drop(receiver);
    hub.publish([stored(1)]);
    let mut again = hub.subscribe_game(&game("g-1"));
    hub.publish([stored(2)]);
    assert_eq!(again.try_recv().unwrap().position, 2);
}

#[test]
fn the_write_ahead_log_reads_back_every_whole_entry_and_stops_at_damage() {
    use crate::sled_store::wal;
    let mut log = Vec::new();
    wal::encode(&mut log, 1, b"index one", b"records one");
    let second = log.len();
    wal::encode(&mut log, 2, b"", b"");
    let third = log.len();
    wal::encode(&mut log, 4, b"index three", &[0xee; 300]);
    let entries = wal::decode(&log);
    assert_eq!(
        entries
            .iter()
            .map(|e| (e.first_position, e.index_value, e.envelopes.len()))
            .collect::<Vec<_>>(),
        [
            (1, &b"index one"[..], 11),
            (2, &b""[..], 0),
            (4, &b"index three"[..], 300)
        ]
    );
    // A crash cuts the last entry anywhere: the whole ones before it stay.
    for cut in third..log.len() {
        assert_eq!(wal::decode(&log[..cut]).len(), 2, "cut at {cut}");
    }
    // A flipped byte anywhere in an entry ends the log before it.
    for at in second..third {
        let mut damaged = log.clone();
        damaged[at] ^= 0x20;
        assert_eq!(wal::decode(&damaged).len(), 1, "flipped at {at}");
    }
}
