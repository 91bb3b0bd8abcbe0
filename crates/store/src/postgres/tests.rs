//! The schema's upgrades, on the tests' throwaway PostgreSQL.

#[path = "../../tests/it/pg.rs"]
#[allow(dead_code)]
mod pg;

use postgres::{Client, NoTls};

use super::{PgStore, append, batch, schema};
use crate::{Actor, EventStore as _, GameId, NewEvent, RequestId, StoreConfig};

/// A database left by the release before positions came from a sequence
/// (its counter at 41) upgrades at open: the next append takes 42.
#[test]
fn positions_go_on_after_the_counter_of_an_older_schema() {
    let Some(cluster) = pg::cluster() else { return };
    let url = cluster.database();
    let mut client = Client::connect(&url, NoTls).unwrap();
    schema::migrate_to(&mut client, Some(2)).unwrap();
    client
        .batch_execute("UPDATE position_counter SET last_position = 41")
        .unwrap();
    drop(client);
    let store = PgStore::open(&url, StoreConfig::default()).unwrap();
    let event = NewEvent {
        actor: Actor::Server,
        schema: 1,
        payload: b"after the upgrade".to_vec(),
    };
    let game = GameId::new("upgraded").unwrap();
    let appended = store.append(&game, 0, &RequestId::none(), &[event]).unwrap();
    assert_eq!(appended.first_position, 42);
    assert_eq!(store.read_all(1, 10).unwrap()[0].position, 42);
}

/// Request ids with quotes and backslashes are stored as they are, and a
/// retry with one is recognised.
#[test]
fn request_ids_with_quotes_and_backslashes_are_stored_as_they_are() {
    let Some(cluster) = pg::cluster() else { return };
    let store = PgStore::open(&cluster.database(), StoreConfig::default()).unwrap();
    let game = GameId::new("quoted").unwrap();
    let event = |payload: &[u8]| NewEvent {
        actor: Actor::Seat(0),
        schema: 1,
        payload: payload.to_vec(),
    };
    for (expected, id) in [(0, r"it's"), (1, r"back\slash"), (2, r"\'';--"), (3, r"E'\\x00'")] {
        let request = RequestId::new(id).unwrap();
        let first = store
            .append(&game, expected, &request, &[event(id.as_bytes())])
            .unwrap();
        let retried = store
            .append(&game, expected, &request, &[event(b"other")])
            .unwrap();
        assert_eq!(retried, first, "{id}");
    }
    let stored = store.read_game(&game, 1).unwrap();
    let ids: Vec<&str> = stored.iter().map(|e| e.request_id.as_str()).collect();
    assert_eq!(ids, [r"it's", r"back\slash", r"\'';--", r"E'\\x00'"]);
    let payloads: Vec<&[u8]> = stored.iter().map(|e| e.payload.as_slice()).collect();
    assert_eq!(payloads, [&b"it's"[..], br"back\slash", br"\'';--", br"E'\\x00'"]);
}

/// `appends` written through `store`'s pool, in one transaction; their
/// answers.
fn write(store: &PgStore, appends: &[&batch::Append]) -> Vec<append::Answer> {
    let mut client = store.shared().client().unwrap();
    let answers = append::write(&mut client, appends).unwrap();
    answers.into_iter().map(Result::unwrap).collect()
}

/// An append alone (`append_events`) and in a batch (`append_batch`)
/// get the same answers and store the same bytes: written, a repeated
/// request id, a conflict, several events, no request id, and ids with
/// quotes and backslashes.
#[test]
fn an_append_alone_and_in_a_batch_are_answered_alike() {
    let Some(cluster) = pg::cluster() else { return };
    let alone = PgStore::open(&cluster.database(), StoreConfig::default()).unwrap();
    let batched = PgStore::open(&cluster.database(), StoreConfig::default()).unwrap();
    let events = |n: u8| -> Vec<NewEvent> {
        (0..n)
            .map(|i| NewEvent {
                actor: Actor::Seat(i),
                schema: 1,
                payload: vec![i; 40 + usize::from(i)],
            })
            .collect()
    };
    let game = GameId::new(r"it's\a-game").unwrap();
    let other = GameId::new("other").unwrap();
    let append = |expected: u64, request: &str, n: u8| batch::Append {
        game: game.clone(),
        expected_seq: expected,
        request_id: RequestId::new(request).unwrap(),
        time_millis: 1_000 + expected,
        events: events(n),
    };
    let steps = [
        append(0, r"it's", 1),
        append(1, r"back\slash", 3),
        append(0, r"it's", 2),
        append(1, "late", 1),
        append(4, "", 2),
    ];
    let mut answers = (Vec::new(), Vec::new());
    for (step, main) in steps.iter().enumerate() {
        // A second game's append beside each, alone after it on one side.
        let beside = batch::Append {
            game: other.clone(),
            expected_seq: step as u64,
            request_id: RequestId::new(format!("beside-{step}")).unwrap(),
            time_millis: 5,
            events: events(1),
        };
        answers.0.extend(write(&alone, &[main]));
        answers.0.extend(write(&alone, &[&beside]));
        answers.1.extend(write(&batched, &[main, &beside]));
    }
    assert_eq!(answers.0, answers.1);
    let outcomes: Vec<&str> = answers
        .0
        .iter()
        .step_by(2)
        .map(|answer| match answer {
            append::Answer::Written { .. } => "written",
            append::Answer::Repeat(_) => "repeat",
            append::Answer::Conflict { .. } => "conflict",
        })
        .collect();
    assert_eq!(outcomes, ["written", "written", "repeat", "conflict", "written"]);
    let stored = |store: &PgStore| store.read_all(1, 100).unwrap();
    assert_eq!(stored(&alone), stored(&batched));
    assert_eq!(alone.read_game(&game, 1).unwrap().len(), 6);
}

/// A node of a release before V4 appends with V3's two calls
/// (`begin_append`, the envelopes built from its answer, `finish_append`,
/// in one transaction) to the game this release's node appends to with
/// `append_events`: one chain, read and verified as one, and a retry of
/// the older node's request answered by either.
#[test]
fn an_older_node_and_this_one_append_to_one_chain() {
    use crate::chain::{self, Head};
    use crate::event::Hash;

    let Some(cluster) = pg::cluster() else { return };
    let url = cluster.database();
    let store = PgStore::open(&url, StoreConfig::default()).unwrap();
    let game = GameId::new("mixed").unwrap();
    let events = |n: u8| -> Vec<NewEvent> {
        (0..n)
            .map(|i| NewEvent {
                actor: Actor::Seat(i),
                schema: 1,
                payload: vec![i; 20],
            })
            .collect()
    };
    let request = |id: &str| RequestId::new(id).unwrap();
    store.append(&game, 0, &request("new-1"), &events(1)).unwrap();

    let older = request("old-2");
    let mut client = Client::connect(&url, NoTls).unwrap();
    let mut transaction = client.transaction().unwrap();
    let row = transaction
        .query_one(
            "SELECT outcome, position_from, head_hash FROM begin_append($1, 1, $2, 2, 7)",
            &[&game.as_str(), &older.as_str()],
        )
        .unwrap();
    assert_eq!(row.get::<_, &str>(0), "append");
    let head = Head {
        last_seq: 1,
        last_hash: Hash(row.get::<_, &[u8]>(2).try_into().unwrap()),
    };
    let first_position: i64 = row.get(1);
    let built = chain::build(&game, &older, head, first_position as u64, 7, &events(2));
    let positions: Vec<i64> = built.iter().map(|(e, _)| e.position as i64).collect();
    let seqs: Vec<i64> = built.iter().map(|(e, _)| e.seq as i64).collect();
    let envelopes: Vec<&[u8]> = built.iter().map(|(_, bytes)| bytes.as_slice()).collect();
    let last_hash = built.last().unwrap().0.hash.0.to_vec();
    transaction
        .execute(
            "SELECT finish_append($1, $2, $3, $4, $5, 7, $6)",
            &[
                &game.as_str(),
                &positions,
                &seqs,
                &envelopes,
                &older.as_str(),
                &last_hash,
            ],
        )
        .unwrap();
    transaction.commit().unwrap();

    let retried = store.append(&game, 1, &older, &events(2)).unwrap();
    assert_eq!((retried.first_seq, retried.last_seq), (2, 3));
    assert_eq!(retried.first_position, first_position as u64);
    store.append(&game, 3, &request("new-4"), &events(1)).unwrap();
    let stored = store.read_game(&game, 1).unwrap();
    let seqs: Vec<u64> = stored.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
    let ids: Vec<&str> = stored.iter().map(|e| e.request_id.as_str()).collect();
    assert_eq!(ids, ["new-1", "old-2", "old-2", "new-4"]);
    assert_eq!(stored[1].prev_hash, stored[0].hash);
    assert_eq!(stored[3].prev_hash, stored[2].hash);
    let report = store.verify_all().unwrap();
    assert!(report.is_ok() && report.events == 4, "{report:?}");
}

/// One append of a batch that the database refuses (here: no events)
/// rolls the whole batch back; and a session that forgot the statements
/// prepared on it (`DEALLOCATE ALL`) has them prepared again.
#[test]
fn a_refused_append_rolls_its_batch_back_and_forgotten_statements_are_prepared_again() {
    let Some(cluster) = pg::cluster() else { return };
    let store = PgStore::open(&cluster.database(), StoreConfig::default()).unwrap();
    let append = |game: &str, expected: u64, events: usize| batch::Append {
        game: GameId::new(game).unwrap(),
        expected_seq: expected,
        request_id: RequestId::new(format!("{game}-{expected}")).unwrap(),
        time_millis: 9,
        events: (0..events)
            .map(|_| NewEvent {
                actor: Actor::Server,
                schema: 1,
                payload: b"x".to_vec(),
            })
            .collect(),
    };
    let mut client = store.shared().client().unwrap();
    let refused = append::write(&mut client, &[&append("kept", 0, 1), &append("refused", 0, 0)]);
    assert!(refused.is_err());
    drop(client);
    assert!(store.read_all(1, 10).unwrap().is_empty(), "nothing committed");

    let mut client = store.shared().client().unwrap();
    for (round, forget) in [(0, false), (1, true)] {
        if forget {
            client.batch_execute("DEALLOCATE ALL").unwrap();
        }
        let alone = append::write(&mut client, &[&append("one", round, 1)]).unwrap();
        let batch = [&append("kept", round, 1), &append("two", round, 1)];
        let batched = append::write(&mut client, &batch).unwrap();
        assert!(alone.iter().chain(&batched).all(Result::is_ok), "round {round}");
    }
    drop(client);
    assert_eq!(store.read_all(1, 10).unwrap().len(), 6);
}

/// A safe read or an allocation of positions that fails while it holds
/// the allocation lock (here: a role that may not use the positions'
/// sequence) leaves the lock free; were it held, every append and safe
/// read of every node would wait for that session to close.
#[test]
fn a_call_that_fails_holding_the_allocation_lock_leaves_it_free() {
    let Some(cluster) = pg::cluster() else { return };
    let url = cluster.database();
    let mut admin = cluster.admin(&url);
    schema::migrate(&mut admin).unwrap();
    admin.batch_execute("CREATE ROLE positions_hidden LOGIN").unwrap();
    let mut limited = Client::connect(&url.replace("user=postgres", "user=positions_hidden"), NoTls).unwrap();
    for call in ["SELECT safe_position()", "SELECT take_positions(1)"] {
        let error = limited.query_one(call, &[]).unwrap_err();
        let denied = Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE);
        assert_eq!(error.code(), denied, "{call}: {error:?}");
        let held: i64 = limited
            .query_one(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(held, 0, "{call} left an advisory lock held");
    }
}

/// Heartbeats are the database's clock's: a node whose own clock runs an
/// hour ahead beats "just now", and its heartbeat ages as the database's
/// clock moves. The upgrade drops the heartbeats an older schema kept by
/// the nodes' own clocks (here one an hour in the future, which would
/// have made its node look alive for an hour).
#[test]
fn heartbeats_are_times_of_the_database_clock_and_the_nodes_own_are_dropped() {
    use std::sync::Arc;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    let Some(cluster) = pg::cluster() else { return };
    let url = cluster.database();
    let hour_ahead = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64 + 3_600_000;
    let mut client = Client::connect(&url, NoTls).unwrap();
    schema::migrate_to(&mut client, Some(6)).unwrap();
    client
        .execute(
            "INSERT INTO node_heartbeats (node, alive_millis) VALUES ('ahead', $1)",
            &[&hour_ahead],
        )
        .unwrap();
    drop(client);
    let clock = Arc::new(crate::ManualClock::new(hour_ahead as u64));
    let store = PgStore::open(&url, StoreConfig::default().clock(clock)).unwrap();
    assert_eq!(store.heartbeat_ages().unwrap(), []);
    store.beat("ahead").unwrap();
    let ages = store.heartbeat_ages().unwrap();
    assert_eq!(ages.len(), 1);
    assert!(ages[0].1 < Duration::from_secs(2), "{ages:?}");
    std::thread::sleep(Duration::from_millis(300));
    let later = store.heartbeat_ages().unwrap();
    assert!(later[0].1 >= ages[0].1 + Duration::from_millis(250), "{later:?}");
    // A later beat moves it to the database's now again.
    store.beat("ahead").unwrap();
    assert!(store.heartbeat_ages().unwrap()[0].1 < later[0].1);
}
