//! Illegal commands: each is refused with the rule it breaks (or with the
//! decision it does not fit), and the state does not change.

use carcassonne_engine::*;

use super::{Table, given, pos, rotation, table};

/// Checks that `command` by `actor` is refused, both by `decide` and by
/// `execute`, and that nothing changed; returns the error.
pub fn rejects(t: &mut Table, actor: Actor, command: Command) -> PlayError {
    let before = t.game.clone();
    let effects = t.effects.len();
    let decided = t
        .game
        .decide(actor, &command)
        .expect_err("decide must refuse the command");
    let executed = t
        .execute(actor, command)
        .expect_err("execute must refuse the command");
    assert_eq!(executed, decided);
    assert!(t.game == before, "a refused command changed the state");
    assert_eq!(t.effects.len(), effects, "a refused command had effects");
    decided
}

fn place_tile(x: i32, y: i32, degrees: i64) -> Command {
    Command::PlaceTile {
        pos: pos(x, y),
        rotation: rotation(degrees),
    }
}

fn rule(rule: RuleId, message: &str) -> PlayError {
    PlayError::Rule {
        rule,
        message: message.to_string(),
    }
}

#[test]
fn b_t1_rejects_a_placement_on_an_occupied_cell() {
    let mut t = table(&[("U", 1)]);
    t.draw("U");
    let err = rejects(&mut t, Actor::Seat(Seat(0)), place_tile(0, 0, 0));
    assert_eq!(err, rule(id::B_T1, "U at (0,0): the cell is already taken"));
}

#[test]
fn b_t1_rejects_a_placement_that_touches_no_tile() {
    let mut t = table(&[("U", 1)]);
    t.draw("U");
    let err = rejects(&mut t, Actor::Seat(Seat(0)), place_tile(3, 0, 0));
    assert_eq!(err, rule(id::B_T1, "U at (3,0) touches no placed tile"));
    let err = rejects(&mut t, Actor::Seat(Seat(0)), place_tile(1, 1, 0));
    assert_eq!(
        err.rule_id(),
        Some(id::B_T1),
        "B-T1: touching only a corner is not touching"
    );
}

#[test]
fn b_t1_rejects_a_placement_at_the_extremes_of_the_coordinates() {
    // Far cells are asked about before any rule refuses them: the board's
    // arithmetic on them must not overflow (a debug build panicked).
    let mut t = table(&[("U", 1)]);
    t.draw("U");
    for (x, y) in [
        (i32::MIN, 0),
        (0, i32::MIN),
        (i32::MAX, i32::MAX),
        (i32::MIN, i32::MAX),
    ] {
        let err = rejects(&mut t, Actor::Seat(Seat(0)), place_tile(x, y, 0));
        assert_eq!(
            err,
            rule(id::B_T1, &format!("U at ({x},{y}) touches no placed tile"))
        );
    }
}

#[test]
fn b_t1_rejects_an_edge_mismatch_naming_both_edges() {
    // The road runs east from D to the V at (4,0), turns south into the J at
    // (4,-1), whose city faces west onto (3,-1).
    let mut t = given(&[
        "U 1 0 0",
        "U 2 0 0",
        "U 3 0 0",
        "V 4 0 0",
        "J 4 -1 270",
        "V 3 -1 270",
    ])
    .table(0);
    for turn in ["U 1 0 0", "U 2 0 0", "U 3 0 0", "V 4 0 0", "J 4 -1 270"] {
        t.turn(turn);
    }
    t.draw("V");
    // V at 270: north field (matches the U above), east road (the J's city).
    let err = rejects(&mut t, Actor::Seat(Seat(1)), place_tile(3, -1, 270));
    assert_eq!(
        err,
        rule(
            id::B_T1,
            "edge E of V at (3,-1) is road, neighbour's W edge is city"
        )
    );
    assert_eq!(
        err.to_string(),
        "B-T1: edge E of V at (3,-1) is road, neighbour's W edge is city"
    );
    // No rotation of V fits there: the cell needs a city to the east.
    assert!(t.game.legal_placements().iter().all(|p| p.pos != pos(3, -1)));
}

#[test]
fn b_t3_rejects_a_place_with_no_feature() {
    let mut t = table(&[("U", 1)]);
    t.draw("U");
    t.place(1, 0, 0);
    let seat = Actor::Seat(Seat(0));
    let err = rejects(&mut t, seat, Command::PlaceFollower(Some(Place::Cloister)));
    assert_eq!(err, rule(id::B_T3, "U at (1,0) has no feature at cloister"));
    // The north edge of the U is field: a field is named by a half-edge.
    let err = rejects(&mut t, seat, Command::PlaceFollower(Some(Place::Edge(Dir::N))));
    assert_eq!(err, rule(id::B_T3, "U at (1,0) has no feature at N"));
}

#[test]
fn b_t3_rejects_a_follower_on_a_claimed_feature() {
    let mut t = given(&["U 1 0 0 E", "U 2 0 0"]).table(0);
    t.turn("U 1 0 0 E");
    t.draw("U");
    t.place(2, 0, 0);
    let err = rejects(
        &mut t,
        Actor::Seat(Seat(1)),
        Command::PlaceFollower(Some(Place::Edge(Dir::W))),
    );
    assert_eq!(err.rule_id(), Some(id::B_T3));
    assert_eq!(
        err.to_string(),
        "B-T3: the road at W of U at (2,0) already holds a follower"
    );
}

#[test]
fn b_t3_rejects_a_follower_when_the_supply_is_empty() {
    // Fourteen B in a row south of the road (a custom bag: the game has
    // only 4): seat 0 puts a monk on each of its seven, and none of the
    // cloisters can be completed.
    let turns: Vec<String> = (0..15)
        .map(|x| {
            let monk = if x % 2 == 0 && x < 14 { " cloister" } else { "" };
            format!("B {x} -1 0{monk}")
        })
        .collect();
    let mut t = given(&turns).table(0);
    for turn in &turns[..14] {
        t.turn(turn);
    }
    assert_eq!(t.supply(), [0, 7], "seat 0 has deployed all 7 followers");
    t.draw("B");
    t.place(14, -1, 0);
    assert_eq!(t.follower_places(), Vec::<&str>::new(), "B-T3: nothing to deploy");
    let err = rejects(
        &mut t,
        Actor::Seat(Seat(0)),
        Command::PlaceFollower(Some(Place::Cloister)),
    );
    assert_eq!(err, rule(id::B_T3, "seat 0 has no follower left in supply"));
    t.follow(None);
}

#[test]
fn wrong_actor_is_not_your_turn() {
    let mut t = table(&[("U", 2)]);
    // The dealer draws, not a player.
    let err = rejects(&mut t, Actor::Seat(Seat(0)), Command::Draw(super::kind("U")));
    assert_eq!(
        err,
        PlayError::NotYourTurn {
            expected: Actor::Dealer,
            actor: Actor::Seat(Seat(0))
        }
    );
    t.draw("U");
    // Seat 0 places, not seat 1 and not the dealer.
    let err = rejects(&mut t, Actor::Seat(Seat(1)), place_tile(1, 0, 0));
    assert_eq!(
        err,
        PlayError::NotYourTurn {
            expected: Actor::Seat(Seat(0)),
            actor: Actor::Seat(Seat(1))
        }
    );
    let err = rejects(&mut t, Actor::Dealer, place_tile(1, 0, 0));
    assert!(matches!(err, PlayError::NotYourTurn { .. }), "{err}");
    t.place(1, 0, 0);
    let err = rejects(&mut t, Actor::Seat(Seat(1)), Command::PlaceFollower(None));
    assert_eq!(
        err,
        PlayError::NotYourTurn {
            expected: Actor::Seat(Seat(0)),
            actor: Actor::Seat(Seat(1))
        }
    );
}

#[test]
fn wrong_decision_kind_is_refused() {
    let mut t = table(&[("U", 2)]);
    let err = rejects(&mut t, Actor::Dealer, place_tile(1, 0, 0));
    assert_eq!(
        err,
        PlayError::WrongDecision {
            pending: "draw",
            command: "place a tile"
        }
    );
    t.draw("U");
    let err = rejects(&mut t, Actor::Seat(Seat(0)), Command::PlaceFollower(None));
    assert_eq!(
        err,
        PlayError::WrongDecision {
            pending: "place a tile",
            command: "place a follower"
        }
    );
    let err = rejects(&mut t, Actor::Dealer, Command::Draw(super::kind("U")));
    assert_eq!(
        err,
        PlayError::WrongDecision {
            pending: "place a tile",
            command: "draw"
        }
    );
    t.place(1, 0, 0);
    let err = rejects(&mut t, Actor::Seat(Seat(0)), place_tile(2, 0, 0));
    assert_eq!(
        err,
        PlayError::WrongDecision {
            pending: "place a follower",
            command: "place a tile"
        }
    );
}

#[test]
fn a_refused_command_leaves_the_game_as_it_was() {
    let mut t = given(&["U 1 0 0 E"]).table(1);
    t.turn("U 1 0 0 E");
    let before = t.game.clone();
    t.draw("B");
    assert!(t.try_place(1, 0, 0).is_err());
    assert!(t.try_place(2, 0, 0).is_err(), "a cloister cannot end the road");
    // After refusals the game goes on exactly as if they never happened.
    t.place(0, -1, 0);
    t.follow(Some("cloister"));
    let mut replay = before;
    let mut effects = Vec::new();
    for command in [
        (Actor::Dealer, Command::Draw(super::kind("B"))),
        (Actor::Seat(Seat(1)), place_tile(0, -1, 0)),
        (
            Actor::Seat(Seat(1)),
            Command::PlaceFollower(Some(Place::Cloister)),
        ),
    ] {
        replay.execute(command.0, &command.1, &mut effects).unwrap();
    }
    assert!(replay == t.game, "refusals left a trace in the state");
}
