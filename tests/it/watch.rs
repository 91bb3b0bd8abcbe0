//! Watching, replaying and auditing games against a real server.

use carcassonne::proto::watch_service_client::WatchServiceClient;
use carcassonne::proto::{self, watch_game_response::Message as W};
use tokio_stream::StreamExt as _;

use crate::support::{
    act_legal, create, delayed_request, export_request, game, game_at, legal_as, play, play_to_end, read_all,
    replay, replay_request, server_changes, snapshot, start, watch, watch_request, with_token,
};

/// The seed of this module's games.
const SEED: u8 = 11;

/// A watch with keep-alives every second.
fn keeping_alive(name: &str, from: Option<i64>) -> proto::WatchGameRequest {
    proto::WatchGameRequest {
        keep_alive_ms: 1000,
        ..watch_request(name, from)
    }
}

fn versions(events: &[proto::WatchedEvent]) -> Vec<i64> {
    events.iter().map(|e| e.event.as_ref().unwrap().version).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_get_every_event_once_in_order_live_and_after_reconnecting() {
    let (server, mut client) = start().await;
    let (name, tokens) = create(&mut client, delayed_request("watched", 0, &[], SEED)).await;
    let mut w = server.watcher().await;
    // 200 watchers from before the first move, and one that reconnects.
    let mut watchers = Vec::new();
    for _ in 0..200 {
        let stream = watch(&mut w, keeping_alive(&name, Some(2))).await;
        watchers.push(tokio::spawn(read_all(stream)));
    }
    let reconnecting = {
        let (mut w, name) = (w.clone(), name.clone());
        tokio::spawn(async move {
            let mut seen: Vec<i64> = Vec::new();
            let mut from = 2;
            let mut chunk = 1;
            loop {
                let mut stream = watch(&mut w, keeping_alive(&name, Some(from))).await;
                let mut taken = 0;
                let mut ended = true;
                while let Some(message) = stream.next().await {
                    match message.unwrap().message.unwrap() {
                        W::Snapshot(game) => assert_eq!(game.version, from),
                        W::Event(event) => {
                            let v = event.event.unwrap().version;
                            seen.push(v);
                            from = v;
                            taken += 1;
                            // Hang up after a varying number of events.
                            if taken == chunk {
                                ended = false;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if ended {
                    return seen;
                }
                chunk = chunk % 7 + 1;
            }
        })
    };
    let done = play_to_end(&mut client, &name, &tokens).await;
    let expected: Vec<i64> = (3..=done.version).collect();
    for watcher in watchers {
        let (snapshot, events) = watcher.await.unwrap();
        assert_eq!(snapshot, 2);
        assert_eq!(versions(&events), expected);
        let last = events.last().unwrap();
        assert!(last.event.as_ref().unwrap().finished);
        assert_eq!(
            last.scores,
            done.players.iter().map(|p| p.score).collect::<Vec<_>>()
        );
    }
    assert_eq!(
        reconnecting.await.unwrap(),
        expected,
        "a reconnecting watcher misses nothing and sees nothing twice"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_equals_the_live_stream_and_every_state_equals_its_seek() {
    let (server, mut client) = start().await;
    let expansions = [proto::Expansion::River, proto::Expansion::Count];
    let (name, tokens) = create(&mut client, delayed_request("replayed", 0, &expansions, SEED)).await;
    let mut w = server.watcher().await;
    let live = tokio::spawn(read_all(watch(&mut w, watch_request(&name, Some(1))).await));
    let done = play_to_end(&mut client, &name, &tokens).await;
    let (_, live) = live.await.unwrap();
    let steps = replay(&mut w, replay_request(&name, Some(1), None)).await;
    assert_eq!(steps.len(), live.len());
    let kind = |game: &proto::Game| game.pending.as_ref().unwrap().kind();
    // At the creation, the game waits for the server's first draw.
    let created = game_at(&mut w, &name, 1).await.unwrap();
    assert_eq!(kind(&created), proto::DecisionKind::Draw);
    let mut draws = 0;
    for (step, watched) in steps.iter().zip(&live) {
        assert_eq!(step.event, watched.event, "the replay equals the live stream");
        let game = step.game.clone().unwrap();
        assert_eq!(game.pending, watched.pending);
        // A running game always waits for a decision; only a finished one
        // has none.
        let finished = game.status == proto::GameStatus::Finished as i32;
        assert_eq!(
            kind(&game) == proto::DecisionKind::Unspecified,
            finished,
            "at version {}: {:?}",
            game.version,
            game.pending
        );
        draws += usize::from(kind(&game) == proto::DecisionKind::Draw);
        // Seeking to the step's version gives the step's state.
        let seek = game_at(&mut w, &name, game.version).await.unwrap();
        assert_eq!(seek, game);
        // What was public then: the seed only once the game was over.
        assert_eq!(
            game.seed.is_empty(),
            game.status != proto::GameStatus::Finished as i32
        );
    }
    assert!(draws > 10, "a draw follows every turn's follower decision");
    assert_eq!(steps.last().unwrap().game.as_ref().unwrap(), &done);
    // Paced replay: one step per interval.
    let started = std::time::Instant::now();
    let paced = proto::ReplayGameRequest {
        interval_ms: 50,
        ..replay_request(&name, Some(1), Some(5))
    };
    assert_eq!(replay(&mut w, paced).await.len(), 4);
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_see_a_running_game_n_events_behind_and_all_of_it_at_the_end() {
    let (server, mut client) = start().await;
    let (name, tokens) = create(&mut client, delayed_request("delayed", 5, &[], SEED)).await;
    // Play some moves.
    play(&mut client, &name, &tokens, 12).await;
    let player = client
        .get_game(with_token(
            proto::GetGameRequest { name: name.clone() },
            &tokens[1],
        ))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let spectator = game(&mut client, &name).await;
    assert_eq!(spectator.version, player.version - 5);
    let mut w = server.watcher().await;
    let mut stream = watch(&mut w, watch_request(&name, None)).await;
    assert_eq!(snapshot(&mut stream).await.version, player.version - 5);
    let status = game_at(&mut w, &name, player.version).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    let done = play_to_end(&mut client, &name, &tokens).await;
    let (_, rest) = read_all(stream).await;
    assert_eq!(
        rest.last().unwrap().event.as_ref().unwrap().version,
        done.version,
        "everything once it ends"
    );
    assert_eq!(game(&mut client, &name).await, done);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exports_verify_and_tampering_is_found_at_the_first_bad_event() {
    let (server, mut client) = start().await;
    let (name, tokens) = create(
        &mut client,
        delayed_request("audited", 0, &[proto::Expansion::Count], SEED),
    )
    .await;
    let commitment = game(&mut client, &name).await.seed_sha256;
    let done = play_to_end(&mut client, &name, &tokens).await;
    let mut w = server.watcher().await;
    let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
    let scores: Vec<u32> = done.players.iter().map(|p| p.score).collect();
    // The record re-scores the same with `carcassonne verify`.
    let verified = crate::cli::run_verify(&export.record_json);
    assert!(verified.starts_with("ok:"), "{verified}");
    assert!(verified.contains(&format!("{scores:?}")), "{verified}");
    // And through the API, with its event log and seed.
    let request = proto::VerifyGameRequest {
        record_json: export.record_json.clone(),
        events: export.events.clone(),
        seed: export.seed.clone(),
        name: name.clone(),
        seed_sha256: commitment.clone(),
    };
    let answer = w.verify_game(request.clone()).await.unwrap().into_inner();
    assert!(answer.ok, "{answer:?}");
    assert_eq!(answer.scores, scores);
    // The seed hashes to the commitment shown from the start.
    let seed: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&export.seed[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    assert_eq!(
        carcassonne::games::auth::seed_commitment(&seed.try_into().unwrap()),
        commitment
    );
    // One event changed: found at that event.
    let mut tampered = request.clone();
    tampered.events[9].payload = proto_tamper(&tampered.events[9].payload);
    let answer = w.verify_game(tampered).await.unwrap().into_inner();
    assert!(!answer.ok);
    assert_eq!(answer.at, 10, "{answer:?}");
    // An event whose hash was overwritten no longer matches its content
    // (a recomputed one breaks the chain after it: `reads.rs`).
    let mut overwritten = request.clone();
    overwritten.events[9].hash = "00".repeat(32);
    let answer = w.verify_game(overwritten).await.unwrap().into_inner();
    assert!(!answer.ok);
    assert_eq!(answer.at, 10, "{answer:?}");
    // Another seed does not pass.
    let mut wrong_seed = request.clone();
    wrong_seed.seed = "11".repeat(32);
    let answer = w.verify_game(wrong_seed).await.unwrap().into_inner();
    assert!(!answer.ok && answer.error.contains("seed"), "{answer:?}");
    // A tampered record: found at its turn.
    let mut record: serde_json::Value = serde_json::from_str(&export.record_json).unwrap();
    record["turns"][5]["x"] = serde_json::json!(record["turns"][5]["x"].as_i64().unwrap() + 50);
    let answer = w
        .verify_game(proto::VerifyGameRequest {
            record_json: record.to_string(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.ok);
    assert_eq!((answer.at, answer.rule.as_str()), (5, "B-T1"), "{answer:?}");
    server.stop().await;
}

/// Changes one byte of a payload.
fn proto_tamper(payload: &[u8]) -> Vec<u8> {
    let mut changed = payload.to_vec();
    let last = changed.len() - 1;
    changed[last] ^= 1;
    changed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_stream_shows_games_created_started_and_finished() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let (name, tokens) = create(&mut client, delayed_request("lobby", 0, &[], SEED)).await;
    play_to_end(&mut client, &name, &tokens).await;
    let changes: Vec<_> = server_changes(&mut w)
        .await
        .into_iter()
        .take(3)
        .map(|e| (e.name, e.change))
        .collect();
    use proto::GameChange as C;
    assert_eq!(
        changes,
        vec![
            (name.clone(), C::Created as i32),
            (name.clone(), C::Started as i32),
            (name, C::Finished as i32)
        ]
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_watcher_is_told_it_fell_behind_and_resumes_without_a_gap() {
    let dir = tempfile::tempdir().unwrap();
    // A small broadcast buffer, so that a watcher that stops reading lags.
    let mut config = carcassonne::server::ServerConfig {
        data: dir.path().to_owned(),
        ..Default::default()
    };
    config.store.subscription_capacity = 4;
    let server = crate::support::TestServer::start_with(config).await;
    let mut client = server.client().await;
    let (name, tokens) = create(&mut client, delayed_request("slow", 0, &[], SEED)).await;
    let mut w = server.watcher().await;
    // A client that reads little at a time: small HTTP/2 windows.
    let narrow = tonic::transport::Endpoint::from_shared(server.url())
        .unwrap()
        .initial_stream_window_size(Some(1024))
        .initial_connection_window_size(Some(1024))
        .connect()
        .await
        .unwrap();
    let mut slow = watch(
        &mut WatchServiceClient::new(narrow),
        watch_request(&name, Some(2)),
    )
    .await;
    // The slow watcher reads only its snapshot, then nothing while the
    // game is played: the game does not wait for it.
    snapshot(&mut slow).await;
    let started = std::time::Instant::now();
    let done = play_to_end(&mut client, &name, &tokens).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    // Now it reads: events in order, then the news that it fell behind.
    let mut seen: Vec<i64> = Vec::new();
    let mut fell_behind = None;
    while let Some(message) = slow.next().await {
        match message.unwrap().message.unwrap() {
            W::Event(e) => seen.push(e.event.unwrap().version),
            W::FellBehind(v) => fell_behind = Some(v),
            _ => {}
        }
    }
    let resume = fell_behind.expect("told it fell behind");
    assert_eq!(seen, (3..=resume).collect::<Vec<_>>());
    // It resumes from its version and misses nothing.
    let (snapshot, rest) = read_all(watch(&mut w, watch_request(&name, Some(resume))).await).await;
    assert_eq!(snapshot, resume);
    assert_eq!(versions(&rest), (resume + 1..=done.version).collect::<Vec<_>>());
    server.stop().await;
}

/// The server stream's changes, with their positions, from before a game
/// with `spectator_delay` is created until it is announced finished,
/// played to its end meanwhile.
async fn server_changes_of_one_game(request_id: &str, spectator_delay: u32) -> Vec<(i64, i32)> {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    // From now on, before the game exists.
    let mut stream = w
        .watch_server(proto::WatchServerRequest {
            from_position: None,
            keep_alive_ms: 30_000,
        })
        .await
        .unwrap()
        .into_inner();
    let request = delayed_request(request_id, spectator_delay, &[], SEED);
    let (name, tokens) = create(&mut client, request).await;
    play_to_end(&mut client, &name, &tokens).await;
    let mut changes = Vec::new();
    while changes.last().map(|&(_, c)| c) != Some(proto::GameChange::Finished as i32) {
        match stream.next().await.unwrap().unwrap().message.unwrap() {
            proto::watch_server_response::Message::Event(e) => changes.push((e.position, e.change)),
            other => panic!("{other:?}"),
        }
    }
    server.stop().await;
    changes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_server_stream_sees_a_game_created_started_and_finished() {
    let changes = server_changes_of_one_game("live-lobby", 0).await;
    let kinds: Vec<i32> = changes.iter().map(|&(_, c)| c).collect();
    use proto::GameChange as C;
    assert_eq!(
        kinds,
        vec![C::Created as i32, C::Started as i32, C::Finished as i32]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_that_ends_before_its_start_may_be_seen_is_announced_once_per_position() {
    // Longer than the game: its start is never visible while it runs.
    let changes = server_changes_of_one_game("early-end", 1000).await;
    let kinds: Vec<i32> = changes.iter().map(|&(_, c)| c).collect();
    use proto::GameChange as C;
    assert_eq!(kinds, vec![C::Created as i32, C::Finished as i32]);
    // Resuming after any change's position misses none of the later ones.
    assert!(changes.windows(2).all(|w| w[0].0 < w[1].0), "{changes:?}");
}

/// Reads the version, then takes a varied legal action, `actions + 1`
/// times at most (none for 0); returns the last version read.
async fn play_some(
    client: &mut carcassonne::proto::game_service_client::GameServiceClient<tonic::transport::Channel>,
    name: &str,
    tokens: &[String],
    actions: usize,
) -> i64 {
    let mut version = 0;
    for _ in 0..=actions {
        let legal = legal_as(client, name, &tokens[0]).await;
        version = legal.version;
        if legal.pending.as_ref().unwrap().kind == proto::DecisionKind::Unspecified as i32 || actions == 0 {
            break;
        }
        act_legal(client, name, tokens, &legal, version as usize).await;
    }
    version
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watchers_joining_at_any_version_while_the_game_runs_see_every_event_once() {
    let (server, mut client) = start().await;
    let delay = 3;
    let (name, tokens) = create(&mut client, delayed_request("joined", delay, &[], SEED)).await;
    let w = server.watcher().await;
    // `None`: from now.
    let join = |from: Option<i64>, token: Option<&String>| {
        let mut w = w.clone();
        let request = match token {
            Some(token) => with_token(watch_request(&name, from), token),
            None => tonic::Request::new(watch_request(&name, from)),
        };
        async move { watch(&mut w, request).await }
    };
    // Between actions, and while one runs, watchers join: players and
    // spectators, from now and from earlier versions.
    let mut readers = Vec::new();
    let mut version = play_some(&mut client, &name, &tokens, 0).await;
    for round in 0.. {
        let spectator_sees = (version - i64::from(delay)).max(1);
        let token = &tokens[round % 2];
        let streams = [
            join(None, Some(token)).await,
            join(None, None).await,
            join(Some((version - 5).max(1)), Some(token)).await,
            join(Some((spectator_sees - 4).max(1)), None).await,
        ];
        for stream in streams {
            readers.push(tokio::spawn(read_all(stream)));
        }
        // One more that joins while an action is being taken.
        let (racing, after) = tokio::join!(
            join(None, None),
            play_some(&mut client, &name, &tokens, 1 + round % 3)
        );
        readers.push(tokio::spawn(read_all(racing)));
        if after == version {
            break;
        }
        version = after;
    }
    assert!(readers.len() > 100, "{} watchers", readers.len());
    for reader in readers {
        let (snapshot, events) = reader.await.unwrap();
        assert!(snapshot >= 1);
        assert_eq!(
            versions(&events),
            (snapshot + 1..=version).collect::<Vec<_>>(),
            "from {snapshot}: every event once, in order, to the end"
        );
        // Ends with the last event, or joined after it (the snapshot says so).
        assert!(events.last().is_none_or(|e| e.event.as_ref().unwrap().finished));
    }
    // A game that is over: from its last version, the snapshot says so and
    // the stream ends; from an earlier one, the rest follows.
    let (snapshot, events) = read_all(join(None, None).await).await;
    assert_eq!((snapshot, events.len()), (version, 0));
    let (_, events) = read_all(join(Some(version - 4), None).await).await;
    assert_eq!(versions(&events), (version - 3..=version).collect::<Vec<_>>());
    // The stream of a game still running ends when the server stops.
    let (running, _) = create(&mut client, delayed_request("left-running", 0, &[], SEED)).await;
    let open = tokio::spawn(read_all(
        watch(&mut w.clone(), watch_request(&running, None)).await,
    ));
    server.stop().await;
    let (snapshot, events) = open.await.unwrap();
    assert_eq!((snapshot, events.len()), (2, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_stream_starts_by_one_rule_unset_is_now_and_n_is_after_n() {
    let (server, mut client) = start().await;
    let (name, _) = create(&mut client, delayed_request("starts", 0, &[], SEED)).await;
    let mut w = server.watcher().await;
    let field = |status: &tonic::Status| {
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        status.message().split(':').next().unwrap_or_default().to_owned()
    };
    // Unset: now. The creation and its first draw: version 2.
    let mut now = watch(&mut w, watch_request(&name, None)).await;
    assert_eq!(snapshot(&mut now).await.version, 2);
    // 1, the creation, is the earliest start of a game's stream; 0 is no
    // version of a game.
    let status = w.watch_game(watch_request(&name, Some(0))).await.unwrap_err();
    assert_eq!(field(&status), "from_version");
    let status = w
        .replay_game(replay_request(&name, None, None))
        .await
        .unwrap_err();
    assert_eq!(field(&status), "from_version");
    let mut whole = w
        .replay_game(replay_request(&name, Some(1), None))
        .await
        .unwrap()
        .into_inner();
    let first = whole.next().await.unwrap().unwrap();
    assert_eq!(
        first.event.unwrap().version,
        2,
        "the first draw follows the creation"
    );
    // Positions: 0 is the store's beginning, negatives are refused.
    let mut lobby = w
        .watch_server(proto::WatchServerRequest {
            from_position: Some(0),
            keep_alive_ms: 0,
        })
        .await
        .unwrap()
        .into_inner();
    let Some(Ok(proto::WatchServerResponse {
        message: Some(proto::watch_server_response::Message::Event(created)),
    })) = lobby.next().await
    else {
        panic!("no creation")
    };
    assert_eq!(
        (created.name.as_str(), created.change, created.version),
        (name.as_str(), proto::GameChange::Created as i32, 1),
        "a game is created at version 1"
    );
    let status = w
        .watch_server(proto::WatchServerRequest {
            from_position: Some(-1),
            keep_alive_ms: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(field(&status), "from_position");
    // Durations are milliseconds, at least a second between keep-alives.
    let status = w
        .watch_server(proto::WatchServerRequest {
            from_position: None,
            keep_alive_ms: 999,
        })
        .await
        .unwrap_err();
    assert_eq!(field(&status), "keep_alive_ms");
    server.stop().await;
}
