//! The River (R-*). The spring lies at (0,0) and its river flows out east.

use carcassonne_engine::*;

use super::errors::rejects;
use super::{given, kind, pos, river, rotation};

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

fn seeded_river(seed: u64) -> Game {
    Game::new(Setup {
        rules: river(),
        players: vec!["P0".into(), "P1".into()],
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    })
}

/// The ten river tiles along one legal course: east, south, east, south,
/// east; the lake closes it at (8,-3).
const COURSE: [&str; 10] = [
    "R5 1 0 0",
    "R5 2 0 0",
    "R1 3 0 0",
    "R2 4 0 0",
    "R3 5 0 0",
    "R8 6 0 0",
    "R4 6 -1 0",
    "R8 6 -2 180",
    "R6 7 -2 90",
    "R7 7 -3 180",
];

#[test]
fn r_1_the_spring_replaces_the_start_tile_and_the_land_tiles_are_the_other_71() {
    let game = seeded_river(3);
    let tiles = game.tiles();
    assert_eq!(tiles.len(), 1, "R-1: only the spring lies at the start");
    assert_eq!(
        (tiles[0].kind, tiles[0].pos, tiles[0].rotation),
        (kind("RS"), Pos::ORIGIN, Rotation::R0),
        "R-1: the spring at (0,0), rotation 0"
    );
    assert_eq!(
        game.in_bag(kind("D")),
        3,
        "R-1: the start tile is out of the game"
    );
    assert_eq!(game.in_bag(kind("RS")), 0);
    assert_eq!(game.in_bag(kind("RL")), 1);
    for (name, count) in RIVER_COUNTS.into_iter().filter(|(n, _)| *n != "RS") {
        assert_eq!(
            game.in_bag(kind(name)),
            u16::from(count),
            "R-1: river tile {name}"
        );
    }
    assert_eq!(
        game.bag_left(),
        71 + 11,
        "R-1: 71 land tiles, 10 river tiles and the lake"
    );
}

#[test]
fn r_2_the_ten_river_tiles_come_first_then_the_lake_then_the_land() {
    let mut game = seeded_river(5);
    let mut events = Vec::new();
    game.run_automatic(&mut events, &mut ());
    while game.draws() < 13 {
        let (player, command) = match game.pending() {
            Pending::PlaceTile { player, .. } => {
                let p = game.legal_placements()[0];
                (
                    player,
                    place_tile(p.pos.x, p.pos.y, i64::from(p.rotation.degrees())),
                )
            }
            Pending::PlaceFollower { player } => (player, Command::PlaceFollower(None)),
            other => panic!("a seeded game waits for {other:?}"),
        };
        events.extend(game.execute(Actor::Seat(player), &command, &mut ()).unwrap());
    }
    let drawn: Vec<TileKind> = events
        .iter()
        .filter_map(|e| match e {
            Event::Drawn(tile) => Some(*tile),
            _ => None,
        })
        .collect();
    let lake = kind("RL");
    assert!(
        drawn[..10].iter().all(|t| t.def().is_river() && *t != lake),
        "R-2: ten river tiles first: {drawn:?}"
    );
    assert_eq!(drawn[10], lake, "R-2: then the lake: {drawn:?}");
    assert!(
        drawn[11..].iter().all(|t| !t.def().is_river()),
        "R-2: then land tiles: {drawn:?}"
    );
}

#[test]
fn r_2_a_land_tile_or_the_lake_cannot_be_drawn_while_river_tiles_remain() {
    let mut turns: Vec<&str> = COURSE.to_vec();
    turns.extend(["RL 8 -3 0", "E 3 1 180 S"]);
    let mut t = given(&turns).rules(river()).table(0);
    let err = rejects(&mut t, Actor::Dealer, Command::Draw(kind("E")));
    assert_eq!(err.rule_id(), Some(id::R_2), "R-2: river tiles first: {err}");
    let err = rejects(&mut t, Actor::Dealer, Command::Draw(kind("RL")));
    assert_eq!(err.rule_id(), Some(id::R_2), "R-2: the lake is set aside: {err}");
    for turn in COURSE {
        t.turn(turn);
    }
    let err = rejects(&mut t, Actor::Dealer, Command::Draw(kind("E")));
    assert_eq!(
        err.rule_id(),
        Some(id::R_2),
        "R-2: the lake comes before the land: {err}"
    );
    t.turn("RL 8 -3 0");
    // The land tiles follow; features beside the river are ordinary:
    // the E closes R1's north city, and its knight scores.
    t.turn("E 3 1 180 S");
    assert_eq!(t.scored(), [(vec![1], 2, id::B_S4)]);
}

#[test]
fn r_3_a_river_tile_must_continue_the_river() {
    let mut t = given(&["R5 1 0 0"]).rules(river()).table(0);
    t.draw("R5");
    let seat = Actor::Seat(Seat(0));
    // Turned north-south, its field meets the spring's water.
    let err = rejects(&mut t, seat, place_tile(1, 0, 90));
    assert_eq!(
        err,
        rule(
            id::R_3,
            "edge W of R5 at (1,0) is field, neighbour's E edge is river"
        )
    );
    // North of the spring, field to field, but away from the river's end.
    let err = rejects(&mut t, seat, place_tile(0, 1, 0));
    assert_eq!(
        err,
        rule(
            id::R_3,
            "R5 at (0,1) does not continue the river, which is open at (1,0)"
        )
    );
    // South of the spring, its water meets the spring's field.
    let err = rejects(&mut t, seat, place_tile(0, -1, 90));
    assert_eq!(err.rule_id(), Some(id::R_3), "R-3: water only to water: {err}");
    let mut legal = t.game.legal_placements();
    legal.sort();
    assert_eq!(
        legal,
        [(1, 0, 0), (1, 0, 180)].map(|(x, y, r)| Placement {
            pos: pos(x, y),
            rotation: rotation(r)
        }),
        "R-3: only at the open end"
    );
    t.place(1, 0, 0);
}

#[test]
fn r_4_the_river_never_flows_back_towards_the_spring() {
    // The R8 at (1,0) turns the river north; at (1,1) another R8 could turn
    // it west (a U-turn) or east.
    let mut t = given(&["R8 1 0 90", "R8 1 1 270"]).rules(river()).table(0);
    t.turn("R8 1 0 90");
    t.draw("R8");
    let err = rejects(&mut t, Actor::Seat(Seat(1)), place_tile(1, 1, 0));
    assert_eq!(
        err,
        rule(
            id::R_4,
            "R8 at (1,1) would make the river flow W, back towards the spring"
        )
    );
    assert_eq!(
        t.game.legal_placements(),
        [Placement {
            pos: pos(1, 1),
            rotation: Rotation::R270
        }],
        "R-4: only the turn east"
    );
    t.place(1, 1, 270);
}

#[test]
fn r_5_no_follower_on_the_river_but_on_the_features_beside_it() {
    let mut t = given(&["R1 1 0 0"]).rules(river()).table(0);
    t.draw("R1");
    t.place(1, 0, 0);
    assert_eq!(
        t.follower_places(),
        ["N", "S", "En", "Es"],
        "R-5: the two cities and the two fields, not the river"
    );
    for water in [Dir::E, Dir::W] {
        let err = rejects(
            &mut t,
            Actor::Seat(Seat(0)),
            Command::PlaceFollower(Some(Place::Edge(water))),
        );
        assert_eq!(
            err,
            rule(
                id::R_5,
                &format!("{water} of R1 at (1,0) is the river: no follower may stand on it")
            )
        );
    }
    t.follow(Some("N"));
    assert_eq!(t.followers(), [(0, 1, 0, "N")], "R-5: a knight beside the river");
}

#[test]
fn r_6_a_river_tile_that_fits_nowhere_is_removed_and_the_same_player_draws_again() {
    // North, east, then south: the river's end (2,0) has the field of the
    // R8 at (1,0) to its west, so the R4 (a road crossing east-west) cannot
    // continue it.
    let t = given(&["R8 1 0 90", "R8 1 1 270", "R7 2 1 0", "R4 -", "R5 2 0 90"])
        .rules(river())
        .play();
    assert!(
        t.effects.contains(&Effect::Discarded(kind("R4"))),
        "R-6: R4 is removed"
    );
    assert_eq!(t.game.in_bag(kind("R4")), 0);
    assert!(t.game.tiles().iter().all(|p| p.kind != kind("R4")));
    // Seat 1 drew the R4, then drew and placed the R5.
    let r5 = t.game.tile_at(pos(2, 0)).unwrap();
    assert_eq!(r5.kind, kind("R5"));
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(0) },
        "R-6: seat 1 played twice"
    );
}

#[test]
fn cd_10_the_two_banks_are_one_field_round_the_spring() {
    // the fields beside the river are ordinary; the river splits them
    // like a road, but the spring's one field joins both banks (CD-10).
    let mut t = given(&["R5 1 0 0 Nw", "R5 2 0 0"]).rules(river()).table(1);
    t.turn("R5 1 0 0 Nw");
    t.draw("R5");
    t.place(2, 0, 0);
    assert_eq!(
        t.follower_places(),
        Vec::<&str>::new(),
        "CD-10: both banks of the second R5 join the claimed field at the spring"
    );
}

/// Plays a seeded game with random legal decisions; returns its effects.
fn random_river_game(seed: u64, rules: Rules) -> (Game, Vec<Effect>) {
    let setup = Setup {
        rules,
        players: vec!["A".into(), "B".into(), "C".into()],
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    };
    let mut game = Game::new(setup);
    let mut effects = Vec::new();
    game.run_automatic(&mut Vec::new(), &mut effects);
    let mut state = seed | 1;
    while let Some(player) = game.pending().player() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let choices = game.legal_commands();
        let command = choices[(state % choices.len() as u64) as usize];
        game.execute(Actor::Seat(player), &command, &mut effects).unwrap();
    }
    (game, effects)
}

/// Over many seeded games (River, and River with the Count) the river
/// never flows back west, towards the spring (R-4 as docs/rules.md states it),
/// stays one continuous stream, and never blocks itself: after every river
/// tile its open end faces an empty cell, never one of its own tiles nor
/// the city, so the river can always be continued where it points. What
/// R-4 leaves possible, and docs/rules.md answers with R-6, is a bank that no
/// remaining tile matches: the river may flow north, east, then south
/// beside its own bank, and a tile whose side is field cannot lie against a
/// road. R-6 then discards it (the lake too, in 13 of these 200 games, seed
/// 9 among them). Forbidding that shape would take a stricter R-4 than
/// docs/rules.md's, and would reject the example river-3p.json, whose
/// turn 8 flows south after north.
#[test]
fn r_4_r_6_over_many_seeded_games_the_river_never_turns_back_nor_blocks_itself() {
    let river = Rules::default().with(Expansion::River);
    let mut lake_discarded = Vec::new();
    let mut games = 0;
    for (i, rules) in [river, river.with(Expansion::Count)].into_iter().enumerate() {
        for seed in 0..100 {
            let seed = 1000 * i as u64 + seed;
            let (game, effects) = random_river_game(seed, rules);
            games += 1;
            if effects
                .iter()
                .any(|e| matches!(e, Effect::Discarded(t) if t.name() == "RL"))
            {
                lake_discarded.push(seed);
            }
            // Tiles are kept in the order they were laid: the city first
            // (with the Count), then the spring, then the river.
            let tiles = game.tiles();
            // Follow the water from the spring: each tile's outflow is the
            // water edge it does not share with the one before.
            let mut inflow: Option<Dir> = None;
            let mut previous: Option<&PlacedTile> = None;
            for (laid, tile) in tiles.iter().enumerate().filter(|(_, t)| t.def().is_river()) {
                if let (Some(from), Some(out)) = (previous, inflow.map(Dir::opposite)) {
                    assert_eq!(
                        from.pos.step(out),
                        tile.pos,
                        "seed {seed}: the river breaks at {}",
                        from.pos
                    );
                }
                if tile.kind.name() == "RL" {
                    break;
                }
                let out = Dir::ALL
                    .into_iter()
                    .find(|&d| Some(d) != inflow && tile.layout().edges[d.index()] == EdgeKind::Water)
                    .unwrap();
                assert_ne!(
                    out,
                    Dir::W,
                    "seed {seed}: the river turns back west at {}",
                    tile.pos
                );
                let open_end = tile.pos.step(out);
                assert!(
                    tiles[..=laid].iter().all(|t| t.pos != open_end),
                    "seed {seed}: the river runs into a tile at {open_end} after {}",
                    tile.pos
                );
                inflow = Some(out.opposite());
                previous = Some(tile);
            }
        }
    }
    assert!(
        lake_discarded.contains(&9),
        "seed 9 is known to leave no place for the lake: {lake_discarded:?}"
    );
    assert!(
        lake_discarded.len() * 10 < games,
        "{} of {games} games discarded the lake: {lake_discarded:?}",
        lake_discarded.len()
    );
}
