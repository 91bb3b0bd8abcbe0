//! Unit tests of the crate's building blocks. Whole tournaments, pairing
//! properties, ratings and the registry are tested through the public
//! API in `tests/it`.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use crate::pairing::round_robin;
use crate::*;

fn name(s: &str) -> PlayerName {
    PlayerName::new(s).unwrap()
}

fn names(n: usize) -> Vec<PlayerName> {
    (0..n).map(|i| name(&format!("p{i:02}"))).collect()
}

fn spec(n: usize, format: Format, table_size: u8) -> Spec {
    Spec {
        name: "Cup".into(),
        organiser: None,
        participants: names(n),
        house_bots: Default::default(),
        format,
        table_size,
        table_points: Spec::default_table_points(table_size),
        games_per_match: 1,
        duplicate_bags: false,
        rated: true,
        games: serde_json::json!({}),
    }
}

// ---- Names ------------------------------------------------------------------

#[test]
fn player_names_are_1_to_32_characters_of_letters_digits_underscore_and_dash() {
    fn check(input: &str, expected: Result<(), NameError>) {
        assert_eq!(PlayerName::new(input).map(|_| ()), expected, "{input:?}");
    }
    check("Ada", Ok(()));
    check("a", Ok(()));
    check("Brun_2-x", Ok(()));
    check(&"x".repeat(32), Ok(()));
    check("", Err(NameError::Empty));
    check(&"x".repeat(33), Err(NameError::TooLong(33)));
    check("Ada Lovelace", Err(NameError::InvalidChar(' ')));
    check("Zoë", Err(NameError::InvalidChar('ë')));
    check("a.b", Err(NameError::InvalidChar('.')));
}

#[test]
fn player_names_serialise_as_strings_and_deserialising_validates() {
    assert_eq!(serde_json::to_string(&name("Ada")).unwrap(), "\"Ada\"");
    assert_eq!(
        serde_json::from_str::<PlayerName>("\"Ada\"").unwrap(),
        name("Ada")
    );
    assert!(serde_json::from_str::<PlayerName>("\"Ada Lovelace\"").is_err());
    assert!(serde_json::from_str::<PlayerName>("\"\"").is_err());
}

#[test]
fn house_bot_names_have_spaces_so_no_registered_name_is_one() {
    let bot = PlayerName::house_bot("greedy", 1).unwrap();
    assert_eq!(bot.as_str(), "greedy bot 1");
    assert!(bot.is_house_bot());
    assert!(!name("greedy-bot-1").is_house_bot());
    // A registered player's name never parses as a house bot's, nor the reverse.
    assert_eq!(PlayerName::new("greedy bot 1"), Err(NameError::InvalidChar(' ')));
    assert_eq!(
        "greedy bot 1".parse::<PlayerName>(),
        Err(NameError::InvalidChar(' '))
    );
    assert_eq!(PlayerName::any("greedy bot 1"), Ok(bot.clone()));
    assert_eq!(PlayerName::any("Ada"), Ok(name("Ada")));
    for bad in [
        "greedy bot 0",
        "greedy bot 01",
        "greedy bot +1",
        "greedy bot 1000",
        "Greedy bot 1",
        "greedy robot 1",
        "greedy bot 1 ",
        " bot 1",
        "search:5 bot 1",
        "greedy  bot 1",
    ] {
        assert_eq!(PlayerName::any(bad), Err(NameError::HouseBot), "{bad:?}");
    }
    assert_eq!(PlayerName::house_bot("", 1), Err(NameError::HouseBot));
    assert_eq!(PlayerName::house_bot("greedy", 0), Err(NameError::HouseBot));
    assert_eq!(
        PlayerName::house_bot(&"a".repeat(17), 1),
        Err(NameError::HouseBot)
    );
    assert_eq!(
        serde_json::from_str::<PlayerName>("\"search bot 12\"").unwrap(),
        PlayerName::house_bot("search", 12).unwrap()
    );
    assert!(serde_json::from_str::<PlayerName>("\"search bot\"").is_err());
}

// ---- Points -----------------------------------------------------------------

#[test]
fn points_display_as_decimals_with_at_most_two_places() {
    fn check(sixtieths: u32, expected: &str) {
        assert_eq!(Points(sixtieths).to_string(), expected, "{sixtieths}/60");
    }
    check(0, "0");
    check(120, "2");
    check(90, "1.5");
    check(20, "0.33");
    check(40, "0.67");
    check(15, "0.25");
    check(12, "0.2");
    check(1, "0.02");
    check(59, "0.98");
    check(60 * 7 + 30, "7.5");
    assert_eq!(serde_json::to_string(&Points(90)).unwrap(), "90");
}

#[test]
fn table_points_share_the_points_of_the_places_tied_players_occupy() {
    fn check(by_place: &[u32], ranks: &[u8], expected: &[u32]) {
        let sixtieths: Vec<u32> = table_points(by_place, ranks).iter().map(|p| p.0).collect();
        let expected: Vec<u32> = expected.iter().map(|e| e * 60 / 60).collect();
        assert_eq!(sixtieths, expected, "{by_place:?} {ranks:?}");
    }
    let s = 60; // one point
    check(&[5, 3, 2, 1], &[1, 2, 3, 4], &[5 * s, 3 * s, 2 * s, s]);
    check(&[5, 3, 2, 1], &[3, 1, 4, 2], &[2 * s, 5 * s, s, 3 * s]);
    check(&[5, 3, 2, 1], &[1, 1, 3, 4], &[4 * s, 4 * s, 2 * s, s]);
    check(
        &[5, 3, 2, 1],
        &[1, 1, 1, 4],
        &[10 * s / 3, 10 * s / 3, 10 * s / 3, s],
    );
    check(&[5, 3, 2, 1], &[1, 2, 2, 2], &[5 * s, 2 * s, 2 * s, 2 * s]);
    check(&[5, 3, 2, 1], &[1, 1, 1, 1], &[165, 165, 165, 165]);
    // Dense ranks (1, 1, 2) place the third seat third all the same.
    check(&[5, 3, 2, 1], &[1, 1, 2], &[4 * s, 4 * s, 2 * s]);
    // A smaller table uses the first entries.
    check(&[5, 3, 2, 1], &[2, 1, 3], &[3 * s, 5 * s, 2 * s]);
    check(&[1, 0], &[1, 2], &[s, 0]);
    check(&[1, 0], &[1, 1], &[30, 30]);
    check(&[3, 2, 1, 0, 0], &[1, 1, 1, 1, 1], &[72, 72, 72, 72, 72]);
}

// ---- Hex, ids and seeds -------------------------------------------------------

#[test]
fn hex_round_trips_and_refuses_anything_but_64_digits() {
    let bytes: [u8; 32] = std::array::from_fn(|i| (i * 37) as u8);
    assert_eq!(from_hex(&to_hex(&bytes)), Some(bytes));
    assert_eq!(from_hex(&to_hex(&bytes).to_uppercase()), Some(bytes));
    assert_eq!(to_hex(&[0xab; 32]), "ab".repeat(32));
    assert_eq!(from_hex(&"a".repeat(63)), None);
    assert_eq!(from_hex(&"a".repeat(65)), None);
    assert_eq!(from_hex(&format!("{}g", "a".repeat(63))), None);
    assert_eq!(from_hex(&format!("{}é", "a".repeat(62))), None);
}

#[test]
fn game_ids_name_round_table_and_index_and_stay_within_64_printable_bytes() {
    assert_eq!(game_id("spring24", 3, 2, 1), "spring24-r3t2g1");
    let longest = game_id(&"T".repeat(24), u32::MAX, u32::MAX, u8::MAX);
    assert_eq!(longest, format!("{}-r4294967295t4294967295g255", "T".repeat(24)));
    assert!(longest.len() <= 64, "{} bytes", longest.len());
    assert!(longest.bytes().all(|b| b.is_ascii_graphic()));
}

#[test]
fn game_seeds_hash_the_documented_bytes() {
    let seed = [7u8; 32];
    let mut expected = Sha256::new();
    expected.update(b"carcassonne/tournament-game-seed/1");
    expected.update(seed);
    expected.update([0, 0, 0, 3]);
    expected.update([0, 0, 0, 2]);
    expected.update([1]);
    let expected: [u8; 32] = expected.finalize().into();
    assert_eq!(game_seed(&seed, 3, 2, 1, false), expected);

    // Duplicate bags hash table 0, so every table shares the seed.
    let mut shared = Sha256::new();
    shared.update(GAME_SEED_DOMAIN.as_bytes());
    shared.update(seed);
    shared.update([0, 0, 0, 3, 0, 0, 0, 0, 1]);
    let shared: [u8; 32] = shared.finalize().into();
    assert_eq!(game_seed(&seed, 3, 2, 1, true), shared);
    assert_eq!(game_seed(&seed, 3, 5, 1, true), shared);
    assert_ne!(game_seed(&seed, 3, 5, 1, false), expected);
    assert_ne!(game_seed(&seed, 4, 2, 1, false), expected);
    assert_ne!(game_seed(&seed, 3, 2, 0, false), expected);
    assert_ne!(game_seed(&[8; 32], 3, 2, 1, false), expected);
}

#[test]
fn the_seed_commitment_is_the_seeds_sha256() {
    let seed = [1u8; 32];
    let expected: [u8; 32] = Sha256::digest(seed).into();
    assert_eq!(seed_commitment(&seed), to_hex(&expected));
    assert_eq!(
        Tournament::created("t", spec(4, Format::RoundRobin, 2), seed).seed_commitment(),
        to_hex(&expected)
    );
}

#[test]
fn debug_output_never_shows_a_seed() {
    let seed = [0xab; 32];
    let hex = to_hex(&seed);
    let bytes = format!("{seed:?}");
    let tournament = Tournament::created("t", spec(4, Format::RoundRobin, 2), seed);
    let event = Tournament::create(spec(4, Format::RoundRobin, 2), seed).unwrap();
    let mut paired = tournament.clone();
    for event in tournament.decide(&TournamentCommand::Advance).unwrap() {
        paired.apply(&event);
    }
    let game = paired.games().next().unwrap();
    let game_seed_hex = to_hex(&game.seed);
    for debug in [
        format!("{tournament:?}"),
        format!("{event:?}"),
        format!("{paired:?}"),
        format!("{game:?}"),
    ] {
        assert!(debug.contains("sealed"), "{debug}");
        for secret in [&hex, &bytes, &game_seed_hex, &"171".to_string()] {
            assert!(!debug.contains(secret.as_str()), "{debug} shows {secret}");
        }
    }
}

// ---- Specs --------------------------------------------------------------------

#[test]
fn spec_check_names_the_field_of_each_error() {
    fn check(change: impl FnOnce(&mut Spec), field: &str) {
        let mut spec = spec(8, Format::Swiss { rounds: 3 }, 2);
        change(&mut spec);
        let error = spec.check().unwrap_err();
        assert_eq!(error.field(), field, "{error}");
        assert!(error.to_string().starts_with(field), "{error}");
    }
    assert_eq!(spec(8, Format::Swiss { rounds: 3 }, 2).check(), Ok(()));
    assert_eq!(spec(2, Format::Swiss { rounds: 1 }, 5).check(), Ok(()));
    assert_eq!(spec(256, Format::Swiss { rounds: 255 }, 2).check(), Ok(()));
    assert_eq!(spec(256, Format::RoundRobin, 2).check(), Ok(()));
    assert_eq!(spec(30, Format::RoundRobin, 3).check(), Ok(()));
    check(|s| s.name.clear(), "name");
    check(|s| s.name = "é".repeat(101), "name");
    check(|s| s.participants.truncate(1), "participants");
    check(|s| s.participants = names(257), "participants");
    check(|s| s.participants[3] = s.participants[1].clone(), "participants");
    check(|s| s.format = Format::Swiss { rounds: 0 }, "format.rounds");
    check(|s| s.format = Format::Swiss { rounds: 8 }, "format.rounds");
    check(|s| s.participants.truncate(3), "format.rounds");
    check(
        |s| {
            (s.participants, s.format, s.table_size, s.table_points) =
                (names(4), Format::RoundRobin, 5, vec![4, 3, 2, 1, 0])
        },
        "format",
    );
    check(
        |s| (s.participants, s.format, s.table_size) = (names(40), Format::RoundRobin, 3),
        "format",
    );
    check(|s| s.table_size = 1, "table_size");
    check(|s| s.table_size = 6, "table_size");
    check(|s| s.table_points = vec![1], "table_points");
    check(|s| s.table_points = vec![0, 1], "table_points");
    check(|s| s.table_points = vec![1001, 0], "table_points");
    check(|s| s.games_per_match = 0, "games_per_match");
    check(|s| s.games_per_match = 11, "games_per_match");
    // House bots: each listed with its level, and every bot-named participant one.
    let bot = PlayerName::house_bot("greedy", 1).unwrap();
    let with_bot = |s: &mut Spec| {
        s.participants[0] = bot.clone();
        s.house_bots.insert(bot.clone(), "greedy".into());
    };
    let mut ok = spec(8, Format::Swiss { rounds: 3 }, 2);
    with_bot(&mut ok);
    assert_eq!(ok.check(), Ok(()));
    assert!(ok.is_house_bot(&bot) && !ok.is_house_bot(&ok.participants[1]));
    check(|s| s.participants[0] = bot.clone(), "house_bots");
    check(
        |s| {
            with_bot(s);
            s.house_bots.insert(name("p01"), "greedy".into());
        },
        "house_bots",
    );
    check(
        |s| {
            with_bot(s);
            s.house_bots
                .insert(PlayerName::house_bot("greedy", 2).unwrap(), "greedy".into());
        },
        "house_bots",
    );
}

#[test]
fn default_table_points_are_one_zero_for_duels_and_five_three_two_one_zero_cut_to_the_table() {
    let check = |table_size: u8, expected: &[u32]| {
        assert_eq!(
            Spec::default_table_points(table_size),
            expected,
            "tables of {table_size}"
        );
    };
    check(2, &[1, 0]);
    check(3, &[5, 3, 2]);
    check(4, &[5, 3, 2, 1]);
    check(5, &[5, 3, 2, 1, 0]);
}

// ---- Lot and schedules -----------------------------------------------------------

#[test]
fn the_lot_is_a_seeded_permutation_independent_of_the_listing_order() {
    let players = names(12);
    let lot = lot_order(&players, &[3; 32]);
    assert_eq!(
        lot.iter().collect::<BTreeSet<_>>(),
        players.iter().collect::<BTreeSet<_>>()
    );
    let mut reversed = players.clone();
    reversed.reverse();
    assert_eq!(lot_order(&reversed, &[3; 32]), lot);
    assert_ne!(lot_order(&players, &[4; 32]), lot);
    assert_ne!(lot, players, "a lot in listing order is suspicious");
    let first: [u8; 32] = Sha256::new()
        .chain_update(LOT_DOMAIN)
        .chain_update([3; 32])
        .chain_update(lot[0].as_str())
        .finalize()
        .into();
    for other in &lot[1..] {
        let key: [u8; 32] = Sha256::new()
            .chain_update(LOT_DOMAIN)
            .chain_update([3; 32])
            .chain_update(other.as_str())
            .finalize()
            .into();
        assert!(first < key);
    }
}

#[test]
fn the_circle_method_meets_every_pair_once_with_one_bye_a_round_when_odd() {
    for n in 2..=12 {
        let schedule = round_robin::schedule(n, 2);
        assert_eq!(schedule.len(), if n % 2 == 0 { n - 1 } else { n }, "n = {n}");
        let mut pairs = BTreeSet::new();
        let mut byes = BTreeSet::new();
        for round in &schedule {
            let mut seen = BTreeSet::new();
            for table in round {
                assert!(
                    table.iter().all(|&p| seen.insert(p)),
                    "n = {n}: someone plays twice"
                );
                match table[..] {
                    [p] => assert!(byes.insert(p), "n = {n}: a second bye for {p}"),
                    [a, b] => assert!(pairs.insert((a.min(b), a.max(b))), "n = {n}: {a}-{b} twice"),
                    _ => panic!("n = {n}: a table of {}", table.len()),
                }
            }
            assert_eq!(seen.len(), n, "n = {n}: everyone plays or has the bye");
        }
        assert_eq!(pairs.len(), n * (n - 1) / 2, "n = {n}");
        assert_eq!(byes.len(), n % 2 * n, "n = {n}");
    }
}

#[test]
fn larger_round_robin_tables_are_every_subset_once_taken_greedily() {
    // n = 4, k = 3: the four triples each need three of four players.
    assert_eq!(
        round_robin::schedule(4, 3),
        vec![
            vec![vec![0, 1, 2]],
            vec![vec![0, 1, 3]],
            vec![vec![0, 2, 3]],
            vec![vec![1, 2, 3]]
        ]
    );
    // n = 6, k = 3: lexicographic order, disjoint tables first come first.
    let schedule = round_robin::schedule(6, 3);
    assert_eq!(schedule[0], vec![vec![0, 1, 2], vec![3, 4, 5]]);
    assert_eq!(schedule[1], vec![vec![0, 1, 3], vec![2, 4, 5]]);
    let tables: Vec<&Vec<usize>> = schedule.iter().flatten().collect();
    assert_eq!(tables.len(), 20);
    assert_eq!(tables.iter().collect::<BTreeSet<_>>().len(), 20);
    // Nothing over the limit is scheduled (the spec check refuses it).
    assert!(round_robin::schedule(40, 3).is_empty());
}
