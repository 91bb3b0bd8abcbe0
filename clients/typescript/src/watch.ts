// WatchGame that resumes.
//
// The server's stream starts with a snapshot (at `fromVersion`, or now),
// then sends every event in order, and closes after the event that ends the
// game. A connection can drop (the server restarts: "all streams end when
// the server shuts down"), and a watcher that reads too slowly is told
// `fell_behind` with the last version it got, and its stream ends. Either
// way a new WatchGame from the last version seen misses nothing and repeats
// no event (docs/client-guide.md, "Streams and resuming"). This generator
// does that, so its caller sees one snapshot and then every event once, in
// order, until the game is over.

import { Code, type CallOptions, type Client } from "@connectrpc/connect";
import { GameError } from "./errors.js";
import { GameStatus, type WatchGameResponse, type WatchService } from "./pb.js";
import { authorization, backoffMs, DEFAULT_RETRY, sleep, type RetryPolicy } from "./call.js";

export interface ResumeInfo {
  /** The version the new stream starts after (undefined: "now", nothing
   * having been seen yet). */
  fromVersion: bigint | undefined;
  /** Why: the server said `fell_behind`, or the stream failed or ended
   * before the game did. */
  why: "fell_behind" | "disconnected";
  /** The failure, when the stream failed. */
  error?: GameError;
  /** Reopenings in a row without a message in between (from 1). */
  attempt: number;
}

export interface WatchOptions {
  /** A seat's token: the game as it is. Without one, a spectator's view,
   * `spectatorDelay` events behind. */
  token?: string;
  /** Start after this version (1 is the creation); unset: now. */
  fromVersion?: bigint;
  /** The server's keep-alive period while nothing happens (1000 to
   * 300000; its default 15000 when unset). */
  keepAliveMs?: number;
  /** Aborting ends the stream: the generator throws a CANCELED GameError. */
  signal?: AbortSignal;
  /** Reopenings in a row (without a message received in between), and the
   * pauses before them; the default is the client's retry policy. */
  retry?: RetryPolicy;
  /** Called before each reopening. */
  onResume?: (info: ResumeInfo) => void;
}

/** Codes after which a reopened stream may succeed: the server or the
 * connection went away, or the server ran short for a moment. A server that
 * dies mid-stream reads as CANCELLED ("http/2 stream closed with error code
 * CANCEL") over gRPC from Node and as UNKNOWN ("terminated") over grpc-web;
 * the caller's own abort is told apart by its signal. */
const RESUMABLE = new Set([
  Code.Unavailable,
  Code.Canceled,
  Code.Unknown,
  Code.Internal,
  Code.ResourceExhausted,
]);

/** Yields the snapshot once, then every event in order (and the
 * keep-alives), reopening the stream from the last version seen whenever
 * it drops or falls behind, until the event that ends the game (or, for a
 * game already over, its snapshot). A resumed stream's own snapshot is the
 * state the caller already has, so it is not yielded again, and
 * `fell_behind` is handled here, never yielded. Throws a GameError when the
 * call is refused (NOT_FOUND, BAD_TOKEN, ...), or when `retry.attempts`
 * reopenings in a row fail. */
export async function* watchGame(
  watcher: Client<typeof WatchService>,
  name: string,
  options: WatchOptions = {},
): AsyncGenerator<WatchGameResponse, void, undefined> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const call: CallOptions = { headers: authorization(options.token) };
  if (options.signal) call.signal = options.signal;
  let from = options.fromVersion;
  let snapshotYielded = false;
  let attempt = 0;
  for (;;) {
    let fellBehind: bigint | undefined;
    let error: GameError | undefined;
    try {
      const request = {
        name,
        keepAliveMs: options.keepAliveMs ?? 0,
        ...(from === undefined ? {} : { fromVersion: from }),
      };
      for await (const message of watcher.watchGame(request, call)) {
        attempt = 0;
        const body = message.message;
        switch (body.case) {
          case "snapshot":
            from = body.value.version;
            if (!snapshotYielded) {
              snapshotYielded = true;
              yield message;
            }
            // A game over at the snapshot's version: nothing more will come.
            if (body.value.status === GameStatus.FINISHED) return;
            break;
          case "event": {
            const event = body.value.event;
            if (event !== undefined) from = event.version;
            yield message;
            if (event?.finished) return;
            break;
          }
          case "keepAlive":
            yield message;
            break;
          case "fellBehind":
            fellBehind = body.value;
            break;
          default:
            break;
        }
        if (fellBehind !== undefined) break;
      }
    } catch (thrown) {
      error = GameError.from(thrown);
      if (options.signal?.aborted || !RESUMABLE.has(error.code)) throw error;
    }
    // The server's word for where it stopped is the last version it sent.
    if (fellBehind !== undefined) from = fellBehind;
    attempt++;
    if (attempt >= retry.attempts) {
      throw (
        error ??
        new GameError(
          Code.Unavailable,
          `WatchGame of ${name}: ${attempt} reopenings in a row brought nothing`,
        )
      );
    }
    const info: ResumeInfo = {
      fromVersion: from,
      why: fellBehind !== undefined ? "fell_behind" : "disconnected",
      attempt,
    };
    if (error) info.error = error;
    options.onResume?.(info);
    // Falling behind is no failure: reopen at once.
    if (fellBehind === undefined) {
      try {
        await sleep(backoffMs(retry, attempt), options.signal);
      } catch (aborted) {
        throw GameError.from(aborted);
      }
    }
  }
}
