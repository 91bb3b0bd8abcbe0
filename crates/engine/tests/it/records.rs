//! Records: reading, writing, replaying and scoring.

use std::path::PathBuf;

use carcassonne_engine::record::Record;

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
    for name in [
        "base-2p.json",
        "base-4p.json",
        "base-2p-modern.json",
        "short-bag.json",
        "river-3p.json",
    ] {
        check_example(name);
    }
}
