//! The picture commands, as a user runs them: `render` and `tiles`.

use std::path::PathBuf;

use carcassonne_engine::record::Record;
use carcassonne_picture::{BoardOptions, board_svg, tile_sheet_svg};

use crate::support::carcassonne as run;

fn record_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("crates/engine/tests/records/shared")
        .join(name)
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n")
}

#[test]
fn render_writes_the_board_at_the_end_or_after_the_first_n_turns() {
    let path = record_path("river-count-2p.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let record = Record::parse(&text).unwrap();

    let all = run(&["render", path.to_str().unwrap()], "");
    assert_eq!(all.status.code(), Some(0), "{}", stderr(&all));
    let end = record.replay().unwrap().game;
    assert_eq!(
        String::from_utf8(all.stdout).unwrap(),
        board_svg(&end, &BoardOptions::default())
    );

    // From standard input, after 7 turns, with coordinates.
    let seven = run(&["render", "-", "--turn", "7", "--coordinates"], &text);
    assert_eq!(seven.status.code(), Some(0), "{}", stderr(&seven));
    let mut cut = record.clone();
    cut.turns.truncate(7);
    cut.final_round = None;
    cut.final_scores = None;
    let options = BoardOptions {
        coordinates: true,
        ..BoardOptions::default()
    };
    assert_eq!(
        String::from_utf8(seven.stdout).unwrap(),
        board_svg(&cut.replay().unwrap().game, &options)
    );

    // Every turn: the last one is the whole record.
    let last = format!("{}", record.turns.len());
    let whole = run(&["render", path.to_str().unwrap(), "--turn", &last], "");
    assert_eq!(
        String::from_utf8(whole.stdout).unwrap(),
        board_svg(&end, &BoardOptions::default())
    );
}

/// A record with a timeline (a resignation, T-8) is cut with its timeline:
/// the turns kept keep their times, and those cut off take theirs along.
#[test]
fn render_after_the_first_n_turns_of_a_timed_record() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/engine/tests/records/hand/resigned-3.json");
    let record = Record::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(record.timeline.is_some());
    let one = run(&["render", path.to_str().unwrap(), "--turn", "1"], "");
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    let after_one = record.first_turns(1).unwrap().replay().unwrap().game;
    assert_eq!(after_one.tiles().len(), 2, "the start tile and the first W");
    assert_eq!(
        String::from_utf8(one.stdout).unwrap(),
        board_svg(&after_one, &BoardOptions::default())
    );
}

#[test]
fn render_writes_png_or_svg_by_the_file_extension() {
    let dir = tempfile::tempdir().unwrap();
    let path = record_path("count-3p.json");
    let png = dir.path().join("board.png");
    let out = run(
        &["render", path.to_str().unwrap(), "-o", png.to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(is_png(&std::fs::read(&png).unwrap()));

    let svg = dir.path().join("board.svg");
    let out = run(
        &[
            "render",
            path.to_str().unwrap(),
            "--turn",
            "3",
            "-o",
            svg.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg "));

    let other = dir.path().join("board.gif");
    let out = run(
        &["render", path.to_str().unwrap(), "-o", other.to_str().unwrap()],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("must end in .svg or .png"),
        "{}",
        stderr(&out)
    );
    assert!(!other.exists());
}

#[test]
fn render_refuses_a_turn_beyond_the_record_and_names_its_length() {
    let path = record_path("base-2p.json");
    let turns = Record::parse(&std::fs::read_to_string(&path).unwrap())
        .unwrap()
        .turns
        .len();
    let beyond = (turns + 1).to_string();
    let out = run(&["render", path.to_str().unwrap(), "--turn", &beyond], "");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!("error: --turn {beyond}: the record has {turns} turns, so N is 0 to {turns}\n")
    );
    assert!(out.stdout.is_empty());

    let negative = run(&["render", path.to_str().unwrap(), "--turn", "-1"], "");
    assert_eq!(negative.status.code(), Some(2), "{}", stderr(&negative));
}

#[test]
fn render_of_an_unreadable_or_illegal_record_says_why() {
    let out = run(&["render", "-"], "{ not json");
    assert_eq!(out.status.code(), Some(1));
    assert!(!stderr(&out).is_empty());
    assert!(out.stdout.is_empty());

    let text = std::fs::read_to_string(record_path("short-bag.json"))
        .unwrap()
        .replace(
            r#"{"tile": "V", "x": 1, "y": 0, "rotation": 90}"#,
            r#"{"tile": "V", "x": 1, "y": 0, "rotation": 0}"#,
        );
    let out = run(&["render", "-"], &text);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("turn 2: B-T1:"), "{}", stderr(&out));
}

#[test]
fn tiles_draws_every_kind_as_a_sheet() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("tiles.svg");
    let out = run(&["tiles", "-o", svg.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), tile_sheet_svg());

    let png = dir.path().join("tiles.png");
    let out = run(&["tiles", "-o", png.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(is_png(&std::fs::read(&png).unwrap()));

    let stdout = run(&["tiles"], "");
    assert_eq!(String::from_utf8(stdout.stdout).unwrap(), tile_sheet_svg());
}
