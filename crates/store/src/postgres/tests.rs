//! The schema's upgrades, on the tests' throwaway PostgreSQL.

#[path = "../../tests/it/pg.rs"]
#[allow(dead_code)]
mod pg;

use postgres::{Client, NoTls};

use super::{PgStore, schema};
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

/// An append's values reach the database as literals (`append.rs`):
/// request ids with quotes and backslashes are stored as they are, and a
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
