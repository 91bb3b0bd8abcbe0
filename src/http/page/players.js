// The game page's players at the version shown: the players table (score,
// followers, each seat's clock, a seat that is out), the bag, the pending
// decision with its own countdown, and a finished game's result (why it
// ended, the ranking). The clock of the seat that owes the pending
// decision counts down once a second while the version shown is the
// present; at an earlier version every clock stands as it was then.

import { num } from "./api.js";
import { clockFigures, clockText, endReasonText, ordinal, ranking, seatStatusText, sentence, timeControl } from "./clocks.js";
import { decisionText, el, isFinished, seatMark } from "./words.js";
import { calibrate, serverNow } from "./servertime.js";

const TICK_MS = 200; // a reading changes once a second; ticks find the change soon

export class PlayersView {
  /** `info`: the game as first read (its rules and time control never change). */
  constructor(info, pendingLine) {
    this.control = timeControl(info);
    this.withCount = (info.rules?.expansions ?? []).includes("EXPANSION_COUNT");
    this.pendingLine = pendingLine;
    this.body = el("tbody");
    this.table = el(
      "table",
      { class: "players" },
      el("caption", {}, "Players"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, "Player"),
          el("th", { scope: "col", class: "num" }, "Score"),
          el("th", { scope: "col", class: "num", title: "Followers in the supply" }, "Followers"),
          this.withCount ? el("th", { scope: "col", class: "num", title: "Followers in Carcassonne" }, "In city") : null,
          this.control?.main ? el("th", { scope: "col", class: "num", title: "Main time left" }, "Clock") : null,
        ),
      ),
      this.body,
    );
    this.bagLine = el("p", { class: "bag" });
    this.clocks = new Map(); // seat -> the element of its main time
    this.decisionClock = null;
    this.timer = null;
  }

  /**
   * Shows `game`, the state at the version shown; `live`: it is the
   * present, so the running clock counts down.
   */
  show(game, { live }) {
    this.game = game;
    this.live = live && !isFinished(game);
    const name = (seat) => game.players?.find((p) => num(p.seat) === seat)?.name ?? `Seat ${seat + 1}`;
    const winners = new Set((game.winners ?? []).map(num));
    const finished = isFinished(game);
    const pendingSeat = finished ? null : num(game.pending?.seat);
    const { running } = clockFigures(game);
    this.clocks.clear();
    this.body.replaceChildren(
      ...(game.players ?? []).map((player) => {
        const seat = num(player.seat);
        const turn = seat === pendingSeat;
        const winner = finished && winners.has(seat);
        const out = seatStatusText(player);
        let clock = null;
        if (this.control?.main) {
          clock = el("span", { class: "clock", "data-seat": String(seat) });
          this.clocks.set(seat, clock);
        }
        const classes = [turn ? "turn" : "", winner ? "winner" : "", out ? "out" : "", seat === running ? "clock-running" : ""];
        return el(
          "tr",
          { class: classes.join(" ").trim() || undefined, "data-seat": String(seat) },
          el(
            "th",
            { scope: "row" },
            seatMark(seat, 20),
            el("span", { class: "player-name" }, player.name ?? ""),
            player.bot ? el("span", { class: "bot-tag", title: "the server's built-in bot" }, `${player.bot} bot`) : null,
            turn ? el("span", { class: "turn-tag" }, "to play") : null,
            winner ? el("span", { class: "winner-tag" }, "winner") : null,
            out ? el("span", { class: "out-tag", "data-status": player.status }, out) : null,
          ),
          el("td", { class: "num score" }, String(num(player.score))),
          el("td", { class: "num" }, String(num(player.followersInSupply))),
          this.withCount ? el("td", { class: "num" }, String(num(player.followersInCarcassonne))) : null,
          clock ? el("td", { class: "num clock-cell" }, clock) : null,
        );
      }),
    );
    const left = (game.bag ?? []).reduce((sum, tile) => sum + num(tile.count), 0);
    this.bagLine.textContent = `${left} ${left === 1 ? "tile" : "tiles"} left in the bag`;

    let pending = decisionText(game.pending, name);
    if (finished) pending = `The game is over: ${resultText(game, name)}`;
    this.decisionClock =
      this.control?.decision && running !== null ? el("span", { class: "decision-clock", title: "Time left for this decision" }) : null;
    this.pendingLine.replaceChildren(
      ...[
        finished || game.pending?.kind === "DECISION_KIND_DRAW" ? null : seatMark(pendingSeat ?? 0, 18),
        el("span", {}, pending),
        this.decisionClock,
      ].filter(Boolean),
    );
    this.tick();
    const counting = this.live && running !== null;
    if (counting && !this.calibrated) {
      this.calibrated = true;
      calibrate().then(() => this.tick());
    }
    if (counting && !this.timer) this.timer = setInterval(() => this.tick(), TICK_MS);
    if (!counting && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** A version up to `version` exists now: an older state shown stops counting. */
  passed(version) {
    if (!this.live || num(this.game?.version) >= version) return;
    this.live = false;
    clearInterval(this.timer);
    this.timer = null;
    this.tick();
  }

  /** Writes the clocks' readings: now for a live view, as of the state otherwise. */
  tick() {
    const figures = clockFigures(this.game, this.live ? serverNow() : null);
    for (const [seat, element] of this.clocks) {
      const text = clockText(figures.main.get(seat) ?? 0);
      if (element.textContent !== text) element.textContent = text;
    }
    if (this.decisionClock && figures.decision !== null) {
      const text = `${clockText(figures.decision)} to decide`;
      if (this.decisionClock.textContent !== text) this.decisionClock.textContent = text;
    }
  }
}

/** "Ada resigned; Brun wins", "Ada aborted the game: no result", "the last tile was played; Ada and Brun win". */
export function resultText(game, name) {
  const reason = endReasonText(game.ending, name);
  if (game.ending?.reason === "END_REASON_ABORTED") return reason;
  const winners = (game.winners ?? []).map((seat) => name(num(seat)));
  const wins = winners.length ? `${winners.join(" and ")} ${winners.length === 1 ? "wins" : "win"}` : "";
  return [reason, wins].filter(Boolean).join("; ") || "finished";
}

/** A finished game's result: why it ended and the ranking (T-11). */
export function renderResult(section, game) {
  const name = (seat) => game.players?.find((p) => num(p.seat) === seat)?.name ?? `Seat ${seat + 1}`;
  const ranked = ranking(game);
  section.hidden = false;
  section.replaceChildren(
    el("h2", { id: "result-title" }, "Result"),
    el("p", { class: "end-reason", "data-reason": game.ending?.reason ?? "" }, `${sentence(resultText(game, name))}.`),
    ranked.length
      ? el(
          "ol",
          { class: "ranking" },
          ranked.map((player) => {
            const out = seatStatusText(player);
            const points = num(player.score);
            return el(
              "li",
              { "data-rank": String(num(player.rank)), "data-seat": String(num(player.seat)) },
              el("span", { class: "rank" }, ordinal(num(player.rank))),
              seatMark(num(player.seat), 16),
              el("span", { class: "player-name" }, player.name ?? ""),
              el("span", { class: "muted" }, `${points} ${points === 1 ? "point" : "points"}${out ? `, ${out}` : ""}`),
            );
          }),
        )
      : el("p", { class: "muted" }, "No ranking: the game was aborted."),
  );
}
