// The generated messages, enums and service descriptors of
// proto/carcassonne/v1 (see buf.gen.yaml), in one namespace: the wrapper
// takes and returns them as they are, so nothing of the API is hidden.
export * from "./gen/carcassonne/v1/types_pb.js";
export * from "./gen/carcassonne/v1/game_pb.js";
export * from "./gen/carcassonne/v1/game_service_pb.js";
export * from "./gen/carcassonne/v1/watch_service_pb.js";
export * from "./gen/carcassonne/v1/player_service_pb.js";
export * from "./gen/carcassonne/v1/tournament_service_pb.js";
export * from "./gen/carcassonne/v1/challenge_service_pb.js";
