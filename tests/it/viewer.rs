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

/// The window a fitted frame shows: `board x A..B of L..H, y C..D of L..H`.
fn windows(out: &str) -> Vec<[i32; 8]> {
    out.lines()
        .filter_map(|l| l.strip_prefix("board x "))
        .map(|l| {
            let numbers: Vec<i32> = l
                .split(|c: char| !(c.is_ascii_digit() || c == '-'))
                .flat_map(|part| part.split("..").collect::<Vec<_>>())
                .filter_map(|n| n.parse().ok())
                .collect();
            numbers[..8].try_into().unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_fits_a_whole_game_into_80x24_scores_first_with_a_legend() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let (name, tokens) = create(&server, "watch-80x24").await;
    let game = play_to_end(&mut server.client().await, &name, &tokens).await;
    let addr = format!("http://{}", server.addr);
    let watch = |size: &[&str]| {
        let mut args: Vec<String> = vec!["watch".into(), name.clone(), "--addr".into(), addr.clone()];
        args.extend(size.iter().map(|s| s.to_string()));
        run(args, "")
    };
    // Whole, the board alone is taller than a terminal of 24 rows.
    let whole = String::from_utf8(watch(&[]).await.stdout).unwrap();
    let board_lines = whole
        .lines()
        .skip_while(|l| !l.starts_with("next: "))
        .skip(1)
        .take_while(|l| !l.starts_with("# city"))
        .count();
    assert!(board_lines > 24, "{whole}");

    let out = watch(&["--size", "80x24"]).await;
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.len() <= 24, "{} lines:\n{stdout}", lines.len());
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{stdout}");
    // The scores first, then the board, its legend, and the final scores.
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix));
    let scores = at("  0 Bot 0").unwrap();
    let window = at("board x ").unwrap();
    let legend = at("# city, |- road, ~ river, . field, % walls, o cloister").unwrap();
    assert!(scores < window && window < legend, "{stdout}");
    assert!(at("next: ").unwrap() < window, "{stdout}");
    assert!(stdout.contains(&final_scores(&game)), "{stdout}");
    for player in &game.players {
        assert!(
            stdout.contains(&format!("{} {:>4} points", player.name, player.score)),
            "{stdout}"
        );
    }
    // The window is part of the board, and a window's worth of tile rows.
    let [left, right, lo_x, hi_x, bottom, top, lo_y, hi_y] = windows(&stdout)[0];
    assert!(
        lo_x <= left && right <= hi_x && lo_y <= bottom && top <= hi_y,
        "{stdout}"
    );
    assert!(
        right - left < hi_x - lo_x || top - bottom < hi_y - lo_y,
        "{stdout}"
    );
    assert!(top > bottom, "at least two tile rows: {stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_scrolls_a_board_that_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let (name, tokens) = create(&server, "replay-scroll").await;
    let game = play_to_end(&mut server.client().await, &name, &tokens).await;
    let addr = format!("http://{}", server.addr);
    // To the end, far west, far east, far north, far south, follow again.
    let mut script = format!("g {}\n", game.version);
    for key in ["a", "d", "w", "s"] {
        script.push_str(&format!("{key}\n").repeat(40));
    }
    script.push_str("c\nq\n");
    let out = run(
        vec![
            "replay".into(),
            name,
            "--addr".into(),
            addr,
            "--size".into(),
            "80x24".into(),
        ],
        &script,
    )
    .await;
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    let seen = windows(&stdout);
    // The creation's board fits; the end's does not, nor after each key.
    assert_eq!(seen.len(), 1 + 4 * 40 + 1, "{stdout}");
    let [_, _, lo_x, hi_x, _, _, lo_y, hi_y] = seen[0];
    let far = |i: usize| seen[40 * (i + 1)];
    assert_eq!(far(0)[0], lo_x, "west: {:?}", far(0));
    assert_eq!(far(1)[1], hi_x, "east: {:?}", far(1));
    assert_eq!(far(2)[5], hi_y, "north: {:?}", far(2));
    assert_eq!(far(3)[4], lo_y, "south: {:?}", far(3));
    // Following the last tile again: the window of the first frame.
    assert_eq!(seen.last(), seen.first(), "{stdout}");
    // Score changes count in words: `1 pennant`, `2 tiles`.
    assert!(stdout.contains(", 1 pennant at "), "{stdout}");
    assert!(
        !stdout.contains(" 1 tiles") && !stdout.contains(" 1 pennants"),
        "{stdout}"
    );
    // Every frame fits, with the note under it (a blank line between
    // frames from a pipe).
    for frame in stdout.split("games/").skip(1) {
        assert!(frame.trim_end().lines().count() <= 24, "{frame}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn q_quits_watch_in_the_middle_of_a_game() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path()).await;
    let (name, _) = create(&server, "watch-quit").await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["watch", &name, "--addr", &format!("http://{}", server.addr)])
        .env_remove("CARCASSONNE_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let status = tokio::task::spawn_blocking(move || {
        // Once the first frame is out, `q`.
        let mut lines = BufReader::new(stdout).lines();
        assert!(lines.any(|l| l.unwrap().starts_with("next: ")));
        stdin.write_all(b"q\n").unwrap();
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(20) {
            if let Some(status) = child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        None
    })
    .await
    .unwrap();
    let status = status.expect("watch did not quit on q");
    assert!(status.success(), "{status:?}");
}
