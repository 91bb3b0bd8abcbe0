//! The request parsers under arbitrary input: arbitrary bytes decoded as
//! each request message, and arbitrary field values, through the parsers
//! of `api::parse`. They never panic; what they refuse is INVALID_ARGUMENT
//! with a short message. Runs in the ordinary test pass (a few hundred
//! cases each, well under a second).

use carcassonne::api::parse;
use carcassonne::api::status::{ApiError, MAX_MESSAGE};
use carcassonne::proto;
use proptest::prelude::*;
use tonic::{Code, Status};

/// Checks a parser's refusal: INVALID_ARGUMENT, a short status.
fn check<T>(result: Result<T, ApiError>) {
    if let Err(error) = result {
        assert!(
            matches!(error, ApiError::InvalidArgument { .. }),
            "not an invalid argument: {error:?}"
        );
        let status = Status::from(error);
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().len() <= MAX_MESSAGE, "{}", status.message());
        // The message and the details together stay far below the few KB
        // of headers standard clients read.
        assert!(
            status.details().len() <= 2 * MAX_MESSAGE,
            "{} bytes",
            status.details().len()
        );
    }
}

fn parse_create(request: &proto::CreateGameRequest) {
    check(parse::request_id(&request.request_id));
    check(parse::players(&request.players));
    check(parse::rules(request.rules.as_ref()));
    check(parse::bag(&request.tiles));
    check(parse::seed(&request.seed));
}

fn parse_act(request: &proto::ActRequest) {
    check(parse::game_name(&request.name));
    check(parse::request_id(&request.request_id));
    check(parse::action(request.action.as_ref()));
}

fn any_string() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        "games/[ -~]{0,80}",
        proptest::collection::vec(any::<char>(), 0..300).prop_map(|c| c.into_iter().collect()),
    ]
}

fn any_i32() -> impl Strategy<Value = i32> {
    prop_oneof![
        Just(i32::MIN),
        Just(i32::MAX),
        Just(-10_001),
        Just(10_001),
        -10_000..=10_000,
        any::<i32>(),
    ]
}

fn any_position() -> impl Strategy<Value = Option<proto::Position>> {
    proptest::option::of((any_i32(), any_i32()).prop_map(|(x, y)| proto::Position { x, y }))
}

fn any_action() -> impl Strategy<Value = Option<proto::Action>> {
    use proto::action::Action as A;
    let action = prop_oneof![
        (any_position(), any::<u32>())
            .prop_map(|(position, rotation)| A::PlaceTile(proto::PlaceTile { position, rotation })),
        any_i32().prop_map(|place| A::PlaceFollower(proto::PlaceFollower { place })),
        (any_position(), any_i32()).prop_map(|(position, place)| {
            A::MoveFromCarcassonne(proto::MoveFromCarcassonne {
                target: Some(proto::Target { position, place }),
            })
        }),
        Just(A::Pass(proto::Pass {})),
        (any_i32(), any_i32()).prop_map(|(quarter, count)| {
            A::DeployToCarcassonne(proto::DeployToCarcassonne { quarter, count })
        }),
    ];
    proptest::option::of(proptest::option::of(action).prop_map(|action| proto::Action { action }))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Whatever bytes decode as a request go through its parsers safely.
    #[test]
    fn arbitrary_bytes_decoded_as_requests_parse_or_are_refused(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        use prost::Message as _;
        if let Ok(request) = proto::CreateGameRequest::decode(bytes.as_slice()) {
            parse_create(&request);
        }
        if let Ok(request) = proto::ActRequest::decode(bytes.as_slice()) {
            parse_act(&request);
        }
        for name in [
            proto::GetGameRequest::decode(bytes.as_slice()).map(|r| r.name),
            proto::GetLegalActionsRequest::decode(bytes.as_slice()).map(|r| r.name),
            proto::WatchGameRequest::decode(bytes.as_slice()).map(|r| r.name),
            proto::ExportGameRequest::decode(bytes.as_slice()).map(|r| r.name),
        ]
        .into_iter()
        .flatten()
        {
            check(parse::game_name(&name));
        }
    }

    /// Requests of arbitrary field values, extremes included.
    #[test]
    fn arbitrary_requests_parse_or_are_refused(
        name in any_string(),
        request_id in any_string(),
        players in proptest::collection::vec(any_string(), 0..7),
        small_city in any_i32(),
        farmers in any_i32(),
        expansions in proptest::collection::vec(any_i32(), 0..4),
        tiles in proptest::collection::vec((any_string(), any::<u32>()), 0..30),
        seed in any_string(),
        action in any_action(),
    ) {
        let create = proto::CreateGameRequest {
            request_id: request_id.clone(),
            players,
            rules: Some(proto::RuleOptions { small_city, farmers, expansions }),
            seed,
            tiles: tiles
                .into_iter()
                .map(|(kind, count)| proto::TileCount { kind, count })
                .collect(),
            spectator_delay: 0,
            time_control: None,
            ..Default::default()
        };
        parse_create(&create);
        parse_act(&proto::ActRequest {
            name,
            expected_version: 0,
            request_id,
            action,
            view: 0,
        });
    }
}
