// What the game page shows beside the board: a move's row in the move
// list, the points by feature of a finished game, and its audit (the
// revealed seed, the verification, the record's download).

import { apiGamePath, getJson, HttpError, num } from "./api.js";
import { endReasonText } from "./clocks.js";
import { el, eventText, FEATURES, isFinished, pointsKind, scoreChangeText, seatMark } from "./words.js";

/**
 * The move list's row of a watched event, or null for an event not worth
 * a row (a draw, told with the placement after it). `name(seat)` names a
 * seat, `drawn` is the kind of the tile drawn just before, `select()`
 * shows the event's version.
 */
export function moveRow(watched, name, drawn, select) {
  const event = watched.event ?? {};
  const version = num(event.version);
  const text = eventText(event, name, drawn);
  const changes = event.scoreChanges ?? [];
  const discarded = event.discarded ?? [];
  if (text === null && changes.length === 0 && discarded.length === 0) return null;
  // A timeout names its seat in itself (the server acted, not the seat).
  const acting = event.seat ?? event.timedOut?.seat;
  const seat = acting === undefined || acting === null ? null : num(acting);
  return el(
    "li",
    { "data-version": String(version) },
    el(
      "button",
      { type: "button", class: "move", onclick: select },
      el("span", { class: "move-version" }, String(version)),
      seat === null ? el("span", { class: "seat-mark-space" }) : seatMark(seat, 16),
      el("span", { class: "move-text" }, text ?? "Tile drawn"),
    ),
    changes.length
      ? el(
          "ul",
          { class: "score-changes" },
          changes.map((change) => {
            const words = scoreChangeText(change, name);
            return el(
              "li",
              {},
              el("span", { class: "points" }, words.points),
              el("span", {}, `${words.seats} · ${words.feature}`),
              words.rule ? el("abbr", { class: "rule", title: `Rule ${words.rule} of docs/rules.md` }, words.rule) : null,
            );
          }),
        )
      : null,
    discarded.length ? el("p", { class: "discarded" }, `Discarded (fit nowhere): ${discarded.join(", ")}`) : null,
    event.finished ? el("p", { class: "game-end" }, endOfGameText(watched.ending, name)) : null,
  );
}

/** "End of the game: Ada resigned" (T-11). */
function endOfGameText(ending, name) {
  const reason = endReasonText(ending, name);
  return reason ? `End of the game: ${reason}` : "End of the game";
}

/**
 * The end-of-game table: each player's points by feature kind, summed
 * from every event's score changes (so its totals are the final scores);
 * farmers' points count for fields.
 */
export function pointsByFeature(game, watchedEvents, withCount) {
  const players = game.players ?? [];
  const points = players.map(() => Object.fromEntries(Object.keys(FEATURES).map((kind) => [kind, 0])));
  for (const watched of watchedEvents) {
    for (const change of watched.event?.scoreChanges ?? []) {
      const kind = pointsKind(change);
      for (const seat of change.seats ?? []) {
        const row = points[num(seat)];
        if (row) row[kind] = (row[kind] ?? 0) + num(change.points);
      }
    }
  }
  // The City of Carcassonne's column only when some points are its own.
  const kinds = Object.keys(FEATURES).filter(
    (kind) => kind !== "FEATURE_KIND_CITY_OF_CARCASSONNE" || (withCount && points.some((row) => row[kind] > 0)),
  );
  const winners = new Set((game.winners ?? []).map(num));
  // A phone gets short column names.
  const header = (kind) =>
    el(
      "th",
      { scope: "col", class: "num" },
      el("span", { class: "wide-only" }, FEATURES[kind].column),
      el("abbr", { class: "narrow-only", title: FEATURES[kind].column }, FEATURES[kind].short),
    );
  const rows = players.map((player, index) => {
    const seat = num(player.seat);
    const row = points[index] ?? {};
    const total = Object.values(row).reduce((sum, value) => sum + value, 0);
    return el(
      "tr",
      { class: winners.has(seat) ? "winner" : undefined },
      el(
        "th",
        { scope: "row" },
        seatMark(seat, 18),
        el("span", { class: "player-name" }, player.name ?? ""),
        winners.has(seat) ? el("span", { class: "winner-tag" }, "winner") : null,
      ),
      kinds.map((kind) => el("td", { class: "num" }, String(row[kind] ?? 0))),
      el("td", { class: "num total" }, String(total)),
    );
  });
  return [
    el("h2", { id: "final-title" }, "Points by feature"),
    el(
      "div",
      { class: "table-scroll" },
      el(
        "table",
        { class: "final-table" },
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Player"), kinds.map(header), el("th", { scope: "col", class: "num" }, "Total"))),
        el("tbody", {}, rows),
      ),
    ),
  ];
}

/**
 * The audit: the seed's commitment; for a finished game the revealed
 * seed, the verification's verdict (asked once `after` resolves) and the
 * download of its record.
 */
export function renderAudit(section, id, game, after) {
  const commitment = el("p", {}, "Seed commitment (SHA-256): ", el("code", { class: "hash" }, game.seedSha256 ?? ""));
  if (!isFinished(game)) {
    section.replaceChildren(
      el("h2", { id: "audit-title" }, "Audit"),
      commitment,
      el("p", { class: "muted" }, "The seed that fixed the draw order is revealed when the game is over; then the game can be verified and downloaded."),
    );
    return;
  }
  const verdict = el("p", { class: "verdict", "aria-live": "polite" }, "Verifying…");
  const download = el("button", { type: "button", class: "text-button primary", onclick: () => downloadRecord(id, download) }, "Download the record (JSON)");
  section.replaceChildren(
    el("h2", { id: "audit-title" }, "Audit"),
    commitment,
    el("p", {}, "Seed, revealed: ", el("code", { class: "hash seed" }, game.seed ?? "")),
    verdict,
    el("p", {}, download),
  );
  after.then(() => verify(id, verdict));
}

async function verify(id, verdict) {
  let answer;
  try {
    answer = await getJson(`${apiGamePath(id)}/verify`);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    verdict.textContent = `The verification could not run: ${error.message}`;
    verdict.className = "verdict bad";
    return;
  }
  verdict.dataset.ok = String(Boolean(answer.ok));
  if (answer.ok) {
    verdict.className = "verdict good";
    const scores = (answer.scores ?? []).map(num).join(" – ");
    verdict.textContent = `✓ Verified: every turn is legal, the draws follow from the revealed seed, the hash chain holds${scores ? `, and the record scores ${scores}` : ""}.`;
  } else {
    verdict.className = "verdict bad";
    const rule = answer.rule ? ` (rule ${answer.rule})` : "";
    verdict.textContent = `✗ Verification failed at ${num(answer.at)}${rule}: ${answer.error ?? "unknown problem"}`;
  }
}

/** The record JSON of the export, saved as a file. */
async function downloadRecord(id, button) {
  button.disabled = true;
  try {
    const answer = await getJson(`${apiGamePath(id)}/export`);
    const blob = new Blob([answer.recordJson ?? ""], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = el("a", { href: url, download: `carcassonne-${id}.json` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    button.textContent = `The download failed: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}
