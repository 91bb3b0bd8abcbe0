//! Many threads racing for the same version of a game: exactly one wins.

use std::sync::Barrier;

use carcassonne_store::*;

use crate::support::{config, each_backend, event, game};

fn race(store: &dyn EventStore, threads: usize, rounds: u64) {
    let id = game("contested");
    for round in 0..rounds {
        let start = Barrier::new(threads);
        let results: Vec<Result<Appended>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|thread| {
                    let (start, id) = (&start, &id);
                    scope.spawn(move || {
                        let request = RequestId::new(format!("r{round}-t{thread}")).unwrap();
                        start.wait();
                        store.append(id, round, &request, &[event(&[thread as u8])])
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let winners: Vec<&Appended> = results.iter().filter_map(|r| r.as_ref().ok()).collect();
        assert_eq!(winners.len(), 1, "round {round}: {results:?}");
        assert_eq!(winners[0].last_seq, round + 1);
        for result in &results {
            match result {
                Ok(_) => {}
                Err(StoreError::Conflict { expected, actual, .. }) => {
                    assert_eq!((*expected, *actual), (round, round + 1));
                }
                Err(other) => panic!("round {round}: {other}"),
            }
        }
    }
    let events = store.read_game(&id, 1).unwrap();
    assert_eq!(events.len() as u64, rounds);
    assert!(store.verify_all().unwrap().is_ok());
}

#[test]
fn one_append_wins_each_version_on_every_store() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::Flush));
        race(&*store, 16, 25);
    });
}

/// Different games in parallel, durable: every append acknowledged, the
/// global positions a permutation of 1..=n, every chain intact.
#[test]
fn parallel_games_share_flushes_without_losing_anything() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::Flush));
        parallel_games(&*store);
    });
}

fn parallel_games(store: &dyn EventStore) {
    let threads = 8u64;
    let appends = 30u64;
    std::thread::scope(|scope| {
        for thread in 0..threads {
            scope.spawn(move || {
                let id = game(&format!("game-{thread}"));
                for seq in 0..appends {
                    let request = RequestId::new(format!("r{seq}")).unwrap();
                    store.append(&id, seq, &request, &[event(b"move")]).unwrap();
                }
            });
        }
    });
    let all = store.read_all(1, 10_000).unwrap();
    let positions: Vec<u64> = all.iter().map(|e| e.position).collect();
    assert_eq!(positions, (1..=threads * appends).collect::<Vec<_>>());
    let report = store.verify_all().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!((report.games, report.events), (threads, threads * appends));
}

/// Writers queue appends and the committer puts them into sled later: an
/// append to a game whose previous one is still queued chains onto it,
/// and a retry of a queued append gets its result, however small the
/// writer's game cache (games with queued appends stay in it).
#[test]
fn appends_queued_behind_each_other_chain_on_and_retries_get_the_original() {
    each_backend(|backend| {
        let (_place, store) = backend.open(StoreConfig {
            game_cache_capacity: 1,
            ..config(Durability::Flush)
        });
        queued_appends(&*store);
    });
}

fn queued_appends(store: &dyn EventStore) {
    let games: Vec<GameId> = (0..50).map(|n| game(&format!("queued-{n}"))).collect();
    let mut pending = Vec::new();
    for seq in 0..3u64 {
        for id in &games {
            let request = RequestId::new(format!("{id}-{seq}")).unwrap();
            let written = store.write(id, seq, &request, &[event(&[seq as u8])]).unwrap();
            let retried = store.write(id, seq, &request, &[event(b"other")]).unwrap();
            assert_eq!(retried.appended(), written.appended());
            pending.push(written);
        }
    }
    for written in pending {
        written.wait().unwrap();
    }
    for id in &games {
        let payloads: Vec<Vec<u8>> = store
            .read_game(id, 1)
            .unwrap()
            .into_iter()
            .map(|e| e.payload)
            .collect();
        assert_eq!(payloads, [[0], [1], [2]]);
    }
    let report = store.verify_all().unwrap();
    assert!(report.is_ok(), "{report:?}");
    assert_eq!(report.events, 150);
}

/// The committer puts a group's envelopes into sled before its index item:
/// verification stops at the durable position, so it never mistakes a
/// group being put in for damage.
#[test]
fn verifying_while_appends_run_reports_no_false_damage() {
    each_backend(|backend| {
        let (_place, store) = backend.open(config(Durability::Flush));
        verifying_while_appends_run(&*store);
    });
}

fn verifying_while_appends_run(store: &dyn EventStore) {
    let writers_done = std::sync::atomic::AtomicUsize::new(0);
    let writers = 8;
    std::thread::scope(|scope| {
        for writer in 0..writers {
            let writers_done = &writers_done;
            scope.spawn(move || {
                let id = game(&format!("busy-{writer}"));
                for seq in 0..100 {
                    store
                        .append(&id, seq, &RequestId::none(), &[event(b"x")])
                        .unwrap();
                }
                writers_done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        let mut checks = 0;
        while writers_done.load(std::sync::atomic::Ordering::SeqCst) < writers || checks == 0 {
            let report = store.verify_all().unwrap();
            assert!(report.is_ok(), "{report:?}");
            let one = store.verify_game(&game("busy-0"));
            if let Ok(one) = one {
                assert!(one.is_ok(), "{one:?}");
            }
            checks += 1;
        }
    });
    assert_eq!(store.verify_all().unwrap().events, 800);
}
