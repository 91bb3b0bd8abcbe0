//! Bot seats: the server plays the seats of built-in bots itself, through
//! the same path as a client's Act, within the seat's clock, across a
//! restart; a level it does not know is refused at creation.

use std::time::{Duration, Instant};

use carcassonne::games::bot_seats::BotConfig;
use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, action::Action as A};
use carcassonne::server::ServerConfig;
use tonic::transport::Channel;
use tonic_types::StatusExt as _;

use crate::support::{
    TestServer, act, create_request, game, legal_as, reason, replay, replay_request, with_token,
};

/// A server whose bots take `budget` a decision.
async fn server_with_budget(data: &std::path::Path, budget: Duration) -> TestServer {
    server_with_bots(
        data,
        BotConfig {
            budget,
            workers: 2,
            ..BotConfig::default()
        },
    )
    .await
}

pub(crate) async fn server_with_bots(data: &std::path::Path, bots: BotConfig) -> TestServer {
    TestServer::start_with(ServerConfig {
        data: data.to_owned(),
        bots,
        ..ServerConfig::default()
    })
    .await
}

pub(crate) fn with_bots(mut request: proto::CreateGameRequest, bots: &[&str]) -> proto::CreateGameRequest {
    request.bots = bots.iter().map(|b| (*b).to_owned()).collect();
    request
}

/// A bag of `n` tiles of a few kinds: a short game.
pub(crate) fn short_bag(n: u32) -> Vec<proto::TileCount> {
    ["D", "E", "U", "V", "B"]
        .iter()
        .enumerate()
        .map(|(i, kind)| proto::TileCount {
            kind: (*kind).to_owned(),
            count: n / 5 + u32::from((i as u32) < n % 5),
        })
        .collect()
}

/// Polls GetGame until the game is over, within `limit`.
pub(crate) async fn until_over(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    limit: Duration,
) -> proto::Game {
    let started = Instant::now();
    loop {
        let now = game(client, name).await;
        if now.status == proto::GameStatus::Finished as i32 {
            return now;
        }
        assert!(
            started.elapsed() < limit,
            "{name} is still at version {} after {limit:?}",
            now.version
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Every event's acting seat, from a replay of the whole game.
pub(crate) async fn events(server: &TestServer, name: &str) -> Vec<proto::GameEvent> {
    let mut watcher = server.watcher().await;
    replay(&mut watcher, replay_request(name, Some(1), None))
        .await
        .into_iter()
        .map(|step| step.event.unwrap())
        .collect()
}

#[tokio::test]
async fn a_game_of_bots_at_every_level_plays_to_its_end_unattended() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_budget(dir.path(), Duration::from_millis(15)).await;
    let mut client = server.client().await;
    let levels = ["random", "greedy", "search:30", "search"];
    let request = with_bots(
        create_request(
            "bots-at-every-level-0001",
            4,
            &[proto::Expansion::River, proto::Expansion::Count],
            21,
        ),
        &levels,
    );
    let created = client.create_game(request).await.unwrap().into_inner();
    assert!(created.tokens.is_empty(), "no token for a bot's seat");
    let name = created.game.unwrap().name;
    let over = until_over(&mut client, &name, Duration::from_secs(240)).await;
    assert_eq!(
        over.ending.unwrap().reason,
        proto::EndReason::Normal as i32,
        "played to the last tile"
    );
    let shown: Vec<&str> = over.players.iter().map(|p| p.bot.as_str()).collect();
    assert_eq!(shown, levels, "each seat shows its bot");
    // Every decision is a seat's own, by the seat whose turn it was.
    let all = events(&server, &name).await;
    let decided = all.iter().filter(|e| e.seat.is_some()).count();
    assert!(decided > 100, "{decided} decisions");
    assert!(!all.iter().any(|e| matches!(
        e.event,
        Some(proto::game_event::Event::TimedOut(_) | proto::game_event::Event::Resigned(_))
    )));
    server.stop().await;
}

#[tokio::test]
async fn a_person_plays_against_a_bot_seat_whose_turns_the_server_takes() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_budget(dir.path(), Duration::from_millis(15)).await;
    let mut client = server.client().await;
    let request = with_bots(create_request("person-and-bot-0001", 2, &[], 5), &["", "greedy"]);
    let created = client.create_game(request).await.unwrap().into_inner();
    assert_eq!(created.tokens.len(), 1);
    assert_eq!(created.tokens[0].seat, 0);
    let (name, token) = (created.game.unwrap().name, created.tokens[0].token.clone());
    let started = Instant::now();
    let mut step = 0;
    loop {
        let legal = legal_as(&mut client, &name, &token).await;
        let Some(pending) = legal.pending.filter(|_| !legal.actions.is_empty()) else {
            break;
        };
        if pending.seat != 0 {
            // The bot's turn: the server takes it.
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the bot never answers"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        let action = legal.actions[step % legal.actions.len()].action.unwrap();
        let request = act(&name, legal.version, &format!("person-{}", legal.version), action);
        client.act(with_token(request, &token)).await.unwrap();
        step += 1;
    }
    let over = game(&mut client, &name).await;
    assert_eq!(over.ending.unwrap().reason, proto::EndReason::Normal as i32);
    assert!(step > 20, "the person played {step} decisions");
    let by_bot = events(&server, &name)
        .await
        .iter()
        .filter(|e| e.seat == Some(1))
        .count();
    assert!(by_bot > 20, "the bot played {by_bot} decisions");
    server.stop().await;
}

#[tokio::test]
async fn a_bot_seat_inside_a_clocked_game_never_loses_on_time_with_its_default_budget() {
    // The server's defaults: a second a decision, at most a share of the
    // time the clock leaves.
    let (server, mut client) = crate::support::start().await;
    let controls = [
        // A short main time with an increment...
        proto::TimeControl {
            main_ms: 2_500,
            increment_ms: 100,
            decision_ms: 0,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
        },
        // ... and the shortest limit per decision.
        proto::TimeControl {
            main_ms: 0,
            increment_ms: 0,
            decision_ms: 1_000,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
        },
    ];
    let mut names = Vec::new();
    for (i, control) in controls.into_iter().enumerate() {
        let request = proto::CreateGameRequest {
            time_control: Some(control),
            tiles: short_bag(14),
            ..with_bots(
                create_request(&format!("clocked-bots-000{i}"), 2, &[], 30 + i as u8),
                &["search", "search"],
            )
        };
        let created = client.create_game(request).await.unwrap().into_inner();
        names.push(created.game.unwrap().name);
    }
    for name in &names {
        let over = until_over(&mut client, name, Duration::from_secs(120)).await;
        assert_eq!(
            over.ending.unwrap().reason,
            proto::EndReason::Normal as i32,
            "{name}: nobody ran out of time"
        );
        for player in &over.players {
            assert_eq!(player.status, proto::SeatStatus::Playing as i32, "{name}");
        }
        let all = events(&server, name).await;
        assert!(
            !all.iter()
                .any(|e| matches!(e.event, Some(proto::game_event::Event::TimedOut(_)))),
            "{name}"
        );
        assert!(all.iter().filter(|e| e.seat.is_some()).count() >= 14, "{name}");
    }
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_bot_level_is_refused_with_its_reason_and_nothing_is_stored() {
    let (server, mut client) = crate::support::start().await;
    let cases: [(&[&str], &str); 4] = [
        (&["greedy", "grandmaster"], "UNKNOWN_BOT_LEVEL"),
        (&["search:0", ""], "UNKNOWN_BOT_LEVEL"),
        (&["Greedy", ""], "UNKNOWN_BOT_LEVEL"),
        (&["greedy"], "INVALID_ARGUMENT"),
    ];
    for (i, (bots, expected)) in cases.into_iter().enumerate() {
        let request = with_bots(create_request(&format!("bad-bot-level-000{i}"), 2, &[], 1), bots);
        let refused = client.create_game(request).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{bots:?}");
        assert_eq!(reason(&refused), expected, "{bots:?}");
        let details = refused.get_error_details();
        let info = details.error_info().unwrap();
        assert_eq!(info.metadata.get("field").map(String::as_str), Some("bots"));
        assert!(refused.message().contains("bots"), "{}", refused.message());
    }
    let listed = client
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(listed.games.is_empty(), "nothing stored: {:?}", listed.games);
    server.stop().await;
}

#[tokio::test]
async fn bot_seats_survive_a_restart_and_a_bot_s_turn_pending_then_is_played_after_it() {
    let dir = tempfile::tempdir().unwrap();
    // A search that would take minutes: the server stops in the middle.
    let server = server_with_budget(dir.path(), Duration::from_secs(600)).await;
    let mut client = server.client().await;
    let request = with_bots(
        create_request("restart-with-bots-01", 2, &[], 8),
        &["", "search:10000000"],
    );
    let created = client.create_game(request).await.unwrap().into_inner();
    let (name, token) = (created.game.unwrap().name, created.tokens[0].token.clone());
    // The person's turn (tile and follower); then the bot's.
    for _ in 0..2 {
        let legal = legal_as(&mut client, &name, &token).await;
        assert_eq!(legal.pending.unwrap().seat, 0);
        let action = legal.actions[0].action.unwrap();
        let request = act(&name, legal.version, &format!("before-{}", legal.version), action);
        client.act(with_token(request, &token)).await.unwrap();
    }
    let waiting = legal_as(&mut client, &name, &token).await;
    assert_eq!(waiting.pending.unwrap().seat, 1, "the bot's turn");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopping = Instant::now();
    tokio::time::timeout(Duration::from_secs(20), server.stop())
        .await
        .expect("a running search does not hold up the shutdown");
    assert!(stopping.elapsed() < Duration::from_secs(10));

    let server = server_with_budget(dir.path(), Duration::from_millis(15)).await;
    let mut client = server.client().await;
    let after = game(&mut client, &name).await;
    assert_eq!(
        after.players[1].bot, "search:10000000",
        "the seat is still the bot's"
    );
    assert_eq!(after.players[0].bot, "");
    // The bot's turn, pending at the restart, is played without anyone
    // acting; and the game goes on to its end.
    let started = Instant::now();
    loop {
        let legal = legal_as(&mut client, &name, &token).await;
        let Some(pending) = legal.pending.filter(|_| !legal.actions.is_empty()) else {
            break;
        };
        if pending.seat == 1 {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the bot never plays after the restart"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        assert!(legal.version > waiting.version, "the bot played first");
        let action = legal.actions[0].action.unwrap();
        let request = act(&name, legal.version, &format!("after-{}", legal.version), action);
        client.act(with_token(request, &token)).await.unwrap();
    }
    let over = game(&mut client, &name).await;
    assert_eq!(over.ending.unwrap().reason, proto::EndReason::Normal as i32);
    // The bot's decisions were stored with the server's own request ids.
    let all = events(&server, &name).await;
    assert!(all.iter().filter(|e| e.seat == Some(1)).count() > 20);
    server.stop().await;
}

/// The server's request ids of a bot's decisions name the seat and the
/// version; a client may not use them (they begin with `~`).
#[tokio::test]
async fn a_client_cannot_take_a_bot_s_request_id() {
    let (server, mut client) = crate::support::start().await;
    let created = client
        .create_game(with_bots(
            create_request("bot-request-ids-01", 2, &[], 3),
            &["", "random"],
        ))
        .await
        .unwrap()
        .into_inner();
    let (name, token) = (created.game.unwrap().name, created.tokens[0].token.clone());
    let legal = legal_as(&mut client, &name, &token).await;
    let request = act(&name, legal.version, "~bot/0/3", A::Pass(proto::Pass {}));
    let refused = client.act(with_token(request, &token)).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    server.stop().await;
}
