//! The offline commands: `score`, `verify`, `demo`.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use crate::support::{carcassonne as run, serve};

fn records() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/engine/tests/records")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn verify_accepts_a_right_record_and_rejects_a_wrong_claim() {
    let path = records().join("shared/base-4p.json");
    let ok = run(&["verify", path.to_str().unwrap()], "");
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    assert_eq!(stdout(&ok), "ok: 71 turns, finished, scores [12, 17, 24, 14]\n");

    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("[12, 17, 24, 14]", "[12, 17, 24, 15]");
    let bad = run(&["verify", "-"], &text);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        stdout(&bad),
        "final_scores: the record claims [12, 17, 24, 15], but its turns score [12, 17, 24, 14]\n"
    );
}

#[test]
fn verify_accepts_a_record_that_names_choices_another_way_than_the_server() {
    // The count "moved" to the quarter where it stands (C-5), a follower and
    // a final-round move named by other places of their features.
    let path = records().join("hand/count-other-names.json");
    let out = run(&["verify", path.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), "ok: 3 turns, finished, scores [3, 8]\n");
}

#[test]
fn verify_names_the_turn_and_rule_of_an_illegal_move() {
    let text = std::fs::read_to_string(records().join("shared/short-bag.json"))
        .unwrap()
        .replace(
            r#"{"tile": "V", "x": 1, "y": 0, "rotation": 90}"#,
            r#"{"tile": "V", "x": 1, "y": 0, "rotation": 0}"#,
        );
    let out = run(&["verify", "-"], &text);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out),
        "turn 2: B-T1: edge S of V at (1,1) is road, neighbour's N edge is field\n"
    );
}

#[test]
fn score_json_has_scores_finished_and_a_breakdown_by_rule() {
    let path = records().join("hand/road-3.json");
    let out = run(&["score", path.to_str().unwrap(), "--json"], "");
    assert_eq!(out.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["scores"], serde_json::json!([3, 0]));
    assert_eq!(json["finished"], serde_json::json!(true));
    assert_eq!(json["by_rule"]["B-S1"], serde_json::json!([3, 0]));
    let change = &json["breakdown"][0];
    assert_eq!(change["rule"], "B-S1");
    assert_eq!(change["turn"], 1);
    assert_eq!(change["players"], serde_json::json!([0]));
    assert_eq!(change["points"], 3);
    assert_eq!(change["feature"]["kind"], "road");
    assert_eq!(change["feature"]["tiles"], 3);
}

#[test]
fn score_prints_scores_and_the_board() {
    let path = records().join("hand/city-2-small.json");
    let out = run(&["score", path.to_str().unwrap(), "--board"], "");
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("Ada      2\nBrun     0\nfinished after 1 turn\n"),
        "{text}"
    );
    assert!(
        text.contains("B-S4   city at (0,0) N, 2 tiles, 0 pennants: Ada +2"),
        "{text}"
    );
    // One of a thing is said in the singular.
    let path = records().join("shared/base-2p.json");
    let scored = stdout(&run(&["score", path.to_str().unwrap()], ""));
    assert!(scored.contains(", 1 tile, "), "{scored}");
    assert!(
        !scored.contains(" 1 tiles") && !scored.contains(" 1 pennants"),
        "{scored}"
    );
    // The board: E at (0,1) over D at (0,0), the knight of seat 0 gone home.
    assert!(text.contains("  1   .\n     . .\n      #\n  0   #"), "{text}");
}

#[test]
fn unreadable_input_is_a_clear_error() {
    let out = run(&["score", "/nonexistent/record.json"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading /nonexistent/record.json"));
    let out = run(&["verify", "-"], "not json");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "$: expected ident at line 1 column 2\n");
}

#[test]
fn demo_record_on_standard_output_is_the_record_alone_and_verifies() {
    // As in the README: `demo --record > game.json`, then `verify game.json`.
    let out = run(&["demo", "--seed", "5", "--players", "3", "--record"], "");
    assert_eq!(out.status.code(), Some(0));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not the record alone: {e}\n{}", stdout(&out)));
    assert_eq!(record["players"].as_array().map(Vec::len), Some(3));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("game.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let verified = run(&["verify", file.to_str().unwrap()], "");
    assert_eq!(verified.status.code(), Some(0), "{}", stdout(&verified));
    assert!(stdout(&verified).starts_with("ok: 71 turns, finished"));
    // The board and the scores are still shown, on standard error.
    let shown = String::from_utf8_lossy(&out.stderr);
    assert!(shown.contains("finished after 71 turns"), "{shown}");
    // Players are named by seat, as the board draws their followers.
    assert!(shown.contains("Bot 0 ") && shown.contains("Bot 2 "), "{shown}");
}

#[test]
fn demo_record_to_a_file_keeps_the_board_and_scores_on_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.json");
    let out = run(
        &[
            "demo",
            "--seed",
            "5",
            "--count",
            "--record",
            file.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(text.contains("finished after"), "{text}");
    assert!(!text.contains("carcassonne-record"), "{text}");
    let verified = run(&["verify", file.to_str().unwrap()], "");
    assert_eq!(verified.status.code(), Some(0), "{}", stdout(&verified));
    // Without `--record`: the board and the scores, no record.
    let plain = stdout(&run(&["demo", "--seed", "5"], ""));
    assert!(
        plain.contains("finished after") && !plain.contains("carcassonne-record"),
        "{plain}"
    );
}

#[test]
fn a_reader_that_went_away_is_no_panic() {
    // As `carcassonne score x.json --json | head -1` when head has quit.
    let path = records().join("shared/base-4p.json");
    let path = path.to_str().unwrap();
    for args in [
        &["score", path, "--json"][..],
        &["score", path, "--board"],
        &["verify", path],
        &["demo", "--record"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_carcassonne"))
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

#[test]
fn serve_starts_with_no_setup_and_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let served = serve(&data, &dir.path().join("log"), &[]).unwrap();
    assert!(served.addr.starts_with("http://127.0.0.1:"), "{}", served.addr);
    assert!(data.is_dir(), "the store directory is created");
    let (status, log) = served.terminate();
    assert_eq!(status.code(), Some(0), "{log}");
}

/// `carcassonne verify -` on a record's text: what it prints.
pub fn run_verify(record: &str) -> String {
    stdout(&run(&["verify", "-"], record))
}

#[test]
fn what_the_readme_commands_make_is_git_ignored() {
    // The Python client's `.venv`, `demo --record > game.json`, `serve`'s
    // `./data`, `backup`'s `games.backup`, `restore`'s `./data-restored`,
    // `render`'s `board.png`, `tiles`' `tiles.svg`, the archive's
    // `game.tar` and `public-key`'s `server.pub`.
    let root = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| Command::new("git").arg("-C").arg(root).args(args).output();
    if !git(&["rev-parse", "--git-dir"]).is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no git, or {root} is not a git checkout");
        return;
    }
    let made = [
        ".venv/bin/python",
        "game.json",
        "data/db",
        "games.backup",
        "data-restored/db",
        "board.png",
        "tiles.svg",
        "game.tar",
        "server.pub",
    ];
    let out = git(&[&["check-ignore"], &made[..]].concat()).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        made.map(|path| format!("{path}\n")).concat(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_cargo_run_of_the_docs_builds_the_release_binary() {
    // A `cargo run` without `--release` among `--release` ones starts a
    // second full build (a debug one) before it runs.
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut docs = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    let mut debug = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.contains("cargo run ") && !line.contains("cargo run --release") {
                debug.push(format!("{}:{}: {line}", doc.display(), i + 1));
            }
        }
    }
    assert!(debug.is_empty(), "without --release:\n{}", debug.join("\n"));
}
