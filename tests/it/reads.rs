//! Every read path shows a game the same way: the spectator delay on all of
//! them, exports of running games that verify as games in progress, and
//! audits that check a log against the commitment players were shown.

use carcassonne::proto;

use crate::support::{
    create, delayed_request, export_request, game, game_at, legal, legal_as, play_step, play_to_end, rechain,
    replay, replay_request, server_changes, snapshot, start, watch, watch_request, with_token,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_path_shows_a_spectator_the_same_delayed_game() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let delay = 4;
    let (name, tokens) = create(&mut client, delayed_request("delayed-reads", delay, &[], 3)).await;
    // One action: the game started, but spectators cannot see that yet.
    assert!(play_step(&mut client, &name, &tokens, 0).await.is_some());
    let changes = server_changes(&mut w).await;
    let ours: Vec<i32> = changes
        .iter()
        .filter(|c| c.name == name)
        .map(|c| c.change)
        .collect();
    assert_eq!(
        ours,
        vec![proto::GameChange::Created as i32],
        "the server stream does not tell spectators of a move they cannot see yet"
    );
    // The player's exports, by version, to compare the spectator's with.
    let mut player_exports = std::collections::HashMap::new();
    for n in 1..15 {
        let version = legal_as(&mut client, &name, &tokens[0]).await.version;
        let export = w
            .export_game(with_token(export_request(&name), &tokens[0]))
            .await
            .unwrap()
            .into_inner();
        player_exports.insert(version, export.record_json);
        assert!(play_step(&mut client, &name, &tokens, n).await.is_some());
    }
    let head = legal_as(&mut client, &name, &tokens[0]).await.version;
    // GetGame without a token: the version every other path must show.
    let game = game(&mut client, &name).await;
    let visible = game.version;
    assert_eq!(visible, head - i64::from(delay));
    // ListGames.
    let listed = client
        .list_games(proto::ListGamesRequest::default())
        .await
        .unwrap()
        .into_inner();
    let listed = listed.games.iter().find(|g| g.name == name).expect("listed");
    assert_eq!(listed, &game, "ListGames shows what GetGame shows");
    // GetLegalActions.
    let legal = legal(&mut client, &name).await;
    assert_eq!((legal.version, legal.pending), (visible, game.pending.clone()));
    // WatchGame: from now (unset), and from the visible version but no later.
    let beyond = w
        .watch_game(watch_request(&name, Some(visible + 1)))
        .await
        .unwrap_err();
    assert_eq!(beyond.code(), tonic::Code::InvalidArgument);
    for from in [Some(visible), None] {
        let mut stream = watch(&mut w, watch_request(&name, from)).await;
        assert_eq!(snapshot(&mut stream).await, game, "from {from:?}");
    }
    // ReplayGame: to now (unset) and to the visible version, but no later.
    let beyond = w
        .replay_game(replay_request(&name, Some(1), Some(visible + 1)))
        .await
        .unwrap_err();
    assert_eq!(beyond.code(), tonic::Code::InvalidArgument);
    for to_version in [None, Some(visible)] {
        let steps = replay(&mut w, replay_request(&name, Some(1), to_version)).await;
        let last = steps.last().and_then(|step| step.game.as_ref());
        assert_eq!(last, Some(&game), "to_version {to_version:?}");
    }
    // GetGameAtVersion: the visible version, and nothing after it.
    assert_eq!(game_at(&mut w, &name, visible).await.unwrap(), game);
    let beyond = game_at(&mut w, &name, visible + 1).await.unwrap_err();
    assert_eq!(beyond.code(), tonic::Code::InvalidArgument);
    // ExportGame: what the player's export said at the visible version.
    let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
    assert_eq!(Some(&export.record_json), player_exports.get(&visible));
    // The server stream says the game started once spectators see its
    // first action, with that action's version.
    let changes = server_changes(&mut w).await;
    let started: Vec<_> = changes
        .iter()
        .filter(|c| c.name == name && c.change == proto::GameChange::Started as i32)
        .collect();
    assert_eq!(started.len(), 1, "{changes:?}");
    assert!(started[0].version <= visible, "{changes:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_at_every_version_of_a_running_game_verifies_as_in_progress() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let delay = 3;
    let expansions = [proto::Expansion::River, proto::Expansion::Count];
    let (name, tokens) = create(
        &mut client,
        delayed_request("exported-running", delay, &expansions, 5),
    )
    .await;
    let mut player_exports = std::collections::HashMap::new();
    let mut kinds_checked_offline = std::collections::HashSet::new();
    for n in 0.. {
        let legal = legal_as(&mut client, &name, &tokens[0]).await;
        if legal.actions.is_empty() {
            break;
        }
        let kind = legal.pending.unwrap().kind;
        let export = w
            .export_game(with_token(export_request(&name), &tokens[0]))
            .await
            .unwrap()
            .into_inner();
        let answer = w
            .verify_game(proto::VerifyGameRequest {
                record_json: export.record_json.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(
            answer.ok && !answer.finished,
            "version {} ({kind}): {answer:?}\n{}",
            legal.version,
            export.record_json
        );
        // `carcassonne verify` once per kind of decision (a process each).
        if kinds_checked_offline.insert(kind) {
            let verified = crate::cli::run_verify(&export.record_json);
            assert!(
                verified.starts_with("ok:") && verified.contains("in progress"),
                "version {} ({kind}): {verified}",
                legal.version
            );
        }
        // A spectator's export is the player's of `delay` versions ago: no
        // draw it may not see yet.
        let spectator = w.export_game(export_request(&name)).await.unwrap().into_inner();
        if let Some(then) = player_exports.get(&(legal.version - i64::from(delay))) {
            assert_eq!(&spectator.record_json, then, "version {}", legal.version);
        }
        player_exports.insert(legal.version, export.record_json);
        assert!(play_step(&mut client, &name, &tokens, n).await.is_some());
    }
    use proto::DecisionKind as K;
    // The Count's final round: the last tile is placed, the game runs on.
    for kind in [K::PlaceTile, K::PlaceFollower, K::FinalRound] {
        assert!(
            kinds_checked_offline.contains(&(kind as i32)),
            "{kind:?} never came: {kinds_checked_offline:?}"
        );
    }
    // Once over, it verifies as finished.
    let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
    let verified = crate::cli::run_verify(&export.record_json);
    assert!(verified.contains("finished"), "{verified}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_audit_checks_the_log_against_the_commitment_and_the_record_move_by_move() {
    let (server, mut client) = start().await;
    let mut w = server.watcher().await;
    let (name, tokens) = create(&mut client, delayed_request("audited-game", 0, &[], 21)).await;
    let shown = game(&mut client, &name).await.seed_sha256;
    play_to_end(&mut client, &name, &tokens).await;
    let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
    let request = proto::VerifyGameRequest {
        record_json: export.record_json.clone(),
        events: export.events.clone(),
        seed: export.seed.clone(),
        name: name.clone(),
        seed_sha256: shown.clone(),
    };
    let answer = w.verify_game(request.clone()).await.unwrap().into_inner();
    assert!(
        answer.ok && answer.finished && answer.commitment_checked,
        "{answer:?}"
    );
    // Without a commitment in the request, none is checked, and the answer
    // says so: the server's own would be computed from the seed it checks.
    let unbound = proto::VerifyGameRequest {
        seed_sha256: String::new(),
        ..request.clone()
    };
    let answer = w.verify_game(unbound.clone()).await.unwrap().into_inner();
    assert!(answer.ok && !answer.commitment_checked, "{answer:?}");
    // A forged log: another game, played with another seed, moved to this
    // game's name with every hash recomputed, and its own record and seed.
    // Only the commitment the players were shown finds it out.
    let (other, other_tokens) = create(&mut client, delayed_request("forger", 0, &[], 22)).await;
    play_to_end(&mut client, &other, &other_tokens).await;
    let forged = w.export_game(export_request(&other)).await.unwrap().into_inner();
    let forged = proto::VerifyGameRequest {
        record_json: forged.record_json,
        events: rechain(&forged.events, &name),
        seed: forged.seed,
        name: name.clone(),
        seed_sha256: shown.clone(),
    };
    let answer = w.verify_game(forged.clone()).await.unwrap().into_inner();
    assert!(!answer.ok && answer.error.contains("commitment"), "{answer:?}");
    assert_eq!(answer.at, 2);
    // Without the commitment it checks out, and the answer says the
    // commitment was not checked.
    let answer = w
        .verify_game(proto::VerifyGameRequest {
            seed_sha256: String::new(),
            ..forged.clone()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(answer.ok && !answer.commitment_checked, "{answer:?}");
    // The forgery checks out against its own commitment: the chain, the
    // rules and the seed are all consistent, so the test forged well.
    let seed: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&forged.seed[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let own = proto::VerifyGameRequest {
        seed_sha256: carcassonne::games::auth::seed_commitment(&seed.try_into().unwrap()),
        ..forged
    };
    let answer = w.verify_game(own).await.unwrap().into_inner();
    assert!(answer.ok, "{answer:?}");
    // A changed event whose hash was recomputed breaks the chain after it.
    let mut rechained = request.clone();
    rechained.events[9].payload[0] ^= 1;
    let tampered = rechain(&rechained.events[..10], &name);
    rechained.events[9] = tampered[9].clone();
    let answer = w.verify_game(rechained).await.unwrap().into_inner();
    assert!(!answer.ok, "{answer:?}");
    assert_eq!(answer.at, 11, "{answer:?}");
    assert!(answer.error.contains("chain"), "{answer:?}");
    // A record that differs from the log in one move, legal on its own
    // (a follower left out, no score claimed): found at that turn.
    let mut record: serde_json::Value = serde_json::from_str(&export.record_json).unwrap();
    let turns = record["turns"].as_array_mut().unwrap();
    let changed = turns
        .iter()
        .rposition(|t| t.get("follower").is_some())
        .expect("a turn with a follower");
    turns[changed].as_object_mut().unwrap().remove("follower");
    record.as_object_mut().unwrap().remove("final_scores");
    let alone = crate::cli::run_verify(&record.to_string());
    assert!(alone.starts_with("ok:"), "the changed record is legal: {alone}");
    let answer = w
        .verify_game(proto::VerifyGameRequest {
            record_json: record.to_string(),
            ..request.clone()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(!answer.ok, "{answer:?}");
    assert_eq!(answer.at, changed as i64, "{answer:?}");
    server.stop().await;
}
