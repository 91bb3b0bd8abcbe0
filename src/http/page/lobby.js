// The lobby: every game of the server, running ones first, kept live by the
// server's watch stream (created, started, finished), and running games'
// scores refreshed every few seconds. A card tells a clocked game's time
// control, and why a game ended early.

import { apiGamePath, gameId, gamePath, getJson, HttpError, num, openStream } from "./api.js";
import { endReasonText, sentence, timeControl, timeControlText } from "./clocks.js";
import { decisionText, el, isFinished, playerName, rulesText, seatMark, STATUS, timeText } from "./words.js";

const PAGES = 10; // at most 1000 games listed
const REFRESH_MS = 5000;
const REFRESHED_AT_ONCE = 24;

export function showLobby(main) {
  document.title = "Games · Carcassonne";
  const games = new Map(); // name -> Game
  const running = el("ul", { class: "game-cards" });
  const finished = el("ul", { class: "game-cards" });
  const runningCount = el("span", { class: "count" });
  const finishedCount = el("span", { class: "count" });
  const empty = el("p", { class: "notice", hidden: true }, "No games yet. Games created through the API appear here as soon as they exist.");
  main.replaceChildren(
    el(
      "section",
      { class: "lobby", "aria-labelledby": "lobby-title" },
      el("h1", { id: "lobby-title" }, "Games"),
      el("p", { class: "lead" }, "Watch a running game live, or replay a finished one move by move."),
      empty,
      el("h2", {}, "Running ", runningCount),
      running,
      el("h2", {}, "Finished ", finishedCount),
      finished,
    ),
  );

  // Each game's card is rebuilt only when the game changed, and a list
  // only re-laid when its games or their order did, so that a refresh
  // keeps the keyboard focus where it is.
  const cards = new Map(); // name -> {text, element}
  const cardOf = (game) => {
    const text = JSON.stringify(game);
    const known = cards.get(game.name);
    if (known?.text === text) return known.element;
    const element = card(game);
    known?.element.replaceWith(element);
    cards.set(game.name, { text, element });
    return element;
  };
  const fill = (list, items, none) => {
    const wanted = items.length ? items : [list.querySelector(":scope > .none") ?? el("li", { class: "none" }, none)];
    const same = wanted.length === list.children.length && wanted.every((item, index) => list.children[index] === item);
    if (!same) list.replaceChildren(...wanted);
  };
  const render = () => {
    const all = [...games.values()].sort((a, b) => num(b.createTimeMs) - num(a.createTimeMs) || (a.name < b.name ? -1 : 1));
    const live = all.filter((game) => !isFinished(game));
    const done = all.filter(isFinished);
    fill(running, live.map(cardOf), "No game is running.");
    fill(finished, done.map(cardOf), "No game has finished yet.");
    runningCount.textContent = `(${live.length})`;
    finishedCount.textContent = `(${done.length})`;
    empty.hidden = all.length > 0;
    main.dataset.games = String(all.length);
  };

  const loadAll = async () => {
    let token = "";
    for (let page = 0; page < PAGES; page++) {
      const query = new URLSearchParams({ page_size: "100" });
      if (token) query.set("page_token", token);
      const answer = await getJson(`/api/games?${query}`);
      for (const game of answer.games ?? []) games.set(game.name, game);
      token = answer.nextPageToken ?? "";
      if (!token) break;
    }
    render();
  };

  const loadOne = async (name) => {
    try {
      const answer = await getJson(apiGamePath(gameId(name)));
      if (answer.game) games.set(answer.game.name, answer.game);
      render();
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
    }
  };

  // The stream first, then the list: a game created in between is in one
  // of them, or both.
  let opened = false;
  openStream((last) => `/api/server/watch${last === null ? "" : `?from_position=${encodeURIComponent(last)}`}`, {
    onOpen: () => {
      // After a reconnect the list may have changed in ways the stream's
      // resume does not cover (a restart): read it again.
      if (opened) loadAll();
      opened = true;
    },
    onMessage: (message) => {
      if (message.event?.name) loadOne(message.event.name);
    },
  });
  loadAll();

  setInterval(() => {
    if (document.hidden) return;
    const live = [...games.values()].filter((game) => !isFinished(game));
    live.sort((a, b) => num(b.createTimeMs) - num(a.createTimeMs));
    for (const game of live.slice(0, REFRESHED_AT_ONCE)) loadOne(game.name);
  }, REFRESH_MS);
}

function card(game) {
  const id = gameId(game.name);
  const winners = new Set((game.winners ?? []).map(num));
  const players = (game.players ?? []).map((player) => {
    const seat = num(player.seat);
    const winner = isFinished(game) && winners.has(seat);
    return el(
      "li",
      { class: winner ? "winner" : undefined },
      seatMark(seat, 16),
      el("span", { class: "player-name" }, player.name ?? ""),
      winner ? el("span", { class: "winner-tag", title: "Winner" }, "winner") : null,
      el("span", { class: "player-score", "aria-label": `${num(player.score)} points` }, String(num(player.score))),
    );
  });
  const status = STATUS[game.status] ?? "Unknown";
  const early = isFinished(game) && game.ending?.reason && game.ending.reason !== "END_REASON_NORMAL";
  const control = timeControl(game);
  return el(
    "li",
    { class: "game-card", "data-game": id },
    el(
      "a",
      { href: gamePath(id), "aria-label": `Game ${id}, ${status.toLowerCase()}${early ? ` (${endReasonText(game.ending, (seat) => playerName(game, seat))})` : ""}, version ${num(game.version)}` },
      el(
        "div",
        { class: "card-board" },
        el("img", {
          src: `${gamePath(id)}/board.svg?version=${num(game.version)}`,
          alt: "",
          loading: "lazy",
          decoding: "async",
        }),
      ),
      el(
        "div",
        { class: "card-head" },
        el("span", { class: "game-id" }, id),
        el("span", { class: `status status-${status.toLowerCase()}` }, status),
      ),
      el("ul", { class: "card-players" }, players),
      isFinished(game) ? null : el("p", { class: "card-pending" }, decisionText(game.pending, (seat) => playerName(game, seat))),
      early ? el("p", { class: "card-ending" }, `${sentence(endReasonText(game.ending, (seat) => playerName(game, seat)))}.`) : null,
      control && !isFinished(game) ? el("p", { class: "card-clock" }, `Clock: ${timeControlText(control)}`) : null,
      el(
        "div",
        { class: "card-meta" },
        el("span", { class: "version" }, `version ${num(game.version)}`),
        el("span", {}, rulesText(game.rules)),
        el("time", { datetime: new Date(num(game.createTimeMs)).toISOString() }, timeText(game.createTimeMs)),
      ),
    ),
  );
}
