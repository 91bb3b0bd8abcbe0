// Time controls, clocks and the ways a game ends (docs/rules.md, T-1 to
// T-11), in figures and in words: no DOM here.

import { num } from "./api.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A duration of a time control in words: "10 min", "1 h 30 min", "1.5 s", "2 days". */
export function durationText(ms) {
  let rest = Math.max(0, Math.round(num(ms)));
  const parts = [];
  const days = Math.floor(rest / DAY);
  rest -= days * DAY;
  if (days) parts.push(`${days} ${days === 1 ? "day" : "days"}`);
  const hours = Math.floor(rest / HOUR);
  rest -= hours * HOUR;
  if (hours) parts.push(`${hours} h`);
  const minutes = Math.floor(rest / MINUTE);
  rest -= minutes * MINUTE;
  if (minutes) parts.push(`${minutes} min`);
  if (rest || parts.length === 0) {
    const seconds = rest / SECOND;
    parts.push(`${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(3))} s`);
  }
  return parts.join(" ");
}

/** The game's time control, or null when no clock runs in it. */
export function timeControl(game) {
  const control = game?.timeControl;
  if (!control) return null;
  const main = num(control.mainMs);
  const decision = num(control.decisionMs);
  if (!main && !decision) return null;
  return { main, increment: num(control.incrementMs), decision, auto: control.onTimeout === "TIMEOUT_RULE_AUTO" };
}

/** "10 min + 5 s a move, 1 day a decision, forfeit on time" */
export function timeControlText(control) {
  if (!control) return "";
  const parts = [];
  if (control.main) parts.push(control.increment ? `${durationText(control.main)} + ${durationText(control.increment)} a move` : `${durationText(control.main)} each`);
  if (control.decision) parts.push(`${durationText(control.decision)} a decision`);
  parts.push(control.auto ? "the server plays for a seat out of time" : "forfeit on time");
  return parts.join(", ");
}

/**
 * A clock's reading: "04:59" under an hour, "1:04:59" under a day, then
 * "2 d 03:04:59", to the nearest second (a reading is then never more than
 * half a second from the server's figure).
 */
export function clockText(ms) {
  const total = Math.round(Math.max(0, ms) / SECOND);
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const two = (n) => String(n).padStart(2, "0");
  if (days) return `${days} d ${two(hours)}:${two(minutes)}:${two(seconds)}`;
  if (hours) return `${hours}:${two(minutes)}:${two(seconds)}`;
  return `${two(minutes)}:${two(seconds)}`;
}

/**
 * The clocks of a game state. `now` is the server's now for a live view
 * (the running clock counts down to it), or null for the figures as of
 * the state's own moment (`clock_time_ms`): a replay's still picture.
 * Returns `{running, main, decision}`: the seat whose clock runs (or
 * null), each seat's main time left (a Map; empty without a main time),
 * and the pending decision's time left (null when no clock runs).
 */
export function clockFigures(game, now = null) {
  const at = num(game?.clockTimeMs);
  const moment = now ?? at;
  const deadline = num(game?.pending?.deadlineMs);
  const running = deadline > 0 && game?.status !== "GAME_STATUS_FINISHED" ? num(game.pending.seat) : null;
  const main = new Map();
  for (const player of game?.players ?? []) {
    if (player.timeLeftMs === undefined || player.timeLeftMs === null) continue;
    const seat = num(player.seat);
    const left = num(player.timeLeftMs);
    main.set(seat, seat === running ? left - Math.max(0, moment - at) : left);
  }
  return { running, main, decision: running === null ? null : deadline - moment };
}

const STATUS_WORDS = { SEAT_STATUS_OUT_OF_TIME: "out of time", SEAT_STATUS_RESIGNED: "resigned" };

/** "out of time", "resigned", or "" for a seat still in. */
export function seatStatusText(player) {
  return STATUS_WORDS[player?.status] ?? "";
}

/**
 * Why a game ended, from its `ending`: "Ada resigned", "Brun ran out of
 * time", "aborted: no result", "the last tile was played"; "" while it runs.
 */
export function endReasonText(ending, name) {
  const seat = num(ending?.seat);
  switch (ending?.reason) {
    case "END_REASON_NORMAL":
      return "the last tile was played";
    case "END_REASON_OUT_OF_TIME":
      return `${name(seat)} ran out of time`;
    case "END_REASON_RESIGNED":
      return `${name(seat)} resigned`;
    case "END_REASON_ABORTED":
      return `${name(seat)} aborted the game: no result`;
    default:
      return "";
  }
}

/** Capitalised, for a sentence of its own. */
export function sentence(text) {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}

/** The ranked players of a finished game, best first (empty when aborted). */
export function ranking(game) {
  return (game?.players ?? [])
    .filter((player) => num(player.rank) > 0)
    .sort((a, b) => num(a.rank) - num(b.rank) || num(a.seat) - num(b.seat));
}

/** "1st", "2nd", "3rd", "4th", "5th". */
export function ordinal(rank) {
  return `${rank}${{ 1: "st", 2: "nd", 3: "rd" }[rank] ?? "th"}`;
}
