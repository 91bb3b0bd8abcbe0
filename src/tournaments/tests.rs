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

#[test]
fn a_step_request_id_is_valid_and_its_own_whatever_participant_it_names() {
    use carcassonne_competition::{MAX_HOUSE_BOT_KIND_LEN, MAX_HOUSE_BOT_NUMBER, MAX_NAME_LEN, PlayerName};
    let names = [
        PlayerName::house_bot("greedy", 1).unwrap(),
        PlayerName::house_bot(&"z".repeat(MAX_HOUSE_BOT_KIND_LEN), MAX_HOUSE_BOT_NUMBER).unwrap(),
        PlayerName::new("greedy_bot_1").unwrap(),
        PlayerName::new("greedy-bot-1").unwrap(),
        PlayerName::new("Ada").unwrap(),
        PlayerName::new("-".repeat(MAX_NAME_LEN)).unwrap(),
    ];
    let ids: std::collections::BTreeSet<String> = names
        .iter()
        .map(|name| {
            super::step_request("withdrawn", name.as_str())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .as_str()
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), names.len(), "{ids:?}");
    assert!(ids.contains("~withdrawn/greedy+bot+1"), "{ids:?}");
    // Registered names and game ids read as before.
    assert!(ids.contains("~withdrawn/Ada"), "{ids:?}");
    let result = super::step_request("result", "t0123456789abcdef-r1t2g0").unwrap();
    assert_eq!(result.as_str(), "~result/t0123456789abcdef-r1t2g0");
}
