//! Bot work is bounded: new games with bots are taken on only while the
//! server's bots have room for their work (BOTS_BUSY past it), the workers
//! go to the turn due first so that no bot seat loses on time behind other
//! games' searches, a bot's budget is kept on the server's clock from the
//! moment its decision became pending, and a game's pace holds its bots
//! back for people to watch.

use std::time::{Duration, Instant};

use carcassonne::games::bot_seats::{BotConfig, STORE_RESERVE_MS};
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, game_event::Event as E};
use tonic::transport::Channel;

use crate::bot_seats::{events, server_with_bots, short_bag, until_over, with_bots};
use crate::support::{TestServer, act, create_request, game, legal_as, reason, with_token};

const HEAVY: &str = "search:10000000";

fn timed_out(events: &[proto::GameEvent]) -> bool {
    events.iter().any(|e| matches!(e.event, Some(E::TimedOut(_))))
}

/// Plays seat 0 of game `name` with its first legal action at each of its
/// turns, while the server plays the others, to the end; within `limit`.
async fn play_seat_0(client: &mut GameServiceClient<Channel>, name: &str, token: &str, limit: Duration) {
    let started = Instant::now();
    loop {
        assert!(started.elapsed() < limit, "{name} did not end within {limit:?}");
        let legal = legal_as(client, name, token).await;
        let Some(pending) = legal.pending.filter(|_| !legal.actions.is_empty()) else {
            return;
        };
        if pending.seat != 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        let action = legal.actions[0].action.unwrap();
        let request = act(name, legal.version, &format!("seat-0-{}", legal.version), action);
        // A refusal (the bot's turn came meanwhile) is read again.
        let _ = client.act(with_token(request, token)).await;
    }
}

/// Item 7: 400 creations with five `search:10000000` seats each were all
/// taken on. Now a game with bots is taken on only while the active games
/// with bots leave room for its work, refused with BOTS_BUSY past it (with
/// nothing stored), and taken on again once a game ends.
#[tokio::test]
async fn a_flood_of_heavy_bot_games_is_refused_once_the_bots_are_busy_and_taken_again_when_one_ends() {
    let dir = tempfile::tempdir().unwrap();
    // Given room for 3 s of decisions and a second a decision,
    let server = server_with_bots(
        dir.path(),
        BotConfig {
            budget: Duration::from_secs(1),
            workers: 1,
            queue_per_worker: Duration::from_secs(3),
        },
    )
    .await;
    let mut client = server.client().await;
    // when three people each play a heavy search (a second a decision),
    let mut people = Vec::new();
    for i in 0..3 {
        let request = with_bots(
            create_request(&format!("person-vs-heavy-{i:03}"), 2, &[], 1),
            &["", HEAVY],
        );
        let created = client.create_game(request).await.unwrap().into_inner();
        people.push((created.game.unwrap().name, created.tokens[0].token.clone()));
    }
    // then a flood of all-bot games, and even a greedy bot's game, is refused
    // with its reason, and nothing is stored for them,
    let mut flood = tokio::task::JoinSet::new();
    for i in 0..20 {
        let mut client = client.clone();
        flood.spawn(async move {
            let request = with_bots(
                create_request(&format!("heavy-flood-{i:04}"), 5, &[], 2),
                &[HEAVY; 5],
            );
            client.create_game(request).await
        });
    }
    for answer in flood.join_all().await {
        let status = answer.unwrap_err();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert_eq!(reason(&status), "BOTS_BUSY");
        assert!(status.message().contains("bots are busy"), "{}", status.message());
    }
    let greedy = || with_bots(create_request("person-vs-greedy-01", 2, &[], 3), &["", "greedy"]);
    let refused = client.create_game(greedy()).await.unwrap_err();
    assert_eq!(reason(&refused), "BOTS_BUSY");
    let listed = client
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.games.len(), 3, "only the games taken on are stored");
    // and once a game ends (its person resigns), there is room again.
    let (name, token) = &people[0];
    let legal = legal_as(&mut client, name, token).await;
    let resign = act(
        name,
        legal.version,
        "resign-0001",
        proto::action::Action::Resign(proto::Resign {}),
    );
    client.act(with_token(resign, token)).await.unwrap();
    client.create_game(greedy()).await.unwrap();
    server.stop().await;
}

/// Item 7: a greedy bot lost on time under a 4 s limit while heavy bot
/// games queued before it. The workers now go to the turn due first, and
/// a search yields when a waiting turn is past its due: the greedy bot's
/// game ends normally, and every heavy game had its turns too.
#[tokio::test]
async fn a_greedy_bot_never_loses_on_time_while_heavy_bot_games_take_every_worker() {
    let dir = tempfile::tempdir().unwrap();
    // Given one worker, heavy searches of 300 ms, and room for any number
    // of games (what is tested is the order of the turns),
    let server = server_with_bots(
        dir.path(),
        BotConfig {
            budget: Duration::from_millis(300),
            workers: 1,
            queue_per_worker: Duration::from_secs(3600),
        },
    )
    .await;
    let mut client = server.client().await;
    // when twenty games of five heavy bots run (6 s of searches queued at
    // once),
    let mut flood = tokio::task::JoinSet::new();
    for i in 0..20 {
        let mut client = client.clone();
        flood.spawn(async move {
            let request = with_bots(
                create_request(&format!("heavy-load-{i:04}"), 5, &[], 4),
                &[HEAVY; 5],
            );
            client
                .create_game(request)
                .await
                .unwrap()
                .into_inner()
                .game
                .unwrap()
        });
    }
    let heavy = flood.join_all().await;
    // and a person plays a greedy bot under a 4 s limit a decision,
    let request = proto::CreateGameRequest {
        time_control: Some(proto::TimeControl {
            decision_ms: 4_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        tiles: short_bag(6),
        ..with_bots(create_request("person-vs-greedy-02", 2, &[], 5), &["", "greedy"])
    };
    let created = client.create_game(request).await.unwrap().into_inner();
    let name = created.game.unwrap().name;
    play_seat_0(
        &mut client,
        &name,
        &created.tokens[0].token,
        Duration::from_secs(120),
    )
    .await;
    // then the greedy bot's game ends normally, nobody out of time,
    let over = game(&mut client, &name).await;
    let all = events(&server, &name).await;
    assert!(!timed_out(&all), "the greedy bot ran out of time");
    assert_eq!(over.ending.unwrap().reason, proto::EndReason::Normal as i32);
    assert!(
        all.iter().filter(|e| e.seat == Some(1)).count() >= 4,
        "the bot played"
    );
    // and no heavy game is starved: each has its turn (one worker takes
    // the twenty first turns in about 6 s, so they come after the quick
    // game's end).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for created in &heavy {
        while game(&mut client, &created.name).await.version == created.version {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} never had its turn",
                created.name
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    server.stop().await;
}

/// Item 7: `search:10000000` under a 2 s limit took 489-504 ms against the
/// documented budget. Its budget (a quarter of the 2 s) is now kept on the
/// server's clock, counted from the moment the decision became pending:
/// on a clock that stands still the search goes on, whatever the time on
/// the wall, and it is stored by its due as soon as the clock gets there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_keeps_its_budget_on_the_server_s_clock_from_the_moment_its_turn_came() {
    const T0: u64 = 1_800_000_000_000;
    let (server, clock) = TestServer::start_clocked(T0).await;
    let mut client = server.client().await;
    let request = proto::CreateGameRequest {
        time_control: Some(proto::TimeControl {
            decision_ms: 2_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
            ..Default::default()
        }),
        ..with_bots(create_request("heavy-on-a-clock-01", 2, &[], 6), &[HEAVY, ""])
    };
    let created = client
        .create_game(request)
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    // Given the bot's decision pending since T0 (due at T0 + 500 ms),
    assert_eq!(created.pending.as_ref().unwrap().seat, 0);
    // when the server's clock stands just short of the search's end for a
    // second of real time, the bot has not decided;
    let end = T0 + 500 - STORE_RESERVE_MS;
    clock.set(end - 5);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(game(&mut client, &created.name).await.version, created.version);
    // once it reaches the search's end (a moment before the 500 ms), it
    // decides, stored by its due.
    clock.set(end);
    let started = Instant::now();
    while game(&mut client, &created.name).await.version == created.version {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the bot never decided"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let all = events(&server, &created.name).await;
    let decision = all.iter().find(|e| e.seat == Some(0)).unwrap();
    assert_eq!(decision.time_ms as u64, end);
    assert!(!timed_out(&all));
    server.stop().await;
}

/// Item 20: an all-bot game ended before a spectator could open it. A
/// game's `bot_pace_ms` holds each bot decision back until that long after
/// it became pending; a pace without bots, or past 10 s, is refused.
#[tokio::test]
async fn a_game_s_pace_holds_its_bots_back_for_people_to_watch() {
    let (server, mut client) = crate::support::start().await;
    let request = proto::CreateGameRequest {
        bot_pace_ms: 250,
        tiles: short_bag(3),
        ..with_bots(
            create_request("paced-bots-0001", 2, &[], 7),
            &["random", "greedy"],
        )
    };
    let name = client
        .create_game(request)
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap()
        .name;
    until_over(&mut client, &name, Duration::from_secs(60)).await;
    let all = events(&server, &name).await;
    let mut decisions = 0;
    for pair in all.windows(2) {
        if pair[1].seat.is_some() {
            decisions += 1;
            let gap = pair[1].time_ms - pair[0].time_ms;
            assert!(gap >= 250, "version {}: {gap} ms after the last", pair[1].version);
        }
    }
    assert!(decisions >= 6, "{decisions} decisions");
    for (i, (pace, bots)) in [(10_001, vec!["random", "random"]), (500, vec!["", ""])]
        .into_iter()
        .enumerate()
    {
        let request = proto::CreateGameRequest {
            bot_pace_ms: pace,
            ..with_bots(create_request(&format!("bad-pace-{i:04}"), 2, &[], 8), &bots)
        };
        let status = client.create_game(request).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{pace} {bots:?}");
        let (_, metadata) = carcassonne::api::status::error_info(&status).unwrap();
        assert_eq!(metadata.get("field").map(String::as_str), Some("bot_pace_ms"));
    }
    server.stop().await;
}
