// WatchPlayer that resumes: a registered player's one stream.
//
// The server's stream (PlayerService.WatchPlayer, with the player's API
// key) starts with a snapshot of every decision that is the player's now
// and of every open challenge waiting for the player to accept their named
// seat (`snapshot` set, each carrying the position the stream started at), then
// follows the store: each message has the store's `position` it was sent
// at, in order. Reopened with `afterPosition` = the last position received
// (snapshot messages excepted: they do not advance it), the stream goes on
// right after it, so no event is missed and none is sent twice; its new
// snapshot repeats the decisions still pending and the challenges still
// waiting. The stream also ends when the server stops (or dies): the player
// has to reopen it.
//
// PlayerStream does that for its caller: it reopens after a dropped
// connection or a server that went away, from the last position seen, and
// drops what it has already yielded: a decision is one (game, version), and
// a challenge while open is as far along as its seats taken (the server may
// send either twice, from a snapshot and from the events; an open
// challenge's events after a snapshot may also tell of an earlier stage
// than the snapshot did). So its caller sees every message once, in
// position order, across any number of reconnections.

import { Code, type CallOptions, type Client } from "@connectrpc/connect";
import { GameError } from "./errors.js";
import { ChallengeStatus, type PlayerService, type WatchPlayerResponse } from "./pb.js";
import { authorization, backoffMs, DEFAULT_RETRY, sleep, type RetryPolicy } from "./call.js";

export interface PlayerResumeInfo {
  /** The position the new stream starts after (0n: "from now", nothing
   * having been seen yet). */
  afterPosition: bigint;
  /** "reconnect": asked for by `reconnect()`; "ended": the server closed
   * the stream (it is stopping); "failed": the connection or the call
   * failed (`error`). */
  why: "reconnect" | "ended" | "failed";
  /** The failure, when the stream failed. */
  error?: GameError;
  /** Reopenings in a row without a message in between (from 1). */
  attempt: number;
}

export interface PlayerWatchOptions {
  /** Go on after this position: a previous stream's `position`. 0n (the
   * default): from now. Either way the stream opens with the decisions
   * pending now. */
  afterPosition?: bigint;
  /** A keep-alive after this many milliseconds without a message (1000 to
   * 60000; the server's 15000 when unset). */
  keepAliveMs?: number;
  /** Aborting ends the stream: the iteration throws a CANCELED GameError.
   * (`close()` ends it quietly.) */
  signal?: AbortSignal;
  /** Reopenings in a row (without a message received in between), and the
   * pauses before them; the default is DEFAULT_RETRY. */
  retry?: RetryPolicy;
  /** Called before each reopening. */
  onResume?: (info: PlayerResumeInfo) => void;
  /** Called each time the server has answered an opening of the stream:
   * from then on, everything that concerns the player reaches it. */
  onOpen?: () => void;
}

/** Codes after which a reopened stream may succeed (see watch.ts); a
 * stream the server ends (it is stopping) is reopened too, since
 * WatchPlayer never ends by itself. UNAUTHENTICATED (UNKNOWN_KEY,
 * MISSING_TOKEN), INVALID_ARGUMENT and the like are thrown. */
const RESUMABLE = new Set([
  Code.Unavailable,
  Code.Canceled,
  Code.Unknown,
  Code.Internal,
  Code.ResourceExhausted,
]);

/** A player's messages (`gameStarted`, `decision`, `gameEnded`,
 * `roundPaired`, `challenge`, `keepAlive`), once each and in position order, reopening
 * the stream from the last position seen whenever it drops, until
 * `close()`. Iterate it once (`for await`).
 *
 * `position` is where the stream is: pass it as `afterPosition` to a new
 * stream (another process, a later run) to go on from there. A snapshot
 * message does not advance it. Decisions already yielded (the same game
 * and version) are not yielded again, whether the server repeats them in a
 * snapshot or after it; nor is an open challenge with no more seats taken
 * than when it was last yielded.
 *
 * The iteration throws a GameError when the call is refused
 * (UNAUTHENTICATED / UNKNOWN_KEY for a key of no player, INVALID_ARGUMENT,
 * ...) or when `retry.attempts` reopenings in a row bring nothing. */
export class PlayerStream implements AsyncIterable<WatchPlayerResponse> {
  /** The last position received (snapshots excepted). */
  position: bigint;
  /** Reopenings so far. */
  resumes = 0;
  private current: AbortController | undefined;
  private dropping = false;
  private closedByCaller = false;
  /** The last decision version yielded, by game, while it runs. */
  private readonly decided = new Map<string, bigint>();
  /** The seats taken when last yielded, by open challenge. */
  private readonly challenged = new Map<string, number>();

  constructor(
    private readonly players: Client<typeof PlayerService>,
    private readonly key: string,
    private readonly options: PlayerWatchOptions = {},
  ) {
    this.position = options.afterPosition ?? 0n;
  }

  /** Drops the connection, as a network failure would: the iteration
   * resumes from the last position seen (for tests, and for a caller that
   * suspects a stalled connection). */
  reconnect(): void {
    if (this.current === undefined) return;
    this.dropping = true;
    this.current.abort();
  }

  /** Ends the stream: the iteration returns, also while it waits for a
   * message. */
  close(): void {
    this.closedByCaller = true;
    this.current?.abort();
  }

  get closed(): boolean {
    return this.closedByCaller;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<WatchPlayerResponse, void, undefined> {
    const retry = this.options.retry ?? DEFAULT_RETRY;
    const outer = this.options.signal;
    let attempt = 0;
    while (!this.closedByCaller) {
      const controller = new AbortController();
      const forward = () => controller.abort(outer?.reason);
      outer?.addEventListener("abort", forward, { once: true });
      if (outer?.aborted) controller.abort(outer.reason);
      this.current = controller;
      let error: GameError | undefined;
      let why: PlayerResumeInfo["why"] = "ended";
      try {
        const request = { afterPosition: this.position, keepAliveMs: this.options.keepAliveMs ?? 0 };
        const call: CallOptions = {
          headers: authorization(this.key),
          signal: controller.signal,
          onHeader: () => this.options.onOpen?.(),
        };
        for await (const message of this.players.watchPlayer(request, call)) {
          // Dropped by `reconnect()`: what the old connection still
          // delivers comes again after the resumption.
          if (this.dropping) break;
          attempt = 0;
          if (!message.snapshot) this.position = message.position;
          if (this.repeated(message)) continue;
          yield message;
          if (this.closedByCaller) return;
        }
      } catch (thrown) {
        error = GameError.from(thrown);
        why = "failed";
      } finally {
        outer?.removeEventListener("abort", forward);
        this.current = undefined;
        // A caller that stops reading (breaks out of its loop) ends the
        // call: leaving the loop alone does not cancel it.
        controller.abort();
      }
      if (this.closedByCaller) return;
      if (outer?.aborted) throw error ?? new GameError(Code.Canceled, "the stream was aborted");
      const asked = this.dropping;
      this.dropping = false;
      if (asked) why = "reconnect";
      else if (error !== undefined && !RESUMABLE.has(error.code)) throw error;
      attempt++;
      if (attempt >= retry.attempts) {
        throw (
          error ??
          new GameError(Code.Unavailable, `WatchPlayer: ${attempt} reopenings in a row brought nothing`)
        );
      }
      this.resumes++;
      const info: PlayerResumeInfo = { afterPosition: this.position, why, attempt };
      if (error !== undefined && !asked) info.error = error;
      this.options.onResume?.(info);
      if (!asked) {
        try {
          await sleep(backoffMs(retry, attempt), outer);
        } catch (aborted) {
          throw GameError.from(aborted);
        }
      }
    }
  }

  /** True for a decision already yielded, or an open challenge no further
   * along than when last yielded; keeps track of them. */
  private repeated(message: WatchPlayerResponse): boolean {
    const body = message.message;
    if (body.case === "decision") {
      const game = body.value.game;
      const version = body.value.legal?.version ?? 0n;
      const seen = this.decided.get(game);
      if (seen !== undefined && version <= seen) return true;
      this.decided.set(game, version);
    } else if (body.case === "gameEnded") {
      // No decision of a finished game can come.
      const name = body.value.game?.name;
      if (name !== undefined) this.decided.delete(name);
    } else if (body.case === "challenge") {
      const challenge = body.value;
      if (challenge.status !== ChallengeStatus.OPEN) {
        // Its last word: no snapshot shows a closed challenge.
        this.challenged.delete(challenge.name);
        return false;
      }
      // Seats are only ever taken while it is open.
      const taken = challenge.seats.filter((seat) => seat.accepted).length;
      const seen = this.challenged.get(challenge.name);
      if (seen !== undefined && taken <= seen) return true;
      this.challenged.set(challenge.name, taken);
    }
    return false;
  }
}
