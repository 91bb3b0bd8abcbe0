//! `carcassonne watch` and `carcassonne replay` against a real server.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Output, Stdio};

use carcassonne::proto;

use crate::support::{TestServer, carcassonne, new_game, play_to_end, start};

/// A server with the 2-player game `id` played to its end: the server, the
/// game's name and its final state.
async fn finished(id: &str) -> (TestServer, String, proto::Game) {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, id, 5).await;
    let game = play_to_end(&mut client, &name, &tokens).await;
    (server, name, game)
}

/// Runs the binary with `args` and `stdin` off the async runtime.
async fn run(args: &[&str], stdin: &str) -> Output {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        carcassonne(&args, &stdin)
    })
    .await
    .unwrap()
}

/// Runs the binary, which must succeed; its standard output.
async fn run_ok(args: &[&str], stdin: &str) -> String {
    let out = run(args, stdin).await;
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// `carcassonne watch` of `name` as a child, its output piped.
fn spawn_watch(server: &TestServer, name: &str, stdin: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_carcassonne"))
        .args(["watch", name, "--addr", &server.url()])
        .env_remove("CARCASSONNE_TOKEN")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
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
    let (server, name, game) = finished("watch-finished").await;
    let addr = server.url();
    // By name and by bare id.
    let id = name.trim_start_matches("games/").to_owned();
    for game_arg in [name.clone(), id] {
        let stdout = run_ok(&["watch", &game_arg, "--addr", &addr], "").await;
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
    let out = run(&["watch", "nope", "--addr", &addr], "").await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NotFound"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_steps_forward_and_back_with_commands_from_stdin() {
    let (server, name, game) = finished("replayed").await;
    let addr = server.url();
    let stdout = run_ok(&["replay", &name, "--addr", &addr], "n\nn\np\nq\n").await;
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
    let stdout = run_ok(&["replay", &name, "--addr", &addr, "--from", "12"], &script).await;
    assert_eq!(versions(&stdout), [12, last, last, 10, 9, 8], "{stdout}");
    assert!(stdout.contains("this is the end of the game"), "{stdout}");
    assert!(stdout.contains(&format!("last: v{last} ")), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_follows_a_running_game_to_its_end() {
    let (server, mut client) = start().await;
    let (name, tokens) = new_game(&mut client, "watch-live", 5).await;
    let mut child = spawn_watch(&server, &name, Stdio::null());
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
    let game = play_to_end(&mut client, &name, &tokens).await;
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
    let (server, name, game) = finished("watch-80x24").await;
    let addr = server.url();
    // Whole, the board alone is taller than a terminal of 24 rows.
    let whole = run_ok(&["watch", &name, "--addr", &addr], "").await;
    let board_lines = whole
        .lines()
        .skip_while(|l| !l.starts_with("next: "))
        .skip(1)
        .take_while(|l| !l.starts_with("# city"))
        .count();
    assert!(board_lines > 24, "{whole}");

    let stdout = run_ok(&["watch", &name, "--addr", &addr, "--size", "80x24"], "").await;
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
    let (server, name, game) = finished("replay-scroll").await;
    let addr = server.url();
    // To the end, far west, far east, far north, far south, follow again.
    let mut script = format!("g {}\n", game.version);
    for key in ["a", "d", "w", "s"] {
        script.push_str(&format!("{key}\n").repeat(40));
    }
    script.push_str("c\nq\n");
    let stdout = run_ok(&["replay", &name, "--addr", &addr, "--size", "80x24"], &script).await;
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
    let (server, mut client) = start().await;
    let (name, _) = new_game(&mut client, "watch-quit", 5).await;
    let mut child = spawn_watch(&server, &name, Stdio::piped());
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
