//! Unit tests of `Games`: what no client can see from outside.

use std::sync::Arc;

use carcassonne_engine::{Rules, Seed, Setup};
use carcassonne_store::{EventStore, GameId, MemoryStore, RequestId};

use super::{Games, LIST_SCAN_LIMIT, NewGame};

fn create(games: &Games, id: &str, tiles: Option<Vec<(carcassonne_engine::TileKind, u16)>>) {
    let new = NewGame::guests(
        Setup {
            rules: Rules::default(),
            players: vec!["A".to_owned(), "B".to_owned()],
            tiles,
            seed: Some(Seed::from_u64(1)),
            time_control: None,
        },
        0,
    );
    let id = GameId::new(id).unwrap();
    games
        .create(&id, &RequestId::new(format!("create-{id}")).unwrap(), new)
        .unwrap();
}

#[test]
fn a_filtered_listing_reads_at_most_its_scan_limit_per_call() {
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::default());
    // A cache of one: every game listed is folded from the store.
    let games = Games::new(store, 1);
    for n in 0..LIST_SCAN_LIMIT + 5 {
        create(&games, &format!("running-{n:05}"), None);
    }
    // Last in name order, and finished at once: a bag without tiles.
    create(&games, "zz-finished", Some(Vec::new()));
    let folds = games.folds();
    let (page, token) = games.list(Some(true), 20, None).unwrap();
    assert!(
        page.is_empty(),
        "no finished game among the first {LIST_SCAN_LIMIT}"
    );
    let token = token.expect("the scan goes on with the next call");
    assert!(
        games.folds() - folds <= LIST_SCAN_LIMIT as u64,
        "{} folds",
        games.folds() - folds
    );
    let (page, token) = games.list(Some(true), 20, Some(&token)).unwrap();
    let names: Vec<&str> = page.iter().map(|l| l.info.id.as_str()).collect();
    assert_eq!(names, ["zz-finished"]);
    assert_eq!(token, None);
}

#[test]
fn an_opening_reads_back_as_written_in_either_format_bots_included_and_unknown_flags_are_refused() {
    use super::stored::Opened;
    let guests = Opened {
        token_hashes: vec![[1; 32], [2; 32]],
        spectator_delay: 3,
        ..Opened::default()
    };
    let tournament = Opened {
        accounts: vec![Some("Ada".to_owned()), None],
        rated: true,
        tournament: Some("t0123".to_owned()),
        sealed: true,
        ..guests.clone()
    };
    let sealed_only = Opened {
        rated: false,
        ..tournament.clone()
    };
    let bots = Opened {
        bots: vec![None, Some("search:500".to_owned())],
        ..guests.clone()
    };
    let bots_in_a_tournament = Opened {
        bots: vec![Some("greedy".to_owned()), None],
        ..tournament.clone()
    };
    for opened in [&guests, &tournament, &sealed_only, &bots, &bots_in_a_tournament] {
        assert_eq!(Opened::decode(&opened.encode()).as_ref(), Ok(opened));
    }
    assert_eq!(guests.encode()[0], 1, "a game of guests keeps format 1");
    let mut unknown = tournament.encode();
    // The flags byte comes before the tournament's id (length, 5 bytes).
    let flags = unknown.len() - 7;
    assert_eq!(unknown[flags], 0b11);
    unknown[flags] = 0b1011;
    assert!(Opened::decode(&unknown).unwrap_err().contains("unknown flags"));
}

#[test]
fn a_bot_takes_its_budget_or_a_share_of_the_time_its_clock_leaves_whichever_is_less() {
    use super::bot_seats::budget_for;
    use std::time::Duration;
    let second = Duration::from_secs(1);
    assert_eq!(budget_for(second, 1_000, None), second, "no clock");
    assert_eq!(budget_for(second, 1_000, Some(61_000)), second, "time to spare");
    // 400 ms left: a quarter of what is left after the margin.
    assert_eq!(budget_for(second, 1_000, Some(1_400)), Duration::from_millis(87));
    // At or past the deadline: nothing (the search still makes one
    // iteration, and the timeout is the timekeeper's).
    assert_eq!(budget_for(second, 1_000, Some(1_020)), Duration::ZERO);
    assert_eq!(budget_for(second, 2_000, Some(1_000)), Duration::ZERO);
}
