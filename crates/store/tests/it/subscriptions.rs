//! Live subscriptions: every event in order; a slow subscriber lags and is
//! told so, and never holds a writer up.

use std::time::{Duration, Instant};

use carcassonne_store::broadcast::error::TryRecvError;
use carcassonne_store::*;

use crate::support::{config, each_backend, event, game};

fn sees_every_event_in_order(store: &dyn EventStore) {
    let ids = [game("sub-a"), game("sub-b")];
    let mut all = store.subscribe_all();
    let mut only_a = store.subscribe_game(&ids[0]);
    let mut versions = [0u64; 2];
    for i in 0..60u64 {
        let which = (i % 3 % 2) as usize;
        let events = [event(&i.to_le_bytes()), event(b"second")];
        let count = 1 + (i % 2) as usize;
        versions[which] = store
            .append(&ids[which], versions[which], &RequestId::none(), &events[..count])
            .unwrap()
            .last_seq;
    }
    let mut received = Vec::new();
    while let Ok(event) = all.try_recv() {
        received.push(event);
    }
    let stored = store.read_all(1, 1000).unwrap();
    assert_eq!(received.len(), stored.len());
    for (got, wanted) in received.iter().zip(&stored) {
        assert_eq!(**got, *wanted);
    }
    let mut seqs = Vec::new();
    while let Ok(event) = only_a.try_recv() {
        assert_eq!(event.game, ids[0]);
        seqs.push(event.seq);
    }
    assert_eq!(seqs, (1..=versions[0]).collect::<Vec<_>>());
}

#[test]
fn subscribers_see_every_event_in_order() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::Flush));
        sees_every_event_in_order(&*store);
    });
}

#[test]
fn a_slow_subscriber_lags_without_blocking_the_writer() {
    each_backend(|backend| {
        let (_place, store) = backend.open(StoreConfig {
            subscription_capacity: 8,
            ..config(Durability::None)
        });
        slow_subscriber(&*store);
    });
}

fn slow_subscriber(store: &dyn EventStore) {
    let id = game("busy");
    // Subscribers that never read while the writer runs.
    let mut slow_all = store.subscribe_all();
    let mut slow_game = store.subscribe_game(&id);
    let started = Instant::now();
    for seq in 0..500 {
        store
            .append(&id, seq, &RequestId::none(), &[event(b"x")])
            .unwrap();
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    for receiver in [&mut slow_all, &mut slow_game] {
        assert!(matches!(receiver.try_recv(), Err(TryRecvError::Lagged(492))));
        // It resumes at the oldest event still held, in order.
        let seqs: Vec<u64> = std::iter::from_fn(|| receiver.try_recv().ok())
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, (493..=500).collect::<Vec<_>>());
    }
}

#[test]
fn a_subscriber_in_another_thread_follows_a_live_writer() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::Flush));
        follows_a_live_writer(&*store);
    });
}

fn follows_a_live_writer(store: &dyn EventStore) {
    let id = game("live");
    let mut receiver = store.subscribe_game(&id);
    let follower = std::thread::spawn(move || {
        let mut seqs = Vec::new();
        while seqs.len() < 40 {
            match receiver.blocking_recv() {
                Ok(event) => seqs.push(event.seq),
                Err(error) => panic!("{error}"),
            }
        }
        seqs
    });
    for seq in 0..40 {
        store
            .append(&id, seq, &RequestId::none(), &[event(b"x")])
            .unwrap();
    }
    assert_eq!(follower.join().unwrap(), (1..=40).collect::<Vec<_>>());
}
