use super::streaming_methods;

#[test]
fn every_streaming_method_is_bounded_and_no_other() {
    // Given the descriptor sets the server serves
    let streaming = streaming_methods(&[
        crate::proto::FILE_DESCRIPTOR_SET,
        tonic_health::pb::FILE_DESCRIPTOR_SET,
        tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
    ]);
    // Then every method that streams is found
    for path in [
        "/carcassonne.v1.WatchService/WatchGame",
        "/carcassonne.v1.WatchService/WatchServer",
        "/carcassonne.v1.WatchService/ReplayGame",
        "/carcassonne.v1.WatchService/ExportGameArchive",
        "/carcassonne.v1.PlayerService/WatchPlayer",
        "/carcassonne.v1.TournamentService/WatchTournament",
        "/carcassonne.v1.TournamentService/ExportTournamentArchive",
        "/grpc.health.v1.Health/Watch",
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    ] {
        assert!(streaming.contains(path), "{path} is not bounded");
    }
    // And no unary one
    for path in [
        "/carcassonne.v1.GameService/Act",
        "/carcassonne.v1.WatchService/ExportGame",
        "/grpc.health.v1.Health/Check",
    ] {
        assert!(!streaming.contains(path), "{path} is bounded as a stream");
    }
    // And the HTTP routes that stream
    for path in [
        "/api/games/g1/watch",
        "/api/server/watch",
        "/api/tournaments/t1/archive",
    ] {
        assert!(crate::http::streams(path), "{path}");
    }
    for path in ["/api/games/g1", "/games/g1/board.svg", "/watch"] {
        assert!(!crate::http::streams(path), "{path}");
    }
}
