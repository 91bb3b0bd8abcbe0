//! `carcassonne watch` and `carcassonne replay` against a real server.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Output, Stdio};

use carcassonne::proto;

use crate::server::{TestServer, create_request, play_to_end};

/// Creates a two-player game; returns its name and the seats' tokens.
async fn create(server: &TestServer, id: &str) -> (String, Vec<String>) {
    let mut client = server.client().await;
    let created = client
        .create_game(create_request(id, 2, &[], 5))
        .await
        .unwrap()
        .into_inner();
    (
        created.game.unwrap().name,
        created.tokens.into_iter().map(|t| t.token).collect(),
    )
}

/// Runs the binary with `args` and `stdin` off the async runtime.
async fn run(args: Vec<String>, stdin: &str) -> Output {
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
            .args(&args)
            .env_remove("CARCASSONNE_TOKEN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// The versions of the frames' header lines (`games/x  version V  ...`).
fn versions(out: &str) -> Vec<i64> {
    out.lines()
        .filter(|l| l.starts_with("games/"))
        .map(|l| {
            l.split("version ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

/// The tile counts of the frames (`tiles: N on the board, ...`).
fn tiles(out: &str) -> Vec<usize> {
    out.lines()
        .filter_map(|l| l.strip_prefix("tiles: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

fn final_scores(game: &proto::Game) -> String {
    let scores: Vec<String> = game
        .players
        .iter()
        .map(|p| format!("{} {}", p.name, p.score))
        .collect();
    format!("final scores: {}", scores.join(", "))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_of_a_finished_game_draws_it_and_prints_the_final_scores() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let (name, tokens) = create(&server, "watch-finished").await;
    let game = play_to_end(&mut server.client().await, &name, &tokens).await;
    let addr = format!("http://{}", server.addr);
    // By name and by bare id.
    let id = name.trim_start_matches("games/").to_owned();
    for game_arg in [name.clone(), id] {
        let out = run(vec!["watch".into(), game_arg, "--addr".into(), addr.clone()], "").await;
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(versions(&stdout), [game.version], "{stdout}");
        assert!(stdout.contains("finished"), "{stdout}");
        assert_eq!(tiles(&stdout), [game.tiles.len()], "{stdout}");
        // The board: the start tile's row and column labels, tiles' edges.
        assert!(stdout.contains("  0  "), "{stdout}");
        assert!(stdout.contains('#') && stdout.contains('|'), "{stdout}");
        assert!(stdout.contains("game over"), "{stdout}");
        assert!(stdout.contains(&final_scores(&game)), "{stdout}");
        assert!(stdout.contains("winner"), "{stdout}");
    }
    // An unknown game is an error.
    let out = run(vec!["watch".into(), "nope".into(), "--addr".into(), addr], "").await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_steps_forward_and_back_with_commands_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let (name, tokens) = create(&server, "replayed").await;
    let game = play_to_end(&mut server.client().await, &name, &tokens).await;
    let addr = format!("http://{}", server.addr);
    let out = run(
        vec!["replay".into(), name.clone(), "--addr".into(), addr.clone()],
        "n\nn\np\nq\n",
    )
    .await;
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The creation, then forward twice and back once.
    assert_eq!(versions(&stdout), [1, 2, 3, 2], "{stdout}");
    let counts = tiles(&stdout);
    assert!(counts[2] > counts[0], "the board grows: {counts:?}\n{stdout}");
    assert_eq!(counts[3], counts[1]);
    assert!(stdout.contains("last: v2 "), "{stdout}");
    // At the creation the game waits for its first draw; it is not over.
    assert!(stdout.contains("the server draws a tile for"), "{stdout}");
    assert!(!stdout.contains("the game is over"), "{stdout}");

    // From a version, a jump, stepping back before the start, the end of
    // input as `q`, and past the last step.
    let last = game.version;
    let script = format!("g {last}\nn\ng 10\np\np\n");
    let out = run(
        vec![
            "replay".into(),
            name,
            "--addr".into(),
            addr,
            "--from".into(),
            "12".into(),
        ],
        &script,
    )
    .await;
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(versions(&stdout), [12, last, last, 10, 9, 8], "{stdout}");
    assert!(stdout.contains("this is the end of the game"), "{stdout}");
    assert!(stdout.contains(&format!("last: v{last} ")), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_a_running_game_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let (name, tokens) = create(&server, "watch-live").await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["watch", &name, "--addr", &format!("http://{}", server.addr)])
        .env_remove("CARCASSONNE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read its output on a thread; play once the first frame is out.
    let stdout = child.stdout.take().unwrap();
    let (first_frame, drawn) = tokio::sync::oneshot::channel();
    let reader = std::thread::spawn(move || {
        let mut first_frame = Some(first_frame);
        let mut text = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if line.starts_with("next: ")
                && let Some(tx) = first_frame.take()
            {
                let _ = tx.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    drawn.await.unwrap();
    let game = play_to_end(&mut server.client().await, &name, &tokens).await;
    let mut stderr = child.stderr.take().unwrap();
    let (status, stderr) = tokio::task::spawn_blocking(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut text).unwrap();
        (child.wait().unwrap(), text)
    })
    .await
    .unwrap();
    let stdout = reader.join().unwrap();
    assert!(status.success(), "{stdout}\n{stderr}");
    let seen = versions(&stdout);
    // The snapshot before the first move, then every event in order.
    assert!(seen[0] < 5, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    assert_eq!(*seen.last().unwrap(), game.version);
    assert!(seen.len() > 10, "{seen:?}");
    let counts = tiles(&stdout);
    assert_eq!(counts.last(), Some(&game.tiles.len()));
    assert!(counts[0] < game.tiles.len());
    assert!(stdout.contains("the game is over"), "{stdout}");
    assert!(stdout.contains(&final_scores(&game)), "{stdout}");
}
