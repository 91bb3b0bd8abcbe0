//! Records of clocked games on the server: a game with a resignation and a
//! timeout exports a record that says when each decision was taken and how
//! the game ended, and that record verifies through VerifyGame (with and
//! against the event log) and through `carcassonne verify`; an event log
//! whose timeout was moved before its deadline is found out.

use std::sync::Arc;
use std::time::Duration;

use carcassonne::proto::{self, action::Action as A};
use carcassonne_engine::record::{Interruption, Record};
use carcassonne_engine::{Ending, Seat};
use carcassonne_store::ManualClock;
use tonic::transport::Channel;

use crate::support::{
    TestServer, act, create, create_request, export_request, game, legal_as, play_step, rechain, with_token,
};

/// 2025-12-02, in ms since the Unix epoch: the server's clock at the start.
const T0: u64 = 1_764_650_000_000;
const MINUTE_MS: u32 = 60_000;

/// A server whose clock moves only when the test moves it.
async fn clocked_server() -> (TestServer, Arc<ManualClock>) {
    TestServer::start_clocked(T0).await
}

/// Three seats, a minute each and a second's increment, `forfeit`.
fn clocked_request(request_id: &str) -> proto::CreateGameRequest {
    proto::CreateGameRequest {
        time_control: Some(proto::TimeControl {
            main_ms: MINUTE_MS,
            increment_ms: 1_000,
            decision_ms: 0,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
        }),
        ..create_request(request_id, 3, &[], 9)
    }
}

/// Plays `steps` legal actions, each `think_ms` after the one before.
async fn play_timed(
    client: &mut proto::game_service_client::GameServiceClient<Channel>,
    clock: &ManualClock,
    name: &str,
    tokens: &[String],
    steps: std::ops::Range<usize>,
    think_ms: u64,
) {
    for step in steps {
        clock.advance(think_ms);
        assert!(
            play_step(client, name, tokens, step).await.is_some(),
            "step {step}"
        );
    }
}

/// Waits until the game is over (the timekeeper stores timeouts on its own
/// task).
async fn until_finished(
    client: &mut proto::game_service_client::GameServiceClient<Channel>,
    name: &str,
) -> proto::Game {
    for _ in 0..500 {
        let game = game(client, name).await;
        if game.status == proto::GameStatus::Finished as i32 {
            return game;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name} did not end");
}

/// A finished three-seat game: seat `resigned` resigned while another seat
/// decided, and later the seat the game waited for let its clock run out.
struct Ended {
    server: TestServer,
    name: String,
    shown_seed_sha256: String,
    export: proto::ExportGameResponse,
    resigned: u8,
    timed_out: u8,
}

async fn a_game_ended_by_a_resignation_and_a_timeout(request_id: &str) -> Ended {
    let (server, clock) = clocked_server().await;
    let mut client = server.client().await;
    let mut w = server.watcher().await;
    let (name, tokens) = create(&mut client, clocked_request(request_id)).await;
    play_timed(&mut client, &clock, &name, &tokens, 0..7, 1_500).await;

    // A seat that does not owe the pending decision resigns.
    let legal = legal_as(&mut client, &name, &tokens[0]).await;
    let pending = legal.pending.unwrap().seat as u8;
    let resigned = (pending + 1) % 3;
    clock.advance(700);
    let resign = act(&name, legal.version, "resign", A::Resign(proto::Resign {}));
    client
        .act(with_token(resign, &tokens[usize::from(resigned)]))
        .await
        .unwrap();
    // The running game's export ends with its last complete turn: the
    // resignation came after the draw of the turn being played.
    let running = w.export_game(export_request(&name)).await.unwrap().into_inner();
    let record = Record::parse(&running.record_json).unwrap();
    assert!(
        !timeline_has(&record, Interruption::Resign(Seat(resigned))),
        "{}",
        running.record_json
    );
    let replay = record
        .verify()
        .unwrap_or_else(|e| panic!("{e}\n{}", running.record_json));
    assert!(!replay.game.is_finished());

    play_timed(&mut client, &clock, &name, &tokens, 7..12, 2_000).await;
    let running = w.export_game(export_request(&name)).await.unwrap().into_inner();
    let record = Record::parse(&running.record_json).unwrap();
    assert!(
        timeline_has(&record, Interruption::Resign(Seat(resigned))),
        "{}",
        running.record_json
    );
    record.verify().unwrap();

    // The seat the game waits for thinks past its deadline.
    let legal = legal_as(&mut client, &name, &tokens[0]).await;
    let pending = legal.pending.unwrap();
    let timed_out = pending.seat as u8;
    clock.set(pending.deadline_ms as u64);
    let finished = until_finished(&mut client, &name).await;
    assert_eq!(
        finished.ending,
        Some(proto::Ending {
            reason: proto::EndReason::OutOfTime as i32,
            seat: u32::from(timed_out),
        })
    );
    let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
    Ended {
        server,
        name,
        shown_seed_sha256: finished.seed_sha256,
        export,
        resigned,
        timed_out,
    }
}

fn timeline_has(record: &Record, interruption: Interruption) -> bool {
    record
        .timeline
        .iter()
        .flatten()
        .any(|e| e.interruption == Some(interruption))
}

fn verify_request(ended: &Ended) -> proto::VerifyGameRequest {
    proto::VerifyGameRequest {
        record_json: ended.export.record_json.clone(),
        events: ended.export.events.clone(),
        seed: ended.export.seed.clone(),
        name: ended.name.clone(),
        seed_sha256: ended.shown_seed_sha256.clone(),
    }
}

/// VerifyGame of `record_json` with the event log, seed and commitment of
/// `ended`.
async fn verify_against_the_log(
    w: &mut proto::watch_service_client::WatchServiceClient<tonic::transport::Channel>,
    ended: &Ended,
    record_json: String,
) -> proto::VerifyGameResponse {
    w.verify_game(proto::VerifyGameRequest {
        record_json,
        ..verify_request(ended)
    })
    .await
    .unwrap()
    .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clocked_game_with_a_resignation_and_a_timeout_exports_a_record_that_verifies() {
    let ended = a_game_ended_by_a_resignation_and_a_timeout("timed-export").await;
    let json = &ended.export.record_json;
    let record = Record::parse(json).unwrap_or_else(|e| panic!("{e}\n{json}"));
    let replay = record.verify().unwrap_or_else(|e| panic!("{e}\n{json}"));

    // What the record says: the clocks, when the game began, every
    // interruption, and how it ended.
    let control = record.time_control.expect("a time control");
    assert_eq!(
        control.main.map(|m| (m.initial_ms, m.increment_ms)),
        Some((60_000, 1_000))
    );
    let created = ended.export.events.iter().find(|e| e.seq == 2).unwrap();
    assert_eq!(record.created_at, Some(created.time_ms as u64));
    assert_eq!(record.created_at, Some(T0));
    let interruptions: Vec<Interruption> = record
        .timeline
        .iter()
        .flatten()
        .filter_map(|e| e.interruption)
        .collect();
    assert_eq!(
        interruptions,
        [
            Interruption::Resign(Seat(ended.resigned)),
            Interruption::Timeout(Seat(ended.timed_out))
        ]
    );
    let result = record.result.clone().expect("a result");
    assert_eq!(result.ending, Ending::OutOfTime(Seat(ended.timed_out)));
    let winner = (0..3u8)
        .find(|s| ![ended.resigned, ended.timed_out].contains(s))
        .unwrap();
    let mut ranks = vec![0; 3];
    ranks[usize::from(winner)] = 1;
    ranks[usize::from(ended.timed_out)] = 2;
    ranks[usize::from(ended.resigned)] = 3;
    assert_eq!(result.ranks, Some(ranks.clone()));
    // Every stored event after the creation but the draws has its entry,
    // at its stored time.
    let stored_times: Vec<u64> = ended
        .export
        .events
        .iter()
        .skip(2)
        .zip(&replay.events[1..])
        .filter(|(_, event)| !matches!(event, carcassonne_engine::Event::Drawn(_)))
        .map(|(stored, _)| stored.time_ms as u64)
        .collect();
    let timeline: Vec<u64> = record.timeline.iter().flatten().map(|e| e.at).collect();
    assert_eq!(timeline, stored_times);

    // VerifyGame: the record alone, and with its event log.
    let mut w = ended.server.watcher().await;
    let alone = proto::VerifyGameRequest {
        record_json: json.clone(),
        ..Default::default()
    };
    let answer = w.verify_game(alone).await.unwrap().into_inner();
    assert!(answer.ok && answer.finished, "{answer:?}");
    let answer = w.verify_game(verify_request(&ended)).await.unwrap().into_inner();
    assert!(answer.ok && answer.finished, "{answer:?}");
    assert_eq!(answer.scores, replay.game.scores());
    // It says how the game ended, and the ranking that follows (T-11).
    assert_eq!(
        answer.ending.as_ref().map(|e| (e.reason(), e.seat)),
        Some((proto::EndReason::OutOfTime, ended.timed_out as u32))
    );
    let expected_ranks: Vec<u32> = ranks.iter().map(|&r| u32::from(r)).collect();
    assert_eq!(answer.ranks, expected_ranks);

    // `carcassonne verify` says how the game ended.
    assert_eq!(
        crate::cli::run_verify(json),
        format!(
            "ok: {} turns, finished (seat {} ran out of time), ranks {ranks:?}, scores {:?}\n",
            record.turns.len(),
            ended.timed_out,
            replay.game.scores()
        )
    );
    ended.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_whose_times_or_result_differ_from_the_event_log_is_refused_with_the_log() {
    let ended = a_game_ended_by_a_resignation_and_a_timeout("timed-differs").await;
    let mut w = ended.server.watcher().await;
    let record: serde_json::Value = serde_json::from_str(&ended.export.record_json).unwrap();

    // The first placement a millisecond earlier: legal on its own (less
    // time used), but not what the log stored.
    let mut earlier = record.clone();
    let first = &mut earlier["timeline"][0]["at"];
    let stored_at = first.as_u64().unwrap();
    *first = serde_json::json!(stored_at - 1);
    let earlier = earlier.to_string();
    assert!(crate::cli::run_verify(&earlier).starts_with("ok:"));
    let answer = verify_against_the_log(&mut w, &ended, earlier).await;
    assert!(!answer.ok, "{answer:?}");
    assert_eq!(
        answer.error,
        format!(
            "timeline[0]: the record has a decision at {} ms, the event log a decision at {stored_at} ms",
            stored_at - 1
        )
    );

    // Another creation time.
    let mut created = record.clone();
    created["created_at"] = serde_json::json!(T0 - 1_000);
    let answer = verify_against_the_log(&mut w, &ended, created.to_string()).await;
    assert_eq!(
        answer.error,
        format!(
            "created_at: the record has {} ms, the event log {T0} ms",
            T0 - 1_000
        )
    );

    // Another time control, which the record keeps to on its own: half a
    // minute is enough for every decision, and the timeout came late.
    let mut control = record.clone();
    control["time_control"]["main_ms"] = serde_json::json!(30_000);
    let control = control.to_string();
    assert!(crate::cli::run_verify(&control).starts_with("ok:"));
    let answer = verify_against_the_log(&mut w, &ended, control).await;
    assert_eq!(
        answer.error,
        "time_control: the record's time control is not the event log's"
    );

    // Without its result the record claims less, and still matches.
    let mut unclaimed = record.clone();
    unclaimed.as_object_mut().unwrap().remove("result");
    let answer = verify_against_the_log(&mut w, &ended, unclaimed.to_string()).await;
    assert!(answer.ok, "{answer:?}");
    ended.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clocked_game_exported_at_every_version_verifies_as_in_progress() {
    // With the Count a turn may have many decisions, and the export must
    // cut the timeline where it cuts the turns.
    let (server, clock) = clocked_server().await;
    let mut client = server.client().await;
    let mut w = server.watcher().await;
    let request = proto::CreateGameRequest {
        time_control: Some(proto::TimeControl {
            main_ms: 0,
            increment_ms: 0,
            decision_ms: MINUTE_MS,
            on_timeout: proto::TimeoutRule::Auto as i32,
        }),
        ..create_request("timed-running", 2, &[proto::Expansion::Count], 5)
    };
    let (name, tokens) = create(&mut client, request).await;
    let mut kinds = std::collections::HashSet::new();
    for step in 0.. {
        let legal = legal_as(&mut client, &name, &tokens[0]).await;
        if legal.actions.is_empty() {
            break;
        }
        let pending = legal.pending.clone().unwrap();
        kinds.insert(pending.kind);
        let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
        let record = Record::parse(&export.record_json).unwrap();
        assert!(record.timeline.is_some(), "{}", export.record_json);
        let replay = record
            .verify()
            .unwrap_or_else(|e| panic!("step {step}: {e}\n{}", export.record_json));
        assert!(!replay.game.is_finished());
        // Now and then the server times a decision out for its seat (T-7).
        if step % 9 == 8 {
            clock.set(pending.deadline_ms as u64);
            while legal_as(&mut client, &name, &tokens[0]).await.version == legal.version {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        } else {
            clock.advance(1_000);
            assert!(play_step(&mut client, &name, &tokens, step).await.is_some());
        }
    }
    // The last tile is placed and the final round runs (C-9): the game
    // runs on with no draw to come.
    assert!(
        kinds.contains(&(proto::DecisionKind::FinalRound as i32)),
        "{kinds:?}"
    );
    let export = w.export_game(export_request(&name)).await.unwrap().into_inner();
    let verified = crate::cli::run_verify(&export.record_json);
    assert!(verified.starts_with("ok: 71 turns, finished"), "{verified}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_log_whose_timeout_was_moved_before_its_deadline_fails_at_that_event() {
    let ended = a_game_ended_by_a_resignation_and_a_timeout("timed-forged").await;
    let mut w = ended.server.watcher().await;
    let timeout = ended
        .export
        .events
        .iter()
        .position(|e| {
            carcassonne_engine::codec::decode(e.schema as u16, &e.payload)
                .is_ok_and(|event| matches!(event, carcassonne_engine::Event::TimedOut(_)))
        })
        .expect("a stored timeout");
    let mut events = ended.export.events.clone();
    let deadline = events[timeout].time_ms;
    events[timeout].time_ms = deadline - 1;
    let forged = proto::VerifyGameRequest {
        events: rechain(&events, &ended.name),
        ..verify_request(&ended)
    };
    let answer = w.verify_game(forged).await.unwrap().into_inner();
    assert!(!answer.ok, "{answer:?}");
    let seq = events[timeout].seq;
    assert_eq!(answer.at, seq, "{answer:?}");
    assert_eq!(
        answer.error,
        format!(
            "event {seq}: T-5: the timeout of seat {} at {} ms comes before its deadline, {deadline} ms (1 ms early)",
            ended.timed_out,
            deadline - 1
        )
    );
    // The same log rechained unchanged checks out: the forgery, not the
    // rechaining, is what fails.
    let honest = proto::VerifyGameRequest {
        events: rechain(&ended.export.events, &ended.name),
        ..verify_request(&ended)
    };
    let answer = w.verify_game(honest).await.unwrap().into_inner();
    assert!(answer.ok, "{answer:?}");
    ended.server.stop().await;
}

// ---- The offline commands on timed records ---------------------------------------

fn hand(name: &str) -> String {
    format!(
        "{}/crates/engine/tests/records/hand/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn stdout_of(args: &[&str]) -> String {
    let out = crate::support::carcassonne(args, "");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn verify_says_how_a_game_ended_early_and_keeps_its_line_otherwise() {
    let cases = [
        (
            "resigned-3.json",
            "ok: 3 turns, finished (seat 0 resigned), ranks [2, 1, 3], scores [3, 0, 0]\n",
        ),
        (
            "timeout-forfeit.json",
            "ok: 3 turns, finished (seat 0 ran out of time), ranks [2, 1], scores [3, 0]\n",
        ),
        (
            "aborted.json",
            "ok: 1 turns, finished (aborted by seat 1), scores [0, 0]\n",
        ),
        // Under `auto` nobody went out: the line of any finished game.
        ("timeout-auto.json", "ok: 3 turns, finished, scores [7, 0]\n"),
    ];
    for (name, expected) in cases {
        assert_eq!(stdout_of(&["verify", &hand(name)]), expected, "{name}");
    }
}

#[test]
fn score_tells_the_ending_and_the_ranks() {
    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["score", &hand("timeout-forfeit.json"), "--json"])).unwrap();
    assert_eq!(json["ending"], "out_of_time");
    assert_eq!(json["ending_seat"], 0);
    assert_eq!(json["ranks"], serde_json::json!([2, 1]));
    assert_eq!(json["scores"], serde_json::json!([3, 0]));
    assert_eq!(json["finished"], true);

    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["score", &hand("road-3.json"), "--json"])).unwrap();
    assert_eq!(json["ending"], "normal");
    assert_eq!(json["ending_seat"], serde_json::Value::Null);
    assert_eq!(json["ranks"], serde_json::json!([1, 2]));

    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["score", &hand("aborted.json"), "--json"])).unwrap();
    assert_eq!(json["ending"], "aborted");
    assert_eq!(json["ranks"], serde_json::Value::Null);

    let text = stdout_of(&["score", &hand("resigned-3.json")]);
    assert!(
        text.starts_with("Ada      3\nBrun     0\nCid      0\nfinished (Ada resigned) after 3 turns\nranks [2, 1, 3]\n\nbreakdown:\n"),
        "{text}"
    );
}
