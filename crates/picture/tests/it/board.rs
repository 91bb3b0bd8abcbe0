//! Boards: the same state gives the same bytes, whatever the way it was
//! reached; what the options ask for is there.

use carcassonne_engine::{Game, Rotation, TileKind};
use carcassonne_picture::{BoardOptions, board_svg, tile_sheet_svg, tile_svg};

use crate::support::{game_after, shared_record};

#[test]
fn the_same_state_gives_the_same_bytes() {
    let record = shared_record("river-count-2p.json");
    let replay = record.replay().unwrap();
    // Once replayed, once folded from its events: two separate states.
    let folded = Game::fold(&replay.events).unwrap();
    let options = BoardOptions {
        coordinates: true,
        highlight_last: true,
    };
    let first = board_svg(&replay.game, &options);
    assert_eq!(first, board_svg(&folded, &options));
    assert_eq!(first, board_svg(&replay.game, &options));
    assert_eq!(tile_sheet_svg(), tile_sheet_svg());
    let kind = TileKind::from_name("S").unwrap();
    assert_eq!(tile_svg(kind, Rotation::R90), tile_svg(kind, Rotation::R90));
    assert_ne!(tile_svg(kind, Rotation::R90), tile_svg(kind, Rotation::R180));
    // Another state, another picture.
    let earlier = game_after(&record, Some(10));
    assert_ne!(first, board_svg(&earlier, &options));
}

#[test]
fn coordinates_and_the_last_tile_are_drawn_only_when_asked() {
    let game = game_after(&shared_record("base-2p.json"), Some(5));
    let plain = board_svg(
        &game,
        &BoardOptions {
            coordinates: false,
            highlight_last: false,
        },
    );
    let full = board_svg(
        &game,
        &BoardOptions {
            coordinates: true,
            highlight_last: true,
        },
    );
    assert!(!plain.contains(r#"class="coordinates""#));
    assert!(full.contains(r#"class="coordinates""#));
    assert!(!plain.contains(r#"class="last""#));
    assert!(full.contains(r#"class="last""#));
    assert!(full.contains(">0</text>"), "column and row numbers");
    // Before any turn, no tile was placed by a player: nothing to frame.
    let start = game_after(&shared_record("base-2p.json"), Some(0));
    assert!(!board_svg(&start, &BoardOptions::default()).contains(r#"class="last""#));
}
