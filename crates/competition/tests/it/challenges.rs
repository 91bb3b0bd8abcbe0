//! Challenges, given-when-then: the events so far, a player's command at a
//! time, and the events it makes or the error.

use carcassonne_competition::*;

use crate::support::*;

const EXPIRES: u64 = 10_000;

fn spec(challenger: &str, seats: &[SeatOffer], rated: bool) -> ChallengeSpec {
    ChallengeSpec {
        challenger: name(challenger),
        seats: seats.to_vec(),
        rated,
        game: serde_json::json!({}),
        expires_at_ms: EXPIRES,
    }
}

fn player(n: &str) -> SeatOffer {
    SeatOffer::Player(name(n))
}

fn accepted(n: &str, seat: u8) -> ChallengeEvent {
    ChallengeEvent::Accepted {
        player: name(n),
        seat,
    }
}

/// Given `spec` and the events after its creation, `caller`'s `command`
/// at `now` makes `expected`.
fn check(
    spec: &ChallengeSpec,
    given: &[ChallengeEvent],
    caller: &str,
    command: ChallengeCommand,
    now: u64,
    expected: Result<Vec<ChallengeEvent>, ChallengeError>,
) {
    let created = ChallengeEvent::Created { spec: spec.clone() };
    let mut challenge = Challenge::from_event("c1", &created).unwrap();
    for event in given {
        challenge.apply(event);
    }
    let before = challenge.clone();
    assert_eq!(challenge.decide(&name(caller), &command, now), expected);
    assert_eq!(challenge, before, "deciding changes nothing");
}

#[test]
fn a_named_player_accepts_their_own_seat_and_only_once() {
    let duel = spec("Ada", &[player("Ada"), player("Brun")], true);
    let accept = || ChallengeCommand::Accept { seat: None };
    check(&duel, &[], "Brun", accept(), 0, Ok(vec![accepted("Brun", 1)]));
    // Naming one's own seat is the same acceptance; another seat is not.
    check(
        &duel,
        &[],
        "Brun",
        ChallengeCommand::Accept { seat: Some(1) },
        0,
        Ok(vec![accepted("Brun", 1)]),
    );
    check(
        &duel,
        &[],
        "Brun",
        ChallengeCommand::Accept { seat: Some(0) },
        0,
        Err(ChallengeError::AlreadySeated(name("Brun"))),
    );
    // The challenger's seat is theirs by the offer.
    check(
        &duel,
        &[],
        "Ada",
        accept(),
        0,
        Err(ChallengeError::AlreadySeated(name("Ada"))),
    );
    // Nobody else is invited.
    check(
        &duel,
        &[],
        "Cleo",
        accept(),
        0,
        Err(ChallengeError::NotInvited(name("Cleo"))),
    );
    // Once every seat is taken, the challenge is closed.
    check(
        &duel,
        &[accepted("Brun", 1)],
        "Brun",
        accept(),
        0,
        Err(ChallengeError::Closed("accepted")),
    );
}

#[test]
fn an_open_seat_goes_to_the_first_registered_player_who_takes_it() {
    let seek = spec("Ada", &[player("Ada"), SeatOffer::Open, SeatOffer::Open], false);
    let accept = |seat| ChallengeCommand::Accept { seat };
    check(&seek, &[], "Brun", accept(None), 0, Ok(vec![accepted("Brun", 1)]));
    check(
        &seek,
        &[],
        "Brun",
        accept(Some(2)),
        0,
        Ok(vec![accepted("Brun", 2)]),
    );
    check(
        &seek,
        &[],
        "Brun",
        accept(Some(0)),
        0,
        Err(ChallengeError::NotAnOpenSeat(0)),
    );
    check(
        &seek,
        &[accepted("Brun", 1)],
        "Cleo",
        accept(Some(1)),
        0,
        Err(ChallengeError::NotAnOpenSeat(1)),
    );
    check(
        &seek,
        &[accepted("Brun", 1)],
        "Cleo",
        accept(None),
        0,
        Ok(vec![accepted("Cleo", 2)]),
    );
    check(
        &seek,
        &[accepted("Brun", 1)],
        "Brun",
        accept(None),
        0,
        Err(ChallengeError::AlreadySeated(name("Brun"))),
    );
}

#[test]
fn declining_cancelling_and_lapsing_close_a_challenge() {
    let duel = spec(
        "Ada",
        &[player("Ada"), player("Brun"), SeatOffer::Bot("greedy".into())],
        false,
    );
    check(
        &duel,
        &[],
        "Brun",
        ChallengeCommand::Decline,
        0,
        Ok(vec![ChallengeEvent::Declined { player: name("Brun") }]),
    );
    check(
        &duel,
        &[],
        "Ada",
        ChallengeCommand::Decline,
        0,
        Err(ChallengeError::ChallengerDeclines),
    );
    check(
        &duel,
        &[],
        "Cleo",
        ChallengeCommand::Decline,
        0,
        Err(ChallengeError::NotInvited(name("Cleo"))),
    );
    check(
        &duel,
        &[],
        "Ada",
        ChallengeCommand::Cancel,
        0,
        Ok(vec![ChallengeEvent::Cancelled]),
    );
    check(
        &duel,
        &[],
        "Brun",
        ChallengeCommand::Cancel,
        0,
        Err(ChallengeError::NotChallenger),
    );
    let accept = ChallengeCommand::Accept { seat: None };
    for (given, error) in [
        (
            vec![ChallengeEvent::Declined { player: name("Brun") }],
            ChallengeError::Closed("declined"),
        ),
        (
            vec![ChallengeEvent::Cancelled],
            ChallengeError::Closed("cancelled"),
        ),
    ] {
        check(&duel, &given, "Brun", accept.clone(), 0, Err(error));
    }
    check(
        &duel,
        &[],
        "Brun",
        accept.clone(),
        EXPIRES - 1,
        Ok(vec![accepted("Brun", 1)]),
    );
    check(&duel, &[], "Brun", accept, EXPIRES, Err(ChallengeError::Expired));
}

#[test]
fn status_follows_the_events_and_the_time() {
    let duel = spec(
        "Ada",
        &[player("Ada"), player("Brun"), SeatOffer::Bot("random".into())],
        false,
    );
    let mut challenge = Challenge::from_event("c1", &ChallengeEvent::Created { spec: duel }).unwrap();
    assert_eq!(challenge.status(0), ChallengeStatus::Open);
    assert_eq!(challenge.status(EXPIRES), ChallengeStatus::Expired);
    challenge.apply(&accepted("Brun", 1));
    // Full (the bot needs no one): accepted, whatever the time.
    assert!(challenge.is_full());
    assert_eq!(challenge.status(EXPIRES * 2), ChallengeStatus::Accepted);
    assert_eq!(challenge.taken(), &[Some(name("Ada")), Some(name("Brun")), None]);
}

#[test]
fn a_spec_seats_its_challenger_once_and_bots_only_in_unrated_games() {
    let cases = [
        (spec("Ada", &[player("Ada"), player("Brun")], true), Ok(())),
        (spec("Ada", &[player("Ada")], false), Err(SpecError::Seats(1))),
        (
            spec(
                "Ada",
                &[
                    player("Ada"),
                    SeatOffer::Open,
                    SeatOffer::Open,
                    SeatOffer::Open,
                    SeatOffer::Open,
                    SeatOffer::Open,
                ],
                false,
            ),
            Err(SpecError::Seats(6)),
        ),
        (
            spec("Ada", &[player("Brun"), SeatOffer::Open], false),
            Err(SpecError::ChallengerSeat),
        ),
        (
            spec("Ada", &[player("Ada"), player("Ada")], false),
            Err(SpecError::Twice(name("Ada"))),
        ),
        (
            spec("Ada", &[player("Ada"), SeatOffer::Bot("greedy".into())], true),
            Err(SpecError::RatedWithBots),
        ),
        (
            spec("Ada", &[player("Ada"), SeatOffer::Bot("greedy".into())], false),
            Ok(()),
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(spec.check(), expected, "{:?}", spec.seats);
    }
}

#[test]
fn challenge_events_round_trip_through_their_encoding() {
    let duel = spec(
        "Ada",
        &[player("Ada"), SeatOffer::Open, SeatOffer::Bot("search:50".into())],
        false,
    );
    for event in [
        ChallengeEvent::Created { spec: duel },
        accepted("Brun", 1),
        ChallengeEvent::Declined { player: name("Brun") },
        ChallengeEvent::Cancelled,
    ] {
        assert_eq!(ChallengeEvent::decode(&event.encode()).unwrap(), event);
    }
    // The stored form, frozen.
    assert_eq!(
        String::from_utf8(accepted("Brun", 1).encode()).unwrap(),
        r#"{"accepted":{"player":"Brun","seat":1}}"#
    );
    assert_eq!(
        String::from_utf8(ChallengeEvent::Cancelled.encode()).unwrap(),
        r#""cancelled""#
    );
}
