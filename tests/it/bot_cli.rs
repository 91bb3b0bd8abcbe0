//! `carcassonne bot`, the built-in bots as an external client: it plays a
//! seat of a game on a running server to its end, and a registered
//! player's games through the player's stream.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use carcassonne::proto;

use crate::bots::{league_server, register};
use crate::support::{create_request, game, replay, replay_request};

/// `carcassonne bot` with `args`, its output captured.
fn spawn_bot(addr: &str, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["bot", "--addr", addr, "--budget-ms", "30"])
        .args(args)
        .env_remove("CARCASSONNE_TOKEN")
        .env_remove("CARCASSONNE_KEY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` to exit within `limit`; kills it if it does not.
async fn exit_within(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// How many decisions seat `seat` took in game `name`.
async fn decisions_of(server: &crate::support::TestServer, name: &str, seat: u32) -> usize {
    let mut watcher = server.watcher().await;
    replay(&mut watcher, replay_request(name, Some(1), None))
        .await
        .iter()
        .filter(|step| step.event.as_ref().and_then(|e| e.seat) == Some(seat))
        .count()
}

#[tokio::test]
async fn carcassonne_bot_plays_a_seat_of_a_game_on_a_running_server_to_its_end() {
    let (server, mut client) = crate::support::start().await;
    // Against a bot seat of the server's, with the River and the Count:
    // every kind of decision.
    let request = proto::CreateGameRequest {
        bots: vec!["greedy".to_owned(), String::new()],
        time_control: Some(proto::TimeControl {
            main_ms: 60_000,
            increment_ms: 1_000,
            decision_ms: 0,
            on_timeout: proto::TimeoutRule::Forfeit as i32,
        }),
        ..create_request(
            "bot-cli-one-seat-0001",
            2,
            &[proto::Expansion::River, proto::Expansion::Count],
            12,
        )
    };
    let created = client.create_game(request).await.unwrap().into_inner();
    let name = created.game.unwrap().name;
    let token = &created.tokens[0];
    assert_eq!(token.seat, 1);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("acknowledged.jsonl");
    let mut bot = spawn_bot(
        &server.url(),
        &[
            "--level",
            "search:20",
            "--game",
            &name,
            "--seat",
            "1",
            "--token",
            &token.token,
            "--log",
            log.to_str().unwrap(),
        ],
    );
    let status = exit_within(&mut bot, Duration::from_secs(240)).await;
    let output = bot.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(status.is_some_and(|s| s.success()), "{status:?}: {stderr}");
    let over = game(&mut client, &name).await;
    assert_eq!(over.status, proto::GameStatus::Finished as i32);
    assert_eq!(
        over.ending.unwrap().reason,
        proto::EndReason::Normal as i32,
        "{stderr}"
    );
    let decisions = decisions_of(&server, &name, 1).await;
    assert!(decisions > 20);
    assert!(!stderr.contains("refused"), "every action taken: {stderr}");
    // It says which seat it plays, each of its decisions, and the result.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.starts_with(&format!("{name}: playing seat 1 (Bot 1) as search:20\n")),
        "{stdout}"
    );
    let said = stdout
        .lines()
        .filter(|line| line.starts_with(&format!("{name} v")) && line.contains("Bot 1 (seat 1) "))
        .count();
    assert_eq!(said, decisions, "a line a decision: {stdout}");
    let ranking = over
        .players
        .iter()
        .map(|p| format!("{}. {} {}", p.rank, p.name, p.score))
        .collect::<Vec<_>>();
    let ranking = if over.players[0].rank <= over.players[1].rank {
        ranking.join(", ")
    } else {
        format!("{}, {}", ranking[1], ranking[0])
    };
    for line in [
        format!("{name}: game over: the last tile was played"),
        format!("{name}: ranking: {ranking}"),
    ] {
        assert!(stdout.lines().any(|l| l == line), "{line:?} in {stdout}");
    }
    // --log: a line per decision, each naming the event stored for it.
    let mut watcher = server.watcher().await;
    let steps = replay(&mut watcher, replay_request(&name, Some(1), None)).await;
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(lines.lines().count(), decisions, "{lines}");
    for line in lines.lines() {
        let logged: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(logged["game"], name.as_str());
        assert_eq!(logged["seat"], 1);
        let acted_on = logged["acted_on"].as_i64().unwrap();
        assert_eq!(logged["request_id"], format!("bot-1-{acted_on}").as_str());
        assert!(logged["version"].as_i64().unwrap() > acted_on);
        let stored = steps
            .iter()
            .filter_map(|step| step.event.as_ref())
            .find(|event| event.version == acted_on + 1)
            .unwrap();
        assert_eq!(stored.seat, Some(1), "{line}");
        assert_eq!(logged["time_ms"].as_i64(), Some(stored.time_ms), "{line}");
    }
    server.stop().await;
}

#[tokio::test]
async fn carcassonne_bot_with_a_key_plays_the_games_its_player_sits_in() {
    let (server, _dir) = league_server(carcassonne::players::Registration::Open).await;
    let mut client = server.client().await;
    let key = register(&server, "Botty").await;
    let mut bot = spawn_bot(&server.url(), &["--level", "greedy", "--key", &key]);
    let mut names = Vec::new();
    for i in 0..2 {
        // Botty's own key seats Botty.
        let request = proto::CreateGameRequest {
            accounts: vec!["players/Botty".to_owned(), String::new()],
            bots: vec![String::new(), "random".to_owned()],
            ..create_request(&format!("bot-cli-key-game-000{i}"), 2, &[], 40 + i)
        };
        let created = client
            .create_game(crate::support::with_token(request, &key))
            .await
            .unwrap()
            .into_inner();
        names.push(created.game.unwrap().name);
    }
    let started = Instant::now();
    for name in &names {
        loop {
            let now = game(&mut client, name).await;
            if now.status == proto::GameStatus::Finished as i32 {
                assert_eq!(now.ending.unwrap().reason, proto::EndReason::Normal as i32);
                break;
            }
            if started.elapsed() >= Duration::from_secs(240) {
                let _ = bot.kill();
                let output = bot.wait_with_output().unwrap();
                panic!(
                    "{name} is at version {}; the bot said: {}",
                    now.version,
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(decisions_of(&server, name, 0).await > 20, "{name}");
    }
    let _ = bot.kill();
    let output = bot.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in &names {
        let line = format!("{name}: playing seat 0 (Bot 0) as greedy");
        assert!(stdout.lines().any(|l| l == line), "{line:?} in {stdout}");
    }
    server.stop().await;
}

/// A bot with a key plays only games its player agreed to: without
/// `--accept-challenges` a challenge naming its player waits for the
/// player; with it, the bot takes the player's seat and plays the game.
#[tokio::test]
async fn carcassonne_bot_accepts_challenges_only_when_told_to() {
    use crate::bots::{challenge_request, challenges_client};
    use crate::support::with_token;

    let (server, _dir) = league_server(carcassonne::players::Registration::Open).await;
    let ada = register(&server, "Ada").await;
    let botty = register(&server, "Botty").await;
    let mut challenges = challenges_client(&server).await;
    let challenge =
        |request_id: &str| with_token(challenge_request(request_id, &["Ada", "Botty"], false), &ada);
    let reader = challenges.clone();
    let status_of = |name: String| {
        let mut challenges = reader.clone();
        async move {
            challenges
                .get_challenge(proto::GetChallengeRequest { name })
                .await
                .unwrap()
                .into_inner()
                .challenge
                .unwrap()
        }
    };
    // Given a bot of Botty's that was not told to accept,
    let mut unwilling = spawn_bot(&server.url(), &["--level", "greedy", "--key", &botty]);
    let waiting = challenges
        .create_challenge(challenge("bot-cli-unasked-0000"))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    // then Ada's challenge still waits for Botty.
    let now = status_of(waiting.name.clone()).await;
    assert_eq!(now.status, proto::ChallengeStatus::Open as i32);
    assert!(exit_within(&mut unwilling, Duration::ZERO).await.is_none());
    // Given one told to accept,
    let mut willing = spawn_bot(
        &server.url(),
        &["--level", "greedy", "--key", &botty, "--accept-challenges"],
    );
    // the challenge waiting and a new one are both accepted, their games
    // started.
    let new = challenges
        .create_challenge(challenge("bot-cli-asked-00000"))
        .await
        .unwrap()
        .into_inner()
        .challenge
        .unwrap();
    let started = Instant::now();
    for name in [&waiting.name, &new.name] {
        loop {
            let now = status_of(name.clone()).await;
            if now.status == proto::ChallengeStatus::Accepted as i32 {
                assert!(now.game.starts_with("games/"), "{now:?}");
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{name} still {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let _ = willing.kill();
    let output = willing.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in [&waiting.name, &new.name] {
        let line = format!("{name}: accepted");
        assert!(stdout.lines().any(|l| l == line), "{line:?} in {stdout}");
    }
    server.stop().await;
}
