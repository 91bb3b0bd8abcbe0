//! Farmers (B-F*) and final scoring (B-FS*).

use carcassonne_engine::*;

use super::given;

fn farm_centric() -> Rules {
    let mut rules = Rules::default();
    rules.farmers = Farmers::FarmCentric3;
    rules
}

#[test]
fn b_f1_farmers_stay_on_their_field_when_its_city_is_completed() {
    // Seat 0's farmer north of the road; seat 1's E closes D's city, with a
    // knight that scores and returns at once.
    let turns = ["U 1 0 0 Nw", "E 0 1 180 S"];
    let t = given(&turns).play();
    assert_eq!(t.scored(), [(vec![1], 2, id::B_S4)]);
    assert_eq!(t.followers(), [(0, 1, 0, "Nw")], "B-F1: the farmer stays");
    assert_eq!(t.supply(), [6, 7], "B-F1: the farmer is not returned");
    let t = given(&turns).play_to_end();
    assert!(
        !t.effects
            .iter()
            .any(|e| matches!(e, Effect::FollowerReturned { player: Seat(0), .. })),
        "B-F1: farmers never return"
    );
    assert_eq!(
        t.followers(),
        [(0, 1, 0, "Nw")],
        "B-F1: still on the field at the end"
    );
    assert_eq!(t.scored_by(id::B_F3), [(vec![0], 4, id::B_F3)]);
}

#[test]
fn b_f2_a_field_supplies_a_completed_city_at_any_distance() {
    // The farmer stands three tiles east of the city D-E, on the field that
    // runs north of the road into D.
    let t = given(&["E 0 1 180", "U 1 0 0", "U 2 0 0", "U 3 0 0 Nw"]).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![1], 4, id::B_F3)],
        "B-F2: distance does not matter"
    );
}

#[test]
fn b_f2_only_completed_cities_are_supplied() {
    // A farmer beside D's open city scores nothing.
    let t = given(&["U 1 0 0 Nw"]).play_to_end();
    assert_eq!(t.scored(), [], "B-F2: D's city is incomplete");
    // The H's field borders the city D-H (complete) and the H's north city
    // (open): only the first counts.
    let t = given(&["H 0 1 0 En"]).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0], 4, id::B_F3)],
        "B-F2: one of two cities is complete"
    );
}

#[test]
fn b_f2_one_field_supplies_several_cities() {
    // Seed 001: "one farmer supplies two cities: 8 points".
    let t = given(&["H 0 1 0 En", "E 0 2 180"]).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0], 4, id::B_F3), (vec![0], 4, id::B_F3)],
        "B-F2: the field borders the cities D-H and H-E"
    );
    assert_eq!(t.scores(), [8, 0]);
}

/// The 3-tile city F (pennant) with an E at either end, south of D, and the
/// four fields that border it: north of the F (joined to D's south field)
/// with seat 0's farmer, south of the F with none, round the west E with
/// seat 1's farmer, round the east E with seat 1's farmer. Seat 0's middle
/// turn closes D's city with another E, whose fields hold no farmer.
const FOUR_FIELDS: [&str; 4] = ["F 0 -1 0 Nw", "E -1 -1 90 Nw", "E 0 1 180", "E 1 -1 270 Nw"];

#[test]
fn b_f3_the_farmers_of_all_fields_bordering_a_city_count_together() {
    let t = given(&FOUR_FIELDS).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![1], 4, id::B_F3)],
        "B-F3: seat 1 has 2 farmers round the city, seat 0 has 1"
    );
    assert_eq!(t.scores(), [0, 4]);
}

#[test]
fn b_f3_tied_farmers_each_score_4() {
    // Seat 0's farmer north of the road, seat 1's round the E; the B joins
    // the two fields, which border the city D-E.
    let t = given(&["U 1 0 0 Nw", "E 0 1 180 Nw", "B 1 1 0"]).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0, 1], 4, id::B_F3)],
        "B-F3: a tie scores for both"
    );
}

#[test]
fn b_f4_each_field_scores_3_for_its_majority_per_completed_city() {
    let t = given(&FOUR_FIELDS).rules(farm_centric()).play_to_end();
    let mut scored = t.scored();
    scored.sort();
    assert_eq!(
        scored,
        [
            (vec![0], 3, id::B_F4),
            (vec![1], 3, id::B_F4),
            (vec![1], 3, id::B_F4)
        ],
        "B-F4: each of the three fields with farmers, separately"
    );
    assert_eq!(t.scores(), [3, 6]);
    let t = given(&["H 0 1 0 En", "E 0 2 180"])
        .rules(farm_centric())
        .play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0], 6, id::B_F4)],
        "B-F4: 3 per city the field borders"
    );
}

#[test]
fn b_f4_a_field_bordering_a_city_on_two_tiles_counts_it_once() {
    // The joined field borders the city D-E both at D and round the E.
    let t = given(&["U 1 0 0 Nw", "E 0 1 180 Nw", "B 1 1 0"])
        .rules(farm_centric())
        .play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0, 1], 3, id::B_F4)],
        "B-F4: one city, 3 to each tied farmer"
    );
}

#[test]
fn b_fs1_an_incomplete_city_scores_one_per_tile_and_one_per_pennant() {
    let t = given(&["M 0 1 180 S"]).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0], 3, id::B_FS1)],
        "B-FS1: 2 tiles + 1 pennant"
    );
}

#[test]
fn b_fs1_incomplete_features_without_followers_score_nothing() {
    let t = given(&["N 0 1 180", "U 1 0 0", "B 0 -1 0"]).play_to_end();
    assert_eq!(t.scored(), [], "B-FS1: only features with followers");
}

#[test]
fn b_fs2_farmers_score_after_the_incomplete_features() {
    let t = given(&["U 1 0 0 E", "E 0 1 180 Nw"]).play_to_end();
    assert_eq!(
        t.scored(),
        [(vec![0], 2, id::B_FS1), (vec![1], 4, id::B_F3)],
        "B-FS2: first the open road, then the farmer"
    );
}
