//! The stored bytes of every event kind: golden, and decoded back.

use carcassonne_competition::*;

use crate::support::*;

/// Checks that `event` encodes to exactly `json` and decodes back.
fn check<E: PartialEq + std::fmt::Debug>(
    event: &E,
    json: &str,
    encode: fn(&E) -> Vec<u8>,
    decode: fn(&[u8]) -> Result<E, DecodeError>,
) {
    assert_eq!(String::from_utf8(encode(event)).unwrap(), json);
    assert_eq!(&decode(json.as_bytes()).unwrap(), event);
}

#[test]
fn registry_events_encode_to_golden_bytes() {
    let c = |e: &RegistryEvent, json: &str| check(e, json, RegistryEvent::encode, RegistryEvent::decode);
    let key = "0f".repeat(32);
    c(
        &RegistryEvent::Registered {
            name: name("Ada"),
            key_sha256: key.clone(),
        },
        &format!(r#"{{"registered":{{"name":"Ada","key_sha256":"{key}"}}}}"#),
    );
    c(
        &RegistryEvent::Promoted { name: name("Ada") },
        r#"{"promoted":{"name":"Ada"}}"#,
    );
    c(
        &RegistryEvent::Demoted { name: name("Ada") },
        r#"{"demoted":{"name":"Ada"}}"#,
    );
    c(
        &RegistryEvent::KeyReplaced {
            name: name("Ada"),
            key_sha256: key.clone(),
        },
        &format!(r#"{{"key_replaced":{{"name":"Ada","key_sha256":"{key}"}}}}"#),
    );
    assert_eq!(REGISTRY_SCHEMA, 200);
}

#[test]
fn tournament_events_encode_to_golden_bytes() {
    let c =
        |e: &TournamentEvent, json: &str| check(e, json, TournamentEvent::encode, TournamentEvent::decode);
    let spec = Spec {
        name: "Cup".into(),
        organiser: None,
        participants: vec![name("Ada"), name("Brun"), name("Cy")],
        house_bots: Default::default(),
        format: Format::Swiss { rounds: 2 },
        table_size: 2,
        table_points: vec![1, 0],
        games_per_match: 2,
        duplicate_bags: true,
        rated: true,
        games: serde_json::json!({"rules": "base"}),
    };
    c(
        &TournamentEvent::Created {
            spec: spec.clone(),
            seed: [0xab; 32],
            pairing: "pairing/1".into(),
        },
        &format!(
            concat!(
                r#"{{"created":{{"spec":{{"name":"Cup","participants":["Ada","Brun","Cy"],"format":{{"swiss":{{"rounds":2}}}},"#,
                r#""table_size":2,"table_points":[1,0],"games_per_match":2,"duplicate_bags":true,"rated":true,"#,
                r#""games":{{"rules":"base"}}}},"seed":"{seed}","pairing":"pairing/1"}}}}"#
            ),
            seed = "ab".repeat(32)
        ),
    );
    // House bots: listed beside the participants, by name, with their level.
    let bot = PlayerName::house_bot("greedy", 1).unwrap();
    let with_bot = Spec {
        participants: vec![name("Ada"), bot.clone()],
        house_bots: [(bot, "greedy".to_owned())].into(),
        rated: false,
        ..spec.clone()
    };
    c(
        &TournamentEvent::Created {
            spec: with_bot,
            seed: [0xab; 32],
            pairing: "pairing/1".into(),
        },
        &format!(
            concat!(
                r#"{{"created":{{"spec":{{"name":"Cup","participants":["Ada","greedy bot 1"],"#,
                r#""house_bots":{{"greedy bot 1":"greedy"}},"format":{{"swiss":{{"rounds":2}}}},"#,
                r#""table_size":2,"table_points":[1,0],"games_per_match":2,"duplicate_bags":true,"rated":false,"#,
                r#""games":{{"rules":"base"}}}},"seed":"{seed}","pairing":"pairing/1"}}}}"#
            ),
            seed = "ab".repeat(32)
        ),
    );
    let round_robin = Spec {
        format: Format::RoundRobin,
        ..spec
    };
    assert!(
        String::from_utf8(
            TournamentEvent::Created {
                spec: round_robin,
                seed: [0; 32],
                pairing: PAIRING_VERSION.into()
            }
            .encode()
        )
        .unwrap()
        .contains(r#""format":"round_robin""#)
    );
    c(
        &TournamentEvent::RoundPaired {
            round: 1,
            tables: vec![Table {
                players: vec![name("Ada"), name("Brun")],
                games: vec!["cup-r1t1g0".into(), "cup-r1t1g1".into()],
            }],
            byes: vec![name("Cy")],
        },
        r#"{"round_paired":{"round":1,"tables":[{"players":["Ada","Brun"],"games":["cup-r1t1g0","cup-r1t1g1"]}],"byes":["Cy"]}}"#,
    );
    c(
        &TournamentEvent::GameEnded {
            game: "cup-r1t1g0".into(),
            result: GameResult::Ranked {
                ranks: vec![2, 1],
                scores: vec![12, 30],
            },
        },
        r#"{"game_ended":{"game":"cup-r1t1g0","result":{"ranked":{"ranks":[2,1],"scores":[12,30]}}}}"#,
    );
    c(
        &TournamentEvent::GameEnded {
            game: "cup-r1t1g1".into(),
            result: GameResult::Aborted,
        },
        r#"{"game_ended":{"game":"cup-r1t1g1","result":"aborted"}}"#,
    );
    c(
        &TournamentEvent::Withdrawn { player: name("Cy") },
        r#"{"withdrawn":{"player":"Cy"}}"#,
    );
    c(&TournamentEvent::Finished, r#""finished""#);
    assert_eq!(TOURNAMENT_SCHEMA, 201);
}

#[test]
fn rating_events_encode_to_golden_bytes() {
    check(
        &RatingEvent::Rated {
            game: "cup-r1t1g0".into(),
            players: vec![name("Ada"), name("Brun")],
            ranks: vec![1, 2],
        },
        r#"{"rated":{"game":"cup-r1t1g0","players":["Ada","Brun"],"ranks":[1,2]}}"#,
        RatingEvent::encode,
        RatingEvent::decode,
    );
    assert_eq!(RATINGS_SCHEMA, 202);
}

#[test]
fn decoding_refuses_what_is_not_a_valid_event() {
    for bytes in [
        r#"{"promoted":{"name":"Ada Lovelace"}}"#,
        r#"{"crowned":{"name":"Ada"}}"#,
        r#"{"promoted":{}}"#,
        "not json",
    ] {
        assert!(RegistryEvent::decode(bytes.as_bytes()).is_err(), "{bytes}");
    }
    for bytes in [
        r#"{"withdrawn":{"player":""}}"#,
        r#"{"created":{"spec":{},"seed":"00","pairing":"pairing/1"}}"#,
        r#""started""#,
    ] {
        assert!(TournamentEvent::decode(bytes.as_bytes()).is_err(), "{bytes}");
    }
    let short_seed = TournamentEvent::decode(br#"{"game_ended":{"game":"g","result":"drawn"}}"#);
    assert!(
        short_seed
            .unwrap_err()
            .to_string()
            .starts_with("not a valid event")
    );
    assert!(RatingEvent::decode(br#"{"rated":{"game":"g","players":["A","-?"],"ranks":[1,2]}}"#).is_err());
}
