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
    let paced_bots = Opened {
        bot_pace_ms: 1_500,
        ..bots.clone()
    };
    for opened in [
        &guests,
        &tournament,
        &sealed_only,
        &bots,
        &bots_in_a_tournament,
        &paced_bots,
    ] {
        assert_eq!(Opened::decode(&opened.encode()).as_ref(), Ok(opened));
    }
    assert_eq!(guests.encode()[0], 1, "a game of guests keeps format 1");
    let mut unknown = tournament.encode();
    // The flags byte comes before the tournament's id (length, 5 bytes).
    let flags = unknown.len() - 7;
    assert_eq!(unknown[flags], 0b11);
    unknown[flags] = 0b1_0011;
    assert!(Opened::decode(&unknown).unwrap_err().contains("unknown flags"));
}

#[test]
fn a_bot_takes_its_budget_or_a_quarter_of_the_time_its_clock_leaves_whichever_is_less() {
    use super::bot_seats::budget_for;
    use std::time::Duration;
    let second = Duration::from_secs(1);
    assert_eq!(budget_for(second, 1_000, None), second, "no clock");
    assert_eq!(budget_for(second, 1_000, Some(61_000)), second, "time to spare");
    // A 2 s limit: 500 ms.
    assert_eq!(budget_for(second, 1_000, Some(3_000)), Duration::from_millis(500));
    assert_eq!(budget_for(second, 1_000, Some(1_400)), Duration::from_millis(100));
    // At or past the deadline: nothing (the search still makes one
    // iteration, and the timeout is the timekeeper's).
    assert_eq!(budget_for(second, 1_000, Some(1_000)), Duration::ZERO);
    assert_eq!(budget_for(second, 2_000, Some(1_000)), Duration::ZERO);
}

#[test]
fn a_bot_s_budget_runs_from_the_moment_its_decision_became_pending_so_its_wait_counts() {
    use super::bot_seats::{STORE_RESERVE_MS, Timing};
    use std::time::Duration;
    let second = Duration::from_secs(1);
    // Given a decision pending since 10 s under a 2 s limit,
    let timing = Timing {
        pending_since: 10_000,
        deadline: Some(12_000),
        pace_ms: 0,
        usual_ms: u64::MAX,
    };
    // then it ends half a second later whenever its search starts, the
    // search stops a moment before, to store it in time, and it is due
    // (other searches yield to it) once it has waited half of that;
    assert_eq!(timing.end(second), 10_500);
    assert_eq!(timing.due(second), 10_250);
    assert_eq!(timing.stop_at(second), 10_500 - STORE_RESERVE_MS);
    // a quick bot is due sooner (it goes first), with the same end.
    let quick = Timing {
        usual_ms: 20,
        ..timing
    };
    assert_eq!(quick.due(second), 10_020);
    assert_eq!(quick.stop_at(second), 10_500 - STORE_RESERVE_MS);
    // Without a clock: the whole budget.
    let unclocked = Timing {
        deadline: None,
        ..timing
    };
    assert_eq!(unclocked.end(second), 11_000);
    assert_eq!(unclocked.due(second), 10_500);
    // A short budget keeps a tenth of itself to store the decision.
    assert_eq!(unclocked.stop_at(Duration::from_millis(150)), 10_135);
    // A pace holds the decision back, but never past half of what the
    // clock leaves.
    let paced = Timing {
        pace_ms: 1_500,
        ..unclocked
    };
    assert_eq!(paced.act_from(), 11_500);
    assert_eq!(
        Timing {
            pace_ms: 1_500,
            ..timing
        }
        .act_from(),
        11_000
    );
    assert_eq!(timing.act_from(), 10_000, "no pace: at once");
}

#[tokio::test]
async fn bot_workers_go_to_the_turn_due_first_and_a_search_yields_to_a_turn_past_its_due() {
    use super::bot_seats::Workers;
    // Given one worker, held,
    let workers = Workers::new(1);
    let held = workers.acquire(1_000, false).await.unwrap();
    assert!(!workers.should_yield(5_000), "nobody waits");
    // when turns due at 3 s, then 2 s, wait for it,
    let (order, mut done) = tokio::sync::mpsc::unbounded_channel();
    for due in [3_000, 2_000] {
        let (workers, order) = (workers.clone(), order.clone());
        tokio::spawn(async move {
            let slot = workers.acquire(due, false).await.unwrap();
            order.send(due).unwrap();
            drop(slot);
        });
    }
    while workers.waiting() < 2 {
        tokio::task::yield_now().await;
    }
    // then the running search goes on until the first is past its due, and
    // yields once for it (and once more for the second),
    assert!(!workers.should_yield(1_999));
    assert!(workers.should_yield(2_000));
    assert!(!workers.should_yield(2_500), "one search yields for one turn");
    assert!(workers.should_yield(3_000));
    assert!(!workers.should_yield(9_000));
    // and the worker goes to the turn due first.
    drop(held);
    assert_eq!(done.recv().await, Some(2_000));
    assert_eq!(done.recv().await, Some(3_000));
    // Free again: nobody waits, no search yields.
    assert_eq!(workers.waiting(), 0);
    assert!(!workers.should_yield(u64::MAX - 1));
}

#[tokio::test]
async fn quick_bots_have_a_worker_of_their_own_when_the_searches_hold_the_others() {
    use super::bot_seats::Workers;
    // Given the one worker held by a search,
    let workers = Workers::new(1);
    let search = workers.acquire(1_000, false).await.unwrap();
    // a quick bot's turn gets a worker at once, and no search yields for it;
    let quick = workers.acquire(2_000, true).await.unwrap();
    assert_eq!(workers.waiting(), 0);
    assert!(!workers.should_yield(9_000));
    // a second quick turn waits for the first (or for the search), and
    // another search's turn for the search.
    let (order, mut done) = tokio::sync::mpsc::unbounded_channel();
    for (due, is_quick) in [(3_000, false), (4_000, true)] {
        let (shared, order) = (workers.clone(), order.clone());
        tokio::spawn(async move {
            let slot = shared.acquire(due, is_quick).await.unwrap();
            order.send(due).unwrap();
            drop(slot);
        });
        while workers.waiting() < usize::from(is_quick) + 1 {
            tokio::task::yield_now().await;
        }
    }
    // The quick bots' own worker goes to the quick turn, though due later;
    drop(quick);
    assert_eq!(done.recv().await, Some(4_000));
    // the search's, to the turn due first.
    drop(search);
    assert_eq!(done.recv().await, Some(3_000));
}

#[test]
fn new_bot_games_are_taken_on_while_the_active_ones_leave_room_and_tournaments_always() {
    use super::bot_seats::{Admission, IDLE_MS};
    use crate::api::status::ApiError;
    use std::time::Duration;
    let id = |n: u32| GameId::new(format!("g{n}")).unwrap();
    // Given room for 3 s of decisions, and a budget of 1 s a decision,
    let admission = Admission::new(Duration::from_secs(3), Duration::from_secs(1));
    // then three games of heavy bots are taken on, and a fourth is not,
    for n in 0..3 {
        assert_eq!(admission.admit(&id(n), 1_000, 0, false), Ok(true));
    }
    let refused = admission.admit(&id(3), 1_000, 0, false);
    assert_eq!(
        refused,
        Err(ApiError::BotsBusy {
            committed_ms: 3_000,
            capacity_ms: 3_000
        })
    );
    // but a retried creation, and a tournament's game, are;
    assert_eq!(admission.admit(&id(0), 1_000, 0, false), Ok(false));
    assert_eq!(admission.admit(&id(4), 1_000, 0, true), Ok(true));
    // a creation that was not stored leaves room,
    admission.withdraw(&id(4));
    admission.withdraw(&id(2));
    assert_eq!(admission.admit(&id(5), 1_000, 0, false), Ok(true));
    // and so do games whose bots wait for idle players: past IDLE_MS they
    // no longer count.
    assert!(admission.admit(&id(6), 1_000, IDLE_MS - 1, false).is_err());
    assert_eq!(admission.admit(&id(6), 1_000, IDLE_MS + 1, false), Ok(true));
    // An idle server takes any one game, however heavy.
    let small = Admission::new(Duration::from_secs(1), Duration::from_secs(600));
    assert_eq!(small.admit(&id(7), 600_000, 0, false), Ok(true));
    assert!(small.admit(&id(8), 1, 0, false).is_err());
}

#[test]
fn a_bot_game_commits_its_heaviest_bot_s_decision_never_more_than_the_budget() {
    use super::bot_seats::game_cost_ms;
    use carcassonne_bots::Level;
    use std::time::Duration;
    let second = Duration::from_secs(1);
    let heavy = Level::Search {
        iterations: carcassonne_bots::MAX_ITERATIONS,
    };
    assert_eq!(game_cost_ms([heavy; 5], second), 1_000);
    assert_eq!(game_cost_ms([heavy], Duration::from_millis(15)), 15);
    assert!(game_cost_ms([Level::Random, Level::Greedy], second) < game_cost_ms([Level::SEARCH], second));
    assert!(game_cost_ms([Level::SEARCH], second) < 1_000);
    assert_eq!(game_cost_ms([], second), 0);
}
