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

#[test]
fn records_limit_the_bag_and_the_coordinates_at_parse_time() {
    let check = |text: &str, expected: &str| {
        let error = Record::parse(text).err().map(|e| e.to_string());
        assert_eq!(error.as_deref(), Some(expected), "\n{text}");
    };
    let head = r#""format": "carcassonne-record/1", "players": ["A", "B"]"#;
    check(
        &format!(r#"{{{head}, "tiles": {{"C": 600, "E": 401}}, "turns": []}}"#),
        "$.tiles: a bag holds at most 1000 tiles, not 1001",
    );
    let turn = |x: i64, y: i64| format!(r#"{{"tile": "V", "x": {x}, "y": {y}, "rotation": 0}}"#);
    for (x, y, field) in [
        (10_001, 0, "x"),
        (0, -10_001, "y"),
        (i64::from(i32::MIN), 0, "x"),
        (0, i64::from(i32::MAX), "y"),
    ] {
        let value = if field == "x" { x } else { y };
        check(
            &format!(r#"{{{head}, "turns": [{}]}}"#, turn(x, y)),
            &format!("$.turns[0].{field}: coordinates lie within -10000..=10000, not {value}"),
        );
    }
    let count = r#""rules": {"count": true}"#;
    check(
        &format!(
            r#"{{{head}, {count}, "turns": [{{"tile": "V", "x": 2, "y": 1, "rotation": 0,
            "redeploy": [{{"player": 1, "to": {{"x": 0, "y": -2147483648, "at": "N"}}}}]}}]}}"#
        ),
        "$.turns[0].redeploy[0].to.y: coordinates lie within -10000..=10000, not -2147483648",
    );
    check(
        &format!(
            r#"{{{head}, {count}, "turns": [],
            "final_round": [{{"player": 0, "to": {{"x": 2147483647, "y": 0, "at": "N"}}}}]}}"#
        ),
        "$.final_round[0].to.x: coordinates lie within -10000..=10000, not 2147483647",
    );
    // The limits themselves are fine; such a turn is then refused by the rules.
    let far = format!(r#"{{{head}, "turns": [{}]}}"#, turn(10_000, -10_000));
    let error = Record::parse(&far).unwrap().replay().unwrap_err();
    assert_eq!(
        error.to_string(),
        "turn 0: B-T1: V at (10000,-10000) touches no placed tile"
    );
}

/// 300 `C` tiles (four city edges and a pennant each) in a column north of
/// the start tile's city: one city of 301 tiles and 300 pennants, never
/// complete. Seat 0's knight on the first makes it theirs at the end:
/// B-FS1 gives 1 per tile and 1 per pennant, 301 + 300 = 601. A pennant
/// counter of 8 bits would wrap to 44 and give 345.
fn column_of_pennants() -> String {
    let turns: Vec<String> = (1..=300)
        .map(|y| {
            let follower = if y == 1 { r#", "follower": "N""# } else { "" };
            format!(r#"{{"tile": "C", "x": 0, "y": {y}, "rotation": 0{follower}}}"#)
        })
        .collect();
    format!(
        r#"{{"format": "carcassonne-record/1", "players": ["Ada", "Brun"], "tiles": {{"C": 300}}, "turns": [{}], "final_scores": [601, 0]}}"#,
        turns.join(", ")
    )
}

#[test]
fn a_city_of_300_pennants_scores_601_through_the_record_reader() {
    let record = Record::parse(&column_of_pennants()).unwrap();
    let replay = record.verify().unwrap();
    assert!(replay.game.is_finished());
    assert_eq!(replay.game.scores(), [601, 0]);
    let written = Record::from_events(&replay.events).unwrap();
    assert_eq!(written.final_scores, Some(vec![601, 0]));
    assert_eq!(
        Record::parse(&written.to_json())
            .unwrap()
            .verify()
            .unwrap()
            .game
            .scores(),
        [601, 0]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: if crate::props::slow_tests() { 5000 } else { 256 },
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// The record reader on arbitrary bytes: parsing and replaying never
    /// panic, and a refusal is a one-line message that names where.
    #[test]
    fn the_record_reader_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        check_reader(&String::from_utf8_lossy(&bytes));
    }

    /// The record reader on JSON-like text built from the record's own
    /// words, numbers at the edges of their types and the example records
    /// cut and spliced: it reaches deep into the shape and into the rules.
    #[test]
    fn the_record_reader_never_panics_on_record_like_text(text in record_like()) {
        check_reader(&text);
    }
}

fn check_reader(text: &str) {
    match Record::parse(text) {
        Err(error) => check_message(&error.to_string()),
        Ok(record) => {
            if let Err(error) = record.verify() {
                check_message(&error.to_string());
            }
        }
    }
}

fn check_message(message: &str) {
    assert!(!message.is_empty());
    assert!(!message.contains('\n'), "one line: {message:?}");
    let named = message.starts_with('$')
        || message.starts_with("turn ")
        || message.starts_with("players: ")
        || message.starts_with("tiles: ")
        || message.starts_with("final_scores: ");
    assert!(named, "the message names where: {message:?}");
}

/// Text made of record fragments: a valid example record cut at a random
/// point and spliced with fragments, or a skeleton with fields of random
/// values.
fn record_like() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let number = prop_oneof![
        Just("0".to_owned()),
        Just("-1".to_owned()),
        Just("90".to_owned()),
        Just("2147483647".to_owned()),
        Just("-2147483648".to_owned()),
        Just("4294967296".to_owned()),
        Just("1e400".to_owned()),
        Just("65535".to_owned()),
        Just("1000".to_owned()),
        (-3i32..4).prop_map(|n| n.to_string()),
    ];
    let word = prop_oneof![
        Just("\"C\"".to_owned()),
        Just("\"RS\"".to_owned()),
        Just("\"N\"".to_owned()),
        Just("\"Nw\"".to_owned()),
        Just("\"cloister\"".to_owned()),
        Just("\"castle\"".to_owned()),
        Just("\"market\"".to_owned()),
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
    ];
    let value = prop_oneof![number.clone(), word.clone()];
    let place = prop::sample::select(vec![
        "\"N\"",
        "\"S\"",
        "\"Wn\"",
        "\"Es\"",
        "\"cloister\"",
        "\"middle\"",
        "7",
    ]);
    let quarter = prop::sample::select(vec!["castle", "blacksmith", "cathedral", "market", "moat"]);
    let turn = (
        prop::sample::select(vec!["V", "C", "D", "B", "U", "R5", "RL", "E", "X"]),
        prop_oneof![3 => (-2i32..3).prop_map(|n| n.to_string()), 1 => number.clone()],
        prop_oneof![3 => (-2i32..3).prop_map(|n| n.to_string()), 1 => number.clone()],
        prop::sample::select(vec!["0", "90", "180", "270", "45"]),
        prop::option::of(place),
        prop::option::of((quarter.clone(), prop::option::of(quarter))),
        prop::option::weighted(0.1, prop::sample::select(vec!["true", "false"])),
    )
        .prop_map(|(tile, x, y, rotation, follower, deploy, discarded)| {
            let mut turn = format!(r#"{{"tile": "{tile}", "x": {x}, "y": {y}, "rotation": {rotation}"#);
            if let Some(follower) = follower {
                turn += &format!(r#", "follower": {follower}"#);
            }
            if let Some((quarter, count)) = deploy {
                let count = count.map(|c| format!(r#", "count": "{c}""#)).unwrap_or_default();
                turn += &format!(r#", "carcassonne": {{"quarter": "{quarter}"{count}}}"#);
            }
            if let Some(discarded) = discarded {
                turn += &format!(r#", "discarded": {discarded}"#);
            }
            turn + "}"
        });
    let skeleton = (
        any::<bool>(),
        any::<bool>(),
        prop::option::weighted(0.3, (prop::sample::select(vec!["C", "V", "A", "RS"]), value.clone())),
        prop::collection::vec(turn, 0..8),
        prop::option::weighted(0.2, value.clone()),
        prop::option::weighted(0.2, value),
    )
        .prop_map(|(river, count, tiles, turns, player, score)| {
            let tiles = tiles
                .map(|(kind, n)| format!(r#", "tiles": {{"{kind}": {n}}}"#))
                .unwrap_or_default();
            let final_round = player
                .map(|p| format!(r#", "final_round": [{{"player": {p}, "pass": true}}]"#))
                .unwrap_or_default();
            let scores = score.map(|s| format!(r#", "final_scores": [{s}, 0]"#)).unwrap_or_default();
            format!(
                r#"{{"format": "carcassonne-record/1", "rules": {{"river": {river}, "count": {count}}}, "players": ["A", "B"]{tiles}, "turns": [{}]{final_round}{scores}}}"#,
                turns.join(", ")
            )
        });
    let examples: Vec<String> = EXAMPLES
        .iter()
        .map(|name| std::fs::read_to_string(shared_examples().join(name)).unwrap())
        .collect();
    let spliced = (
        prop::sample::select(examples),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        "[\\[\\]{}\",:0-9a-zA-Z -]{0,12}",
    )
        .prop_map(|(text, cut, resume, middle)| {
            let bytes = text.as_bytes();
            let (a, b) = (cut.index(bytes.len()), resume.index(bytes.len()));
            let (a, b) = (a.min(b), a.max(b));
            format!(
                "{}{middle}{}",
                String::from_utf8_lossy(&bytes[..a]),
                String::from_utf8_lossy(&bytes[b..])
            )
        });
    prop_oneof![skeleton, spliced]
}
