//! The gRPC server against real clients on a loopback port.

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, action::Action as A};
use tonic::transport::Channel;
use tonic::{Code, Request, Status};

use crate::support::{
    TestServer, act, create, create_request, game, hex, legal, new_game, play, play_to_end, reason, start,
    tokens, with_token,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_game_through_the_api_scores_as_the_engine_does() {
    let (server, mut client) = start().await;
    for (i, expansions) in [&[][..], &[proto::Expansion::River, proto::Expansion::Count][..]]
        .iter()
        .enumerate()
    {
        let created = client
            .create_game(create_request(&format!("create-{i}"), 3, expansions, 7 + i as u8))
            .await
            .unwrap()
            .into_inner();
        let game = created.game.clone().unwrap();
        assert_eq!(game.status, proto::GameStatus::Running as i32);
        assert!(game.seed.is_empty(), "the seed is sealed while the game runs");
        let tokens = tokens(&created);
        let done = play_to_end(&mut client, &game.name, &tokens).await;
        assert_eq!(done.status, proto::GameStatus::Finished as i32);
        // The same choices, through the engine alone, score the same.
        let expected = replay_through_engine(&done, 7 + i as u8);
        let scores: Vec<u32> = done.players.iter().map(|p| p.score).collect();
        assert_eq!(scores, expected);
        // The seed is revealed at the end and matches the commitment.
        assert_eq!(done.seed, hex(&[7 + i as u8; 32]));
        assert_eq!(
            done.seed_sha256,
            carcassonne::games::auth::seed_commitment(&[7 + i as u8; 32])
        );
    }
    server.stop().await;
}

/// A bag with no tile (item 12): the game has no turn to play, so it is
/// over at creation, with final scoring, as a record that used up its bag
/// is finished; it never waits for a decision nobody can make.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_created_with_an_empty_bag_is_finished_at_once() {
    let (server, mut client) = start().await;
    let mut request = create_request("empty-bag", 2, &[], 5);
    request.tiles = vec![proto::TileCount {
        kind: "A".to_owned(),
        count: 0,
    }];
    let game = client
        .create_game(request)
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(game.status, proto::GameStatus::Finished as i32);
    assert_eq!(game.players.iter().map(|p| p.score).collect::<Vec<_>>(), [0, 0]);
    let legal = legal(&mut client, &game.name).await;
    assert!(legal.actions.is_empty(), "nothing to do in a finished game");
    server.stop().await;
}

/// Plays the engine with the same seed and the same choice rule as
/// `play_to_end`, and returns its final scores.
fn replay_through_engine(game: &proto::Game, seed: u8) -> Vec<u32> {
    use carcassonne_engine::*;
    let rules_proto = game.rules.clone().unwrap();
    let rules = carcassonne::api::parse::rules(Some(&rules_proto)).unwrap();
    let setup = Setup {
        rules,
        players: game.players.iter().map(|p| p.name.clone()).collect(),
        tiles: None,
        seed: Some(Seed([seed; 32])),
        time_control: None,
    };
    let mut engine = Game::new(setup);
    engine.run_automatic(&mut Vec::new(), &mut ());
    let mut step = 0;
    while let Some(player) = engine.pending().player() {
        let actions = carcassonne::api::view::actions(&engine);
        let action = actions[step % actions.len()];
        let command = carcassonne::api::parse::action(Some(&action)).unwrap();
        engine.execute(Actor::Seat(player), &command, &mut ()).unwrap();
        step += 1;
    }
    engine.scores().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_calls_get_precise_statuses_and_change_nothing() {
    let (server, mut client) = start().await;
    let created = client
        .create_game(create_request("errors-5e0f7a3c9d21", 2, &[], 1))
        .await
        .unwrap()
        .into_inner();
    let name = created.game.clone().unwrap().name;
    let tokens = tokens(&created);
    let legal = legal(&mut client, &name).await;
    let version = legal.version;
    let good = legal.actions[0].action.unwrap();
    let seat = legal.pending.unwrap().seat as usize;

    let check = |result: Result<tonic::Response<proto::ActResponse>, Status>, code: Code, why: &str| {
        let status = result.err().unwrap_or_else(|| panic!("accepted: {why}"));
        assert_eq!(status.code(), code, "{why}: {status:?}");
        assert_eq!(reason(&status), why, "{status:?}");
        status
    };
    // No token, a bad token, another seat's token.
    check(
        client.act(Request::new(act(&name, version, "r1", good))).await,
        Code::Unauthenticated,
        "MISSING_TOKEN",
    );
    check(
        client
            .act(with_token(act(&name, version, "r1", good), "nope"))
            .await,
        Code::PermissionDenied,
        "BAD_TOKEN",
    );
    let other = &tokens[1 - seat];
    let status = check(
        client
            .act(with_token(act(&name, version, "r1", good), other))
            .await,
        Code::PermissionDenied,
        "NOT_YOUR_TURN",
    );
    assert!(status.message().contains("decision"), "{status:?}");
    let mine = &tokens[seat];
    // A stale version.
    let status = check(
        client
            .act(with_token(act(&name, version - 1, "r1", good), mine))
            .await,
        Code::Aborted,
        "STALE_VERSION",
    );
    assert!(status.message().contains(&version.to_string()));
    // A move the rules forbid: a tile far from the board (B-T1).
    let far = A::PlaceTile(proto::PlaceTile {
        position: Some(proto::Position { x: 40, y: 40 }),
        rotation: 0,
    });
    let status = check(
        client.act(with_token(act(&name, version, "r1", far), mine)).await,
        Code::FailedPrecondition,
        "RULE_VIOLATION",
    );
    assert_eq!(status.metadata().get("carcassonne-rule").unwrap(), "B-T1");
    use tonic_types::StatusExt as _;
    assert_eq!(
        status.get_error_details().error_info().unwrap().metadata["rule"],
        "B-T1"
    );
    // Malformed input.
    let bad_rotation = A::PlaceTile(proto::PlaceTile {
        position: Some(proto::Position { x: 1, y: 0 }),
        rotation: 45,
    });
    let status = check(
        client
            .act(with_token(act(&name, version, "r1", bad_rotation), mine))
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    assert!(status.message().contains("rotation"), "{status:?}");
    let out_of_range = A::PlaceTile(proto::PlaceTile {
        position: Some(proto::Position { x: i32::MAX, y: 0 }),
        rotation: 0,
    });
    check(
        client
            .act(with_token(act(&name, version, "r1", out_of_range), mine))
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    check(
        client.act(with_token(act(&name, version, "", good), mine)).await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    check(
        client
            .act(with_token(act("games/", version, "r1", good), mine))
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    check(
        client
            .act(with_token(act("nothing/x", version, "r1", good), mine))
            .await,
        Code::InvalidArgument,
        "INVALID_ARGUMENT",
    );
    // An unknown game.
    check(
        client
            .act(with_token(act("games/nope", version, "r1", good), mine))
            .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    // Nothing changed.
    let now = game(&mut client, &name).await;
    assert_eq!(now.version, version);
    // A right move, then its retry: the same answer, nothing more stored.
    let first = client
        .act(with_token(act(&name, version, "r1", good), mine))
        .await
        .unwrap()
        .into_inner();
    let again = client
        .act(with_token(act(&name, version, "r1", good), mine))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first.version, again.version);
    assert_eq!(first.events, again.events);
    let now = game(&mut client, &name).await;
    assert_eq!(now.version, first.version);
    // A retried creation gets the first answer, tokens included, and makes
    // no other game; the same request id with other fields is refused.
    let again = client
        .create_game(create_request("errors-5e0f7a3c9d21", 2, &[], 1))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again.game.clone().unwrap().name, name);
    assert_eq!(crate::support::tokens(&again), tokens);
    let status = client
        .create_game(create_request("errors-5e0f7a3c9d21", 2, &[], 2))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists);
    assert_eq!(reason(&status), "REQUEST_ID_REUSED");
    // A game id is at most 64 characters, and the error says so.
    let status = client
        .get_game(proto::GetGameRequest {
            name: format!("games/{}", "x".repeat(100)),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().contains("1 to 64 "), "{status:?}");
    // Bad creations.
    let mut one_player = create_request("c2", 1, &[], 1);
    let status = client.create_game(one_player.clone()).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    one_player.players = vec!["A".into(), "B".into()];
    one_player.seed = "0102".to_owned();
    let status = client.create_game(one_player).await.unwrap_err();
    assert!(status.message().contains("seed"), "{status:?}");
    server.stop().await;
}

/// C-5 through Act: a deploy that "moves" the count to the quarter where
/// it stands is accepted and leaves it there, as the rules and the record
/// format allow; the legal actions list it once, without a move.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_accepts_a_deploy_naming_the_quarter_where_the_count_stands() {
    use carcassonne_engine::{
        Actor, Command, Event, Expansion, Game, Pos, Rotation, Rules, Seat, Seed, Setup, TileKind,
    };
    let (_server, mut client) = start().await;
    let bag = ["U", "W", "E"].map(|kind| proto::TileCount {
        kind: kind.to_owned(),
        count: 1,
    });
    // Given: a Count game whose seed draws a U, then a W. Ada's thief on
    // the U north of CO4's gate; Brun's W closes its road: she scores, he
    // does not, so he may deploy, and the count stands in the castle.
    let draws = |byte: u8| {
        let mut game = Game::new(Setup {
            rules: Rules::default().with(Expansion::Count),
            players: vec!["Ada".into(), "Brun".into()],
            tiles: Some(
                bag.iter()
                    .map(|t| (TileKind::from_name(&t.kind).unwrap(), 1))
                    .collect(),
            ),
            seed: Some(Seed::from_hex(&hex(&[byte; 32])).unwrap()),
            time_control: None,
        });
        let mut events = Vec::new();
        game.run_automatic(&mut events, &mut ());
        let place_u = Command::PlaceTile {
            pos: Pos::new(1, 2),
            rotation: Rotation::R90,
        };
        for command in [place_u, Command::PlaceFollower(None)] {
            events.extend(
                game.execute(Actor::Seat(Seat(0)), &command, &mut ())
                    .unwrap_or_default(),
            );
        }
        let drawn: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::Drawn(kind) => Some(kind.name()),
                _ => None,
            })
            .collect();
        drawn
    };
    let seed = (0..=u8::MAX).find(|&b| draws(b) == ["U", "W"]).unwrap();
    let request = proto::CreateGameRequest {
        tiles: bag.to_vec(),
        ..create_request("count-stays", 2, &[proto::Expansion::Count], seed)
    };
    let (name, tokens) = create(&mut client, request).await;
    let turns = [
        (
            0,
            A::PlaceTile(proto::PlaceTile {
                position: Some(proto::Position { x: 1, y: 2 }),
                rotation: 90,
            }),
        ),
        (
            0,
            A::PlaceFollower(proto::PlaceFollower {
                place: proto::Place::N as i32,
            }),
        ),
        (
            1,
            A::PlaceTile(proto::PlaceTile {
                position: Some(proto::Position { x: 1, y: 3 }),
                rotation: 0,
            }),
        ),
        (1, A::PlaceFollower(proto::PlaceFollower { place: 0 })),
    ];
    for (i, (seat, action)) in turns.into_iter().enumerate() {
        let version = legal(&mut client, &name).await.version;
        client
            .act(with_token(
                act(&name, version, &format!("t{i}"), action),
                &tokens[seat],
            ))
            .await
            .unwrap_or_else(|e| panic!("turn {i}: {e:?}"));
    }
    let offered = legal(&mut client, &name).await;
    assert_eq!(
        offered.pending.as_ref().unwrap().kind(),
        proto::DecisionKind::DeployToCarcassonne
    );
    let moved_where_it_stands = proto::DeployToCarcassonne {
        quarter: proto::Quarter::Market as i32,
        count: proto::Quarter::Castle as i32,
    };
    assert!(
        !offered
            .actions
            .iter()
            .any(|a| a.action == Some(A::DeployToCarcassonne(moved_where_it_stands))),
        "listed once, as no move"
    );
    // When: Brun deploys to the market and names the castle for the count.
    let acted = client
        .act(with_token(
            act(
                &name,
                offered.version,
                "deploy",
                A::DeployToCarcassonne(moved_where_it_stands),
            ),
            &tokens[1],
        ))
        .await;
    // Then: the deploy is made and the count stays in the castle.
    let acted = acted.unwrap_or_else(|e| panic!("C-5: {e:?}")).into_inner();
    let city = acted.game.unwrap().city.unwrap();
    assert_eq!(city.count(), proto::Quarter::Castle);
    assert_eq!(
        city.followers,
        [proto::QuarterFollowers {
            quarter: proto::Quarter::Market as i32,
            seat: 1,
            count: 1
        }]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_racing_on_one_version_exactly_one_wins() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "race", 3).await;
    for round in 0..10 {
        let legal = legal(&mut client, &name).await;
        let token = tokens[legal.pending.unwrap().seat as usize].clone();
        let mut calls = Vec::new();
        for racer in 0..2 {
            let mut c = server.client().await;
            let action = legal.actions[racer % legal.actions.len()].action.unwrap();
            let request = with_token(
                act(&name, legal.version, &format!("race-{round}-{racer}"), action),
                &token,
            );
            calls.push(tokio::spawn(async move { c.act(request).await }));
        }
        let mut won = 0;
        for call in calls {
            match call.await.unwrap() {
                Ok(_) => won += 1,
                Err(status) => assert_eq!(status.code(), Code::Aborted, "{status:?}"),
            }
        }
        assert_eq!(won, 1, "round {round}");
    }
    server.stop().await;
}

/// GAME_VIEW_BASIC answers an action with the game without its board, the
/// rest as GetGame shows it; a view the API does not have is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_answered_in_the_basic_view_carries_all_but_the_board() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "views", 5).await;
    let legal = legal(&mut client, &name).await;
    let token = tokens[legal.pending.unwrap().seat as usize].clone();
    let action = legal.actions[0].action.unwrap();

    let mut unknown = act(&name, legal.version, "v0", action);
    unknown.view = 7;
    let status = client.act(with_token(unknown, &token)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("view"), "{status:?}");

    let mut basic = act(&name, legal.version, "v1", action);
    basic.view = proto::GameView::Basic as i32;
    let answer = client.act(with_token(basic, &token)).await.unwrap().into_inner();
    let shown = answer.game.unwrap();
    let full = game(&mut client, &name).await;
    assert!(!full.tiles.is_empty() && !full.bag.is_empty());
    assert_eq!(
        shown,
        proto::Game {
            tiles: Vec::new(),
            followers: Vec::new(),
            bag: Vec::new(),
            city: None,
            ..full
        }
    );
    assert_eq!(answer.version, shown.version);
    assert!(!answer.legal_actions.is_empty());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_continues_the_game_from_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let mut client = server.client().await;
    let (name, tokens) = new_game(&mut client, "restart", 5).await;
    play(&mut client, &name, &tokens, 20).await;
    let before = game(&mut client, &name).await;
    drop(client);
    server.stop().await;

    let server = TestServer::start(dir.path()).await;
    let mut client = server.client().await;
    let after = game(&mut client, &name).await;
    assert_eq!(before, after);
    let done = play_to_end(&mut client, &name, &tokens).await;
    assert_eq!(done.status, proto::GameStatus::Finished as i32);
    let listed = client
        .list_games(proto::ListGamesRequest {
            status: proto::GameStatus::Finished as i32,
            page_size: 10,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        listed.games.iter().map(|g| g.name.clone()).collect::<Vec<_>>(),
        vec![name]
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_over_the_size_limit_is_resource_exhausted() {
    let (server, mut client) = start().await;
    let mut request = create_request("big", 2, &[], 1);
    request.players = vec!["x".repeat(100_000), "y".into()];
    let status = client.create_game(request).await.unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert_eq!(reason(&status), "REQUEST_TOO_LARGE", "{status:?}");
    // The server goes on serving.
    client
        .create_game(create_request("small", 2, &[], 1))
        .await
        .unwrap();
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_the_services_and_health_says_serving() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let (server, _) = start().await;
    // What `grpcurl -plaintext ADDR list` asks.
    let channel = tonic::transport::Endpoint::from_shared(server.url())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut reflection = ServerReflectionClient::new(channel.clone());
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = reflection
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = responses.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("no service list: {response:?}")
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for expected in [
        "carcassonne.v1.GameService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} not in {names:?}");
    }
    // What `grpcurl -plaintext ADDR describe carcassonne.v1.GameService` asks.
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol(
            "carcassonne.v1.GameService".into(),
        )),
    };
    let mut responses = reflection
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = responses.message().await.unwrap().unwrap();
    assert!(
        matches!(
            response.message_response,
            Some(MessageResponse::FileDescriptorResponse(_))
        ),
        "{response:?}"
    );
    // What grpcurl asks to print an error's detail: google.rpc.ErrorInfo,
    // and the file it imports.
    for message_request in [
        MessageRequest::FileContainingSymbol("google.rpc.ErrorInfo".into()),
        MessageRequest::FileByFilename("google/protobuf/duration.proto".into()),
    ] {
        let request = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(message_request),
        };
        let response = reflection
            .server_reflection_info(tokio_stream::iter(vec![request]))
            .await
            .unwrap()
            .into_inner()
            .message()
            .await
            .unwrap()
            .unwrap();
        let Some(MessageResponse::FileDescriptorResponse(files)) = response.message_response else {
            panic!("not resolved: {response:?}")
        };
        let text = String::from_utf8_lossy(&files.file_descriptor_proto.concat()).into_owned();
        assert!(text.contains("ErrorInfo") || text.contains("Duration"), "{text}");
    }

    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let answer = health
        .check(tonic_health::pb::HealthCheckRequest {
            service: "carcassonne.v1.GameService".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        answer.status,
        tonic_health::pb::health_check_response::ServingStatus::Serving as i32
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_creation_gets_the_first_answer_even_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let client = server.client().await;
    // Racing retries of one creation: all get the same answer.
    let request = create_request("retried-5e0f7a3c9d21", 3, &[], 4);
    let calls = (0..8).map(|_| {
        let (mut client, request) = (client.clone(), request.clone());
        tokio::spawn(async move { client.create_game(request).await })
    });
    let mut answers = Vec::new();
    for call in calls {
        answers.push(call.await.unwrap().unwrap().into_inner());
    }
    assert!(
        answers.iter().all(|a| a == &answers[0]),
        "one answer for every retry"
    );
    assert_eq!(answers[0].tokens.len(), 3);
    let name = answers[0].game.clone().unwrap().name;
    // A short, guessable request id is answered once: its retry finds the
    // game, and no token.
    let mut short_client = client.clone();
    short_client
        .create_game(create_request("short-id", 2, &[], 5))
        .await
        .unwrap();
    let status = short_client
        .create_game(create_request("short-id", 2, &[], 5))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists);
    assert_eq!(reason(&status), "GAME_ALREADY_CREATED");
    server.stop().await;

    // Neither the tokens nor the request id are stored: the creation's
    // events carry the id's hash.
    let store =
        carcassonne_store::SledStore::open(dir.path(), carcassonne_store::StoreConfig::default()).unwrap();
    let id = carcassonne_store::GameId::new(name.strip_prefix("games/").unwrap()).unwrap();
    let stored = carcassonne_store::EventStore::read_game(&store, &id, 1).unwrap();
    for event in &stored {
        assert!(
            event.request_id.as_str().starts_with("sha256:")
                && !event.request_id.as_str().contains("retried"),
            "{:?}",
            event.request_id
        );
        let tokens = answers[0].tokens.iter().map(|t| t.token.as_bytes());
        for token in tokens {
            assert!(!event.payload.windows(token.len()).any(|w| w == token));
        }
    }
    drop(store);

    // After a restart the same request gets the same answer, tokens
    // included (derived again from the id and the server's key), and
    // the same request id with other fields is refused.
    let server = TestServer::start(dir.path()).await;
    let mut client = server.client().await;
    let again = client.create_game(request.clone()).await.unwrap().into_inner();
    assert_eq!(again.game.unwrap().name, name);
    assert_eq!(again.tokens, answers[0].tokens);
    let mut other_players = request.clone();
    other_players.players[2] = "Someone else".to_owned();
    let mut other_seed = request.clone();
    other_seed.seed = crate::support::hex(&[9; 32]);
    for other in [other_players, other_seed] {
        let status = client.create_game(other).await.unwrap_err();
        assert_eq!(status.code(), Code::AlreadyExists);
        assert_eq!(reason(&status), "REQUEST_ID_REUSED");
    }
    server.stop().await;
}

/// Every page of a listing, in order, with whether each had a next token.
async fn all_pages(
    client: &mut GameServiceClient<Channel>,
    status: proto::GameStatus,
    page_size: u32,
) -> Vec<(Vec<String>, bool)> {
    let mut pages = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_games(proto::ListGamesRequest {
                status: status as i32,
                page_size,
                page_token,
            })
            .await
            .unwrap()
            .into_inner();
        let more = !page.next_page_token.is_empty();
        pages.push((page.games.into_iter().map(|g| g.name).collect(), more));
        if !more {
            return pages;
        }
        page_token = page.next_page_token;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_pages_are_full_but_the_last_in_name_order() {
    let (server, mut client) = start().await;
    let mut tokens = std::collections::HashMap::new();
    for i in 0..12 {
        let mut request = create_request(&format!("listed-{i}"), 2, &[], 1);
        // Two tiles: a game played to its end in a few actions.
        request.tiles = vec![proto::TileCount {
            kind: "A".into(),
            count: 2,
        }];
        let (name, seat_tokens) = create(&mut client, request).await;
        tokens.insert(name, seat_tokens);
    }
    let all: Vec<String> = all_pages(&mut client, proto::GameStatus::Unspecified, 100)
        .await
        .into_iter()
        .flat_map(|(names, _)| names)
        .collect();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(all, sorted, "in the order of their names");
    assert_eq!(all.len(), 12);
    // The first game by name finishes; the others run.
    play_to_end(&mut client, &all[0], &tokens[&all[0]]).await;
    assert_eq!(
        all_pages(&mut client, proto::GameStatus::Finished, 1).await,
        vec![(vec![all[0].clone()], false)],
        "one full page and no promise of another"
    );
    let running = all_pages(&mut client, proto::GameStatus::Running, 5).await;
    let sizes: Vec<(usize, bool)> = running.iter().map(|(n, more)| (n.len(), *more)).collect();
    assert_eq!(sizes, [(5, true), (5, true), (1, false)]);
    let names: Vec<String> = running.into_iter().flat_map(|(n, _)| n).collect();
    assert_eq!(names, all[1..]);
    server.stop().await;
}
