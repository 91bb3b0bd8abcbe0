//! `carcassonne watch` and `carcassonne replay` against a real server.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;

use carcassonne::proto::game_service_client::GameServiceClient;
use carcassonne::proto::{self, action::Action as A};
use carcassonne_store::ManualClock;
use tonic::transport::Channel;

use crate::support::{
    TestServer, act, carcassonne, create, create_request, delayed_request, game, legal_as, new_game, play,
    play_step, play_to_end, start, with_token,
};

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

/// 2001-09-09: a server clock far behind the real one, so that a frame
/// counting to the real now instead of showing a version's own figures
/// would read 00:00.
const T0: u64 = 1_000_000_000_000;

/// A server whose clock stands at `T0` and moves only when told.
async fn manual_server() -> (TestServer, GameServiceClient<Channel>, Arc<ManualClock>) {
    let (server, clock) = TestServer::start_clocked(T0).await;
    let client = server.client().await;
    (server, client, clock)
}

/// A game of `players` with a time control, created at the clock's time.
async fn clocked_game(
    client: &mut GameServiceClient<Channel>,
    id: &str,
    players: usize,
    control: proto::TimeControl,
) -> (String, Vec<String>) {
    let request = proto::CreateGameRequest {
        time_control: Some(control),
        ..create_request(id, players, &[], 5)
    };
    create(client, request).await
}

/// Seat `seat` resigns or aborts (`Resign`, `Abort`).
async fn leave(
    client: &mut GameServiceClient<Channel>,
    name: &str,
    token: &str,
    action: proto::action::Action,
) -> proto::ActResponse {
    let version = legal_as(client, name, token).await.version;
    client
        .act(with_token(
            act(name, version, &format!("leave-{version}"), action),
            token,
        ))
        .await
        .unwrap()
        .into_inner()
}

/// Waits until the server's timekeeper has stored the game's version
/// `version` (a timeout at a deadline the clock has passed).
async fn wait_for_version(client: &mut GameServiceClient<Channel>, name: &str, version: i64) {
    for _ in 0..500 {
        if game(client, name).await.version >= version {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{name} never reached version {version}");
}

/// The lines that start with `prefix`, without it.
fn lines_of<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines().filter_map(|l| l.strip_prefix(prefix)).collect()
}

const FORFEIT_10_MIN: proto::TimeControl = proto::TimeControl {
    main_ms: 600_000,
    increment_ms: 5_000,
    decision_ms: 120_000,
    on_timeout: proto::TimeoutRule::Forfeit as i32,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_shows_each_steps_clocks_as_they_were_and_watch_the_end_and_ranking() {
    let (server, mut client, clock) = manual_server().await;
    let (name, tokens) = clocked_game(&mut client, "clocked-replay", 2, FORFEIT_10_MIN).await;
    // v2 (at T0): Bot 0 drew; 7 s to place it (v3), 3 s more to deploy
    // (v4: its increment), v5 Bot 1 draws; 4 s later Bot 1 resigns (v6).
    clock.advance(7_000);
    play_step(&mut client, &name, &tokens, 0).await.unwrap();
    clock.advance(3_000);
    play_step(&mut client, &name, &tokens, 0).await.unwrap();
    clock.advance(4_000);
    let resigned = leave(&mut client, &name, &tokens[1], A::Resign(proto::Resign {})).await;
    assert_eq!(resigned.version, 6);

    let addr = server.url();
    let stdout = run_ok(&["replay", &name, "--addr", &addr, "--from", "2"], "n\nn\nn\nn\n").await;
    assert_eq!(versions(&stdout), [2, 3, 4, 5, 6], "{stdout}");
    assert_eq!(
        lines_of(&stdout, "time control: "),
        ["10 min + 5 s a move, 2 min a decision, forfeit on time"; 5],
        "{stdout}"
    );
    assert_eq!(
        lines_of(&stdout, "clocks: "),
        [
            "Bot 0 10:00 (running), Bot 1 10:00; deadline in 02:00",
            // The follower is a decision of its own, with its own 2 min.
            "Bot 0 09:53 (running), Bot 1 10:00; deadline in 02:00",
            "Bot 0 09:55, Bot 1 10:00",
            "Bot 0 09:55, Bot 1 10:00 (running); deadline in 02:00",
            "Bot 0 09:55, Bot 1 09:56",
        ],
        "{stdout}"
    );
    assert!(
        stdout.contains("last: v6 Bot 1 (seat 1) resigned; Bot 1 (seat 1) is out and tile "),
        "{stdout}"
    );
    assert!(
        stdout.contains("next: nothing: the game is over (Bot 1 resigned)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Bot 1    0 points, 7 followers in supply, resigned"),
        "{stdout}"
    );

    let stdout = run_ok(&["watch", &name, "--addr", &addr], "").await;
    for line in [
        "game over: Bot 1 resigned\n",
        "final scores: Bot 0 0, Bot 1 0\n",
        "winner: Bot 0\n",
        "ranking: 1. Bot 0 0, 2. Bot 1 0 (resigned)\n",
        "clocks: Bot 0 09:55, Bot 1 09:56\n",
    ] {
        assert!(stdout.contains(line), "{line}{stdout}");
    }
    // Stopped before its directory goes.
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_aborts_and_the_servers_decisions_read_as_what_happened() {
    let (server, mut client, clock) = manual_server().await;
    let addr = server.url();
    let fast = |on_timeout: proto::TimeoutRule| proto::TimeControl {
        decision_ms: 1_500,
        on_timeout: on_timeout as i32,
        ..proto::TimeControl::default()
    };
    // Forfeit, 3 players: Bot 0 runs out of time (v3), then Bot 1 resigns.
    let (forfeit, tokens) = clocked_game(&mut client, "forfeit", 3, fast(proto::TimeoutRule::Forfeit)).await;
    // Auto, 2 players: the server places Bot 0's tile and deploys nothing.
    let (auto, auto_tokens) = clocked_game(&mut client, "auto", 2, fast(proto::TimeoutRule::Auto)).await;
    clock.advance(1_500);
    wait_for_version(&mut client, &forfeit, 3).await;
    wait_for_version(&mut client, &auto, 3).await;
    leave(&mut client, &forfeit, &tokens[1], A::Resign(proto::Resign {})).await;
    leave(&mut client, &auto, &auto_tokens[1], A::Resign(proto::Resign {})).await;

    let stdout = run_ok(&["replay", &forfeit, "--addr", &addr, "--from", "3"], "").await;
    assert!(
        stdout.contains("last: v3 Bot 0 (seat 0) ran out of time; Bot 0 (seat 0) is out and tile "),
        "{stdout}"
    );
    assert!(
        stdout.contains("time control: 1.5 s a decision, forfeit on time"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Bot 0    0 points, 7 followers in supply, out of time"),
        "{stdout}"
    );
    let stdout = run_ok(&["watch", &forfeit, "--addr", &addr], "").await;
    assert!(
        stdout.contains("game over: Bot 1 resigned\nfinal scores: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("ranking: 1. Bot 2 0, 2. Bot 1 0 (resigned), 3. Bot 0 0 (out of time)\n"),
        "{stdout}"
    );

    let stdout = run_ok(&["replay", &auto, "--addr", &addr, "--from", "3"], "").await;
    let last = lines_of(&stdout, "last: v3 ");
    assert_eq!(last.len(), 1, "{stdout}");
    assert!(
        last[0]
            .starts_with("Bot 0 (seat 0) ran out of time; the server decided for them: placed the tile at (")
            && last[0].ends_with(", deployed no follower"),
        "{stdout}"
    );
    assert!(
        !stdout.lines().any(|l| l.ends_with(", out of time")),
        "nobody is out under auto: {stdout}"
    );

    // An abort: no result, no winner, no ranking.
    let (aborted, tokens) = new_game(&mut client, "aborted", 5).await;
    leave(&mut client, &aborted, &tokens[1], A::Abort(proto::Abort {})).await;
    let stdout = run_ok(&["watch", &aborted, "--addr", &addr], "").await;
    assert!(
        stdout.contains(
            "game over: Bot 1 aborted the game: no result\nfinal scores: Bot 0 0, Bot 1 0\nno winner\n"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("ranking:"), "{stdout}");
    let stdout = run_ok(&["replay", &aborted, "--addr", &addr, "--from", "3"], "").await;
    assert!(
        stdout.contains("last: v3 Bot 1 (seat 1) aborted the game: no result; the game is over"),
        "{stdout}"
    );
    // Stopped before its directory goes.
    server.stop().await;
}

/// A `clocks:` line's readings: each seat's main time, the running seat,
/// and the deadline, in milliseconds.
fn readings(line: &str) -> (Vec<i64>, Option<usize>, Option<i64>) {
    let ms = |text: &str| {
        let parts: Vec<i64> = text.split(':').map(|p| p.parse().unwrap()).collect();
        parts.iter().fold(0, |total, part| total * 60 + part) * 1000
    };
    let (mains, deadline) = line
        .split_once("; deadline in ")
        .map_or((line, None), |(m, d)| (m, Some(ms(d))));
    let mut running = None;
    let mut times = Vec::new();
    for (seat, clock) in mains.split(", ").enumerate() {
        if clock.ends_with(" (running)") {
            running = Some(seat);
        }
        times.push(ms(clock
            .trim_end_matches(" (running)")
            .rsplit(' ')
            .next()
            .unwrap()));
    }
    (times, running, deadline)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_counts_the_running_clock_down_live_against_the_servers_figures() {
    let (server, mut client) = start().await;
    let (name, tokens) = clocked_game(&mut client, "clocked-live", 2, FORFEIT_10_MIN).await;
    let figures = game(&mut client, &name).await;
    let mut child = spawn_watch(&server, &name, Stdio::null());
    // Each `clocks:` line with the moment it was read, for 2.6 s after the
    // first frame.
    let stdout = child.stdout.take().unwrap();
    let (first_frame, drawn) = tokio::sync::oneshot::channel();
    let reader = std::thread::spawn(move || {
        let mut first_frame = Some(first_frame);
        let mut clocks = Vec::new();
        let mut text = String::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if let Some(reading) = line.strip_prefix("clocks: ") {
                clocks.push((reading.to_owned(), carcassonne_now()));
            }
            if line.starts_with("next: ")
                && let Some(tx) = first_frame.take()
            {
                let _ = tx.send(());
            }
            text.push_str(&line);
            text.push('\n');
        }
        (clocks, text)
    });
    drawn.await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2600)).await;
    leave(&mut client, &name, &tokens[0], A::Resign(proto::Resign {})).await;
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    let (clocks, stdout) = reader.join().unwrap();
    assert!(status.success(), "{stdout}");
    assert!(stdout.contains("game over: Bot 0 resigned\n"), "{stdout}");
    assert!(stdout.contains("winner: Bot 1\n"), "{stdout}");

    // While Bot 0 had to place its tile: a new reading each second, each
    // within a second of the server's figures; Bot 1's clock stood still.
    let running: Vec<&(String, i64)> = clocks
        .iter()
        .filter(|(line, _)| line.contains("(running)"))
        .collect();
    assert!(running.len() >= 3, "{stdout}");
    let player = |seat: usize| &figures.players[seat];
    let deadline = figures.pending.as_ref().unwrap().deadline_ms;
    for (line, at) in &running {
        let (times, seat, left) = readings(line);
        assert_eq!(seat, Some(0), "{line}");
        let expected = player(0).time_left_ms.unwrap() - (at - figures.clock_time_ms);
        assert!(
            (times[0] - expected).abs() <= 1000,
            "{line}: expected {expected} ms"
        );
        assert_eq!(times[1], player(1).time_left_ms.unwrap(), "{line}");
        let left = left.unwrap();
        assert!(
            (left - (deadline - at)).abs() <= 1000,
            "{line}: expected {} ms",
            deadline - at
        );
    }
    let distinct: std::collections::BTreeSet<&str> = running.iter().map(|(line, _)| line.as_str()).collect();
    assert!(distinct.len() >= 3, "the clock moved once a second: {running:?}");
    assert!(
        running
            .windows(2)
            .all(|w| readings(&w[1].0).0[0] <= readings(&w[0].0).0[0]),
        "{running:?}"
    );
}

/// Milliseconds since the Unix epoch by this machine's clock (the test
/// server's too).
fn carcassonne_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spectator_behind_the_delay_sees_the_clocks_still() {
    let (server, mut client) = start().await;
    let request = proto::CreateGameRequest {
        time_control: Some(FORFEIT_10_MIN),
        ..delayed_request("clocked-delayed", 2, &[], 5)
    };
    let (name, tokens) = create(&mut client, request).await;
    // v3: Bot 0 placed its tile, v4 deployed, v5 Bot 1 drew: a spectator
    // sees v3, Bot 0's follower decision pending, its clock running then.
    play(&mut client, &name, &tokens, 2).await;
    let mut child = spawn_watch(&server, &name, Stdio::null());
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    child.kill().unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(versions(&stdout), [3], "{stdout}");
    let clocks = lines_of(&stdout, "clocks: ");
    assert_eq!(clocks.len(), 1, "no reading but the frame's: {stdout}");
    let at3 = readings(clocks[0]);
    assert_eq!(at3.1, Some(0), "{stdout}");
    assert_eq!(at3.2, Some(120_000), "the decision's full 2 min: {stdout}");
}
