// carcassonne-client: a typed wrapper over the generated Connect-ES code of
// proto/carcassonne/v1, for any transport. `carcassonne-client/node` makes
// a gRPC client from Node, `carcassonne-client/web` a grpc-web one for
// browsers.
export * as pb from "./pb.js";
export {
  GameClient,
  DEFAULT_TIMEOUT_MS,
  newRequestId,
  ruleOptions,
  type ActOptions,
  type ClientOptions,
  type CreatedGame,
  type CreateGameOptions,
  type LegalActions,
} from "./client.js";
export { authorization, DEFAULT_RETRY, type RetryPolicy } from "./call.js";
export { GameError, ErrorInfoSchema, grpcCodeName } from "./errors.js";
export { watchGame, type ResumeInfo, type WatchOptions } from "./watch.js";
export { MAX_STEPS, playRandomGame, seededRandom, type PlayOptions } from "./play.js";
export { Code } from "@connectrpc/connect";
