//! Unit tests of the crate's building blocks. Whole tournaments, pairing
//! properties, ratings and the registry are tested through the public
//! API in `tests/it`.

use crate::*;

fn name(s: &str) -> PlayerName {
    PlayerName::new(s).unwrap()
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

// ---- Hex -------------------------------------------------------

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
