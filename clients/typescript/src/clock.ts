// Reading the clocks of a game with a time control (docs/rules.md, T-1 to
// T-11; docs/client-guide.md, "Clocks and the ways a game ends").
//
// The server's stored times are the only clock that counts. It shows:
// - `PendingDecision.deadlineMs`: when the pending decision times out, in
//   milliseconds since the Unix epoch by the server's clock (0 when no
//   clock runs: no time control, a draw, the end);
// - each seat's main time left (`Player.timeLeftMs`, or a watched event's
//   `timeLeftMs[seat]`) as of one moment: the game's `clockTimeMs`, or the
//   event's `timeMs`. The seat that owes the pending decision has used
//   more since then; the others' clocks stand still.
// `seatClock` works out what is left now. "Now" is this machine's clock
// unless `nowMs` is given: a program on another machine than the server
// passes its estimate of the server's time, which `ServerClock` makes from
// the times the server stored its own actions at. There is no grace for
// network delay (T-4): answer with time to spare.

import type { ActResponse, Game, PendingDecision, WatchedEvent } from "./pb.js";

/** This machine's clock, in milliseconds since the Unix epoch. */
export function localNowMs(): number {
  return Date.now();
}

/** One seat's clock at one moment ("now"). Milliseconds, as numbers. */
export interface SeatClock {
  seat: number;
  /** Main time left now (never below 0); undefined in a game without a main time. */
  mainLeftMs: number | undefined;
  /** Time left now for the pending decision (never below 0), when this
   * seat owes it and a clock runs; undefined otherwise. */
  decisionLeftMs: number | undefined;
  /** The pending decision's deadline (ms since the Unix epoch, by the
   * server's clock) when this seat's clock runs; 0 otherwise. */
  deadlineMs: number;
  /** This seat owes the pending decision and its clock runs. */
  running: boolean;
}

export interface ClockOptions {
  /** The server's time now as you know it (default: this machine's clock). */
  nowMs?: number;
}

/** The clock of `seat` now, from a game (getGame, Act's answer, a watch
 * snapshot) or a watched event. Read from the latest state you have: an
 * earlier game or event (a spectator's delayed view) gives the clocks as
 * they ran then, not now. */
export function seatClock(source: Game | WatchedEvent, seat: number, options: ClockOptions = {}): SeatClock {
  let main: bigint | undefined;
  let asOf: bigint;
  let pending: PendingDecision | undefined;
  if (source.$typeName === "carcassonne.v1.Game") {
    const player = source.players.find((p) => p.seat === seat);
    if (player === undefined) throw new RangeError(`${source.name} has no seat ${seat}`);
    main = player.timeLeftMs;
    asOf = source.clockTimeMs;
    pending = source.pending;
  } else {
    if (!(seat >= 0 && seat < source.scores.length)) throw new RangeError(`the event has no seat ${seat}`);
    // Empty in a game without a main time.
    main = source.timeLeftMs.length > 0 ? source.timeLeftMs[seat] : undefined;
    asOf = source.event?.timeMs ?? 0n;
    pending = source.pending;
  }
  const now = options.nowMs ?? localNowMs();
  const mainMs = main === undefined ? undefined : Number(main);
  const deadline = Number(pending?.deadlineMs ?? 0n);
  const running = deadline !== 0 && pending?.seat === seat;
  if (!running) {
    return { seat, mainLeftMs: mainMs, decisionLeftMs: undefined, deadlineMs: 0, running: false };
  }
  const used = Math.max(0, now - Number(asOf));
  return {
    seat,
    mainLeftMs: mainMs === undefined ? undefined : Math.max(0, mainMs - used),
    decisionLeftMs: Math.max(0, deadline - now),
    deadlineMs: deadline,
    running: true,
  };
}

/** Every seat's clock now, in seat order (see `seatClock`). */
export function clocks(source: Game | WatchedEvent, options: ClockOptions = {}): SeatClock[] {
  const nowMs = options.nowMs ?? localNowMs();
  const seats = source.$typeName === "carcassonne.v1.Game" ? source.players.length : source.scores.length;
  return Array.from({ length: seats }, (_, seat) => seatClock(source, seat, { nowMs }));
}

/** The server's clock as a client can know it: this machine's clock plus
 * an offset, estimated from the times the server stored the client's own
 * actions at.
 *
 * An action is stored no earlier than the server received it, so for an
 * Act sent at local time `sentMs` whose first event was stored at
 * `storedMs`, the offset (server minus local) is at most
 * `storedMs - sentMs`. The estimate is the least such bound seen: it may
 * put the server's time a little later than it is (by at most a one-way
 * trip), never earlier, so a deadline read with it comes early, not late.
 * Until the first observation the offset is taken as 0. */
export class ServerClock {
  offsetMs: number | undefined;

  constructor(private readonly local: () => number = localNowMs) {}

  /** This machine's clock (what `observe` wants as `sentMs`). */
  localMs(): number {
    return this.local();
  }

  /** The server's time now, as far as this client can tell. */
  nowMs(): number {
    return this.local() + (this.offsetMs ?? 0);
  }

  /** Learns from a call sent at local `sentMs` whose effect the server
   * stored at `storedMs` (an event's `timeMs`). */
  observe(sentMs: number, storedMs: number | bigint): void {
    const bound = Number(storedMs) - sentMs;
    if (this.offsetMs === undefined || bound < this.offsetMs) this.offsetMs = bound;
  }

  /** `observe` for an Act's answer: its first event's stored time. For a
   * retried Act (same request id), `sentMs` is when the first try was
   * sent: the answer may be that of the first try. */
  observeAct(sentMs: number, response: ActResponse): void {
    const first = response.events[0];
    if (first !== undefined) this.observe(sentMs, first.timeMs);
  }
}
