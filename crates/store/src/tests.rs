//! Unit tests: the record format, ids, page tokens, the chain check, group
//! commit and subscriptions. Whole-store behaviour is in `tests/it`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use crate::chain::{self, ChainCheck, Head};
use crate::config::Durability;
use crate::hub::Hub;
use crate::sled_store::commit::GroupCommit;
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

/// Three chained events of one game, with their records.
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
        assert_eq!(bytes[0], record::CURRENT_FORMAT);
        assert_eq!(&record::decode(bytes).unwrap(), event);
        assert_eq!(event.seq, i as u64 + 1);
        assert_eq!(event.position, 41 + i as u64);
        if i > 0 {
            assert_eq!(event.prev_hash, built[i - 1].0.hash);
        }
        assert_eq!(bytes.len(), record::encoded_len(3, 5, event.payload.len()));
    }
}

#[test]
fn every_flipped_bit_of_a_record_is_detected() {
    let (_, bytes) = &chained()[0];
    for at in 0..bytes.len() {
        for bit in 0..8 {
            let mut damaged = bytes.clone();
            damaged[at] ^= 1 << bit;
            assert!(record::decode(&damaged).is_err(), "byte {at} bit {bit}");
        }
    }
}

#[test]
fn truncated_or_padded_records_are_errors_not_panics() {
    let (_, bytes) = &chained()[2];
    for len in 0..bytes.len() {
        assert!(record::decode(&bytes[..len]).is_err(), "length {len}");
    }
    let mut padded = bytes.clone();
    padded.push(0);
    assert!(record::decode(&padded).is_err());
    assert!(
        record::decode(&[9, 1, 2])
            .unwrap_err()
            .contains("unknown record format 9")
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
    let fits = new_event(&vec![0; MAX_APPEND_BYTES - record::encoded_len(1, 0, 0)]);
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

    // A record stored under the wrong sequence number.
    let mut check = ChainCheck::new("g-1", 2);
    let error = check.next(2, &built[2].1).unwrap_err();
    assert_eq!(corrupt_seq(error), Some(("g-1".into(), 2)));

    // A record of another game.
    let error = ChainCheck::new("g-2", 1).next(1, &built[0].1).unwrap_err();
    assert_eq!(corrupt_seq(error), Some(("g-2".into(), 1)));

    // A valid record that does not link: event 2 of another chain.
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

#[test]
fn group_commit_shares_flushes_and_publishes_in_order() {
    let commit = GroupCommit::new(Durability::Flush, 0, Hub::new(1024));
    let mut all = commit.hub.subscribe_all();
    let writers = 16;
    let flushes = AtomicUsize::new(0);
    let next = std::sync::Mutex::new(0u64);
    let start = Barrier::new(writers);
    std::thread::scope(|scope| {
        for _ in 0..writers {
            scope.spawn(|| {
                start.wait();
                for _ in 0..10 {
                    let position = {
                        // The store's writer lock: positions in order.
                        let mut next = next.lock().unwrap();
                        *next += 1;
                        commit.written(vec![stored(*next)]);
                        *next
                    };
                    commit
                        .wait_durable(position, || {
                            flushes.fetch_add(1, Ordering::Relaxed);
                            // What the store's writer lock would cover.
                            let target = *next.lock().unwrap();
                            std::thread::sleep(Duration::from_millis(2));
                            Ok(target)
                        })
                        .unwrap();
                    assert!(commit.durable() >= position);
                }
            });
        }
    });
    let flushes = flushes.into_inner();
    assert!(flushes < writers * 10 / 2, "{flushes} flushes for 160 appends");
    for position in 1..=160 {
        assert_eq!(all.try_recv().unwrap().position, position);
    }
}

#[test]
fn a_failed_flush_acknowledges_nothing_and_the_next_one_does() {
    let commit = GroupCommit::new(Durability::Flush, 5, Hub::new(16));
    let mut all = commit.hub.subscribe_all();
    commit.written(vec![stored(6)]);
    let failed = commit.wait_durable(6, || Err(std::io::Error::other("disk full")));
    assert!(matches!(failed, Err(StoreError::Io(_))));
    assert_eq!(commit.durable(), 5);
    assert!(all.try_recv().is_err());
    commit.wait_durable(6, || Ok(6)).unwrap();
    assert_eq!(all.try_recv().unwrap().position, 6);
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
