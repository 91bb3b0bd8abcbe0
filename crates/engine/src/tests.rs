//! Unit tests of the engine's internals. Rule-by-rule tests, records and
//! properties live in the integration tests (`tests/it`).

use crate::shuffle::chacha20_block;
use crate::*;

#[test]
fn catalogue_matches_the_totals_of_tiles_md() {
    let mut tiles = 0;
    let (mut pennants, mut cloisters) = (0, 0);
    let (mut city, mut road, mut field) = (0, 0, 0);
    for &(name, count) in &BASE_COUNTS {
        let def = TileKind::from_name(name).expect("base kind").def();
        let count = count as usize;
        tiles += count;
        pennants += count * def.pennants();
        cloisters += count * def.cloister.iter().count();
        for edge in def.at(Rotation::R0).edges {
            match edge {
                EdgeKind::City => city += count,
                EdgeKind::Road => road += count,
                EdgeKind::Field => field += count,
                other => panic!("{name} has a {other:?} edge"),
            }
        }
    }
    assert_eq!((BASE_COUNTS.len(), tiles, pennants, cloisters), (24, 72, 10, 6));
    assert_eq!((city, road, field), (79, 94, 115));

    let mut river = [0; 6];
    let mut river_tiles = 0;
    for &(name, count) in &RIVER_COUNTS {
        river_tiles += count as usize;
        let def = TileKind::from_name(name).expect("river kind").def();
        for edge in def.at(Rotation::R0).edges {
            river[edge as usize] += count as usize;
        }
    }
    assert_eq!(river_tiles, 12);
    // water, field, road, city
    assert_eq!(
        (
            river[EdgeKind::Water as usize],
            river[EdgeKind::Field as usize],
            river[EdgeKind::Road as usize],
            river[EdgeKind::City as usize]
        ),
        (22, 15, 6, 5)
    );
    assert_eq!(catalogue().len(), KINDS);
}

#[test]
fn every_half_edge_faces_its_partner() {
    let pairs = [("Nw", "Sw"), ("Ne", "Se"), ("En", "Wn"), ("Es", "Ws")];
    for (a, b) in pairs {
        let (a, b) = (Half::from_name(a).unwrap(), Half::from_name(b).unwrap());
        assert_eq!(a.facing(), b);
        assert_eq!(b.facing(), a);
    }
    assert_eq!(Half::Nw.rotated(Rotation::R90), Half::En);
    assert_eq!(Half::Wn.rotated(Rotation::R90), Half::Ne);
    assert_eq!(Dir::W.rotated(Rotation::R90), Dir::N);
}

#[test]
fn rotation_moves_edges_clockwise() {
    // V is F F R R: at 90 degrees its north edge shows on the east.
    let v = TileKind::from_name("V").unwrap().def();
    assert_eq!(
        v.at(Rotation::R90).edges,
        [EdgeKind::Road, EdgeKind::Field, EdgeKind::Field, EdgeKind::Road]
    );
}

#[test]
fn chacha20_matches_rfc_8439() {
    // RFC 8439, 2.3.2.
    let key: [u32; 8] = std::array::from_fn(|i| {
        u32::from_le_bytes([4 * i as u8, 4 * i as u8 + 1, 4 * i as u8 + 2, 4 * i as u8 + 3])
    });
    let block = chacha20_block(&key, 1, &[0x0900_0000, 0x4a00_0000, 0]);
    assert_eq!(&block[..4], &[0xe4e7f110, 0x15593bd1, 0x1fdd0f50, 0xc47120a3]);
    assert_eq!(block[15], 0x4e3c50a2);
}

#[test]
fn seed_debug_never_shows_the_seed() {
    let seed = Seed::from_u64(0xdead_beef);
    assert_eq!(format!("{seed:?}"), "Seed(sealed)");
    assert_eq!(Seed::from_hex(&seed.to_hex()), Some(seed));
}

/// A tiny generator for smoke tests: not the engine's randomness.
pub(crate) struct Lcg(pub u64);
impl Lcg {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

pub(crate) fn random_game(seed: u64, players: usize, rules: Rules) -> (Game, Vec<Event>) {
    let setup = Setup {
        rules,
        players: (0..players).map(|i| format!("P{i}")).collect(),
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    };
    let mut game = Game::new(setup.clone());
    let mut events = vec![Event::Created(setup)];
    game.run_automatic(&mut events, &mut ());
    let mut rng = Lcg(seed);
    while let Some(player) = game.pending().player() {
        let choices = game.legal_commands();
        let command = choices[rng.below(choices.len())];
        let new = game
            .execute(Actor::Seat(player), &command, &mut ())
            .expect("legal");
        events.extend(new);
    }
    (game, events)
}

/// The four combinations of expansions.
pub(crate) fn combinations() -> [Rules; 4] {
    let base = Rules::default();
    let river = base.with(Expansion::River);
    [
        base,
        river,
        base.with(Expansion::Count),
        river.with(Expansion::Count),
    ]
}

#[test]
fn random_games_finish_and_fold_to_the_same_state() {
    for seed in 0..60 {
        let rules = combinations()[seed as usize % 4];
        let (game, events) = random_game(seed, 2 + (seed as usize % 4), rules);
        assert!(game.is_finished());
        assert_eq!(game.bag_left(), 0);
        let folded = Game::fold(&events).expect("created");
        assert_eq!(folded, game);
        let on_board = game.followers().count();
        let in_city: usize = game
            .city()
            .map_or(0, |c| c.quarters.iter().flatten().map(|&n| n as usize).sum());
        let in_supply: usize = game.supply().iter().map(|&s| s as usize).sum();
        assert_eq!(on_board + in_city + in_supply, 7 * game.players(), "seed {seed}");
    }
}

#[test]
fn events_round_trip_through_the_codec() {
    for seed in 0..12 {
        let rules = combinations()[seed as usize % 4];
        let (_, events) = random_game(seed, 2 + seed as usize % 4, rules);
        for event in &events {
            let bytes = codec::encode(event);
            assert_eq!(codec::decode(codec::SCHEMA, &bytes).as_ref(), Ok(event));
        }
    }
    // The events of time and early ends (T-*), at their extremes.
    let mut timed = Vec::new();
    for seat in 0..5 {
        timed.extend([
            Event::TimedOut(Seat(seat)),
            Event::Resigned(Seat(seat)),
            Event::Aborted(Seat(seat)),
        ]);
    }
    for down_since_ms in [0, 1_800_000_000_000, u64::MAX] {
        timed.push(Event::Resumed { down_since_ms });
    }
    let main = MainTime {
        initial_ms: 1,
        increment_ms: MAX_DURATION_MS,
    };
    for (main, decision_ms, on_timeout) in [
        (Some(main), None, OnTimeout::Forfeit),
        (None, Some(MAX_DURATION_MS), OnTimeout::Auto),
        (Some(main), Some(1), OnTimeout::Auto),
    ] {
        timed.push(Event::Created(Setup {
            rules: Rules::default().with(Expansion::Count),
            players: vec!["A".into(), "B".into(), "C".into()],
            tiles: Some(vec![(TileKind::from_name("V").unwrap(), 3)]),
            seed: Some(Seed::from_u64(9)),
            time_control: Some(TimeControl {
                main,
                decision_ms,
                on_timeout,
            }),
        }));
    }
    for event in &timed {
        let bytes = codec::encode(event);
        assert_eq!(codec::decode(codec::SCHEMA, &bytes).as_ref(), Ok(event));
    }
}

#[test]
fn codec_schema_1_bytes_never_change() {
    // Stored games depend on these exact bytes.
    let setup = Setup {
        rules: Rules::default().with(Expansion::River),
        players: vec!["Ada".into(), "Bo".into()],
        tiles: Some(vec![(TileKind::from_name("E").unwrap(), 2)]),
        seed: Some(Seed::from_u64(1)),
        time_control: None,
    };
    let mut created = vec![
        1, 1, 0, 1, 2, 3, 0, b'A', b'd', b'a', 2, 0, b'B', b'o', 1, 1, 0, 1, 0, b'E', 2, 0, 1, 1,
    ];
    created.extend([0; 31]);
    assert_eq!(codec::encode(&Event::Created(setup)), created);
    assert_eq!(
        codec::encode(&Event::Drawn(TileKind::from_name("R8").unwrap())),
        [2, 2, 0, b'R', b'8']
    );
    let placed = Event::TilePlaced {
        pos: Pos::new(-1, 2),
        rotation: Rotation::R270,
    };
    assert_eq!(codec::encode(&placed), [3, 255, 255, 255, 255, 2, 0, 0, 0, 3]);
    assert_eq!(
        codec::encode(&Event::FollowerPlaced(Some(Place::Half(Half::Wn)))),
        [4, 12]
    );
    assert_eq!(codec::encode(&Event::FollowerPlaced(None)), [4, 0]);
    // Time and the early ends (T-5, T-8, T-9, T-10).
    assert_eq!(codec::encode(&Event::TimedOut(Seat(1))), [9, 1]);
    assert_eq!(codec::encode(&Event::Resigned(Seat(4))), [10, 4]);
    assert_eq!(codec::encode(&Event::Aborted(Seat(0))), [11, 0]);
    assert_eq!(
        codec::encode(&Event::Resumed {
            down_since_ms: 0x0102_0304_0506_0708
        }),
        [12, 8, 7, 6, 5, 4, 3, 2, 1]
    );
    // A creation with a time control is tag 8: tag 1's bytes, then the
    // time control (T-1).
    let clocked = Setup {
        rules: Rules::default(),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: None,
        time_control: Some(TimeControl {
            main: Some(MainTime {
                initial_ms: 60_000,
                increment_ms: 2_000,
            }),
            decision_ms: Some(86_400_000),
            on_timeout: OnTimeout::Auto,
        }),
    };
    let mut bytes = vec![8, 1, 0, 0, 2, 1, 0, b'A', 1, 0, b'B', 0, 0, 1];
    bytes.extend(60_000u64.to_le_bytes());
    bytes.extend(2_000u64.to_le_bytes());
    bytes.push(1);
    bytes.extend(86_400_000u64.to_le_bytes());
    bytes.push(1);
    let encoded = codec::encode(&Event::Created(clocked.clone()));
    assert_eq!(encoded, bytes);
    assert_eq!(codec::decode(1, &encoded), Ok(Event::Created(clocked)));
}

#[test]
fn codec_rejects_damaged_bytes() {
    use codec::DecodeError;
    assert_eq!(codec::decode(2, &[4, 0]), Err(DecodeError::UnknownSchema(2)));
    assert_eq!(codec::decode(1, &[13]), Err(DecodeError::UnknownTag(13)));
    assert_eq!(codec::decode(1, &[9]), Err(DecodeError::Truncated(1)));
    assert_eq!(
        codec::decode(1, &[10, 5]),
        Err(DecodeError::Invalid { what: "seat", at: 1 })
    );
    assert_eq!(codec::decode(1, &[3, 0, 0]), Err(DecodeError::Truncated(3)));
    assert_eq!(codec::decode(1, &[4, 0, 0]), Err(DecodeError::TrailingBytes(1)));
    assert_eq!(
        codec::decode(1, &[4, 14]),
        Err(DecodeError::Invalid {
            what: "follower place",
            at: 1
        })
    );
    assert_eq!(
        codec::decode(1, &[2, 1, 0, b'Z']),
        Err(DecodeError::Invalid {
            what: "tile kind",
            at: 1
        })
    );
    // One player only: not a legal setup (B-2).
    let one = [1, 1, 0, 0, 1, 1, 0, b'A', 0, 0];
    assert!(matches!(
        codec::decode(1, &one),
        Err(DecodeError::Invalid { what: "setup", .. })
    ));
}

#[test]
fn the_shuffle_is_frozen() {
    // shuffle/1 must never change: stored games and audits depend on it.
    let setup = Setup {
        rules: Rules::default(),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: Some(Seed::from_u64(42)),
        time_control: None,
    };
    let mut game = Game::new(setup);
    let mut first = Vec::new();
    while let Some(Event::Drawn(tile)) = game.automatic() {
        first.push(tile.name());
        if first.len() == 12 {
            break;
        }
        game.apply(&Event::Drawn(tile));
        // Place anywhere legal and skip the follower, to reach the next draw.
        if let Some(p) = game.legal_placements().first().copied() {
            game.apply(&Event::TilePlaced {
                pos: p.pos,
                rotation: p.rotation,
            });
            game.apply(&Event::FollowerPlaced(None));
        }
    }
    assert_eq!(first.join(" "), FROZEN_ORDER_SEED_42);
}

const FROZEN_ORDER_SEED_42: &str = "D W U V A L D E Q G X V";

#[test]
fn the_river_shuffle_is_frozen() {
    // With the River the river tiles are shuffled first, then the land
    // tiles from the same stream; the lake comes between them.
    let setup = Setup {
        rules: Rules::default().with(Expansion::River),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: Some(Seed::from_u64(42)),
        time_control: None,
    };
    let game = Game::new(setup);
    let order: Vec<&str> = game.order.0.iter().map(|t| t.name()).collect();
    assert_eq!(order.len(), 82, "10 river tiles, the lake, 71 land tiles");
    assert_eq!(order[..11].join(" "), FROZEN_RIVER_ORDER_SEED_42);
    assert_eq!(order[11..23].join(" "), FROZEN_RIVER_LAND_ORDER_SEED_42);
}

const FROZEN_RIVER_ORDER_SEED_42: &str = "R5 R8 R6 R5 R4 R1 R8 R3 R7 R2 RL";
const FROZEN_RIVER_LAND_ORDER_SEED_42: &str = "E W U K P K N E G T V E";

/// The first draws of the shuffle that docs/record-format.md states are the
/// engine's: those the two tests above freeze (the classic game and the
/// River, with the seed of the number 42).
#[test]
fn the_draw_orders_record_format_md_states_are_the_engine_s() {
    let doc = include_str!("../../../docs/record-format.md");
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    for order in [FROZEN_ORDER_SEED_42, FROZEN_RIVER_ORDER_SEED_42] {
        assert!(
            doc.contains(&format!("`{order}`")),
            "docs/record-format.md does not state {order}"
        );
    }
}

#[test]
fn the_shuffle_rejects_words_from_the_bound_it_documents() {
    // floor((2^32 - 1) / n) * n: for a power of two the top n words are
    // rejected as well (an exact bound would accept them).
    use crate::shuffle::rejection_limit;
    assert_eq!(rejection_limit(2), u32::MAX - 1);
    assert_eq!(rejection_limit(64), u32::MAX - 63);
    assert_eq!(rejection_limit(1), u32::MAX);
    assert_eq!(rejection_limit(3), u32::MAX);
    assert_eq!(rejection_limit(71), 4_294_967_287);
}

#[test]
fn stream_below_is_uniform_and_in_range() {
    let mut stream = Stream::new(&Seed::from_u64(9));
    let mut counts = [0u32; 6];
    for _ in 0..60_000 {
        counts[stream.below(6) as usize] += 1;
    }
    for c in counts {
        assert!((9_000..11_000).contains(&c), "{counts:?}");
    }
}

#[test]
fn codec_schema_1_count_events_never_change() {
    let moved = Event::FollowerMoved(Target {
        pos: Pos::new(3, -1),
        place: Place::Cloister,
    });
    assert_eq!(codec::encode(&moved), [5, 3, 0, 0, 0, 255, 255, 255, 255, 13]);
    assert_eq!(codec::encode(&Event::Passed), [6]);
    let deployed = Event::DeployedToCarcassonne {
        quarter: Quarter::Market,
        count: Some(Quarter::Castle),
    };
    assert_eq!(codec::encode(&deployed), [7, 3, 1]);
    let stays = Event::DeployedToCarcassonne {
        quarter: Quarter::Blacksmith,
        count: None,
    };
    assert_eq!(codec::encode(&stays), [7, 1, 0]);
    assert_eq!(
        codec::decode(1, &[7, 4, 0]),
        Err(codec::DecodeError::Invalid {
            what: "quarter",
            at: 1
        })
    );
}

#[test]
fn debug_of_a_game_reveals_neither_seed_nor_draw_order() {
    let (game, _) = random_game(3, 2, Rules::default());
    let mut fresh = Game::new(game.setup().clone());
    fresh.run_automatic(&mut Vec::new(), &mut ());
    let text = format!("{fresh:?}");
    assert!(text.contains("SealedOrder(71 tiles)"), "{text}");
    assert!(text.contains("Seed(sealed)"), "{text}");
    assert!(!text.contains(&Seed::from_u64(3).to_hex()));
}

/// Properties over seeded random games of all four combinations of
/// expansions (base, River, Count, River+Count), 2 to 5 players, checked
/// at every decision: followers conserved (supply + board + Carcassonne =
/// 7), every listed command accepted and a wrong actor refused, scores
/// never decreasing; and at the end, the fold and a record's round trip
/// give the same game.
#[test]
fn every_combination_keeps_its_invariants_at_every_decision() {
    for (c, rules) in combinations().into_iter().enumerate() {
        for seed in 0..8u64 {
            let players = 2 + (seed as usize % 4);
            let setup = Setup {
                rules,
                players: (0..players).map(|i| format!("P{i}")).collect(),
                tiles: None,
                seed: Some(Seed::from_u64(100 * c as u64 + seed)),
                time_control: None,
            };
            let mut game = Game::new(setup.clone());
            let mut events = vec![Event::Created(setup)];
            game.run_automatic(&mut events, &mut ());
            let mut rng = Lcg(seed + 17);
            let mut scores = vec![0; players];
            while let Some(player) = game.pending().player() {
                for seat in 0..players {
                    let on_board = game.followers().filter(|f| f.owner.index() == seat).count();
                    let in_city = game
                        .city()
                        .map_or(0, |c| c.followers_of(Seat(seat as u8)) as usize);
                    let total = on_board + in_city + game.supply()[seat] as usize;
                    assert_eq!(total, 7, "combination {c}, seed {seed}, seat {seat}");
                }
                let choices = game.legal_commands();
                assert!(!choices.is_empty(), "a pending decision always has a choice");
                for command in &choices {
                    assert!(
                        game.decide(Actor::Seat(player), command).is_ok(),
                        "{command:?} is listed"
                    );
                }
                check_unlisted_are_refused(&game, player, &choices);
                // Counting and picking without listing agree with the list.
                assert_eq!(game.legal_command_count(), choices.len());
                let picked: Vec<_> = (0..=choices.len()).map(|n| game.legal_command(n)).collect();
                assert_eq!(
                    picked[..choices.len()],
                    choices.iter().copied().map(Some).collect::<Vec<_>>()[..]
                );
                assert_eq!(picked[choices.len()], None, "nothing past the last choice");
                let other = Seat((player.0 + 1) % players as u8);
                assert!(matches!(
                    game.decide(Actor::Seat(other), &choices[0]),
                    Err(PlayError::NotYourTurn { .. })
                ));
                let command = choices[rng.below(choices.len())];
                // Executing into a reused buffer does what execute does.
                let mut into = game.clone();
                let mut buffer = vec![Event::Resumed { down_since_ms: 0 }];
                into.execute_into(into.time(), Actor::Seat(player), &command, &mut buffer, &mut ())
                    .expect("listed");
                let executed = game
                    .execute(Actor::Seat(player), &command, &mut ())
                    .expect("listed");
                assert_eq!(
                    buffer[1..],
                    executed[..],
                    "the same events, after what the buffer held"
                );
                assert_eq!(into, game);
                events.extend(executed);
                for (before, now) in scores.iter_mut().zip(game.scores()) {
                    assert!(*now >= *before, "scores never decrease");
                    *before = *now;
                }
            }
            assert_eq!(
                Game::fold(&events).as_ref(),
                Some(&game),
                "combination {c}, seed {seed}"
            );
            let record = record::Record::from_events(&events).expect("a record");
            let reread = record::Record::parse(&record.to_json()).expect("reads back");
            let replay = reread.verify().expect("verifies");
            assert_eq!(
                replay.game.scores(),
                game.scores(),
                "combination {c}, seed {seed}"
            );
        }
    }
}

/// Tile placements, follower places and the Count's decisions that
/// `legal_commands` does not list are refused, with the rule they break
/// (or accepted as another name of a listed choice, with its events).
fn check_unlisted_are_refused(game: &Game, player: Seat, listed: &[Command]) {
    let actor = Actor::Seat(player);
    match game.pending() {
        Pending::PlaceTile { .. } => {
            let mut cells: Vec<Pos> = game
                .tiles()
                .iter()
                .flat_map(|t| Dir::ALL.map(|d| t.pos.step(d)))
                .collect();
            cells.sort();
            cells.dedup();
            for pos in cells {
                for rotation in Rotation::ALL {
                    let command = Command::PlaceTile { pos, rotation };
                    if listed.contains(&command) {
                        continue;
                    }
                    let rule = game.decide(actor, &command).err().and_then(|e| e.rule_id());
                    assert!(
                        matches!(rule.map(|r| r.as_str()), Some("B-T1" | "R-3" | "R-4")),
                        "{command:?} is not listed but gives {rule:?}"
                    );
                }
            }
        }
        Pending::PlaceFollower { .. } => {
            let names = [
                "N", "E", "S", "W", "Nw", "Ne", "En", "Es", "Se", "Sw", "Ws", "Wn", "cloister",
            ];
            let canonical: Vec<Place> = listed
                .iter()
                .filter_map(|c| match c {
                    Command::PlaceFollower(Some(p)) => Some(*p),
                    _ => None,
                })
                .collect();
            for name in names {
                let place = Place::from_name(name).expect("a place name");
                match game.decide(actor, &Command::PlaceFollower(Some(place))) {
                    // Accepted under its canonical name, which is listed.
                    Ok(events) => match events.as_slice() {
                        [Event::FollowerPlaced(Some(p))] => assert!(canonical.contains(p), "{name} -> {p:?}"),
                        other => panic!("{other:?}"),
                    },
                    Err(error) => {
                        let rule = error.rule_id().map(|r| r.as_str());
                        assert!(matches!(rule, Some("B-T3" | "R-5")), "{name}: {error}");
                    }
                }
            }
        }
        Pending::Redeploy { .. } | Pending::FinalRound { .. } => {
            let listed_events: Vec<Vec<Event>> = listed
                .iter()
                .map(|c| game.decide(actor, c).expect("listed"))
                .collect();
            let places = Dir::ALL
                .map(Place::Edge)
                .into_iter()
                .chain(Half::ALL.map(Place::Half))
                .chain([Place::Cloister]);
            for place in places {
                for tile in game.tiles() {
                    let command = Command::MoveFromCarcassonne(Target { pos: tile.pos, place });
                    match game.decide(actor, &command) {
                        Ok(events) => assert!(
                            listed_events.contains(&events),
                            "{command:?} is accepted as {events:?}, which no listed command gives"
                        ),
                        Err(error) => {
                            let rule = error.rule_id().map(|r| r.as_str());
                            assert!(
                                matches!(rule, Some("C-6" | "C-7" | "C-8" | "C-9")),
                                "{command:?}: {error}"
                            );
                        }
                    }
                }
            }
        }
        Pending::DeployToCarcassonne { .. } => {
            let here = game.city().map(|c| c.count);
            for quarter in Quarter::ALL {
                let counts = std::iter::once(None).chain(Quarter::ALL.map(Some));
                for count in counts {
                    let command = Command::DeployToCarcassonne { quarter, count };
                    let decided = game.decide(actor, &command);
                    if listed.contains(&command) {
                        assert!(decided.is_ok(), "{command:?}");
                    } else {
                        // C-5: the count "moved" where it stands stays, as
                        // the listed deploy without a move.
                        assert_eq!(count, here, "{command:?} is not listed");
                        let staying = Command::DeployToCarcassonne { quarter, count: None };
                        assert_eq!(decided, game.decide(actor, &staying), "{command:?}");
                    }
                }
            }
        }
        Pending::Draw { .. } | Pending::Finished => {}
    }
}

/// Plays `turns` random decisions of `game` (fewer if it ends).
fn play_some(game: &mut Game, turns: usize, rng: &mut Lcg) {
    for _ in 0..turns {
        let Some(player) = game.pending().player() else {
            return;
        };
        let choices = game.legal_commands();
        let command = choices[rng.below(choices.len())];
        game.execute(Actor::Seat(player), &command, &mut ())
            .expect("legal");
    }
}

#[test]
fn the_public_game_hides_the_bag_order_and_the_seed_and_nothing_else() {
    for (index, rules) in combinations().into_iter().enumerate() {
        let setup = Setup {
            rules,
            players: vec!["A".into(), "B".into(), "C".into()],
            tiles: None,
            seed: Some(Seed::from_u64(7 + index as u64)),
            time_control: None,
        };
        let mut game = Game::new(setup);
        game.run_automatic(&mut Vec::new(), &mut ());
        play_some(&mut game, 25, &mut Lcg(index as u64));
        // The same history, another order of what is left in the bag.
        let mut other = game.clone();
        let next = other.draws as usize;
        other.order.0[next..].reverse();
        assert_ne!(
            other.order, game.order,
            "rules {index}: the test needs another order"
        );
        let public = game.public();
        assert_eq!(public, other.public(), "rules {index}");
        assert_eq!(public.game().setup().seed, None);
        assert_eq!(public.game().automatic(), None, "it draws nothing by itself");
        assert_eq!(public.game().pending(), game.pending());
        assert_eq!(public.game().scores(), game.scores());
        let left: u16 = public.remaining().iter().map(|&(_, n)| n).sum();
        assert_eq!(left, game.bag_left());
    }
}

#[test]
fn a_dealt_game_draws_what_is_left_in_the_rules_phases_and_plays_to_its_end() {
    let lake = TileKind::from_name("RL").unwrap();
    for seed in 0..24u64 {
        let rules = combinations()[seed as usize % 4];
        let setup = Setup {
            rules,
            players: (0..2 + seed as usize % 4).map(|i| format!("P{i}")).collect(),
            tiles: None,
            seed: Some(Seed::from_u64(seed)),
            time_control: None,
        };
        let mut game = Game::new(setup);
        game.run_automatic(&mut Vec::new(), &mut ());
        let mut rng = Lcg(seed);
        // From the start (the River's tiles all in the bag) and from later.
        play_some(&mut game, (seed as usize % 3) * 9, &mut rng);
        let public = game.public();
        let mut shuffles = Lcg(seed + 100);
        let mut dealt = public.deal(|tiles| {
            for i in (1..tiles.len()).rev() {
                tiles.swap(i, shuffles.below(i + 1));
            }
        });
        assert_eq!(
            dealt.public(),
            public,
            "seed {seed}: dealing changes nothing public"
        );
        let coming = &dealt.order.0[dealt.draws as usize..];
        let mut counted: Vec<(TileKind, u16)> = Vec::new();
        for &tile in coming {
            match counted.iter_mut().find(|(k, _)| *k == tile) {
                Some((_, n)) => *n += 1,
                None => counted.push((tile, 1)),
            }
        }
        counted.sort();
        assert_eq!(
            counted,
            public.remaining(),
            "seed {seed}: the bag, no more, no less"
        );
        // The River's tiles, then its lake, then the land.
        let phase = |t: &TileKind| match (t.def().is_river(), *t == lake) {
            (_, true) => 1,
            (true, false) => 0,
            (false, false) => 2,
        };
        assert!(
            coming.windows(2).all(|w| phase(&w[0]) <= phase(&w[1])),
            "seed {seed}: {coming:?}"
        );
        dealt.run_automatic(&mut Vec::new(), &mut ());
        play_some(&mut dealt, usize::MAX, &mut rng);
        assert!(dealt.is_finished(), "seed {seed}");
    }
}

#[test]
fn scores_if_ended_now_add_what_the_final_scoring_would_and_nothing_to_a_finished_game() {
    for seed in 0..12u64 {
        let rules = combinations()[seed as usize % 4];
        let (finished, events) = random_game(seed, 2 + seed as usize % 3, rules);
        assert_eq!(finished.scores_if_ended_now(), finished.scores(), "seed {seed}");
        // Midway: never less than the scores so far, and more for some
        // seat whose follower stands on an unfinished feature.
        let midway = Game::fold(&events[..events.len() / 2]).unwrap();
        let now = midway.scores_if_ended_now();
        assert!(
            now.iter().zip(midway.scores()).all(|(a, b)| a >= b),
            "seed {seed}"
        );
        if midway.followers().next().is_some() {
            assert!(now.iter().zip(midway.scores()).any(|(a, b)| a > b), "seed {seed}");
        }
    }
}

#[test]
fn a_public_game_follows_the_public_events_to_the_very_game_its_players_see() {
    for seed in 0..16u64 {
        let rules = combinations()[seed as usize % 4];
        let time_control = (seed % 2 == 1).then_some(TimeControl {
            main: None,
            decision_ms: Some(1_000),
            on_timeout: if seed % 4 == 1 {
                OnTimeout::Auto
            } else {
                OnTimeout::Forfeit
            },
        });
        let setup = Setup {
            rules,
            players: (0..2 + seed as usize % 4).map(|i| format!("P{i}")).collect(),
            tiles: None,
            seed: Some(Seed::from_u64(seed)),
            time_control,
        };
        let mut at = 5_000;
        let mut game = Game::new_at(setup.clone(), at);
        let mut first = Vec::new();
        game.run_automatic(&mut first, &mut ());
        let mut public = PublicGame::created(setup, at).expect("a valid setup");
        for event in &first {
            public.follow(event, at).expect("the first draw");
        }
        assert_eq!(public, game.public(), "seed {seed}: at the start");
        let mut rng = Lcg(seed);
        let mut decisions = 0;
        while let Some(player) = game.pending().player() {
            decisions += 1;
            let (actor, command) = match (game.deadline(), decisions % 9) {
                // Now and then a seat runs out of time, or resigns.
                (Some(deadline), 0) => {
                    at = deadline;
                    (Actor::Dealer, Command::TimeOut)
                }
                (_, 5) if decisions % 45 == 5 => (Actor::Seat(player), Command::Resign),
                _ => {
                    at += 10;
                    let choices = game.legal_commands();
                    (Actor::Seat(player), choices[rng.below(choices.len())])
                }
            };
            let events = game.execute_at(at, actor, &command, &mut ()).expect("legal");
            for event in &events {
                public.follow(event, at).expect("a public event the game takes");
            }
            assert_eq!(public, game.public(), "seed {seed}: after {command:?}");
        }
        assert!(public.game().is_finished(), "seed {seed}");
    }
}

#[test]
fn a_public_game_refuses_an_event_it_cannot_take_and_stays_as_it_was() {
    let (game, events) = random_game(3, 2, Rules::default());
    let Some(Event::Created(setup)) = events.first() else {
        panic!("no creation");
    };
    let mut public = PublicGame::created(setup.clone(), 0).expect("a valid setup");
    assert_eq!(public.game().setup().seed, None, "the seed is dropped");
    public.follow(&events[1], 0).expect("the first draw");
    let before = public.clone();
    let refused = [
        // A draw while a tile waits to be placed; a creation; a follower
        // before the tile.
        Event::Drawn(TileKind::from_name("D").expect("a kind")),
        events[0].clone(),
        Event::FollowerPlaced(None),
    ];
    for event in &refused {
        assert!(public.follow(event, 0).is_err(), "{event:?}");
        assert_eq!(public, before, "{event:?} changed nothing");
    }
    for event in &events[2..] {
        public.follow(event, 0).expect("the game's own events");
    }
    assert_eq!(public, game.public());
}

/// The tiles of docs/tiles.md that look the same turned: a quarter turn
/// for B, C and X and the plain City tiles, a half turn for the straight
/// cities, roads and rivers. T-7's first legal placement of such a tile
/// may be written at any of these rotations (record/replay.rs).
#[test]
fn tiles_lie_alike_only_at_the_turns_of_their_symmetry() {
    let quarter = ["B", "C", "X", "CO6", "CO7"];
    let half = ["F", "G", "H", "U", "R1", "R4", "R5"];
    for kind in TileKind::all() {
        let def = kind.def();
        for a in Rotation::ALL {
            for b in Rotation::ALL {
                let turn = (b.degrees() + 360 - a.degrees()) % 360;
                let expected = turn == 0
                    || quarter.contains(&kind.name())
                    || (turn == 180 && half.contains(&kind.name()));
                assert_eq!(
                    def.lies_alike(a, b),
                    expected,
                    "{kind} at {} and {}",
                    a.degrees(),
                    b.degrees()
                );
            }
        }
    }
}
