//! What only the PostgreSQL store has to show: commits out of order never
//! make a reader skip or repeat an event, an open transaction holds back
//! readers but no writer, a retry after a lost connection
//! gets the first append, several nodes share one database, and unsafe
//! durability settings are refused.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use carcassonne_store::broadcast::error::TryRecvError;
use carcassonne_store::*;

use crate::pg::{Cluster, cluster};
use crate::support::{config, event, game, request};

/// The cluster, or `None` when PostgreSQL is absent and not required (the
/// note is printed once by `cluster`).
fn pg() -> Option<(&'static Cluster, String)> {
    let cluster = cluster()?;
    let url = cluster.database();
    Some((cluster, url))
}

fn open(url: &str) -> PgStore {
    PgStore::open(url, config(Durability::Flush)).unwrap()
}

/// Receives `count` events, waiting up to 30 s for them.
fn receive(receiver: &mut EventReceiver, count: usize) -> Vec<Arc<StoredEvent>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    while got.len() < count {
        match receiver.try_recv() {
            Ok(event) => got.push(event),
            Err(TryRecvError::Empty) => {
                assert!(
                    Instant::now() < deadline,
                    "only {} of {count} events arrived",
                    got.len()
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(error) => panic!("{error}"),
        }
    }
    got
}

/// Writers on different games whose transactions stay open for a while
/// after they took their positions (a trigger sleeps in some of them), so
/// that they would commit out of position order if positions were handed
/// out like a sequence: a subscriber on this node, one on another node and
/// a catch-up reader each see every event once, in position order.
#[test]
fn commits_out_of_order_are_seen_once_in_position_order() {
    let Some((cluster, url)) = pg() else { return };
    let store = open(&url);
    let other_node = open(&url);
    cluster
        .admin(&url)
        .batch_execute(
            "CREATE FUNCTION linger() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
                 IF random() < 0.3 THEN PERFORM pg_sleep(random() * 0.03); END IF;
                 RETURN NULL;
             END $$;
             CREATE TRIGGER linger AFTER INSERT ON events
                 FOR EACH STATEMENT EXECUTE FUNCTION linger();",
        )
        .unwrap();
    let (writers, appends) = (8u64, 20u64);
    let total = usize::try_from(writers * appends * 2).unwrap();
    let mut here = store.subscribe_all();
    let mut there = other_node.subscribe_all();
    let caught_up = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut seen: Vec<StoredEvent> = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(60);
            while seen.len() < total {
                assert!(
                    Instant::now() < deadline,
                    "the reader saw {} of {total}",
                    seen.len()
                );
                let from = seen.last().map_or(1, |e| e.position + 1);
                seen.extend(store.read_all(from, 7).unwrap());
            }
            seen
        });
        for writer in 0..writers {
            let store = &store;
            scope.spawn(move || {
                let id = game(&format!("writer-{writer}"));
                for n in 0..appends {
                    store
                        .append(&id, n * 2, &RequestId::none(), &[event(b"a"), event(b"b")])
                        .unwrap();
                }
            });
        }
        reader.join().unwrap()
    });
    let wanted: Vec<u64> = (1..=total as u64).collect();
    let positions = |events: &[StoredEvent]| events.iter().map(|e| e.position).collect::<Vec<_>>();
    assert_eq!(positions(&caught_up), wanted, "the catch-up reader");
    for (name, receiver) in [("this node", &mut here), ("the other node", &mut there)] {
        let got: Vec<StoredEvent> = receive(receiver, total).iter().map(|e| (**e).clone()).collect();
        assert_eq!(positions(&got), wanted, "the subscriber on {name}");
        assert_eq!(got, caught_up, "the subscriber on {name}");
        assert!(
            matches!(receiver.try_recv(), Err(TryRecvError::Empty)),
            "{name}: an event twice"
        );
    }
    let report = other_node.verify_all().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.events, total as u64);
}

/// A transaction that took a position and stays open (here an admin
/// session's, standing for a slow append) holds back no other append, but
/// no reader reads past its position until it ends; rolled back, it leaves
/// a gap that readers pass.
#[test]
fn an_open_transaction_hides_later_positions_until_it_ends() {
    let Some((cluster, url)) = pg() else { return };
    let (store, other_node) = (open(&url), open(&url));
    let (early, late) = (game("early"), game("late"));
    store
        .append(&early, 0, &RequestId::none(), &[event(b"1")])
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while other_node.last_position() < 1 {
        assert!(Instant::now() < deadline, "the other node never saw position 1");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut here = store.subscribe_all();
    let mut there = other_node.subscribe_all();
    let mut slow = cluster.admin(&url);
    let mut open_transaction = slow.transaction().unwrap();
    let held: i64 = open_transaction
        .query_one("SELECT take_positions(1)", &[])
        .unwrap()
        .get(0);
    assert_eq!(held, 2);
    // Committed while position 2 is open: acknowledged at once.
    let appended = store
        .append(&late, 0, &RequestId::none(), &[event(b"3")])
        .unwrap();
    assert_eq!(appended.first_position, 3);
    std::thread::sleep(Duration::from_millis(600));
    for node in [&store, &other_node] {
        let positions: Vec<u64> = node
            .read_all(1, 100)
            .unwrap()
            .iter()
            .map(|e| e.position)
            .collect();
        assert_eq!(positions, [1], "read past an open position");
        assert!(node.last_position() < 3);
    }
    assert!(matches!(here.try_recv(), Err(TryRecvError::Empty)));
    assert!(matches!(there.try_recv(), Err(TryRecvError::Empty)));
    open_transaction.rollback().unwrap();
    for receiver in [&mut here, &mut there] {
        assert_eq!(receive(receiver, 1)[0].position, 3);
    }
    for node in [&store, &other_node] {
        let positions: Vec<u64> = node
            .read_all(1, 100)
            .unwrap()
            .iter()
            .map(|e| e.position)
            .collect();
        assert_eq!(positions, [1, 3]);
        assert_eq!(node.last_position(), 3);
        let report = node.verify_all().unwrap();
        assert!(report.is_ok(), "a gap is not damage: {report:?}");
    }
    // The next append takes the next number: a position is never reused.
    let next = store
        .append(&early, 1, &RequestId::none(), &[event(b"4")])
        .unwrap();
    assert_eq!(next.first_position, 4);
}

/// The connections drop (every backend of the database terminated) after
/// an append was acknowledged: the same request id again, through the
/// reconnected pool and through a new store, gets the first append, and
/// nothing is written twice; the follower reconnects and misses nothing.
#[test]
fn a_retry_after_the_connection_dropped_returns_the_first_append() {
    let Some((cluster, url)) = pg() else { return };
    let store = open(&url);
    let id = game("dropped");
    let first = store
        .append(&id, 0, &request("create"), &[event(b"a"), event(b"b")])
        .unwrap();
    let mut admin = cluster.admin(&url);
    let killed: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(killed > 0);
    // The pool finds its connections dead and makes new ones; a store error
    // on the way would be Unavailable, and the retry after it must work.
    let retried = match store.append(&id, 0, &request("create"), &[event(b"zzz")]) {
        Err(StoreError::Unavailable(_)) => store.append(&id, 0, &request("create"), &[event(b"zzz")]),
        other => other,
    }
    .unwrap();
    assert_eq!(retried, first);
    // The follower lost its connection too: it reconnects and catches up,
    // so another node's append still reaches this node's subscribers.
    let mut live = store.subscribe_game(&id);
    let other_node = open(&url);
    other_node
        .append(&id, 2, &request("after"), &[event(b"c")])
        .unwrap();
    assert_eq!(receive(&mut live, 1)[0].seq, 3);
    drop(other_node);
    drop(store);
    let store = open(&url);
    assert_eq!(
        store.append(&id, 5, &request("create"), &[event(b"c")]).unwrap(),
        first
    );
    assert_eq!(
        store
            .find_request(&id, &request("create"))
            .unwrap()
            .map(|w| w.wait().unwrap()),
        Some(first)
    );
    assert_eq!(store.read_game(&id, 1).unwrap().len(), 3);
    assert_eq!(store.last_position(), 3);
}

/// Two stores ("nodes") on one database: an append through one reaches
/// the other's subscriptions and reads; racing on one version, exactly
/// one of them wins each round.
#[test]
fn two_nodes_share_one_database() {
    let Some((_cluster, url)) = pg() else { return };
    let (a, b) = (open(&url), open(&url));
    let id = game("shared");
    let mut b_game = b.subscribe_game(&id);
    let mut b_all = b.subscribe_all();
    let appended = a.append(&id, 0, &request("r0"), &[event(b"hello")]).unwrap();
    let seen = receive(&mut b_game, 1);
    assert_eq!((seen[0].seq, seen[0].payload.as_slice()), (1, &b"hello"[..]));
    assert_eq!(receive(&mut b_all, 1)[0].position, appended.last_position);
    assert_eq!(b.read_game(&id, 1).unwrap()[0].payload, b"hello");
    assert_eq!(b.last_position(), 1);
    // The other node knows the request id too.
    assert_eq!(
        b.append(&id, 0, &request("r0"), &[event(b"x")]).unwrap(),
        appended
    );
    let rounds = 20u64;
    for round in 1..=rounds {
        let start = Barrier::new(2);
        let results: Vec<Result<Appended>> = std::thread::scope(|scope| {
            let handles: Vec<_> = [&a, &b]
                .into_iter()
                .enumerate()
                .map(|(node, store)| {
                    let (start, id) = (&start, &id);
                    scope.spawn(move || {
                        let request = RequestId::new(format!("r{round}-n{node}")).unwrap();
                        start.wait();
                        store.append(id, round, &request, &[event(&[node as u8])])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(winners, 1, "round {round}: {results:?}");
        for result in &results {
            match result {
                Ok(appended) => assert_eq!(appended.last_seq, round + 1),
                Err(StoreError::Conflict { expected, actual, .. }) => {
                    assert_eq!((*expected, *actual), (round, round + 1))
                }
                Err(other) => panic!("round {round}: {other}"),
            }
        }
    }
    let seqs: Vec<u64> = receive(&mut b_game, rounds as usize)
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(seqs, (2..=rounds + 1).collect::<Vec<_>>());
    for store in [&a, &b] {
        assert_eq!(store.read_game(&id, 1).unwrap().len() as u64, rounds + 1);
        assert!(store.verify_all().unwrap().is_ok());
    }
}

/// `synchronous_commit=off` (here set for the database) makes the store
/// refuse to open with the default durability, naming the setting; a
/// configuration that accepts it opens.
#[test]
fn unsafe_durability_settings_are_refused() {
    let Some((cluster, url)) = pg() else { return };
    let database: String = cluster
        .admin(&url)
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    cluster
        .admin(&url)
        .batch_execute(&format!("ALTER DATABASE {database} SET synchronous_commit = off"))
        .unwrap();
    match PgStore::open(&url, config(Durability::Flush)) {
        Err(StoreError::Unavailable(reason)) => {
            assert!(reason.contains("synchronous_commit=off"), "{reason}")
        }
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("opened on synchronous_commit=off"),
    }
    let store = PgStore::open(&url, config(Durability::Written)).unwrap();
    store
        .append(&game("g"), 0, &RequestId::none(), &[event(b"x")])
        .unwrap();
}

/// With `CARCASSONNE_PG_TESTS=1` (CI) the PostgreSQL cases ran: a missing
/// PostgreSQL fails them instead of skipping them.
#[test]
fn the_postgres_tests_ran_when_required() {
    if std::env::var("CARCASSONNE_PG_TESTS").as_deref() == Ok("1") {
        assert!(cluster().is_some());
    }
}

/// The server calls some reads from async tasks: the store must open,
/// answer and close there too, on either kind of runtime, instead of
/// panicking in its synchronous driver.
#[test]
fn calls_from_an_async_task_work() {
    let Some((_cluster, url)) = pg() else { return };
    let runtimes = [
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap(),
        tokio::runtime::Builder::new_current_thread().build().unwrap(),
    ];
    for (n, runtime) in (0u64..).zip(runtimes) {
        let url = url.clone();
        let (events, last) = runtime.block_on(async move {
            tokio::spawn(async move {
                let store = open(&url);
                let id = game("async");
                store.append(&id, n, &RequestId::none(), &[event(b"x")]).unwrap();
                let read = (store.read_game(&id, 1).unwrap().len(), store.last_position());
                drop(store);
                read
            })
            .await
            .unwrap()
        });
        assert_eq!((events as u64, last), (n + 1, n + 1));
    }
}
