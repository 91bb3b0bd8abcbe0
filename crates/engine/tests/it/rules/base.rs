//! The base game: setup (B-1..B-3), the turn (B-T*, B-E1), features (B-X*)
//! and scoring during play (B-S*).

use carcassonne_engine::*;

use super::{given, kind, place, pos, rotation, table};

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("P{i}")).collect()
}

fn seeded(seed: u64) -> Game {
    Game::new(Setup {
        rules: Rules::default(),
        players: names(2),
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    })
}

/// Plays a seeded game to its end, each tile at its first legal placement
/// and no follower; returns the tiles in the order they were drawn.
fn deal(seed: u64) -> Vec<TileKind> {
    let mut game = seeded(seed);
    let mut events = Vec::new();
    game.run_automatic(&mut events, &mut ());
    while !game.is_finished() {
        let (player, command) = match game.pending() {
            Pending::PlaceTile { player, .. } => {
                let p = game.legal_placements()[0];
                let command = Command::PlaceTile {
                    pos: p.pos,
                    rotation: p.rotation,
                };
                (player, command)
            }
            Pending::PlaceFollower { player } => (player, Command::PlaceFollower(None)),
            other => panic!("a seeded game waits for {other:?}"),
        };
        let new = game.execute(Actor::Seat(player), &command, &mut ()).unwrap();
        events.extend(new);
    }
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::Drawn(tile) => Some(tile),
            _ => None,
        })
        .collect()
}

// ---- Components and setup ---------------------------------------------------

#[test]
fn b_1_the_start_tile_d_lies_at_the_origin_and_the_other_71_are_in_the_bag() {
    let game = seeded(1);
    let tiles = game.tiles();
    assert_eq!(
        tiles.len(),
        1,
        "B-1: only the start tile lies before the first turn"
    );
    assert_eq!(
        (tiles[0].kind, tiles[0].pos, tiles[0].rotation),
        (kind("D"), Pos::ORIGIN, Rotation::R0),
        "B-1: the start tile is a D at (0,0), rotation 0"
    );
    assert_eq!(game.bag_left(), 71, "B-1: 72 land tiles less the start tile");
    for (name, count) in BASE_COUNTS {
        let expected = if name == "D" { count - 1 } else { count };
        assert_eq!(
            game.in_bag(kind(name)),
            u16::from(expected),
            "B-1: tiles {name} in the bag"
        );
    }
    assert_eq!(game.pending(), Pending::Draw { player: Seat(0) });
}

#[test]
fn b_1_the_dealer_cannot_draw_a_tile_that_is_not_in_the_bag() {
    let mut t = given(&["U 1 0 0"]).play();
    // The bag holds only the spare B now.
    let err = t
        .game
        .decide(Actor::Dealer, &Command::Draw(kind("U")))
        .unwrap_err();
    assert_eq!(err.rule_id(), Some(id::B_1), "{err}");
    t.draw("B");
}

#[test]
fn b_2_a_game_has_two_to_five_players_each_with_seven_followers() {
    let setup = |n| Setup {
        rules: Rules::default(),
        players: names(n),
        tiles: None,
        seed: None,
        time_control: None,
    };
    for n in [0, 1, 6] {
        assert_eq!(
            Game::check_setup(&setup(n)),
            Err(SetupError::PlayerCount(n)),
            "B-2: {n} players"
        );
    }
    for n in 2..=5 {
        assert_eq!(Game::check_setup(&setup(n)), Ok(()), "B-2: {n} players");
        let game = Game::new(setup(n));
        assert_eq!(game.players(), n);
        assert_eq!(game.supply(), vec![7; n], "B-2: 7 followers each");
    }
    let t = given(&["U 1 0 0 E"]).players(3).play();
    assert_eq!(
        t.supply(),
        [6, 7, 7],
        "B-2: a deployed follower leaves the supply"
    );
}

#[test]
fn b_3_the_draw_order_is_a_pure_function_of_the_seed() {
    let first = deal(7);
    assert_eq!(
        first.len(),
        71,
        "B-3: every land tile but the start tile is drawn once"
    );
    let mut sorted = first.clone();
    sorted.sort();
    let mut bag: Vec<TileKind> = BASE_COUNTS
        .iter()
        .flat_map(|&(name, count)| {
            let count = if name == "D" { count - 1 } else { count };
            std::iter::repeat_n(kind(name), usize::from(count))
        })
        .collect();
    bag.sort();
    assert_eq!(sorted, bag, "B-3: the shuffle is a permutation of the bag");
    assert_eq!(deal(7), first, "B-3: the same seed deals the same order");
    assert_ne!(deal(8), first, "B-3: another seed deals another order");
    // Without a seed the engine draws nothing: draws come from outside.
    let t = given(&["U 1 0 0"]).play();
    assert_eq!(t.game.automatic(), None, "B-3: no seed, no automatic draw");
    assert_eq!(t.game.pending(), Pending::Draw { player: Seat(1) });
}

// ---- A turn -------------------------------------------------------------------

#[test]
fn b_t1_a_tile_touches_a_placed_tile_and_every_shared_edge_matches_in_any_rotation() {
    let mut t = table(&[("E", 1)]);
    t.draw("E");
    let mut legal = t.game.legal_placements();
    legal.sort();
    // North of D only the E with its city facing south fits; south of D any
    // rotation with a field edge north; east and west of D need a road;
    // diagonal cells touch nothing.
    let expected = [(0, -1, 90), (0, -1, 180), (0, -1, 270), (0, 1, 180)].map(|(x, y, r)| Placement {
        pos: pos(x, y),
        rotation: rotation(r),
    });
    assert_eq!(
        legal, expected,
        "B-T1: legal placements of E beside the start tile"
    );
    let err = t.try_place(1, 1, 0).unwrap_err();
    assert_eq!(
        err.rule_id(),
        Some(id::B_T1),
        "B-T1: a diagonal touches nothing: {err}"
    );
    t.place(0, 1, 180);
    let placed = t.game.tile_at(pos(0, 1)).unwrap();
    assert_eq!((placed.kind, placed.rotation), (kind("E"), Rotation::R180));
}

#[test]
fn b_t2_a_tile_with_no_legal_placement_is_discarded_and_the_same_player_draws_again() {
    // With D's city closed by the E, every open edge of the board is road or
    // field: the all-city C fits nowhere.
    let t = given(&["E 0 1 180", "C -"]).play();
    assert!(!t.game.has_placement(kind("C")), "B-T2: C fits nowhere");
    assert!(
        t.effects.contains(&Effect::Discarded(kind("C"))),
        "B-T2: C is discarded"
    );
    assert_eq!(
        t.game.tiles().len(),
        2,
        "B-T2: the discarded tile is not on the board"
    );
    assert_eq!(
        t.game.in_bag(kind("C")),
        0,
        "B-T2: the discarded tile left the game"
    );
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(1) },
        "B-T2: seat 1 drew the C and draws again"
    );
}

#[test]
fn b_t3_a_follower_goes_on_a_feature_of_the_tile_just_placed_or_none() {
    let mut t = table(&[("U", 2)]);
    t.draw("U");
    t.place(1, 0, 0);
    // U at rotation 0: the road E-W, the field north, the field south, each
    // by its canonical name.
    assert_eq!(
        t.follower_places(),
        ["E", "Nw", "Es"],
        "B-T3: road and two fields"
    );
    t.follow(Some("W")); // the road's W edge: the same segment as its E
    assert_eq!(t.followers(), [(0, 1, 0, "E")], "B-T3: a thief on the road");
    assert_eq!(t.game.followers().next().map(|f| f.kind), Some(FeatureKind::Road));
    assert_eq!(t.supply(), [6, 7]);
    t.draw("U");
    t.place(2, 0, 0);
    t.follow(None);
    assert_eq!(t.supply(), [6, 7], "B-T3: deploying none is legal");
}

#[test]
fn b_t3_a_follower_place_may_be_named_by_any_edge_or_half_edge_of_its_segment() {
    // Given: a U at (1,0), rotation 0, east of D: a road from W to E, a
    // field north of it and a field south of it (docs/tiles.md).
    let mut t = table(&[("U", 2)]);
    t.draw("U");
    t.place(1, 0, 0);
    let actor = Actor::Seat(Seat(0));
    let segments = [
        (["E", "W"].as_slice(), "E"),
        (&["Wn", "Nw", "Ne", "En"], "Nw"),
        (&["Es", "Se", "Sw", "Ws"], "Es"),
    ];
    for (names, canonical) in segments {
        for name in names {
            // When: the follower is put on the segment by this name.
            let decided = t.game.decide(actor, &Command::PlaceFollower(Some(place(name))));
            // Then: it stands on that segment, named as the listed place.
            assert_eq!(
                decided,
                Ok(vec![Event::FollowerPlaced(Some(place(canonical)))]),
                "B-T3: {name} names the segment listed as {canonical}"
            );
        }
    }
    // The field edges N and S name no segment: fields go by half-edges.
    for name in ["N", "S", "cloister"] {
        let decided = t.game.decide(actor, &Command::PlaceFollower(Some(place(name))));
        assert_eq!(decided.err().and_then(|e| e.rule_id()), Some(id::B_T3), "{name}");
    }
}

#[test]
fn b_t3_a_feature_that_holds_a_follower_as_now_connected_takes_no_other() {
    // Seat 0's farmer on the field north of the road D-U.
    let mut t = given(&["U 1 0 0 Nw"]).table(1);
    t.turn("U 1 0 0 Nw");
    t.draw("B");
    t.place(1, 1, 0);
    // The B's field joins the claimed field: only the cloister is free.
    assert_eq!(
        t.follower_places(),
        ["cloister"],
        "B-T3: the field of B is claimed"
    );
    let err = t
        .game
        .decide(
            Actor::Seat(Seat(1)),
            &Command::PlaceFollower(Some(Place::Half(Half::Nw))),
        )
        .unwrap_err();
    assert_eq!(err.rule_id(), Some(id::B_T3), "{err}");
    assert!(err.to_string().contains("already holds a follower"), "{err}");
    t.follow(Some("cloister"));
    assert_eq!(t.followers(), [(0, 1, 0, "Nw"), (1, 1, 1, "cloister")]);
}

#[test]
fn b_t4_a_follower_deployed_this_turn_scores_and_returns_at_once() {
    // The seed's example "the city scores 2": the knight goes on the tile
    // that completes the city.
    let t = given(&["E 0 1 180 S"]).play();
    let city = FeatureRef {
        kind: FeatureKind::City,
        at: Pos::ORIGIN,
        place: Place::Edge(Dir::N),
        tiles: 2,
        pennants: 0,
    };
    assert_eq!(
        t.effects,
        [
            Effect::Completed(city),
            Effect::Scored(ScoreChange {
                players: Seats(1),
                points: 2,
                rule: id::B_S4,
                scored: Scored::Feature(city),
            }),
            Effect::FollowerReturned {
                player: Seat(0),
                at: pos(0, 1),
                place: Place::Edge(Dir::S),
            },
        ],
        "B-T4: completed, scored, returned"
    );
    assert_eq!(t.supply(), [7, 7], "B-T4: the knight is back in supply");
    assert_eq!(t.followers(), []);
}

#[test]
fn b_t4_every_feature_a_placement_completes_is_scored_and_its_followers_return() {
    // Seat 0's thief on the road W-D, seat 1's knight on the city D-N; the L
    // at (1,0) ends the road at its crossroads and closes the city.
    let t = given(&["W -1 0 0 E", "N 0 1 180 S", "N 1 1 270", "L 1 0 0"]).play();
    assert_eq!(
        t.scored(),
        [(vec![1], 8, id::B_S2), (vec![0], 3, id::B_S1)],
        "B-T4: the city (4 tiles) and the road (3 tiles) both score"
    );
    assert_eq!(t.supply(), [7, 7], "B-T4: both followers returned");
    assert_eq!(t.scores(), [3, 8]);
}

#[test]
fn b_t5_play_passes_to_the_next_player_in_seat_order() {
    let mut t = given(&["U 1 0 0", "U 2 0 0", "U 3 0 0", "U 4 0 0"])
        .players(3)
        .table(1);
    for (turn, x) in (1..=4).enumerate() {
        let seat = Seat(turn as u8 % 3);
        assert_eq!(
            t.game.pending(),
            Pending::Draw { player: seat },
            "B-T5: turn {turn}"
        );
        t.draw("U");
        assert_eq!(
            t.game.pending(),
            Pending::PlaceTile {
                player: seat,
                tile: kind("U")
            }
        );
        t.place(x, 0, 0);
        t.follow(None);
    }
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(1) },
        "B-T5: after seats 0, 1, 2, 0 comes seat 1"
    );
}

#[test]
fn b_e1_the_game_ends_after_the_last_tile_then_final_scoring_runs() {
    let mut t = given(&["U 1 0 0 E"]).play_to_end();
    assert!(t.game.is_finished(), "B-E1: the bag is empty");
    assert_eq!(t.game.pending(), Pending::Finished);
    assert_eq!(
        t.effects.last(),
        Some(&Effect::Finished),
        "B-E1: the game is over"
    );
    assert_eq!(
        t.scored(),
        [(vec![0], 2, id::B_FS1)],
        "B-E1: final scoring ran: the open road D-U"
    );
    assert_eq!(t.game.leaders(), Seats(1), "B-E1: the highest total wins");
    let err = t.try_draw("U").unwrap_err();
    assert_eq!(err, PlayError::Finished);
}

#[test]
fn b_e1_the_game_ends_when_the_last_tile_is_discarded() {
    let t = given(&["E 0 1 180", "C -"]).play_to_end();
    assert!(t.game.is_finished(), "B-E1: the last tile was discarded (B-T2)");
    assert_eq!(t.effects.last(), Some(&Effect::Finished));
}

/// Plays every decision with the first listed command, to the end; fails
/// on a decision without a choice or a game that does not end.
fn play_out(game: &mut Game) {
    let mut events = Vec::new();
    game.run_automatic(&mut events, &mut ());
    for _ in 0..1000 {
        let Some(actor) = game.pending().actor() else {
            return;
        };
        let choices = game.legal_commands();
        assert!(!choices.is_empty(), "{:?} has no legal command", game.pending());
        game.execute(actor, &choices[0], &mut ()).unwrap();
    }
    panic!("the game does not end: {:?}", game.pending());
}

#[test]
fn b_e1_a_bag_without_tiles_ends_the_game_at_once_with_final_scoring() {
    for (name, rules) in [("base", Rules::default()), ("count", super::count())] {
        for tiles in [vec![], vec![(kind("A"), 0)]] {
            for seed in [None, Some(Seed::from_u64(1))] {
                let setup = Setup {
                    rules,
                    players: names(3),
                    tiles: Some(tiles.clone()),
                    seed,
                    time_control: None,
                };
                assert_eq!(Game::check_setup(&setup), Ok(()));
                let mut effects = Vec::new();
                let mut game = Game::new(setup.clone());
                assert!(game.is_finished(), "{name} {tiles:?}: B-E1: no tile, no turn");
                assert_eq!(game.pending().actor(), None);
                assert!(game.legal_commands().is_empty());
                assert_eq!(game.scores(), [0, 0, 0]);
                // The fold of the creation says so too, with its effect.
                game.apply_observed(&Event::Created(setup), &mut effects);
                assert!(game.is_finished());
                assert_eq!(effects, [Effect::Finished], "{name}: final scoring ran");
            }
        }
    }
    // A record of such a game is finished with no turn, as the record
    // format says of a record that used up its bag.
    let record = r#"{"format": "carcassonne-record/1", "players": ["Ada", "Brun"],
        "tiles": {"A": 0}, "turns": [], "final_scores": [0, 0]}"#;
    let replay = record::Record::parse(record).unwrap().verify().unwrap();
    assert!(replay.game.is_finished());
    assert!(replay.effects.contains(&(0, Effect::Finished)));
}

#[test]
fn b_e1_a_bag_of_only_river_tiles_ends_after_the_river() {
    // No land tile: the river (R-2) is the whole game, and it ends.
    for count in [false, true] {
        let rules = if count {
            super::river().with(Expansion::Count)
        } else {
            super::river()
        };
        let mut game = Game::new(Setup {
            rules,
            players: names(2),
            tiles: Some(vec![]),
            seed: Some(Seed::from_u64(7)),
            time_control: None,
        });
        assert!(!game.is_finished(), "the river's 11 tiles are to play");
        play_out(&mut game);
        assert!(game.is_finished(), "count {count}: B-E1");
        assert_eq!(game.bag_left(), 0);
    }
}

#[test]
fn b_fs1_a_city_of_300_pennants_scores_601() {
    // 300 C tiles (four city edges and a pennant each), each at the first
    // legal placement: they all join the start tile's city, which stays
    // open. Seat 0's knight on the first C makes it theirs: B-FS1 gives 1
    // per tile and 1 per pennant, 301 + 300 = 601 (an 8-bit pennant
    // counter would wrap to 44: 345).
    let c = kind("C");
    for seed in [None, Some(Seed::from_u64(3))] {
        let mut game = Game::new(Setup {
            rules: Rules::default(),
            players: names(2),
            tiles: Some(vec![(c, 300)]),
            seed,
            time_control: None,
        });
        let mut effects = Vec::new();
        game.run_automatic(&mut Vec::new(), &mut effects);
        let mut knight = true;
        while let Some(actor) = game.pending().actor() {
            let command = match game.pending() {
                Pending::Draw { .. } => Command::Draw(c),
                Pending::PlaceTile { .. } => {
                    let p = game.legal_placements()[0];
                    Command::PlaceTile {
                        pos: p.pos,
                        rotation: p.rotation,
                    }
                }
                Pending::PlaceFollower { .. } if knight => {
                    knight = false;
                    Command::PlaceFollower(Some(Place::Edge(Dir::N)))
                }
                Pending::PlaceFollower { .. } => Command::PlaceFollower(None),
                other => panic!("{other:?}"),
            };
            game.execute(actor, &command, &mut effects).unwrap();
        }
        assert_eq!(game.tiles().len(), 301);
        assert_eq!(game.scores(), [601, 0], "B-FS1: 301 tiles and 300 pennants");
        let city = effects.iter().find_map(|e| match e {
            Effect::Scored(ScoreChange {
                scored: Scored::Feature(f),
                rule,
                ..
            }) if *rule == id::B_FS1 => Some((u32::from(f.tiles), u32::from(f.pennants))),
            _ => None,
        });
        assert_eq!(city, Some((301, 300)));
    }
}

#[test]
fn b_e1_tied_players_share_the_win() {
    // Both knights in one city of 10 points (seed 001, see seeds.rs).
    let t = given(&[
        "I 0 1 180 E",
        "U 1 0 0",
        "U 2 0 0",
        "N 2 1 0 N",
        "E 2 2 180",
        "F 1 1 0",
    ])
    .play_to_end();
    assert_eq!(t.scores(), [10, 10]);
    assert_eq!(t.game.leaders(), Seats(0b11), "B-E1: ties are shared");
}

// ---- Features -----------------------------------------------------------------

#[test]
fn b_x1_a_road_between_two_crossroads_is_complete() {
    let t = given(&["W 1 0 0 W", "W -1 0 0"]).play();
    assert_eq!(t.completed().len(), 1, "B-X1: one road completed");
    assert_eq!(t.completed()[0].kind, FeatureKind::Road);
    assert_eq!(t.completed()[0].tiles, 3);
    assert_eq!(t.scored(), [(vec![0], 3, id::B_S1)]);
}

#[test]
fn b_x1_a_road_ends_at_a_city_gate_and_at_a_cloister() {
    // T at (-1,0): its road leaves the city eastwards; A at (1,0): its road
    // ends at the cloister.
    let t = given(&["T -1 0 270 E", "A 1 0 90"]).play();
    let roads: Vec<_> = t
        .completed()
        .into_iter()
        .filter(|f| f.kind == FeatureKind::Road)
        .collect();
    assert_eq!(roads.len(), 1, "B-X1: the road T-D-A is complete");
    assert_eq!(t.scored(), [(vec![0], 3, id::B_S1)]);
}

#[test]
fn b_x1_an_open_road_is_not_complete_and_a_loop_is() {
    let mut t = given(&["V 0 -1 270 E", "V 1 -1 0", "V 1 -2 90", "V 0 -2 180"]).table(1);
    for turn in ["V 0 -1 270 E", "V 1 -1 0", "V 1 -2 90"] {
        t.turn(turn);
    }
    assert_eq!(t.completed(), [], "B-X1: the road still has an open end");
    t.turn("V 0 -2 180");
    assert_eq!(t.completed().len(), 1, "B-X1: the loop closes");
    assert_eq!(
        (t.completed()[0].kind, t.completed()[0].tiles),
        (FeatureKind::Road, 4)
    );
    assert_eq!(t.scored(), [(vec![0], 4, id::B_S1)]);
}

#[test]
fn b_x2_a_city_is_complete_when_no_city_edge_is_open() {
    let mut t = given(&["N 0 1 180 S", "E 1 1 270"]).table(1);
    t.turn("N 0 1 180 S");
    assert_eq!(t.completed(), [], "B-X2: the city D-N is open to the east");
    t.turn("E 1 1 270");
    assert_eq!(t.completed().len(), 1, "B-X2: the E closes it");
    assert_eq!(
        (t.completed()[0].kind, t.completed()[0].tiles),
        (FeatureKind::City, 3)
    );
    assert_eq!(t.scored(), [(vec![0], 6, id::B_S2)]);
}

#[test]
fn b_x2_a_ring_of_city_tiles_closing_on_itself_is_complete() {
    // Three N and an M south of D, their cities curving into one ring; the
    // M closes two edges of the same city at once.
    let mut t = given(&["N 0 -1 180 S", "N 1 -1 270", "N 0 -2 90", "M 1 -2 0"]).table(1);
    for turn in ["N 0 -1 180 S", "N 1 -1 270", "N 0 -2 90"] {
        t.turn(turn);
    }
    assert_eq!(t.completed(), [], "B-X2: the ring is still open");
    t.turn("M 1 -2 0");
    assert_eq!(t.completed().len(), 1, "B-X2: the ring is closed");
    assert_eq!(t.scored(), [(vec![0], 10, id::B_S2)], "4 tiles and a pennant");
}

#[test]
fn b_x3_a_cloister_is_complete_when_surrounded_by_8_tiles() {
    let turns = [
        "B 0 -1 0 cloister",
        "U -1 0 0",
        "U 1 0 0",
        "E -1 -1 270",
        "E 1 -1 90",
        "E -1 -2 270",
        "E 0 -2 180",
        "E 1 -2 90",
    ];
    let mut t = given(&turns).table(1);
    for (i, turn) in turns.iter().enumerate() {
        t.turn(turn);
        let cloisters = t
            .completed()
            .into_iter()
            .filter(|f| f.kind == FeatureKind::Cloister)
            .count();
        assert_eq!(
            cloisters,
            usize::from(i == 7),
            "B-X3: after {i} tiles around the cloister"
        );
    }
    let cloister = t
        .completed()
        .into_iter()
        .find(|f| f.kind == FeatureKind::Cloister);
    assert_eq!(
        cloister,
        Some(FeatureRef {
            kind: FeatureKind::Cloister,
            at: pos(0, -1),
            place: Place::Cloister,
            tiles: 9,
            pennants: 0
        })
    );
    assert_eq!(
        t.scored(),
        [(vec![0], 9, id::B_S3)],
        "B-X3: scored on seat 1's turn"
    );
    assert_eq!(t.supply(), [7, 7], "B-X3: the monk returns");
}

#[test]
fn b_x3_a_cloister_placed_into_a_surrounded_hole_completes_at_once() {
    let t = given(&[
        "U -1 0 0",
        "U 1 0 0",
        "E -1 -1 270",
        "E 1 -1 90",
        "E -1 -2 270",
        "E 0 -2 180",
        "E 1 -2 90",
        "B 0 -1 0 cloister",
    ])
    .play();
    assert_eq!(t.scored(), [(vec![1], 9, id::B_S3)], "B-X3: complete when placed");
    assert_eq!(t.supply(), [7, 7], "B-T4: the monk returns at once");
}

#[test]
fn b_x4_roads_cities_bound_fields_which_join_across_tiles_and_never_complete() {
    let mut t = given(&["U 1 0 0 Nw", "U 2 0 0", "E 0 1 180", "B 1 1 0"]).table(1);
    t.turn("U 1 0 0 Nw");
    // The road splits the fields: the south one is free, the north one not.
    t.draw("U");
    t.place(2, 0, 0);
    assert_eq!(
        t.follower_places(),
        ["E", "Es"],
        "B-X4: the road bounds the fields"
    );
    t.follow(Some("Es"));
    // D's city bounds the field north of the road: the E's field is another.
    t.draw("E");
    t.place(0, 1, 180);
    assert!(
        t.follower_places().contains(&"Nw"),
        "B-X4: the city bounds the fields"
    );
    t.follow(Some("Nw"));
    // The B joins the E's field and the field north of the road.
    t.draw("B");
    t.place(1, 1, 0);
    assert_eq!(
        t.follower_places(),
        ["cloister"],
        "B-X4: the B's field is claimed twice over"
    );
    t.follow(None);
    assert!(
        t.completed().iter().all(|f| f.kind != FeatureKind::Field),
        "B-X4: fields are never complete"
    );
    assert_eq!(
        t.followers(),
        [(0, 1, 0, "Nw"), (1, 2, 0, "Es"), (0, 0, 1, "Nw")],
        "B-X4: the farmers stay where they are"
    );
}

#[test]
fn b_x5_a_road_through_one_tile_twice_counts_that_tile_once() {
    // The road leaves the crossroads W east, loops round through three V,
    // and comes back to the same W from the south: 5 segments, 4 tiles.
    let t = given(&["W 0 -1 0 E", "V 1 -1 0", "V 1 -2 90", "V 0 -2 180"]).play();
    assert_eq!(
        t.completed().len(),
        1,
        "the road ends twice at the crossroads: complete"
    );
    assert_eq!(t.completed()[0].tiles, 4, "B-X5: 4 tiles, not 5 segments");
    assert_eq!(t.scored(), [(vec![0], 4, id::B_S1)], "B-X5");
}

#[test]
fn b_x5_a_city_through_one_tile_twice_counts_that_tile_once() {
    // Three N south of D curve a city from the I's north edge round to its
    // west edge: the I's two city segments join, 5 segments on 4 tiles.
    let t = given(&["N 0 -1 180 S", "N 1 -1 270", "N 0 -2 90", "I 1 -2 0"]).play();
    assert_eq!(t.completed().len(), 1, "the city is closed");
    assert_eq!(t.completed()[0].tiles, 4, "B-X5: 4 tiles, not 5 segments");
    assert_eq!(t.scored(), [(vec![0], 8, id::B_S2)], "B-X5: 2 * 4");
}

// ---- Scoring during play ------------------------------------------------------

#[test]
fn b_s1_a_completed_road_scores_one_point_per_tile() {
    let t = given(&["U 1 0 0 E", "W 2 0 0", "W -1 0 0"]).play();
    assert_eq!(t.scored(), [(vec![0], 4, id::B_S1)], "B-S1: 4 tiles");
}

#[test]
fn b_s2_a_completed_city_scores_two_per_tile_and_two_per_pennant() {
    // D, M (pennant) and E: 3 tiles and 1 pennant.
    let t = given(&["M 0 1 180 S", "E 1 1 270"]).play();
    assert_eq!(t.completed()[0].pennants, 1);
    assert_eq!(t.scored(), [(vec![0], 8, id::B_S2)], "B-S2: 2*3 + 2*1");
}

#[test]
fn b_s3_a_completed_cloister_scores_9() {
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
fn b_s4_a_completed_two_tile_city_scores_one_per_tile() {
    let t = given(&["E 0 1 180 S"]).play();
    assert_eq!(
        t.scored(),
        [(vec![0], 2, id::B_S4)],
        "B-S4: small_city on (the default)"
    );
}

#[test]
fn b_s4_with_small_city_off_a_two_tile_city_scores_like_any_city() {
    let mut rules = Rules::default();
    rules.small_city = SmallCity::Normal;
    let t = given(&["E 0 1 180 S"]).rules(rules).play();
    assert_eq!(t.scored(), [(vec![0], 4, id::B_S2)], "B-S4 off: 2 per tile");
}

#[test]
fn b_s4_a_three_tile_city_is_not_small() {
    let t = given(&["N 0 1 180 S", "E 1 1 270"]).play();
    assert_eq!(
        t.scored(),
        [(vec![0], 6, id::B_S2)],
        "B-S4 is for exactly 2 tiles"
    );
}

#[test]
fn b_s6_a_completed_feature_with_no_follower_scores_nothing() {
    let t = given(&["E 0 1 180"]).play();
    assert_eq!(t.completed().len(), 1, "the city D-E is complete");
    assert_eq!(t.scored(), [], "B-S6: nobody scores it");
    assert_eq!(t.scores(), [0, 0]);
}
