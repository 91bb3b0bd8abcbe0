//! Golden SVGs of recorded games, at their end and in the middle, in
//! `tests/golden/` (regenerate on purpose with
//! `UPDATE_PICTURES=1 cargo test -p carcassonne-picture`).

use carcassonne_picture::{BoardOptions, board_svg};

use crate::support::{check_golden, crate_dir, game_after, report, shared_record};

/// (record, turns to replay or all, with coordinates)
const CASES: [(&str, Option<usize>, bool); 6] = [
    ("base-2p.json", None, false),
    ("base-4p.json", Some(30), true),
    ("river-3p.json", None, false),
    ("count-3p.json", None, false),
    ("count-3p.json", Some(40), true),
    ("river-count-2p.json", None, true),
];

#[test]
fn recorded_games_draw_as_their_golden_pictures() {
    let mut complaints = Vec::new();
    for (name, turns, coordinates) in CASES {
        let game = game_after(&shared_record(name), turns);
        let options = BoardOptions {
            coordinates,
            ..BoardOptions::default()
        };
        let svg = board_svg(&game, &options);
        let stem = name.trim_end_matches(".json");
        let file = match turns {
            Some(n) => format!("{stem}-turn-{n}.svg"),
            None => format!("{stem}.svg"),
        };
        complaints.extend(check_golden(&crate_dir().join("tests/golden").join(file), &svg));
    }
    report(complaints);
}
