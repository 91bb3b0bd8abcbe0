//! Records: reading, writing, replaying and scoring.

use std::path::PathBuf;

use carcassonne_engine::record::Record;

/// The example records of `tests/records/shared`: games of random legal
/// moves, each with the `final_scores` an independent implementation of
/// the rules gave it.
const EXAMPLES: [&str; 7] = [
    "base-2p.json",
    "base-4p.json",
    "base-2p-modern.json",
    "short-bag.json",
    "river-3p.json",
    "count-3p.json",
    "river-count-2p.json",
];

fn shared_examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/records/shared")
}

/// Replays the record at `path` and compares its scores with its claim.
fn check_example(name: &str) {
    let path = shared_examples().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let record = Record::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let replay = record.replay().unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(replay.game.is_finished(), "{name}: not finished");
    assert_eq!(Some(replay.game.scores().to_vec()), record.final_scores, "{name}");
}

#[test]
fn shared_examples_score_as_claimed() {
    for name in EXAMPLES {
        check_example(name);
    }
}

fn hand_written() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/records/hand")
}

#[test]
fn hand_written_records_score_as_explained() {
    let mut checked = 0;
    for entry in std::fs::read_dir(hand_written()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let record = Record::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            record
                .verify()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} hand-written records");
}

/// Parses and verifies a record given as its `players`, `tiles` and
/// `turns` (the rest is filled in), and returns the error it gives.
fn error_of(rules: &str, tiles: &str, turns: &str, extra: &str) -> String {
    let tiles = if tiles.is_empty() {
        String::new()
    } else {
        format!(r#""tiles": {tiles},"#)
    };
    let text = format!(
        r#"{{"format": "carcassonne-record/1", "rules": {rules}, "players": ["Ada", "Brun"], {tiles} "turns": [{turns}] {extra}}}"#
    );
    match Record::parse(&text).and_then(|r| r.verify()) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

fn check_error(rules: &str, tiles: &str, turns: &str, extra: &str, expected: &str) {
    let actual = error_of(rules, tiles, turns, extra);
    assert_eq!(actual, expected, "\nrecord turns: {turns}");
}

#[test]
fn rule_errors_name_turn_rule_and_what_is_wrong() {
    let base = "{}";
    let river = r#"{"river": true}"#;
    check_error(
        base,
        r#"{"E": 1, "V": 1}"#,
        r#"{"tile": "E", "x": 0, "y": 1, "rotation": 180}, {"tile": "V", "x": 1, "y": 0, "rotation": 180}"#,
        "",
        "turn 1: B-T1: edge W of V at (1,0) is field, neighbour's E edge is road",
    );
    check_error(
        base,
        r#"{"E": 1}"#,
        r#"{"tile": "E", "x": 0, "y": 0, "rotation": 0}"#,
        "",
        "turn 0: B-T1: E at (0,0): the cell is already taken",
    );
    check_error(
        base,
        r#"{"E": 1}"#,
        r#"{"tile": "E", "x": 5, "y": 5, "rotation": 0}"#,
        "",
        "turn 0: B-T1: E at (5,5) touches no placed tile",
    );
    check_error(
        base,
        r#"{"U": 2}"#,
        r#"{"tile": "U", "x": 1, "y": 0, "rotation": 0, "follower": "W"}, {"tile": "U", "x": -1, "y": 0, "rotation": 0, "follower": "E"}"#,
        "",
        "turn 1: B-T3: the road at E of U at (-1,0) already holds a follower",
    );
    check_error(
        base,
        r#"{"U": 1}"#,
        r#"{"tile": "U", "x": 1, "y": 0, "rotation": 0, "follower": "cloister"}"#,
        "",
        "turn 0: B-T3: U at (1,0) has no feature at cloister",
    );
    check_error(
        base,
        r#"{"U": 1}"#,
        r#"{"tile": "X", "x": 1, "y": 0, "rotation": 0}"#,
        "",
        "turn 0: B-1: no X is left in the bag",
    );
    check_error(
        base,
        r#"{"U": 1}"#,
        r#"{"tile": "U", "x": 1, "y": 0, "rotation": 0}, {"tile": "U", "x": 2, "y": 0, "rotation": 0}"#,
        "",
        "turn 1: B-E1: the game is over: every tile was drawn",
    );
    check_error(
        base,
        r#"{"U": 1}"#,
        r#"{"tile": "U", "discarded": true}"#,
        "",
        "turn 0: B-T2: U can be placed (e.g. at (1,0) rotation 0), so it is not discarded",
    );
    check_error(
        base,
        r#"{"E": 1, "C": 1}"#,
        r#"{"tile": "E", "x": 0, "y": 1, "rotation": 180}, {"tile": "C", "x": 0, "y": 2, "rotation": 0}"#,
        "",
        "turn 1: B-T2: C fits nowhere: it must be discarded, not placed at (0,2)",
    );
    check_error(
        base,
        r#"{"U": 1}"#,
        r#"{"tile": "U", "x": 1, "y": 0, "rotation": 0, "follower": "W"}"#,
        r#", "final_scores": [3, 0]"#,
        "final_scores: the record claims [3, 0], but its turns score [2, 0]",
    );
    check_error(
        river,
        "",
        r#"{"tile": "U", "x": 1, "y": 0, "rotation": 0}"#,
        "",
        "turn 0: R-2: U drawn where the next tile must be a river tile other than the lake",
    );
    check_error(
        river,
        "",
        r#"{"tile": "R5", "x": 0, "y": 1, "rotation": 0}"#,
        "",
        "turn 0: R-3: R5 at (0,1) does not continue the river, which is open at (1,0)",
    );
    check_error(
        river,
        "",
        r#"{"tile": "R8", "x": 1, "y": 0, "rotation": 0}, {"tile": "R8", "x": 1, "y": -1, "rotation": 90}"#,
        "",
        "turn 1: R-4: R8 at (1,-1) would make the river flow W, back towards the spring",
    );
    check_error(
        river,
        "",
        r#"{"tile": "R5", "x": 1, "y": 0, "rotation": 0, "follower": "E"}"#,
        "",
        "turn 0: R-5: E of R5 at (1,0) is the river: no follower may stand on it",
    );
}

#[test]
fn shape_errors_name_the_json_path() {
    let check = |text: &str, expected: &str| {
        let error = Record::parse(text).err().map(|e| e.to_string());
        assert_eq!(error.as_deref(), Some(expected), "\n{text}");
    };
    let head = r#""format": "carcassonne-record/1", "players": ["A", "B"]"#;
    check("{", "$: EOF while parsing an object at line 1 column 1");
    check(
        r#"{"format": "carcassonne-record/2", "players": [], "turns": []}"#,
        r#"$.format: expected "carcassonne-record/1", found "carcassonne-record/2""#,
    );
    check(
        &format!(r#"{{{head}, "turns": [{{"tile": "V", "x": 1, "y": 0, "rotation": 45}}]}}"#),
        "$.turns[0].rotation: expected 0, 90, 180 or 270, found 45",
    );
    check(
        &format!(r#"{{{head}, "turns": [{{"tile": "Z", "x": 1, "y": 0, "rotation": 0}}]}}"#),
        r#"$.turns[0].tile: unknown tile kind "Z""#,
    );
    check(
        &format!(r#"{{{head}, "turns": [{{"tile": "V", "x": "1", "y": 0, "rotation": 0}}]}}"#),
        r#"$.turns[0].x: invalid type: string "1", expected i32 at line 1 column 90"#,
    );
    check(
        &format!(r#"{{{head}, "turns": [{{"tile": "V", "y": 0, "rotation": 0}}]}}"#),
        "$.turns[0].x: missing field",
    );
    check(
        &format!(
            r#"{{{head}, "turns": [{{"tile": "V", "x": 1, "y": 0, "rotation": 0, "follower": "middle"}}]}}"#
        ),
        r#"$.turns[0].follower: expected N, E, S, W, a half-edge (Nw, Ne, En, Es, Se, Sw, Ws, Wn) or cloister, found "middle""#,
    );
    check(
        &format!(r#"{{{head}, "rules": {{"farmers": "lots"}}, "turns": []}}"#),
        r#"$.rules.farmers: expected "city_centric_4" or "farm_centric_3", found "lots""#,
    );
    check(
        &format!(r#"{{{head}, "tiles": {{"RS": 1}}, "turns": []}}"#),
        "$.tiles.RS: RS is not a land tile",
    );
    check(
        r#"{"format": "carcassonne-record/1", "players": ["A"], "turns": []}"#,
        "players: B-2: a game has 2 to 5 players, not 1",
    );
}

#[test]
fn a_written_record_reads_back_and_scores_the_same() {
    for name in EXAMPLES {
        let text = std::fs::read_to_string(shared_examples().join(name)).unwrap();
        let record = Record::parse(&text).unwrap();
        let replay = record.verify().unwrap();
        // Written records name followers canonically; everything else is
        // as read, and it replays to the same game.
        let written = Record::from_events(&replay.events).unwrap();
        assert_eq!(
            (&written.rules, &written.players, &written.tiles),
            (&record.rules, &record.players, &record.tiles)
        );
        assert_eq!(written.final_scores, record.final_scores, "{name}");
        let reread = Record::parse(&written.to_json()).unwrap();
        assert_eq!(reread, written, "{name}");
        let again = reread.verify().unwrap();
        assert_eq!(again.game, replay.game, "{name}");
        assert_eq!(again.events, replay.events, "{name}");
    }
}
