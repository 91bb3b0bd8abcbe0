//! What the tests share: recorded games, replayed up to a turn, and the
//! golden-file comparison.

use std::path::{Path, PathBuf};

use carcassonne_engine::Game;
use carcassonne_engine::record::Record;

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn shared_record(name: &str) -> Record {
    let path = crate_dir().join("../engine/tests/records/shared").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Record::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The game after the first `turns` turns of `record` (all of them, with
/// the final round, when `turns` is `None`).
pub fn game_after(record: &Record, turns: Option<usize>) -> Game {
    let record = match turns {
        Some(n) => record.first_turns(n).unwrap_or_else(|e| panic!("{e}")),
        None => record.clone(),
    };
    record.replay().unwrap_or_else(|e| panic!("{e}")).game
}

/// Whether golden files are being rewritten (`UPDATE_PICTURES=1`).
pub fn updating() -> bool {
    std::env::var_os("UPDATE_PICTURES").is_some_and(|v| v == "1")
}

/// Compares `actual` with the committed file at `path`, or rewrites the
/// file when updating. Returns a complaint, if any.
pub fn check_golden(path: &Path, actual: &str) -> Option<String> {
    if updating() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return None;
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => None,
        Ok(_) => Some(format!(
            "{} differs from what the renderer draws now",
            path.display()
        )),
        Err(e) => Some(format!("{}: {e}", path.display())),
    }
}

pub fn report(complaints: Vec<String>) {
    assert!(
        complaints.is_empty(),
        "{}\n(if the drawing changed on purpose: UPDATE_PICTURES=1 cargo test -p carcassonne-picture)",
        complaints.join("\n")
    );
}
