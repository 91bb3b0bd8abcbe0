//! Clocks, timeouts, resignation and abort through the API (T-*), on a
//! server whose clock moves only when the test moves it: a timeout comes at
//! its deadline and not before, a late action is refused and the timeout
//! stored instead, an action racing the timeout loses or wins but never
//! both, and every way a game ends shows the same in every view.

use std::sync::Arc;
use std::time::Duration;

use carcassonne::api::status::ApiError;
use carcassonne::games::{Acting, Games, Settled};
use carcassonne::proto::{self, action::Action as A, game_event::Event as E};
use carcassonne_engine::{Event, Seat};
use carcassonne_store::{EventStore, GameId, ManualClock, MemoryStore, RequestId};
use tokio_stream::StreamExt as _;
use tonic::Code;
use tonic::transport::Channel;

use crate::support::*;

/// The time the test clock starts at: 2027-01-15, in ms.
const T0: u64 = 1_800_000_000_000;
const SECOND: u64 = 1_000;

/// A server whose clock is the test's, and its clients.
struct Clocked {
    server: TestServer,
    client: proto::game_service_client::GameServiceClient<Channel>,
    watcher: proto::watch_service_client::WatchServiceClient<Channel>,
    clock: Arc<ManualClock>,
}

async fn clocked_server() -> Clocked {
    let (server, clock) = TestServer::start_clocked(T0).await;
    let client = server.client().await;
    let watcher = server.watcher().await;
    Clocked {
        server,
        client,
        watcher,
        clock,
    }
}

fn control(
    main_ms: u32,
    increment_ms: u32,
    decision_ms: u32,
    rule: proto::TimeoutRule,
) -> proto::TimeControl {
    proto::TimeControl {
        main_ms,
        increment_ms,
        decision_ms,
        on_timeout: rule as i32,
    }
}

fn per_decision(decision_ms: u32) -> proto::TimeControl {
    control(0, 0, decision_ms, proto::TimeoutRule::Forfeit)
}

fn clocked_request(
    request_id: &str,
    players: usize,
    seed: u8,
    time_control: proto::TimeControl,
) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        time_control: Some(time_control),
        ..create_request(request_id, players, &[], seed)
    }
}

/// Polls GetGame until `done` holds (a timeout is stored by the server's
/// own task, a moment after the clock passes the deadline).
async fn wait_for(
    client: &mut proto::game_service_client::GameServiceClient<Channel>,
    name: &str,
    what: &str,
    done: impl Fn(&proto::Game) -> bool,
) -> proto::Game {
    for _ in 0..500 {
        let now = game(client, name).await;
        if done(&now) {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name}: waited 5 s for {what}: {:?}", game(client, name).await);
}

fn pending(game: &proto::Game) -> &proto::PendingDecision {
    game.pending.as_ref().unwrap()
}

fn ending(game: &proto::Game) -> Option<(proto::EndReason, u32)> {
    game.ending.as_ref().map(|e| (e.reason(), e.seat))
}

fn ranks(game: &proto::Game) -> Vec<u32> {
    game.players.iter().map(|p| p.rank).collect()
}

fn statuses(game: &proto::Game) -> Vec<proto::SeatStatus> {
    game.players.iter().map(|p| p.status()).collect()
}

/// Every event of the game, as a replay from its creation shows them.
async fn events(
    w: &mut proto::watch_service_client::WatchServiceClient<Channel>,
    name: &str,
) -> Vec<proto::GameEvent> {
    replay(w, replay_request(name, Some(1), None))
        .await
        .into_iter()
        .map(|step| step.event.unwrap())
        .collect()
}

fn timeouts(events: &[proto::GameEvent]) -> Vec<&proto::GameEvent> {
    events
        .iter()
        .filter(|e| matches!(e.event, Some(E::TimedOut(_))))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_is_stored_at_its_deadline_and_not_before() {
    let mut s = clocked_server().await;
    let (name, _) = create(
        &mut s.client,
        clocked_request("timeout-at-deadline", 2, 1, per_decision(10_000)),
    )
    .await;
    let created = game(&mut s.client, &name).await;
    assert_eq!(pending(&created).deadline_ms, (T0 + 10 * SECOND) as i64);
    assert_eq!(created.clock_time_ms, T0 as i64);

    // One ms before: nothing happens, however long the test waits.
    s.clock.advance(10 * SECOND - 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(game(&mut s.client, &name).await.version, created.version);

    // At the deadline, with nobody connected: the server stores it.
    s.clock.advance(1);
    let over = wait_for(&mut s.client, &name, "the timeout", |g| g.ending.is_some()).await;
    assert_eq!(ending(&over), Some((proto::EndReason::OutOfTime, 0)));
    assert_eq!(over.winners, [1]);
    assert_eq!(ranks(&over), [2, 1]);
    assert_eq!(
        statuses(&over),
        [proto::SeatStatus::OutOfTime, proto::SeatStatus::Playing]
    );
    let events = events(&mut s.watcher, &name).await;
    let timeout = timeouts(&events);
    assert_eq!(timeout.len(), 1);
    assert_eq!(
        timeout[0].time_ms,
        (T0 + 10 * SECOND) as i64,
        "stored at the deadline"
    );
    assert_eq!(timeout[0].seat, None, "the server acted");
    assert_eq!(timeout[0].seat_out, Some(0));
    assert!(!timeout[0].abandoned.is_empty(), "the drawn tile left the game");
    s.server.stop().await;
}

/// The tokens of a 2-player clocked game, its name and its first decision.
async fn first_move(
    s: &mut Clocked,
    id: &str,
    time_control: proto::TimeControl,
) -> (String, Vec<String>, proto::GetLegalActionsResponse) {
    let (name, tokens) = create(&mut s.client, clocked_request(id, 2, 7, time_control)).await;
    let legal = legal_as(&mut s.client, &name, &tokens[0]).await;
    (name, tokens, legal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_action_is_refused_with_its_own_reason_and_the_timeout_stored() {
    let mut s = clocked_server().await;
    let (name, tokens, legal) = first_move(&mut s, "late", per_decision(5_000)).await;
    s.clock.advance(5 * SECOND);
    let action = legal.actions[0].action.unwrap();
    let late = s
        .client
        .act(with_token(
            act(&name, legal.version, "late-1", action),
            &tokens[0],
        ))
        .await
        .unwrap_err();
    assert_eq!(late.code(), Code::FailedPrecondition, "{late:?}");
    assert_eq!(reason(&late), "OUT_OF_TIME", "{late:?}");
    assert_eq!(late.metadata().get("carcassonne-rule").unwrap(), "T-4");
    assert!(late.message().contains("seat 0's time ran out"), "{late:?}");
    // Whoever stored it (this call or the timekeeper), it is stored once.
    let over = wait_for(&mut s.client, &name, "the timeout", |g| g.ending.is_some()).await;
    assert_eq!(ending(&over), Some((proto::EndReason::OutOfTime, 0)));
    assert_eq!(timeouts(&events(&mut s.watcher, &name).await).len(), 1);
    // A retry of the late action is told the same.
    let again = s
        .client
        .act(with_token(
            act(&name, legal.version, "late-2", action),
            &tokens[0],
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&again), "OUT_OF_TIME", "{again:?}");
    s.server.stop().await;
}

/// A game of two guests, drawn from `seed`, each decision given
/// `decision_ms` and forfeited when late.
fn two_guests_with_a_decision_clock(seed: u64, decision_ms: u64) -> carcassonne_engine::Setup {
    carcassonne_engine::Setup {
        rules: Default::default(),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: Some(carcassonne_engine::Seed::from_u64(seed)),
        time_control: Some(carcassonne_engine::TimeControl {
            main: None,
            decision_ms: Some(decision_ms),
            on_timeout: carcassonne_engine::OnTimeout::Forfeit,
        }),
    }
}

/// Without a timekeeper (a `Games` of its own), a late action itself
/// stores the timeout, at the very time it came.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_timekeeper_a_late_action_stores_the_timeout_itself() {
    let clock = Arc::new(ManualClock::new(T0));
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new(clock.clone()));
    let games = Games::new(store.clone(), 10);
    let id = GameId::new("late-alone").unwrap();
    let setup = two_guests_with_a_decision_clock(3, 2_000);
    let created = games
        .create(
            &id,
            &RequestId::new("create-late-alone").unwrap(),
            carcassonne::games::NewGame::guests(setup, 0),
        )
        .unwrap();
    let command = created.loaded.game.legal_commands()[0];
    clock.advance(2_500);
    let acting = games
        .act(
            &id,
            created.token(0).unwrap(),
            created.loaded.version,
            &RequestId::new("late").unwrap(),
            &command,
        )
        .unwrap();
    let Acting::Late { timeout, error } = acting else {
        panic!("the action was not late");
    };
    assert_eq!(
        error,
        ApiError::OutOfTime {
            seat: 0,
            deadline_ms: T0 + 2_000
        }
    );
    assert!(matches!(games.settle(timeout).await.unwrap(), Settled::Acted(_)));
    let stored = store.read_game(&id, 1).unwrap();
    let last = stored.last().unwrap();
    assert_eq!(
        carcassonne::games::stored::engine_event(last).unwrap(),
        Event::TimedOut(Seat(0))
    );
    assert_eq!(last.time_millis, T0 + 2_500, "at the time the late action came");
    // The engine agrees: the stored game replays to its end.
    let loaded = games.fold_uncached(&id, None, |_, _, _| {}).unwrap();
    assert_eq!(
        loaded.game.ending(),
        Some(carcassonne_engine::Ending::OutOfTime(Seat(0)))
    );
    // An action after the timeout is told it came too late, not that the
    // version moved.
    let Err(stale) = games.act(
        &id,
        created.token(0).unwrap(),
        created.loaded.version,
        &RequestId::new("later").unwrap(),
        &command,
    ) else {
        panic!("an action after the timeout was taken");
    };
    assert_eq!(
        stale,
        ApiError::OutOfTime {
            seat: 0,
            deadline_ms: T0 + 2_000
        }
    );
}

/// The clock reaches the deadline while the action is on its way: the
/// action is stored and no timeout, or the timeout and the action is told
/// OUT_OF_TIME; never both, never neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_racing_its_timeout_at_the_deadline_exactly_one_wins() {
    let mut s = clocked_server().await;
    let (mut acted, mut timed_out) = (0, 0);
    for round in 0..40u32 {
        s.clock.set(T0 + u64::from(round) * 1_000_000);
        let (name, tokens, legal) = first_move(&mut s, &format!("race-{round}"), per_decision(1_000)).await;
        s.clock.advance(999);
        let action = legal.actions[0].action.unwrap();
        let mut client = s.client.clone();
        let request = with_token(act(&name, legal.version, "racer", action), &tokens[0]);
        let racer = tokio::spawn(async move { client.act(request).await });
        // Let the action get going for a moment that varies round by round.
        for _ in 0..round % 4 {
            tokio::task::yield_now().await;
        }
        tokio::time::sleep(Duration::from_micros(u64::from(round % 7) * 150)).await;
        s.clock.advance(1);
        let answer = racer.await.unwrap();
        // Let the timekeeper do what it will before looking.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let events = events(&mut s.watcher, &name).await;
        let placed = events.iter().any(|e| matches!(e.event, Some(E::TilePlaced(_))));
        let timeouts = timeouts(&events).len();
        match answer {
            Ok(_) => {
                assert!(
                    placed && timeouts == 0,
                    "round {round}: acted, yet {timeouts} timeouts"
                );
                acted += 1;
            }
            Err(status) => {
                assert_eq!(reason(&status), "OUT_OF_TIME", "round {round}: {status:?}");
                assert!(
                    !placed && timeouts == 1,
                    "round {round}: refused, placed {placed}, {timeouts} timeouts"
                );
                timed_out += 1;
            }
        }
        // What was stored replays: GetGameAtVersion folds it from the store.
        let last = events.last().unwrap().version;
        let replayed = game_at(&mut s.watcher, &name, last).await.unwrap();
        assert_eq!(replayed, game(&mut s.client, &name).await, "round {round}");
    }
    eprintln!("the action won {acted} times, the timeout {timed_out} times");
    assert_eq!(acted + timed_out, 40);
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_count_exactly_what_each_seat_used_with_increments() {
    let mut s = clocked_server().await;
    let time_control = control(60_000, 2_000, 0, proto::TimeoutRule::Forfeit);
    let (name, tokens) = create(&mut s.client, clocked_request("exact", 2, 5, time_control)).await;
    let mut used = [0u64; 2];
    let mut handovers = [0u64; 2];
    for step in 0..30u64 {
        let legal = legal_as(&mut s.client, &name, &tokens[0]).await;
        let seat = pending(&game(&mut s.client, &name).await).seat as usize;
        let think = 137 * (step % 5 + 1);
        s.clock.advance(think);
        used[seat] += think;
        let answer = act_legal(&mut s.client, &name, &tokens, &legal, step as usize).await;
        let after = answer.game.unwrap();
        if pending(&after).seat as usize != seat {
            handovers[seat] += 1;
        }
        let left: Vec<Option<i64>> = after.players.iter().map(|p| p.time_left_ms).collect();
        let expected: Vec<Option<i64>> = (0..2)
            .map(|s| Some((60_000 + 2_000 * handovers[s] - used[s]) as i64))
            .collect();
        assert_eq!(left, expected, "step {step}");
        let running = pending(&after).seat as usize;
        assert_eq!(
            pending(&after).deadline_ms,
            after.clock_time_ms + expected[running].unwrap(),
            "step {step}: the running seat's deadline"
        );
        assert_eq!(after.clock_time_ms, answer.events[0].time_ms, "step {step}");
        let legal = legal_as(&mut s.client, &name, &tokens[1]).await;
        assert_eq!(
            (
                legal.time_left_ms.iter().map(|&ms| Some(ms)).collect::<Vec<_>>(),
                legal.clock_time_ms
            ),
            (expected.clone(), after.clock_time_ms),
            "step {step}: GetLegalActions"
        );
        assert_eq!(legal.pending.as_ref(), after.pending.as_ref(), "step {step}");
    }
    s.server.stop().await;
}

/// Seat 0 of 4 runs out of time (forfeit): it is out, its tile leaves the
/// game and the next seat draws; seat 2 resigns; the game goes on to its
/// end, the seats out ranked last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forfeit_with_four_players_skips_the_seat_and_ranks_it_last() {
    let mut s = clocked_server().await;
    let request = proto::CreateGameRequest {
        tiles: vec![proto::TileCount {
            kind: "V".to_owned(),
            count: 12,
        }],
        ..clocked_request("four", 4, 9, per_decision(30_000))
    };
    let (name, tokens) = create(&mut s.client, request).await;
    s.clock.advance(30 * SECOND);
    let after = wait_for(&mut s.client, &name, "seat 0's timeout", |g| pending(g).seat == 1).await;
    assert_eq!(after.status(), proto::GameStatus::Running);
    assert_eq!(statuses(&after)[0], proto::SeatStatus::OutOfTime);
    assert_eq!(pending(&after).kind(), proto::DecisionKind::PlaceTile);
    assert_eq!(
        pending(&after).deadline_ms,
        (T0 + 60 * SECOND) as i64,
        "seat 1's own clock"
    );
    let bag: u32 = after.bag.iter().map(|t| t.count).sum();
    assert_eq!(bag, 10, "one drawn and left the game, one drawn for seat 1");
    // Seat 2 resigns while seat 1 decides.
    let resigned = s
        .client
        .act(with_token(
            act(&name, after.version, "bye", A::Resign(proto::Resign {})),
            &tokens[2],
        ))
        .await
        .unwrap()
        .into_inner();
    let event = &resigned.events[0];
    assert!(matches!(event.event, Some(E::Resigned(_))));
    assert_eq!((event.seat, event.seat_out), (Some(2), Some(2)));
    let game_now = resigned.game.unwrap();
    assert_eq!(statuses(&game_now)[2], proto::SeatStatus::Resigned);
    assert_eq!(pending(&game_now).seat, 1, "seat 1 still decides");
    // An out seat can do nothing more.
    let refused = s
        .client
        .act(with_token(
            act(&name, game_now.version, "again", A::Resign(proto::Resign {})),
            &tokens[2],
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "RULE_VIOLATION");
    assert_eq!(refused.metadata().get("carcassonne-rule").unwrap(), "T-6");
    // The others play on: only seats 1 and 3 are asked.
    let mut asked = std::collections::BTreeSet::new();
    loop {
        let now = game(&mut s.client, &name).await;
        if now.status() == proto::GameStatus::Finished {
            break;
        }
        asked.insert(pending(&now).seat);
        let legal = legal_as(&mut s.client, &name, &tokens[1]).await;
        act_legal(&mut s.client, &name, &tokens, &legal, 0).await;
    }
    assert_eq!(asked.into_iter().collect::<Vec<_>>(), [1, 3]);
    let over = game(&mut s.client, &name).await;
    assert_eq!(ending(&over), Some((proto::EndReason::Normal, 0)));
    let r = ranks(&over);
    assert_eq!(
        (r[2], r[0]),
        (3, 4),
        "the last out ranks above the first out: {r:?}"
    );
    assert!(r[1] <= 2 && r[3] <= 2, "{r:?}");
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_plays_the_timed_out_seat_s_turn_and_the_game_goes_on() {
    let mut s = clocked_server().await;
    let time_control = control(0, 0, 10_000, proto::TimeoutRule::Auto);
    let (name, _tokens) = create(&mut s.client, clocked_request("auto", 2, 3, time_control)).await;
    s.clock.advance(10 * SECOND);
    let after = wait_for(&mut s.client, &name, "the auto move", |g| pending(g).seat == 1).await;
    assert_eq!(after.status(), proto::GameStatus::Running);
    assert_eq!(statuses(&after)[0], proto::SeatStatus::Playing);
    let events = events(&mut s.watcher, &name).await;
    let timeout = timeouts(&events)[0];
    let decided: Vec<_> = timeout
        .decided_for_seat
        .iter()
        .map(|a| a.action.unwrap())
        .collect();
    assert!(
        matches!(
            decided[..],
            [
                A::PlaceTile(_),
                A::PlaceFollower(proto::PlaceFollower { place: 0 })
            ]
        ),
        "{decided:?}"
    );
    assert_eq!(after.tiles.len(), 2, "the start tile and seat 0's");
    assert_eq!(pending(&after).deadline_ms, (T0 + 20 * SECOND) as i64);
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_is_allowed_until_every_seat_has_moved_and_refused_after() {
    let mut s = clocked_server().await;
    let (name, tokens, _) = first_move(&mut s, "abort-early", per_decision(60_000)).await;
    let now = game(&mut s.client, &name).await;
    let aborted = s
        .client
        .act(with_token(
            act(&name, now.version, "abort", A::Abort(proto::Abort {})),
            &tokens[1],
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(ending(&aborted), Some((proto::EndReason::Aborted, 1)));
    assert!(aborted.winners.is_empty());
    assert_eq!(ranks(&aborted), [0, 0]);
    assert_eq!(pending(&aborted).deadline_ms, 0, "no clock runs");

    let (name, tokens, _) = first_move(&mut s, "abort-late", per_decision(60_000)).await;
    play(&mut s.client, &name, &tokens, 4).await;
    let now = game(&mut s.client, &name).await;
    let refused = s
        .client
        .act(with_token(
            act(&name, now.version, "abort", A::Abort(proto::Abort {})),
            &tokens[0],
        ))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "RULE_VIOLATION", "{refused:?}");
    assert_eq!(refused.metadata().get("carcassonne-rule").unwrap(), "T-9");
    s.server.stop().await;
}

/// The game as every read shows it once it is over: GetGame with and
/// without a token, ListGames, a watch's snapshot and its last event,
/// ReplayGame's last step and GetGameAtVersion.
async fn every_view(s: &mut Clocked, name: &str, token: &str) -> Vec<(&'static str, proto::Game)> {
    let spectator = game(&mut s.client, name).await;
    let player = s
        .client
        .get_game(with_token(
            proto::GetGameRequest {
                name: name.to_owned(),
            },
            token,
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let listed = s
        .client
        .list_games(proto::ListGamesRequest {
            status: proto::GameStatus::Finished as i32,
            page_size: 100,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .games
        .into_iter()
        .find(|g| g.name == name)
        .unwrap();
    let mut stream = watch(&mut s.watcher, watch_request(name, Some(1))).await;
    let _ = snapshot(&mut stream).await;
    let mut last_event = None;
    while let Some(message) = stream.next().await {
        if let Some(proto::watch_game_response::Message::Event(event)) = message.unwrap().message {
            last_event = Some(event);
        }
    }
    let last_event = last_event.unwrap();
    let watched = snapshot(&mut watch(&mut s.watcher, watch_request(name, None)).await).await;
    let replayed = replay(&mut s.watcher, replay_request(name, Some(1), None))
        .await
        .pop()
        .unwrap()
        .game
        .unwrap();
    let at_version = game_at(&mut s.watcher, name, spectator.version).await.unwrap();
    // The watch's last event says how it ended, and the time left.
    assert_eq!(
        last_event.ending, spectator.ending,
        "{name}: the watch's last event"
    );
    let left: Vec<i64> = spectator.players.iter().filter_map(|p| p.time_left_ms).collect();
    assert_eq!(last_event.time_left_ms, left, "{name}: the watch's last event");
    vec![
        ("GetGame", spectator),
        ("GetGame as a player", player),
        ("ListGames", listed),
        ("WatchGame", watched),
        ("ReplayGame", replayed),
        ("GetGameAtVersion", at_version),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_ending_shows_its_reason_and_ranking_in_every_view() {
    let mut s = clocked_server().await;
    let fischer = control(90_000, 1_000, 0, proto::TimeoutRule::Forfeit);
    let mut cases = Vec::new();
    // Normal: a short bag played out.
    let short = proto::CreateGameRequest {
        tiles: vec![proto::TileCount {
            kind: "V".to_owned(),
            count: 3,
        }],
        ..clocked_request("ends-normal", 2, 1, fischer)
    };
    let (name, tokens) = create(&mut s.client, short).await;
    play_to_end(&mut s.client, &name, &tokens).await;
    cases.push((name, tokens, proto::EndReason::Normal, 0));
    // Out of time.
    let (name, tokens) = create(&mut s.client, clocked_request("ends-time", 2, 2, fischer)).await;
    s.clock.advance(90 * SECOND);
    wait_for(&mut s.client, &name, "the timeout", |g| g.ending.is_some()).await;
    cases.push((name, tokens, proto::EndReason::OutOfTime, 0));
    // Resigned, by the seat whose decision is not pending.
    let (name, tokens) = create(&mut s.client, clocked_request("ends-resigned", 2, 3, fischer)).await;
    let version = game(&mut s.client, &name).await.version;
    s.client
        .act(with_token(
            act(&name, version, "r", A::Resign(proto::Resign {})),
            &tokens[1],
        ))
        .await
        .unwrap();
    cases.push((name, tokens, proto::EndReason::Resigned, 1));
    // Aborted.
    let (name, tokens) = create(&mut s.client, clocked_request("ends-aborted", 2, 4, fischer)).await;
    let version = game(&mut s.client, &name).await.version;
    s.client
        .act(with_token(
            act(&name, version, "a", A::Abort(proto::Abort {})),
            &tokens[0],
        ))
        .await
        .unwrap();
    cases.push((name, tokens, proto::EndReason::Aborted, 0));

    for (name, tokens, reason, seat) in cases {
        let views = every_view(&mut s, &name, &tokens[0]).await;
        let (_, first) = &views[0];
        let expected_ranks = match reason {
            proto::EndReason::Aborted => vec![0, 0],
            proto::EndReason::OutOfTime => vec![2, 1],
            proto::EndReason::Resigned => vec![1, 2],
            _ => ranks(first),
        };
        assert!(expected_ranks.contains(&1) || reason == proto::EndReason::Aborted);
        // The export says the same, and verifies (as the page's audit asks).
        let export = s
            .watcher
            .export_game(export_request(&name))
            .await
            .unwrap()
            .into_inner();
        let verified = s
            .watcher
            .verify_game(proto::VerifyGameRequest {
                record_json: export.record_json,
                events: export.events,
                seed: export.seed,
                name: name.clone(),
                seed_sha256: first.seed_sha256.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(verified.ok, "{name}: {verified:?}");
        assert_eq!(verified.ending, first.ending, "{name}: the export's ending");
        let verified_ranks: Vec<u32> = verified.ranks.clone();
        let expected_verified: Vec<u32> = expected_ranks.iter().copied().filter(|&r| r > 0).collect();
        assert_eq!(verified_ranks, expected_verified, "{name}: the export's ranks");
        for (view, g) in &views {
            assert_eq!(g.status(), proto::GameStatus::Finished, "{name} in {view}");
            assert_eq!(ending(g), Some((reason, seat)), "{name} in {view}");
            assert_eq!(ranks(g), expected_ranks, "{name} in {view}");
            assert_eq!(g.players, first.players, "{name} in {view}");
            assert_eq!(g.time_control, first.time_control, "{name} in {view}");
            assert_eq!(pending(g).deadline_ms, 0, "{name} in {view}");
        }
    }
    s.server.stop().await;
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// SIGKILL in the middle of clocked games, a pause, a restart: no seat
/// loses time for the downtime (T-10), a deadline fires again after the
/// restart, and the stored events replay to the clocks the live game shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_in_the_middle_of_clocked_games_resumes_their_clocks() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let data = dir.path().join("data");
    let served = serve(&data, &log, &[]).unwrap();
    let mut client = proto::game_service_client::GameServiceClient::connect(served.addr.clone())
        .await
        .unwrap();
    // A: a chess clock, a few moves in. B: 4 s a decision, none made.
    let fischer = control(60_000, 0, 0, proto::TimeoutRule::Forfeit);
    let (a, a_tokens) = create(&mut client, clocked_request("restart-a", 2, 1, fischer)).await;
    play(&mut client, &a, &a_tokens, 3).await;
    let (b, _) = create(
        &mut client,
        clocked_request("restart-b", 2, 2, per_decision(4_000)),
    )
    .await;
    // Let the heartbeat pass and the clocks run a little.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let before_a = game(&mut client, &a).await;
    let before_b = game(&mut client, &b).await;
    let killed_at = unix_ms();
    served.kill();
    tokio::time::sleep(Duration::from_secs(3)).await;

    let served = serve(&data, &log, &[]).unwrap();
    let restarted_at = unix_ms();
    let mut client = proto::game_service_client::GameServiceClient::connect(served.addr.clone())
        .await
        .unwrap();
    let mut watcher = proto::watch_service_client::WatchServiceClient::connect(served.addr.clone())
        .await
        .unwrap();
    for (name, before) in [(&a, &before_a), (&b, &before_b)] {
        let after = game(&mut client, name).await;
        assert_eq!(after.version, before.version + 1, "{name}: one resumption");
        let resumed = events(&mut watcher, name).await.pop().unwrap();
        let Some(E::Resumed(proto::Resumed { down_since_ms })) = resumed.event else {
            panic!("{name}: the last event is {resumed:?}");
        };
        assert!(
            (before.clock_time_ms..=killed_at).contains(&down_since_ms),
            "{name}: down since {down_since_ms}, killed at {killed_at}"
        );
        assert!(
            resumed.time_ms >= restarted_at - 1_000,
            "{name}: resumed at the restart"
        );
        // What the running seat had left when the server died, it has
        // when the server is back: the deadline moved by the downtime.
        let had = before.pending.as_ref().unwrap().deadline_ms - killed_at;
        let has = after.pending.as_ref().unwrap().deadline_ms - after.clock_time_ms;
        let at_last_event = before.pending.as_ref().unwrap().deadline_ms - before.clock_time_ms;
        assert!(
            has >= had,
            "{name}: lost time: {had} ms before the kill, {has} ms after"
        );
        assert!(
            has <= at_last_event,
            "{name}: gained more than the time since its last event"
        );
        // The stored events give what the live game shows, before and after.
        assert_eq!(
            game_at(&mut watcher, name, after.version).await.unwrap(),
            after,
            "{name}"
        );
        assert_eq!(
            game_at(&mut watcher, name, before.version).await.unwrap(),
            *before,
            "{name}"
        );
    }
    // B's deadline fires again after the restart.
    let over = wait_for_real(&mut client, &b, Duration::from_secs(10)).await;
    assert_eq!(ending(&over), Some((proto::EndReason::OutOfTime, 0)));
    let stored = events(&mut watcher, &b).await;
    let timeout = timeouts(&stored)[0].time_ms;
    let resumed = stored[stored.len() - 2].clone();
    let after_b_deadline = game_at(&mut watcher, &b, resumed.version).await.unwrap();
    assert!(
        timeout >= after_b_deadline.pending.unwrap().deadline_ms,
        "not before its deadline"
    );
    let (status, logged) = served.terminate();
    assert!(status.success(), "{logged}");
    assert!(logged.contains("clocks resumed after the restart"), "{logged}");
}

/// Polls GetGame on the real clock until the game is over.
async fn wait_for_real(
    client: &mut proto::game_service_client::GameServiceClient<Channel>,
    name: &str,
    at_most: Duration,
) -> proto::Game {
    let start = std::time::Instant::now();
    loop {
        let now = game(client, name).await;
        if now.ending.is_some() {
            return now;
        }
        assert!(start.elapsed() < at_most, "{name} did not time out: {now:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// On a store other nodes write too, a node learns each clocked game's new
/// version from the store's stream (`Games::follow`) and arms its deadline,
/// so that the game still times out if the node that wrote the version
/// dies: armed even when a read on this node cached that version first
/// (a timeout that found the game moved on loads it so).
#[test]
fn a_followed_version_is_armed_even_when_a_read_cached_it_first() {
    let clock = Arc::new(ManualClock::new(T0));
    let store: Arc<dyn EventStore> = Arc::new(MemoryStore::new(clock.clone()));
    let games = Games::new(store.clone(), 10);
    games.shared_with_other_nodes();
    let (deadlines, mut armed) = tokio::sync::mpsc::unbounded_channel();
    games.keep_time(deadlines).unwrap();
    let id = GameId::new("followed").unwrap();
    let setup = two_guests_with_a_decision_clock(5, 2_000);
    games
        .create(
            &id,
            &RequestId::new("create-followed").unwrap(),
            carcassonne::games::NewGame::guests(setup, 0),
        )
        .unwrap();
    while armed.try_recv().is_ok() {}
    games.load(&id).unwrap();
    let stored = store.read_game(&id, 1).unwrap();
    for event in &stored {
        games.follow(event).unwrap();
    }
    let mut followed = Vec::new();
    while let Ok(deadline) = armed.try_recv() {
        followed.push(deadline);
    }
    let deadline = followed.pop().expect("the followed version armed");
    assert_eq!(deadline.game, id);
    assert_eq!(deadline.seq, stored.last().unwrap().seq);
    assert_eq!(deadline.at_ms, Some(T0 + 2_000));
    // A deadline of an older version that falls due arms the game's
    // current one as it finds the game moved on.
    let moved = games.time_out(&id, deadline.seq - 1).unwrap();
    assert!(matches!(moved, carcassonne::games::TimeoutOutcome::Moved));
    assert_eq!(armed.try_recv().map(|d| d.seq), Ok(deadline.seq));
}

/// Item 11: a clock nobody can meet is refused at creation. Every duration
/// set is at least a second (a decision takes a client a network round
/// trip or more), with the field named; nothing is stored.
#[tokio::test]
async fn a_main_time_or_a_limit_per_decision_under_a_second_is_refused_and_nothing_is_stored() {
    let (server, mut client) = start().await;
    let auto = proto::TimeoutRule::Auto;
    // (main, increment, limit per decision, the field refused or None).
    let cases = [
        (0, 0, 1, Some("time_control.decision_ms")),
        (0, 0, 999, Some("time_control.decision_ms")),
        (1, 0, 0, Some("time_control.main_ms")),
        (999, 1_000, 60_000, Some("time_control.main_ms")),
        (60_000, 0, 999, Some("time_control.decision_ms")),
        (0, 0, 1_000, None),
        (1_000, 0, 0, None),
        (60_000, 1, 1_000, None),
    ];
    let mut created = 0;
    for (i, (main, increment, decision, refused)) in cases.into_iter().enumerate() {
        let request = clocked_request(
            &format!("short-clock-{i:04}"),
            2,
            1,
            control(main, increment, decision, auto),
        );
        let answer = client.create_game(request).await;
        let case = format!("main {main}, increment {increment}, decision {decision}");
        match refused {
            None => {
                answer.unwrap_or_else(|e| panic!("{case}: {e:?}"));
                created += 1;
            }
            Some(field) => {
                let status = answer.expect_err(&case);
                assert_eq!(status.code(), Code::InvalidArgument, "{case}");
                assert_eq!(reason(&status), "INVALID_ARGUMENT", "{case}");
                let (_, metadata) = carcassonne::api::status::error_info(&status).unwrap();
                assert_eq!(metadata.get("field").map(String::as_str), Some(field), "{case}");
                assert!(
                    status.message().contains("at least 1000 ms"),
                    "{case}: {}",
                    status.message()
                );
            }
        }
    }
    let listed = client
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.games.len(), created, "only the clocks allowed were stored");
    server.stop().await;
}
