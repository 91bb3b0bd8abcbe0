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
