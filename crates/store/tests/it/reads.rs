//! Reads, listings, bounds and the idempotent retry, seen from outside.

use carcassonne_store::*;

use crate::support::{Place, config, each_backend, event, game, open, request};

#[test]
fn a_retried_request_returns_the_original_result_and_writes_nothing() {
    each_backend(|backend| {
        let place = backend.place();
        retried_requests(&place);
    });
}

fn retried_requests(place: &Place) {
    let store = place.open(config(Durability::Flush));
    let id = game("retry");
    let first = store
        .append(&id, 0, &request("create"), &[event(b"a"), event(b"b")])
        .unwrap();
    let second = store.append(&id, 2, &request("move-1"), &[event(b"c")]).unwrap();
    assert_eq!(
        (
            first.first_seq,
            first.last_seq,
            first.first_position,
            first.last_position
        ),
        (1, 2, 1, 2)
    );
    // The same request id again, with the same or any other version and
    // events: the original answer.
    assert_eq!(
        store
            .append(&id, 0, &request("create"), &[event(b"zzz")])
            .unwrap(),
        first
    );
    assert_eq!(
        store.append(&id, 3, &request("move-1"), &[event(b"c")]).unwrap(),
        second
    );
    assert_eq!(store.read_game(&id, 1).unwrap().len(), 3);
    assert_eq!(store.last_position(), 3);
    // After a reopen too.
    drop(store);
    let store = place.open(config(Durability::Flush));
    assert_eq!(
        store.append(&id, 1, &request("move-1"), &[event(b"c")]).unwrap(),
        second
    );
    // A request id of another game is a new request here.
    let other = store
        .append(&game("other"), 0, &request("create"), &[event(b"a")])
        .unwrap();
    assert_eq!((other.first_seq, other.first_position), (1, 4));
}

#[test]
fn reads_from_any_version_and_position() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::None));
        reads_from_anywhere(&*store);
    });
}

fn reads_from_anywhere(store: &dyn EventStore) {
    let (a, b) = (game("a"), game("b"));
    store
        .append(&a, 0, &RequestId::none(), &[event(b"a1"), event(b"a2")])
        .unwrap();
    store.append(&b, 0, &RequestId::none(), &[event(b"b1")]).unwrap();
    store
        .append(
            &a,
            2,
            &RequestId::none(),
            &[event(b"a3"), event(b"a4"), event(b"a5")],
        )
        .unwrap();
    let payloads =
        |events: Vec<StoredEvent>| -> Vec<Vec<u8>> { events.into_iter().map(|e| e.payload).collect() };
    // From the middle of an append, from the end, from past the end.
    assert_eq!(
        payloads(store.read_game(&a, 4).unwrap()),
        [b"a4".to_vec(), b"a5".to_vec()]
    );
    assert_eq!(payloads(store.read_game(&a, 0).unwrap()).len(), 5);
    assert!(store.read_game(&a, 6).unwrap().is_empty());
    // A chunk: from the middle of an append, cut within the next one.
    assert_eq!(
        payloads(store.read_game_chunk(&a, 2, 2).unwrap()),
        [b"a2".to_vec(), b"a3".to_vec()]
    );
    assert_eq!(payloads(store.read_game_chunk(&a, 4, 10).unwrap()).len(), 2);
    assert!(store.read_game_chunk(&a, 1, 0).unwrap().is_empty());
    assert!(store.read_game(&a, 600).unwrap().is_empty());
    assert!(matches!(
        store.read_game(&game("nobody"), 1),
        Err(StoreError::NotFound(_))
    ));
    assert!(matches!(
        store.verify_game(&game("nobody")),
        Err(StoreError::NotFound(_))
    ));
    // Global reads start mid-append and stop at the limit.
    assert_eq!(
        payloads(store.read_all(5, 2).unwrap()),
        [b"a4".to_vec(), b"a5".to_vec()]
    );
    assert_eq!(
        payloads(store.read_all(2, 2).unwrap()),
        [b"a2".to_vec(), b"b1".to_vec()]
    );
    assert!(store.read_all(7, 10).unwrap().is_empty());
    assert!(store.read_all(1, 0).unwrap().is_empty());
    let summary = store.game(&a).unwrap().unwrap();
    assert_eq!((summary.last_seq, summary.created_millis), (5, 1_700_000_000_000));
}

#[test]
fn listing_pages_through_every_game_once() {
    each_backend(|backend| {
        let (_place, s) = backend.open(config(Durability::None));
        for i in 0..25 {
            let id = game(&format!("game-{i:02}"));
            s.append(&id, 0, &RequestId::none(), &[event(b"x")]).unwrap();
            if i % 3 == 0 {
                s.append(&id, 1, &RequestId::none(), &[event(b"y")]).unwrap();
            }
        }
        let mut seen = Vec::new();
        let mut token = None;
        loop {
            let page = s.list_games(token.as_deref(), 10).unwrap();
            assert!(page.games.len() <= 10);
            seen.extend(page.games.iter().map(|g| (g.game.to_string(), g.last_seq)));
            match page.next_page_token {
                Some(next) => token = Some(next),
                None => break,
            }
        }
        let wanted: Vec<(String, u64)> = (0..25)
            .map(|i| (format!("game-{i:02}"), if i % 3 == 0 { 2 } else { 1 }))
            .collect();
        assert_eq!(seen, wanted);
        assert_eq!(s.list_games(None, 0).unwrap().games.len(), 25);
        assert!(matches!(
            s.list_games(Some("not a token"), 10),
            Err(StoreError::InvalidArgument(_))
        ));
    });
}

#[test]
fn bad_appends_are_refused_before_anything_is_written() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::None));
        bad_appends(&*store);
    });
}

fn bad_appends(store: &dyn EventStore) {
    let id = game("g");
    let none = RequestId::none();
    assert!(matches!(
        store.append(&id, 0, &none, &[]),
        Err(StoreError::InvalidArgument(_))
    ));
    let huge = event(&vec![0; MAX_APPEND_BYTES]);
    assert!(matches!(
        store.append(&id, 0, &none, &[huge]),
        Err(StoreError::InvalidArgument(_))
    ));
    let error = store.append(&id, 3, &none, &[event(b"x")]).unwrap_err();
    assert!(matches!(
        error,
        StoreError::Conflict {
            expected: 3,
            actual: 0,
            ..
        }
    ));
    assert!(error.is_caller_error());
    assert_eq!(store.last_position(), 0);
    assert_eq!(store.game(&id).unwrap(), None);
}

#[test]
fn a_directory_that_is_not_a_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = sled::open(dir.path()).unwrap();
        db.insert("something", "else").unwrap();
        db.flush().unwrap();
    }
    assert!(matches!(
        SledStore::open(dir.path(), StoreConfig::default()),
        Err(StoreError::Io(_))
    ));
}

#[test]
fn a_store_keeps_the_compression_it_was_created_with() {
    let dir = tempfile::tempdir().unwrap();
    let compressed = StoreConfig {
        compression: true,
        ..crate::support::config(Durability::Flush)
    };
    let store = SledStore::open(dir.path(), compressed).unwrap();
    store
        .append(&game("z"), 0, &RequestId::none(), &[event(&[5; 500])])
        .unwrap();
    drop(store);
    // Opened with the default (no compression): sled's setting wins.
    let store = open(dir.path(), Durability::Flush);
    assert_eq!(store.read_game(&game("z"), 1).unwrap()[0].payload, vec![5; 500]);
    assert!(store.verify_all().unwrap().is_ok());
}

/// `find_request` answers a retried request id with the first append's
/// result, on every store, and knows nothing else.
#[test]
fn find_request_finds_only_the_appends_that_carried_the_id() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::Flush));
        let g = crate::support::game("g1");
        let first = store
            .append(
                &g,
                0,
                &crate::support::request("r1"),
                &[crate::support::event(b"a")],
            )
            .unwrap();
        let second = store
            .append(
                &g,
                1,
                &crate::support::request("r2"),
                &[crate::support::event(b"b"), crate::support::event(b"c")],
            )
            .unwrap();
        assert_eq!(
            store
                .find_request(&g, &crate::support::request("r1"))
                .unwrap()
                .map(|w| w.wait().unwrap()),
            Some(first)
        );
        assert_eq!(
            store
                .find_request(&g, &crate::support::request("r2"))
                .unwrap()
                .map(|w| w.wait().unwrap()),
            Some(second)
        );
        assert_eq!(
            store
                .find_request(&g, &crate::support::request("r3"))
                .unwrap()
                .map(|w| w.wait().unwrap()),
            None
        );
        assert_eq!(
            store
                .find_request(&g, &carcassonne_store::RequestId::none())
                .unwrap()
                .map(|w| w.wait().unwrap()),
            None
        );
        assert_eq!(
            store
                .find_request(&crate::support::game("g2"), &crate::support::request("r1"))
                .unwrap()
                .map(|w| w.wait().unwrap()),
            None
        );
    });
}

/// Reads from the far end of the number range, in every store: nothing,
/// and no overflow on the way (a debug build panicked in `MemoryStore`).
#[test]
fn reads_from_the_largest_version_and_position_find_nothing() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::None));
        let id = game("far");
        store
            .append(&id, 0, &RequestId::none(), &[event(b"a"), event(b"b")])
            .unwrap();
        for from in [3, u64::MAX - 1, u64::MAX] {
            assert_eq!(store.read_game(&id, from).unwrap(), [], "read_game from {from}");
            assert_eq!(store.read_all(from, 10).unwrap(), [], "read_all from {from}");
        }
        assert_eq!(store.read_game(&id, 2).unwrap().len(), 1);
        assert_eq!(store.read_all(2, usize::MAX).unwrap().len(), 1);
    });
}
