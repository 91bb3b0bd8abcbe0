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
  timeControl,
  type ActOptions,
  type ChallengeSeatInit,
  type ClientOptions,
  type CreateChallengeOptions,
  type CreatedGame,
  type CreateGameOptions,
  type CreateTournamentOptions,
  type LegalActions,
  type Registration,
  type TimeControlOptions,
} from "./client.js";
export { clocks, localNowMs, seatClock, ServerClock, type ClockOptions, type SeatClock } from "./clock.js";
export { authorization, DEFAULT_RETRY, type RetryPolicy } from "./call.js";
export { GameError, ErrorInfoSchema, grpcCodeName, Reason } from "./errors.js";
export { watchGame, type ResumeInfo, type WatchOptions } from "./watch.js";
export { PlayerStream, type PlayerResumeInfo, type PlayerWatchOptions } from "./players.js";
export {
  CHALLENGE_MOVED_ON,
  MOVED_ON,
  randomPolicy,
  RegisteredBot,
  type BotRecord,
  type Decision,
  type Policy,
  type RegisteredBotOptions,
} from "./registered.js";
export {
  MAX_STEPS,
  playRandomGame,
  SAFETY_MARGIN_MS,
  seededRandom,
  thinkingMs,
  type PlayOptions,
} from "./play.js";
export { Code } from "@connectrpc/connect";
