//! Consent: no game seats a registered player who did not agree to it,
//! and nobody but its players makes a game rated. A registered player's
//! seat comes from their own key, or a challenge they accept.

use std::sync::Arc;

use carcassonne::players::Registration;
use carcassonne::proto;
use carcassonne::server::ServerConfig;
use carcassonne_store::{ManualClock, StoreConfig};
use tonic::Code;

use crate::bots::{
    ADMIN_KEY, agreed_game, challenge_request, challenges_client, league_server, players_client, register,
};
use crate::support::{TestServer, create_request, game, reason, with_token};

/// A status's code and reason.
fn refusal(status: tonic::Status) -> (Code, String) {
    (status.code(), reason(&status))
}

#[tokio::test]
async fn nobody_seats_a_registered_player_or_rates_a_game_without_the_players_consent() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let _brun = register(&server, "Brun").await;
    let mut client = server.client().await;
    // The attack of the issue: a short clock that forfeits the first seat
    // unless it acts at once, rated, both seats registered players', with
    // no key, with one of the two players' keys, and with a stranger's.
    let stranger = register(&server, "Mallory").await;
    for (n, key) in [None, Some(&ada), Some(&stranger)].into_iter().enumerate() {
        for rated in [true, false] {
            let request = proto::CreateGameRequest {
                accounts: vec!["players/Ada".to_owned(), "players/Brun".to_owned()],
                rated,
                time_control: Some(proto::TimeControl {
                    decision_ms: 5_000,
                    ..Default::default()
                }),
                ..create_request(&format!("consent-{n}-{rated}-0000000"), 2, &[], 1)
            };
            let request = match key {
                Some(key) => with_token(request, key),
                None => tonic::Request::new(request),
            };
            let refused = client.create_game(request).await.unwrap_err();
            assert_eq!(
                refusal(refused),
                (Code::PermissionDenied, "CONSENT_REQUIRED".to_owned()),
                "key {n}, rated {rated}"
            );
        }
    }
    // Rated needs every player's consent: a creation never has it.
    let rated_guests = proto::CreateGameRequest {
        rated: true,
        ..create_request("consent-rated-guests-01", 2, &[], 1)
    };
    let refused = client.create_game(rated_guests).await.unwrap_err();
    assert_eq!(
        refusal(refused),
        (Code::PermissionDenied, "CONSENT_REQUIRED".to_owned())
    );
    // Nothing was stored: no game, no rating.
    let listed = client
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap();
    assert!(listed.into_inner().games.is_empty());
    let brun = players_client(&server)
        .await
        .get_player(proto::GetPlayerRequest {
            name: "players/Brun".to_owned(),
        })
        .await
        .unwrap()
        .into_inner()
        .player
        .unwrap();
    assert_eq!(brun.duel_rating, None);
}

#[tokio::test]
async fn a_named_player_accepts_or_declines_and_the_challenger_may_cancel() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let cleo = register(&server, "Cleo").await;
    let mut challenges = challenges_client(&server).await;
    let offer = |request_id: &str, rated: bool| {
        with_token(challenge_request(request_id, &["Ada", "Brun"], rated), &ada)
    };
    let accept = |name: &str, key: &str| {
        with_token(
            proto::AcceptChallengeRequest {
                name: name.to_owned(),
                seat: None,
            },
            key,
        )
    };
    let made = challenges
        .create_challenge(offer("challenge-duel-000001", true))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(made.status, proto::ChallengeStatus::Open as i32);
    assert_eq!(made.challenger, "players/Ada");
    assert_eq!(
        made.seats
            .iter()
            .map(|s| (s.player.as_str(), s.accepted))
            .collect::<Vec<_>>(),
        [("players/Ada", true), ("players/Brun", false)]
    );
    assert!(made.game.is_empty());
    // A retry with the same request id is the same challenge.
    let again = challenges
        .create_challenge(offer("challenge-duel-000001", true))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(again.name, made.name);
    // Brun and Ada see it listed; Cleo does not (it is no seek).
    let lister = challenges.clone();
    let listed = |key: &str| {
        let mut challenges = lister.clone();
        let request = with_token(proto::ListChallengesRequest {}, key);
        async move {
            let listed = challenges.list_challenges(request).await.unwrap().into_inner();
            listed.challenges.into_iter().map(|c| c.name).collect::<Vec<_>>()
        }
    };
    assert_eq!(listed(&brun).await, std::slice::from_ref(&made.name));
    assert_eq!(listed(&ada).await, std::slice::from_ref(&made.name));
    assert!(listed(&cleo).await.is_empty());
    // Nobody else may take Brun's seat, nor the challenger a second one.
    let stranger = challenges
        .accept_challenge(accept(&made.name, &cleo))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(stranger),
        (Code::PermissionDenied, "NOT_INVITED".to_owned())
    );
    let own = challenges
        .accept_challenge(accept(&made.name, &ada))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(own),
        (Code::FailedPrecondition, "ALREADY_SEATED".to_owned())
    );
    let no_key = challenges
        .accept_challenge(proto::AcceptChallengeRequest {
            name: made.name.clone(),
            seat: None,
        })
        .await
        .unwrap_err();
    assert_eq!(no_key.code(), Code::Unauthenticated);
    // Brun accepts: the game starts, rated, each seat a player's.
    let accepted = challenges
        .accept_challenge(accept(&made.name, &brun))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(accepted.status, proto::ChallengeStatus::Accepted as i32);
    let started = game(&mut server.client().await, &accepted.game).await;
    assert!(started.rated);
    assert_eq!(
        started
            .players
            .iter()
            .map(|p| p.account.as_str())
            .collect::<Vec<_>>(),
        ["players/Ada", "players/Brun"]
    );
    let got = challenges
        .get_challenge(proto::GetChallengeRequest {
            name: made.name.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(got, accepted);
    assert!(
        listed(&brun).await.is_empty(),
        "accepted challenges are no longer open"
    );
    let late = challenges
        .accept_challenge(accept(&made.name, &brun))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(late),
        (Code::FailedPrecondition, "CHALLENGE_CLOSED".to_owned())
    );

    // Declined: it never starts.
    let declined = challenges
        .create_challenge(offer("challenge-duel-000002", false))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    let decline = |key: &str| {
        with_token(
            proto::DeclineChallengeRequest {
                name: declined.name.clone(),
            },
            key,
        )
    };
    let refused = challenges.decline_challenge(decline(&cleo)).await.unwrap_err();
    assert_eq!(
        refusal(refused),
        (Code::PermissionDenied, "NOT_INVITED".to_owned())
    );
    let answer = challenges
        .decline_challenge(decline(&brun))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(answer.status, proto::ChallengeStatus::Declined as i32);
    assert_eq!(answer.declined_by, "players/Brun");
    let closed = challenges
        .accept_challenge(accept(&declined.name, &brun))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(closed),
        (Code::FailedPrecondition, "CHALLENGE_CLOSED".to_owned())
    );

    // Cancelled, by the challenger only.
    let cancelled = challenges
        .create_challenge(offer("challenge-duel-000003", false))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    let cancel = |key: &str| {
        with_token(
            proto::CancelChallengeRequest {
                name: cancelled.name.clone(),
            },
            key,
        )
    };
    let refused = challenges.cancel_challenge(cancel(&brun)).await.unwrap_err();
    assert_eq!(
        refusal(refused),
        (Code::PermissionDenied, "NOT_CHALLENGER".to_owned())
    );
    let answer = challenges
        .cancel_challenge(cancel(&ada))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(answer.status, proto::ChallengeStatus::Cancelled as i32);
    // One game in all: the accepted one.
    let listed = server
        .client()
        .await
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.games.len(), 1);
}

#[tokio::test]
async fn an_open_seat_is_a_seek_any_registered_player_takes() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let mut challenges = challenges_client(&server).await;
    let request = proto::CreateChallengeRequest {
        seats: vec![
            proto::ChallengeSeat {
                player: "players/Ada".to_owned(),
                ..Default::default()
            },
            proto::ChallengeSeat {
                open: true,
                ..Default::default()
            },
            proto::ChallengeSeat {
                bot: "greedy".to_owned(),
                ..Default::default()
            },
        ],
        ..challenge_request("open-seek-00000001", &[], false)
    };
    let seek = challenges
        .create_challenge(with_token(request, &ada))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    // Anyone sees the seek, a key or none.
    let anonymous = challenges
        .list_challenges(proto::ListChallengesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(anonymous.challenges, std::slice::from_ref(&seek));
    let taken = challenges
        .accept_challenge(with_token(
            proto::AcceptChallengeRequest {
                name: seek.name.clone(),
                seat: None,
            },
            &brun,
        ))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    assert_eq!(taken.status, proto::ChallengeStatus::Accepted as i32);
    assert_eq!(taken.seats[1].player, "players/Brun");
    let started = game(&mut server.client().await, &taken.game).await;
    assert_eq!(
        started
            .players
            .iter()
            .map(|p| (p.name.as_str(), p.account.as_str(), p.bot.as_str()))
            .collect::<Vec<_>>(),
        [
            ("Ada", "players/Ada", ""),
            ("Brun", "players/Brun", ""),
            ("greedy bot 1", "", "greedy")
        ]
    );
    let anonymous = challenges
        .list_challenges(proto::ListChallengesRequest {})
        .await
        .unwrap()
        .into_inner();
    assert!(anonymous.challenges.is_empty());
}

#[tokio::test]
async fn challenges_are_bounded_checked_and_lapse() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000_000_000));
    let server = TestServer::start_with(ServerConfig {
        data: dir.path().to_owned(),
        admin_key: Some(ADMIN_KEY.to_owned()),
        store: StoreConfig::default().clock(clock.clone()),
        ..ServerConfig::default()
    })
    .await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let mut challenges = challenges_client(&server).await;
    let offerer = challenges.clone();
    let offer = |request: proto::CreateChallengeRequest| {
        let mut challenges = offerer.clone();
        let request = with_token(request, &ada);
        async move {
            challenges
                .create_challenge(request)
                .await
                .map(|r| r.into_inner().challenge.unwrap())
        }
    };
    // Requests that cannot be offered.
    let bot = proto::ChallengeSeat {
        bot: "greedy".to_owned(),
        ..Default::default()
    };
    let mut rated_bot = challenge_request("bounded-rated-bot-01", &["Ada"], true);
    rated_bot.seats.push(bot);
    let mut without_challenger = challenge_request("bounded-no-challenger", &["Brun"], false);
    without_challenger.seats.push(proto::ChallengeSeat {
        open: true,
        ..Default::default()
    });
    let mut two_kinds = challenge_request("bounded-two-kinds-01", &["Ada", "Brun"], false);
    two_kinds.seats[1].open = true;
    let cases = [
        (rated_bot, (Code::InvalidArgument, "INVALID_ARGUMENT")),
        (without_challenger, (Code::InvalidArgument, "INVALID_ARGUMENT")),
        (two_kinds, (Code::InvalidArgument, "INVALID_ARGUMENT")),
        (
            challenge_request("bounded-unknown-001", &["Ada", "Nobody"], false),
            (Code::NotFound, "PLAYER_NOT_FOUND"),
        ),
        (
            challenge_request("short", &["Ada", "Brun"], false),
            (Code::InvalidArgument, "INVALID_ARGUMENT"),
        ),
        (
            proto::CreateChallengeRequest {
                expire_ms: 1_000,
                ..challenge_request("bounded-expiry-0001", &["Ada", "Brun"], false)
            },
            (Code::InvalidArgument, "INVALID_ARGUMENT"),
        ),
    ];
    for (request, expected) in cases {
        let seats = format!("{:?}", request.seats);
        let refused = offer(request).await.unwrap_err();
        assert_eq!(refusal(refused), (expected.0, expected.1.to_owned()), "{seats}");
    }
    // At most 16 open at once.
    let mut names = Vec::new();
    for n in 0..16 {
        let request = proto::CreateChallengeRequest {
            expire_ms: 60_000,
            ..challenge_request(&format!("bounded-many-{n:08}"), &["Ada", "Brun"], false)
        };
        names.push(offer(request).await.unwrap().name);
    }
    let too_many = offer(challenge_request(
        "bounded-many-00000016",
        &["Ada", "Brun"],
        false,
    ))
    .await
    .unwrap_err();
    assert_eq!(
        refusal(too_many),
        (Code::ResourceExhausted, "TOO_MANY_CHALLENGES".to_owned())
    );
    // Past their expiry they lapse, and make room.
    clock.advance(60_000);
    let lapsed = challenges
        .accept_challenge(with_token(
            proto::AcceptChallengeRequest {
                name: names[0].clone(),
                seat: None,
            },
            &brun,
        ))
        .await
        .unwrap_err();
    assert_eq!(
        refusal(lapsed),
        (Code::FailedPrecondition, "CHALLENGE_EXPIRED".to_owned())
    );
    let status = challenges
        .get_challenge(proto::GetChallengeRequest {
            name: names[0].clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap()
        .status;
    assert_eq!(status, proto::ChallengeStatus::Expired as i32);
    offer(challenge_request(
        "bounded-many-00000016",
        &["Ada", "Brun"],
        false,
    ))
    .await
    .unwrap();
    // A challenge survives a restart: still open, and accepted after it.
    let open = offer(challenge_request("bounded-restart-0001", &["Ada", "Brun"], true))
        .await
        .unwrap();
    drop((challenges, offer));
    server.stop().await;
    let server = TestServer::start_with(ServerConfig {
        data: dir.path().to_owned(),
        admin_key: Some(ADMIN_KEY.to_owned()),
        store: StoreConfig::default().clock(clock.clone()),
        ..ServerConfig::default()
    })
    .await;
    let mut challenges = challenges_client(&server).await;
    let listed = challenges
        .list_challenges(with_token(proto::ListChallengesRequest {}, &brun))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        listed.challenges.len(),
        2,
        "the one just made and the one made after the lapse"
    );
    assert!(listed.challenges.iter().any(|c| c.name == open.name));
    let game = agreed_game_after(&server, &open.name, &brun).await;
    assert!(!game.is_empty());
    server.stop().await;
}

/// Brun accepts challenge `name`; the game's name.
async fn agreed_game_after(server: &TestServer, name: &str, key: &str) -> String {
    let mut challenges = challenges_client(server).await;
    let accepted = challenges
        .accept_challenge(with_token(
            proto::AcceptChallengeRequest {
                name: name.to_owned(),
                seat: None,
            },
            key,
        ))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    let started = game(&mut server.client().await, &accepted.game).await;
    assert!(started.rated);
    accepted.game
}

#[tokio::test]
async fn a_challenge_with_only_its_challenger_and_bots_starts_at_once() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let mut request = challenge_request("bots-only-0000001", &["Ada"], false);
    request.seats.push(proto::ChallengeSeat {
        bot: "random".to_owned(),
        ..Default::default()
    });
    let name = agreed_game(&server, request, &[&ada]).await;
    let started = game(&mut server.client().await, &name).await;
    assert_eq!(started.players[1].bot, "random");
}

/// The next message of a player's stream, within a few seconds.
async fn next_message(
    stream: &mut tonic::Streaming<proto::WatchPlayerResponse>,
) -> proto::WatchPlayerResponse {
    loop {
        let message = tokio::time::timeout(std::time::Duration::from_secs(10), stream.message())
            .await
            .expect("a message in time")
            .unwrap()
            .unwrap();
        if !matches!(
            message.message,
            Some(proto::watch_player_response::Message::KeepAlive(_))
        ) {
            return message;
        }
    }
}

#[tokio::test]
async fn the_player_stream_tells_of_the_challenges_that_concern_the_player() {
    use proto::watch_player_response::Message as P;
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let brun = register(&server, "Brun").await;
    let cleo = register(&server, "Cleo").await;
    let mut players = players_client(&server).await;
    let watch = |key: &str| {
        with_token(
            proto::WatchPlayerRequest {
                after_position: 0,
                keep_alive_ms: 1_000,
            },
            key,
        )
    };
    let mut brun_stream = players.watch_player(watch(&brun)).await.unwrap().into_inner();
    let mut cleo_stream = players.watch_player(watch(&cleo)).await.unwrap().into_inner();
    let mut challenges = challenges_client(&server).await;
    let duel = challenges
        .create_challenge(with_token(
            challenge_request("stream-duel-000001", &["Ada", "Brun"], false),
            &ada,
        ))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    // Brun is told at once, as the challenge stands.
    let told = next_message(&mut brun_stream).await;
    assert!(!told.snapshot);
    assert_eq!(told.message, Some(P::Challenge(duel.clone())));
    // A stream opened later holds it in its snapshot: it waits for Brun.
    let mut later = players.watch_player(watch(&brun)).await.unwrap().into_inner();
    let snapshot = next_message(&mut later).await;
    assert!(snapshot.snapshot);
    assert_eq!(snapshot.message, Some(P::Challenge(duel.clone())));
    // Brun accepts: his stream tells the accepted challenge, then the game.
    let accepted = challenges
        .accept_challenge(with_token(
            proto::AcceptChallengeRequest {
                name: duel.name.clone(),
                seat: None,
            },
            &brun,
        ))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    let told = next_message(&mut brun_stream).await;
    assert_eq!(told.message, Some(P::Challenge(accepted.clone())));
    let Some(P::GameStarted(started)) = next_message(&mut brun_stream).await.message else {
        panic!("the game did not start on Brun's stream");
    };
    assert_eq!(started.game.unwrap().name, accepted.game);
    // Cleo, in none of it, heard nothing but keep-alives.
    let quiet = tokio::time::timeout(
        std::time::Duration::from_millis(1_500),
        next_message(&mut cleo_stream),
    )
    .await;
    assert!(quiet.is_err(), "Cleo was told: {quiet:?}");
}

#[tokio::test]
async fn an_unknown_challenge_is_challenge_not_found_with_its_name() {
    let (server, _dir) = league_server(Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let mut challenges = challenges_client(&server).await;
    let name = "challenges/nosuchchallenge".to_owned();
    let refusals = [
        challenges
            .get_challenge(proto::GetChallengeRequest { name: name.clone() })
            .await
            .unwrap_err(),
        challenges
            .accept_challenge(with_token(
                proto::AcceptChallengeRequest {
                    name: name.clone(),
                    seat: None,
                },
                &ada,
            ))
            .await
            .unwrap_err(),
        challenges
            .decline_challenge(with_token(
                proto::DeclineChallengeRequest { name: name.clone() },
                &ada,
            ))
            .await
            .unwrap_err(),
        challenges
            .cancel_challenge(with_token(
                proto::CancelChallengeRequest { name: name.clone() },
                &ada,
            ))
            .await
            .unwrap_err(),
    ];
    for (n, refused) in refusals.into_iter().enumerate() {
        let metadata = {
            use tonic_types::StatusExt as _;
            let details = refused.get_error_details();
            details
                .error_info()
                .map(|i| i.metadata.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            refusal(refused),
            (Code::NotFound, "CHALLENGE_NOT_FOUND".to_owned()),
            "call {n}"
        );
        assert_eq!(metadata.get("name"), Some(&name), "call {n}");
    }
}
