//! The API's edges: reused request ids, callers that give up, bad
//! coordinates, unbounded input, malformed bodies from real HTTP/2 and
//! HTTP/1.1 (grpc-web) clients, and the server binary's start-up.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use carcassonne::games::{Acting, Games, NewGame, Settled};
use carcassonne::proto::{self, action::Action as A};
use carcassonne_engine::{Rules, Seed, Setup};
use carcassonne_store::{GameId, MemoryStore, RequestId, SystemClock};
use http_body_util::BodyExt as _;
use tonic::{Code, Status};
use tonic_types::StatusExt as _;

use crate::support::{act, create_request, legal, new_game, reason, serve, start, with_token};

/// A request id names one request of a game: an identical retry gets the
/// first answer, anything else that carries it a clear error of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_request_id_is_refused_unless_the_request_is_the_same() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "reuse", 3).await;
    let legal = legal(&mut client, &name).await;
    let seat = legal.pending.unwrap().seat as usize;
    let (mine, other) = (&tokens[seat], &tokens[1 - seat]);
    assert!(
        legal.actions.len() >= 2,
        "the first placement has several choices"
    );
    let first_action = legal.actions[0].action.unwrap();
    let other_action = legal.actions[1].action.unwrap();

    let first = client
        .act(with_token(act(&name, legal.version, "r1", first_action), mine))
        .await
        .unwrap()
        .into_inner();
    let again = client
        .act(with_token(act(&name, legal.version, "r1", first_action), mine))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first, again, "an identical retry gets the first answer");

    let refused = |result: Result<tonic::Response<proto::ActResponse>, Status>, why: &str| {
        let status = result.err().unwrap_or_else(|| panic!("accepted: {why}"));
        assert_eq!(status.code(), Code::AlreadyExists, "{why}: {status:?}");
        assert_eq!(reason(&status), "REQUEST_ID_REUSED", "{why}: {status:?}");
        status.message().to_owned()
    };
    let message = refused(
        client
            .act(with_token(act(&name, legal.version, "r1", other_action), mine))
            .await,
        "another action",
    );
    assert!(message.contains("\"r1\""), "{message}");
    refused(
        client
            .act(with_token(act(&name, legal.version, "r1", first_action), other))
            .await,
        "another seat",
    );
    refused(
        client
            .act(with_token(act(&name, first.version, "r1", first_action), mine))
            .await,
        "another version",
    );
    // The creation's request id is a request of the game too.
    refused(
        client
            .act(with_token(act(&name, legal.version, "reuse", first_action), mine))
            .await,
        "the creation's id",
    );
    // Nothing of that changed the game.
    let now = crate::support::legal(&mut client, &name).await;
    assert_eq!(now.version, first.version);
    server.stop().await;
}

fn new_table(players: usize) -> NewGame {
    NewGame::guests(
        Setup {
            rules: Rules::default(),
            players: (0..players).map(|i| format!("P{i}")).collect(),
            tiles: None,
            seed: Some(Seed::from_u64(11)),
            time_control: None,
        },
        0,
    )
}

/// A caller that gives up after its action is written (a client's deadline
/// drops the handler's future) leaves the game playable: the cache follows
/// the store, and a retry with the same request id gets the first answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_whose_caller_gave_up_still_becomes_the_cached_game() {
    let store = Arc::new(MemoryStore::new(Arc::new(SystemClock)));
    let games = Games::new(store, 16);
    let id = GameId::new("given-up").unwrap();
    let created = games
        .create(&id, &RequestId::new("create").unwrap(), new_table(2))
        .unwrap();
    let before = games.load(&id).unwrap();
    let seat = before.game.pending().player().unwrap();
    let token = created.token(usize::from(seat.0)).unwrap();
    let command = before.game.legal_commands()[0];
    let request = RequestId::new("gave-up").unwrap();
    let acting = games.act(&id, token, before.version, &request, &command).unwrap();
    let Acting::InFlight(written) = acting else {
        panic!("a new request id is not a retry")
    };
    // The caller gives up before the action is acknowledged.
    drop(written);

    let stored = games.store().game(&id).unwrap().unwrap().last_seq;
    assert!(stored > before.version, "the action was stored");
    let mut waited = 0;
    while games.load(&id).unwrap().version != stored {
        assert!(waited < 500, "the cache stayed at version {}", before.version);
        tokio::time::sleep(Duration::from_millis(10)).await;
        waited += 1;
    }

    // The retry gets the first answer...
    let Acting::Retried { first, asked } = games.act(&id, token, before.version, &request, &command).unwrap()
    else {
        panic!("a request id met before is a retry")
    };
    let appended = first.acknowledged().await.unwrap();
    let answer = games
        .answer(&id, appended.first_seq, appended.last_seq, &asked)
        .unwrap();
    assert_eq!(answer.loaded.version, stored);
    assert_eq!(answer.outcomes.first().map(|o| o.seq), Some(before.version + 1));
    // ... and the game plays on at the new version.
    let now = games.load(&id).unwrap();
    let seat = now.game.pending().player().unwrap();
    let next = now.game.legal_commands()[0];
    let acting = games
        .act(
            &id,
            created.token(usize::from(seat.0)).unwrap(),
            now.version,
            &RequestId::new("next").unwrap(),
            &next,
        )
        .unwrap();
    let Acting::InFlight(written) = acting else {
        panic!("a new request id is not a retry")
    };
    let Settled::Acted(acted) = games.settle(written).await.unwrap() else {
        panic!("nobody else used this request id")
    };
    assert!(acted.loaded.version > stored);
}

/// Two calls with one request id and different actions, lined up to
/// decide at the same moment, many times: exactly one acts, the other is
/// refused, and the cached game is always the stored one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_id_racing_with_two_actions_acts_once() {
    let store = Arc::new(MemoryStore::new(Arc::new(SystemClock)));
    let games = Arc::new(Games::new(store, 1000));
    for round in 0..1500 {
        let id = GameId::new(format!("race-{round}")).unwrap();
        let created = games
            .create(&id, &RequestId::new("create").unwrap(), new_table(2))
            .unwrap();
        let before = games.load(&id).unwrap();
        let seat = before.game.pending().player().unwrap();
        let token = created.token(usize::from(seat.0)).unwrap().to_owned();
        let commands = before.game.legal_commands();
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let mut racers = Vec::new();
        for racer in 0..2 {
            let (games, id, token, barrier) = (games.clone(), id.clone(), token.clone(), barrier.clone());
            let command = commands[racer % commands.len()];
            let version = before.version;
            racers.push(tokio::task::spawn_blocking(move || {
                barrier.wait();
                games.act(&id, &token, version, &RequestId::new("same").unwrap(), &command)
            }));
        }
        let mut acted = 0;
        for racer in racers {
            let answer = match racer.await.unwrap().unwrap() {
                Acting::InFlight(written) => match games.settle(written).await.unwrap() {
                    Settled::Acted(_) => Ok(()),
                    Settled::Retried { first, last, asked } => {
                        games.answer(&id, first, last, &asked).map(drop)
                    }
                    Settled::Duplicate => panic!("round {round}: a seat's action settled as the server's"),
                },
                Acting::Retried { first, asked } => {
                    let appended = first.acknowledged().await.unwrap();
                    games
                        .answer(&id, appended.first_seq, appended.last_seq, &asked)
                        .map(drop)
                }
                Acting::Late { error, .. } => {
                    panic!("round {round}: late in a game without a clock: {error}")
                }
            };
            match answer {
                Ok(()) => acted += 1,
                Err(error) => assert!(
                    matches!(error, carcassonne::api::status::ApiError::RequestIdReused(_)),
                    "round {round}: {error:?}"
                ),
            }
        }
        assert_eq!(acted, 1, "round {round}");
        let cached = games.load(&id).unwrap();
        let (stored, _) = games.history(&id, None).unwrap();
        let view = |l: &carcassonne::games::stored::Loaded| {
            carcassonne::api::view::game(&l.info, l.version as i64, &l.game, games.seed_reveal(&id, l))
        };
        assert_eq!(view(&cached), view(&stored), "round {round}");
    }
}

/// The same through a real client whose deadline is shorter than a disk
/// sync: whatever the deadline cut, the game plays on from what it shows,
/// without retrying the call that gave up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_deadline_never_wedges_a_game() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "deadline", 6).await;
    for step in 0..15 {
        let before = legal(&mut client, &name).await;
        let token = &tokens[before.pending.unwrap().seat as usize];
        let action = before.actions[step % before.actions.len()].action.unwrap();
        let mut hasty = with_token(
            act(&name, before.version, &format!("hasty-{step}"), action),
            token,
        );
        hasty.set_timeout(Duration::from_micros(500));
        let _ = client.act(hasty).await;
        // The game as it shows itself takes the next action, at once or
        // once the hasty action is durable.
        for attempt in 0.. {
            let now = legal(&mut client, &name).await;
            let token = &tokens[now.pending.unwrap().seat as usize];
            let action = now.actions[0].action.unwrap();
            let request = with_token(
                act(&name, now.version, &format!("next-{step}-{attempt}"), action),
                token,
            );
            match client.act(request).await {
                Ok(_) => break,
                Err(status) if status.code() == Code::Aborted && attempt < 100 => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(status) => panic!("step {step}: the game is stuck at {}: {status:?}", now.version),
            }
        }
    }
    server.stop().await;
}

/// Every out-of-range coordinate is INVALID_ARGUMENT, the extremes of
/// `int32` too (`i32::MIN.abs()` overflows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extreme_coordinates_are_invalid_arguments() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "coords", 2).await;
    let legal = legal(&mut client, &name).await;
    let token = &tokens[legal.pending.unwrap().seat as usize];
    for (x, y) in [
        (i32::MIN, 0),
        (0, i32::MIN),
        (i32::MAX, 0),
        (10_001, 0),
        (0, -10_001),
    ] {
        let place = A::PlaceTile(proto::PlaceTile {
            position: Some(proto::Position { x, y }),
            rotation: 0,
        });
        let status = client
            .act(with_token(act(&name, legal.version, "far", place), token))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "({x}, {y}): {status:?}");
        assert_eq!(
            status.get_error_details().error_info().unwrap().metadata["field"],
            "action.place_tile.position"
        );
    }
    server.stop().await;
}

/// What an error says about a client's input is a short quote, however
/// long the input: a long name or tile kind makes a short status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_quote_little_of_long_input() {
    let (server, mut client) = start().await;
    let status = client
        .get_game(proto::GetGameRequest {
            name: "x".repeat(900),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().len() < 200, "{}", status.message());
    assert!(
        status.details().len() < 400,
        "{} bytes of details",
        status.details().len()
    );

    let mut create = create_request("long-kind", 2, &[], 1);
    create.tiles = vec![proto::TileCount {
        kind: "K".repeat(3000),
        count: 1,
    }];
    let status = client.create_game(create).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().len() < 200, "{}", status.message());

    // Past the method's size limit, the request is refused before it is
    // read: a short RESOURCE_EXHAUSTED the client can read.
    let status = client
        .get_game(proto::GetGameRequest {
            name: format!("games/{}", "x".repeat(10_000)),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert_eq!(reason(&status), "REQUEST_TOO_LARGE", "{status:?}");
    assert!(status.message().contains("GetGame"), "{status:?}");
    server.stop().await;
}

/// Each method accepts what it can need and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_method_caps_its_request_size() {
    let (server, mut client) = start().await;
    // A creation with five names of 64 four-byte characters fits.
    let mut create = create_request("big-names", 5, &[], 1);
    create.players = (0..5).map(|_| "\u{1F600}".repeat(64)).collect();
    client.create_game(create).await.unwrap();
    // A read carrying 2 KB of unknown fields does not.
    let mut raw = prost::Message::encode_to_vec(&proto::GetGameRequest {
        name: "games/a".into(),
    });
    // Field 15, bytes, 2000 of them: an unknown field, decoded and dropped.
    raw.extend([0x7a, 0xd0, 0x0f]);
    raw.extend(std::iter::repeat_n(0u8, 2000));
    let status = raw_call(server.addr, "/carcassonne.v1.GameService/GetGame", &frame(&raw)).await;
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    assert_eq!(reason(&status), "REQUEST_TOO_LARGE", "{status:?}");
    assert_eq!(
        status.get_error_details().error_info().unwrap().metadata["limit"],
        carcassonne::server::request_limit("/carcassonne.v1.GameService/GetGame")
            .unwrap()
            .to_string()
    );
    // The same through the watch service, whose records may be large.
    let status = raw_call(
        server.addr,
        "/carcassonne.v1.WatchService/ExportGame",
        &frame(&raw),
    )
    .await;
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    server.stop().await;
}

/// A gRPC message frame: uncompressed, its length, its bytes.
fn frame(message: &[u8]) -> Vec<u8> {
    let mut framed = vec![0];
    framed.extend((message.len() as u32).to_be_bytes());
    framed.extend(message);
    framed
}

/// Sends `body` as is to `path` over HTTP/2, as a gRPC client would, and
/// returns the call's status.
async fn raw_call(addr: SocketAddr, path: &str, body: &[u8]) -> Status {
    use tower::ServiceExt as _;
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("http://{addr}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(tonic::body::Body::new(http_body_util::Full::new(
            prost::bytes::Bytes::copy_from_slice(body),
        )))
        .unwrap();
    let response = channel.oneshot(request).await.unwrap();
    if let Some(status) = Status::from_header_map(response.headers()) {
        return status;
    }
    let collected = response.into_body().collect().await.unwrap();
    Status::from_header_map(collected.trailers().expect("a status in the trailers")).unwrap()
}

/// Sends `body` to `path` as a grpc-web POST over HTTP/1.1, by hand, and
/// returns the status in the response's headers.
async fn grpc_web_call(addr: SocketAddr, path: &str, content_type: &str, body: &[u8]) -> Status {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-type: {content_type}\r\nx-grpc-web: 1\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response);
    let (head, _) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut headers = http::HeaderMap::new();
    for line in head.lines().skip(1) {
        let (name, value) = line.split_once(':').unwrap();
        headers.insert(
            http::HeaderName::from_bytes(name.trim().as_bytes()).unwrap(),
            value.trim().parse().unwrap(),
        );
    }
    Status::from_header_map(&headers).unwrap_or_else(|| panic!("no status in {head}"))
}

fn assert_malformed(status: &Status, what: &str) {
    assert_eq!(status.code(), Code::InvalidArgument, "{what}: {status:?}");
    assert_eq!(reason(status), "MALFORMED_REQUEST", "{what}: {status:?}");
}

/// A body that is no request of its method is the client's mistake:
/// INVALID_ARGUMENT with reason MALFORMED_REQUEST, never INTERNAL, over
/// HTTP/2 and over grpc-web alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_bodies_are_invalid_arguments() {
    let (server, _) = start().await;
    let get_game = "/carcassonne.v1.GameService/GetGame";
    // Field 1 (the name) as a string that is not UTF-8.
    let not_utf8 = frame(&[0x0a, 0x02, 0xff, 0xfe]);
    let cases: [(&str, Vec<u8>); 5] = [
        ("not protobuf", frame(&[0xff; 12])),
        ("not UTF-8", not_utf8.clone()),
        ("no message", Vec::new()),
        ("cut short", frame(&[0x0a, 0x05, b'g'])[..8].to_vec()),
        ("a bad compression flag", {
            let mut bad = frame(&[0x0a, 0x01, b'g']);
            bad[0] = 7;
            bad
        }),
    ];
    for (what, body) in &cases {
        let status = raw_call(server.addr, get_game, body).await;
        assert_malformed(&status, what);
    }
    // The same on a streaming method.
    let status = raw_call(server.addr, "/carcassonne.v1.WatchService/WatchGame", &not_utf8).await;
    assert_malformed(&status, "a stream's request");

    for (what, body) in &cases {
        let status = grpc_web_call(server.addr, get_game, "application/grpc-web+proto", body).await;
        assert_malformed(&status, &format!("grpc-web: {what}"));
    }
    let status = grpc_web_call(
        server.addr,
        get_game,
        "application/grpc-web-text",
        b"%%%not base64%%%",
    )
    .await;
    assert_malformed(&status, "grpc-web-text that is not base64");

    // A well-formed request still works over grpc-web.
    let good = prost::Message::encode_to_vec(&proto::GetGameRequest {
        name: "games/none".into(),
    });
    let status = grpc_web_call(server.addr, get_game, "application/grpc-web+proto", &frame(&good)).await;
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    server.stop().await;
}

/// `serve` on a data directory another server holds says so once, plainly;
/// its log names its address plainly and has no colour codes in a file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_data_says_once_that_it_is_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let first = serve(&data, &dir.path().join("first.log"), &[]).unwrap();
    let addr = first.addr.strip_prefix("http://").unwrap().to_owned();

    let second = std::process::Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["serve", "--addr", "127.0.0.1:0", "--data", data.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.matches("in use by another server").count(), 1, "{stderr}");
    assert!(!stderr.contains("could not acquire lock"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");

    let (status, logged) = first.terminate();
    assert_eq!(status.code(), Some(0));
    assert!(logged.contains(&format!("addr={addr} ")), "{logged}");
    assert!(!logged.contains("Some("), "{logged}");
    assert!(!logged.contains('\u{1b}'), "colour codes in a file: {logged:?}");
}

/// Request ids are 1 to 128 characters from '!' to '~', not beginning with
/// '~', and the error says exactly that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_request_id_is_told_the_exact_rule() {
    let (server, mut client) = start().await;
    for bad in ["with space", "", "é", &"x".repeat(129)] {
        let status = client
            .create_game(create_request(bad, 2, &[], 1))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{bad:?}: {status:?}");
        assert!(
            status
                .message()
                .contains("must be 1 to 128 ASCII characters from '!' to '~' (no spaces)"),
            "{status:?}"
        );
    }
    // Ids beginning with '~' are the server's own (its timeouts, T-5): a
    // client's could otherwise pass for one and keep a timeout from being
    // stored.
    let status = client
        .create_game(create_request("~timeout/3", 2, &[], 1))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(
        status
            .message()
            .contains("beginning with '~' are the server's own"),
        "{status:?}"
    );
    client
        .create_game(create_request(&"!~".repeat(64), 2, &[], 1))
        .await
        .unwrap();
    server.stop().await;
}
