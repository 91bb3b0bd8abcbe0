//! Unit tests of tournaments: what no client can see from outside.

use carcassonne_store::{Actor, EventStore, GameId, MemoryStore, NewEvent, RequestId};

use super::tournament_streams;

#[test]
fn the_tournaments_streams_are_listed_from_their_prefix_to_its_end() {
    let store = MemoryStore::default();
    let tournaments: Vec<String> = (0..150).map(|n| format!("t{n:03}")).collect();
    // Around the prefix "@tournament/" in byte order: before it, and after.
    let others = [
        "@players",
        "@tournament",
        "@tournament-x",
        "@tournament0",
        "@u",
        "game-1",
    ];
    let streams = others
        .iter()
        .map(|id| id.to_string())
        .chain(tournaments.iter().map(|id| format!("@tournament/{id}")));
    for stream in streams {
        let event = NewEvent {
            actor: Actor::Server,
            schema: 1,
            payload: Vec::new(),
        };
        store
            .append(&GameId::new(stream).unwrap(), 0, &RequestId::none(), &[event])
            .unwrap();
    }
    let listed: Vec<String> = tournament_streams(&store)
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(listed, tournaments);
}
