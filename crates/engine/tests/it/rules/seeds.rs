//! The worked examples of the base rulebook page (source 001 of
//! docs/rules.md) and the city question of source 003, each rebuilt as a
//! board of real tiles.

use carcassonne_engine::*;

use super::{given, pos};

#[test]
fn seed_001_a_road_worth_3_with_a_thief_that_returns_at_once() {
    // "The road scores 3": the thief goes on the tile that completes the
    // road from crossroads to crossroads, scores and returns (B-T4).
    let t = given(&["W 1 0 0", "W -1 0 0 E"]).play();
    assert_eq!(t.scored(), [(vec![1], 3, id::B_S1)], "B-S1: 3 tiles");
    assert_eq!(t.supply(), [7, 7], "B-T4: the thief is back");
}

#[test]
fn seed_001_a_city_worth_8() {
    // 3 tiles and a pennant: D, M, E.
    let t = given(&["M 0 1 180 S", "E 1 1 270"]).play();
    assert_eq!(t.scored(), [(vec![0], 8, id::B_S2)], "B-S2: 2*3 + 2*1");
}

#[test]
fn seed_001_a_cloister_worth_9() {
    let t = given(&[
        "B 0 -1 0 cloister",
        "U -1 0 0",
        "U 1 0 0",
        "E -1 -1 270",
        "E 1 -1 90",
        "E -1 -2 270",
        "E 0 -2 180",
        "E 1 -2 90",
    ])
    .play();
    assert_eq!(t.scored(), [(vec![0], 9, id::B_S3)], "B-S3");
}

#[test]
fn seed_001_a_two_tile_city_worth_2() {
    // "Exception: a completed city of only 2 segments scores 2 (not 4)."
    let t = given(&["E 0 1 180 S"]).play();
    assert_eq!(t.scored(), [(vec![0], 2, id::B_S4)], "B-S4");
    assert_eq!(t.supply(), [7, 7], "B-T4");
}

#[test]
fn b_s5_seed_001_tied_knights_each_score_the_full_10() {
    // "The new tile joins the city segments into one completed city: each
    // player scores the city's 10 points, since each has 1 knight in it."
    // Seat 0 knights the I's east city, seat 1 the N; the E closes the N's
    // city on the north, the F (pennant) joins both: 4 tiles, 1 pennant.
    let t = given(&[
        "I 0 1 180 E",
        "U 1 0 0",
        "U 2 0 0",
        "N 2 1 0 N",
        "E 2 2 180",
        "F 1 1 0",
    ])
    .play();
    assert_eq!(
        t.scored(),
        [(vec![0, 1], 10, id::B_S2)],
        "B-S5: both score the full 10"
    );
    assert_eq!(t.scores(), [10, 10]);
}

#[test]
fn b_s5_seed_003_two_knights_against_one_take_all_8_and_0() {
    // The smallest base-game board (docs/rules.md, note under B-S5): a 4-tile
    // city. Seat 0 knights the D at (1,0) and the E at (2,1), seat 1 the I's
    // east city at (0,1); the R at (1,1) joins the three.
    let mut t = given(&["D 1 0 0 N", "U 2 0 0", "E 2 1 270 W", "I 0 1 180 E", "R 1 1 180"]).table(1);
    for turn in ["D 1 0 0 N", "U 2 0 0", "E 2 1 270 W", "I 0 1 180 E"] {
        t.turn(turn);
    }
    assert_eq!(t.supply(), [5, 6]);
    t.draw("R");
    t.place(1, 1, 180);
    assert_eq!(
        t.follower_places(),
        ["Nw"],
        "B-T3: the joining tile takes no knight on the claimed city, only a farmer"
    );
    t.follow(None);
    let city = t.completed().into_iter().find(|f| f.at == pos(1, 0));
    assert_eq!(
        city.map(|c| (c.kind, c.tiles, c.pennants)),
        Some((FeatureKind::City, 4, 0))
    );
    assert_eq!(
        t.scored(),
        [(vec![0], 8, id::B_S2)],
        "B-S5: two knights against one: 8 and 0, not 16 and 0"
    );
    assert_eq!(t.scores(), [8, 0]);
    assert_eq!(t.supply(), [7, 7], "B-T4: the loser's knight returns too");
}

#[test]
fn seed_001_a_farmer_scores_4_for_a_completed_city_and_nothing_for_an_open_one() {
    // The H's field borders the city D-H (completed when the H is placed)
    // and the H's open north city.
    let t = given(&["H 0 1 0 En"]).play_to_end();
    assert_eq!(t.scored(), [(vec![0], 4, id::B_F3)], "B-F2, B-F3");
}

#[test]
fn seed_001_one_field_supplying_two_cities_scores_8() {
    let t = given(&["H 0 1 0 En", "E 0 2 180"]).play_to_end();
    assert_eq!(t.scores(), [8, 0], "B-F2: 4 for each of the two cities");
    assert_eq!(t.scored_by(id::B_F3).len(), 2);
}

#[test]
fn seed_001_the_majority_of_farmers_scores_each_city() {
    // The small city D-E: seat 0's farmer north of the road and seat 1's
    // round the E share one field once the B joins them: a tie, 4 each.
    // The big city (the F with an E at either end, south of D): only seat
    // 0's farmer round its west E borders it: 4 to seat 0.
    let t = given(&[
        "U 1 0 0 Nw",
        "E 0 1 180 Nw",
        "B 1 1 0",
        "F 0 -1 0",
        "E -1 -1 90 Nw",
        "E 1 -1 270",
    ])
    .play_to_end();
    let mut farmers = t.scored_by(id::B_F3);
    farmers.sort();
    assert_eq!(
        farmers,
        [(vec![0], 4, id::B_F3), (vec![0, 1], 4, id::B_F3)],
        "B-F3: a tie in the small city, seat 0 alone in the big one"
    );
    assert_eq!(t.scores(), [8, 4]);
}

#[test]
fn seed_001_final_scoring_an_open_road_3_an_open_cloister_5_an_open_city_2() {
    // Red (seat 0): a thief on the open road D-U-U. Yellow (seat 1): a monk
    // on a cloister with 4 of its 8 neighbours. Blue (seat 2): a knight in
    // the open city D-N.
    let t = given(&[
        "U 1 0 0 E",
        "B 0 -1 0 cloister",
        "N 0 1 180 S",
        "U 2 0 0",
        "E 1 -1 90",
        "E 0 -2 180",
    ])
    .players(3)
    .play_to_end();
    let mut scored = t.scored();
    scored.sort();
    assert_eq!(
        scored,
        [
            (vec![0], 3, id::B_FS1),
            (vec![1], 5, id::B_FS1),
            (vec![2], 2, id::B_FS1)
        ],
        "B-FS1: road 1 per tile, cloister 1 + 1 per neighbour, city 1 per tile"
    );
    assert_eq!(t.scores(), [3, 5, 2]);
}

#[test]
fn seed_001_final_scoring_an_open_city_7_and_the_outnumbered_player_scores_nothing() {
    // Green (seat 0) knights the D at (1,0) and the F at (2,1); black (seat
    // 1) the city D-N. The C joins them: 5 tiles and 2 pennants (C, F), open
    // to the north of the C and the east of the F.
    let t = given(&["D 1 0 0 N", "U 2 0 0", "F 2 1 0 E", "N 0 1 180 S", "C 1 1 0"]).play_to_end();
    assert_eq!(
        t.completed()
            .iter()
            .filter(|f| f.kind == FeatureKind::City)
            .count(),
        0
    );
    assert_eq!(
        t.scored(),
        [(vec![0], 7, id::B_FS1)],
        "B-FS1, B-S5: 2 knights against 1 in the open city"
    );
    assert_eq!(t.scores(), [7, 0]);
}
