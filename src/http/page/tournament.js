// A tournament's page: its standings (rank, player, points, tie-breaks,
// games), live until they are final, and every round's tables with their
// games' results, each linked to the game's own page. Its data: the
// tournament and its standings (`/api/tournaments/{id}` and `/standings`),
// then the tournament's watch stream (`/watch`), which brings both whole
// again after every change: a round paired, a game ended, a withdrawal,
// the end. Also the words the lobby's list of tournaments uses.

import { apiTournamentPath, gameId, gamePath, getJson, HttpError, num, openStream, playerOf, tournamentId, tournamentPath } from "./api.js";
import { ordinal, timeControl, timeControlText } from "./clocks.js";
import { el, seatMark } from "./words.js";

export const TOURNAMENT_STATUS = {
  TOURNAMENT_STATUS_RUNNING: "Running",
  TOURNAMENT_STATUS_FINISHED: "Finished",
};

export function isTournamentFinished(tournament) {
  return tournament?.status === "TOURNAMENT_STATUS_FINISHED";
}

function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

/** "Ada", "Ada and Brun", "Ada, Brun and Cleo" */
function listText(names) {
  return names.length < 2 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/** "Swiss, 3 rounds", "Round robin, 4 rounds" */
export function formatText(tournament) {
  const rounds = plural(num(tournament.rounds), "round", "rounds");
  switch (tournament.format) {
    case "TOURNAMENT_FORMAT_SWISS":
      return `Swiss, ${rounds}`;
    case "TOURNAMENT_FORMAT_ROUND_ROBIN":
      return `Round robin, ${rounds}`;
    default:
      return rounds;
  }
}

/** "round 2 of 3", "finished after 3 rounds" */
export function progressText(tournament) {
  if (isTournamentFinished(tournament)) {
    return `finished after ${plural((tournament.pairedRounds ?? []).length, "round", "rounds")}`;
  }
  return `round ${num(tournament.currentRound)} of ${num(tournament.rounds)}`;
}

/** The lobby's card of a tournament: its title, status and progress. */
export function tournamentCard(tournament) {
  const id = tournamentId(tournament.name ?? "");
  const status = TOURNAMENT_STATUS[tournament.status] ?? "Unknown";
  const players = plural((tournament.participants ?? []).length, "player", "players");
  return el(
    "li",
    { class: "tournament-card", "data-tournament": id, "data-status": status.toLowerCase() },
    el(
      "a",
      { href: tournamentPath(id) },
      el(
        "span",
        { class: "card-head" },
        el("span", { class: "tournament-title" }, tournament.title || id),
        el("span", { class: `status status-${status.toLowerCase()}` }, status),
      ),
      el("span", { class: "tournament-meta" }, `${formatText(tournament)} · ${players} · ${progressText(tournament)}`),
    ),
  );
}

export async function showTournament(main, id) {
  document.title = `Tournament ${id} · Carcassonne`;
  let tournament;
  let standings;
  try {
    [tournament, standings] = await Promise.all([
      getJson(apiTournamentPath(id)).then((answer) => answer.tournament),
      getJson(`${apiTournamentPath(id)}/standings`).then((answer) => answer.standings),
    ]);
  } catch (error) {
    if (error instanceof HttpError) return showProblem(main, id, error);
    throw error;
  }
  new TournamentPage(main, id, tournament, standings);
}

function showProblem(main, id, error) {
  const missing = error.status === 404;
  document.title = `${missing ? "Tournament not found" : "Error"} · Carcassonne`;
  main.replaceChildren(
    el(
      "section",
      { class: "problem", "data-problem": missing ? "not-found" : "error" },
      el("h1", {}, missing ? "Tournament not found" : "This tournament cannot be shown"),
      el(
        "p",
        {},
        missing
          ? `There is no tournament “${id}” on this server. It may have been mistyped, or it belongs to another server.`
          : `The server answered: ${error.message}`,
      ),
      el("p", {}, el("a", { href: "/" }, "See all games and tournaments")),
    ),
  );
}

class TournamentPage {
  constructor(main, id, tournament, standings) {
    this.main = main;
    this.id = id;
    this.shownText = null; // what is shown, as JSON: nothing is redrawn twice
    this.rounds = new Map(); // round number -> {text, element}
    this.build();
    this.show(tournament, standings);
    if (!standings?.final) this.watch();
  }

  build() {
    this.title = el("h1", {});
    this.statusBadge = el("span", { class: "status" });
    this.meta = el("p", { class: "game-meta" });
    this.flag = el("span", { class: "standings-flag" });
    this.note = el("p", { class: "standings-note", "aria-live": "polite" });
    this.body = el("tbody");
    // A number's column; on a phone, under a shorter heading.
    const column = (text, title, short) =>
      el("th", { scope: "col", class: "num", title }, short ? [el("span", { class: "wide-only" }, text), el("span", { class: "narrow-only" }, short)] : text);
    this.table = el(
      "table",
      { class: "standings" },
      el("caption", {}, "Standings ", this.flag),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          column("Rank", "Rank", "#"),
          el("th", { scope: "col" }, "Player"),
          column("Points", "Table points", "Pts"),
          column("Buchholz", "First tie-break: the points of everyone the player shared a table with", "Buch."),
          column("Firsts", "Second tie-break: games placed first, ties included", "1st"),
          column("Score", "Third tie-break: the player's scores in all their games, added up"),
          column("Games", "Games played (byes not counted)", "Gms"),
        ),
      ),
      this.body,
    );
    this.roundList = el("div", { class: "round-list" });
    this.seedLines = el("div", { class: "seed-lines" });
    this.main.replaceChildren(
      el(
        "article",
        { class: "tournament", "data-tournament": this.id },
        el("header", { class: "game-head" }, this.title, this.statusBadge, this.meta),
        el(
          "div",
          { class: "tournament-grid" },
          el("section", { class: "panel standings-panel" }, el("div", { class: "table-scroll" }, this.table), this.note),
          el(
            "section",
            { class: "panel rounds-panel", "aria-labelledby": "rounds-title" },
            el("h2", { id: "rounds-title" }, "Rounds"),
            this.roundList,
          ),
          el(
            "section",
            { class: "panel seed-panel", "aria-labelledby": "seed-title" },
            el("h2", { id: "seed-title" }, "Pairings and seeds"),
            el(
              "p",
              { class: "muted" },
              "Pairings, the lot and every game's seed follow from the tournament's seed: its SHA-256 is shown from the start, the seed itself once the tournament is over.",
            ),
            this.seedLines,
          ),
        ),
      ),
    );
  }

  // ------------------------------------------------------------ data

  watch() {
    this.stream = openStream(
      (last) => `${apiTournamentPath(this.id)}/watch${last === null ? "" : `?after_version=${encodeURIComponent(last)}`}`,
      {
        onMessage: (message) => {
          if (!message.tournament || !message.standings) return;
          this.show(message.tournament, message.standings);
          // The last message: the stream ends with the final standings.
          if (message.standings.final) this.stream.close();
        },
        onError: (status) => {
          this.note.textContent = `The live standings stopped: ${status.message || status.code || "error"}`;
          return status.code !== "NOT_FOUND";
        },
      },
    );
  }

  show(tournament, standings) {
    const text = JSON.stringify([tournament, standings]);
    if (text === this.shownText) return;
    this.shownText = text;
    this.tournament = tournament;
    const finished = isTournamentFinished(tournament);
    const final = Boolean(standings?.final);
    const article = this.main.querySelector(".tournament");
    article.dataset.status = finished ? "finished" : "running";
    article.dataset.final = String(final);
    article.dataset.round = String(num(tournament.currentRound));
    this.renderHead(tournament);
    this.renderStandings(tournament, standings, final);
    this.renderRounds(tournament);
    this.renderSeed(tournament);
  }

  // ------------------------------------------------------------ rendering

  renderHead(tournament) {
    const title = tournament.title || this.id;
    document.title = `${title} · Tournament · Carcassonne`;
    this.title.textContent = title;
    const status = TOURNAMENT_STATUS[tournament.status] ?? "Unknown";
    this.statusBadge.textContent = status;
    this.statusBadge.className = `status status-${status.toLowerCase()}`;
    const size = num(tournament.tableSize);
    const games = num(tournament.gamesPerMatch);
    const control = timeControl(tournament);
    const withdrawn = (tournament.withdrawn ?? []).length;
    this.meta.replaceChildren(
      ...[
        formatText(tournament),
        progressText(tournament),
        plural((tournament.participants ?? []).length, "player", "players"),
        `tables of ${size}`,
        games > 1 ? `${games} games a match` : null,
        tournament.duplicateBags ? "duplicate bags" : null,
        tournament.rated ? "rated" : null,
        control ? timeControlText(control) : null,
        withdrawn ? plural(withdrawn, "player withdrawn", "players withdrawn") : null,
        tournament.organiser ? `organised by ${playerOf(tournament.organiser)}` : null,
      ]
        .filter(Boolean)
        .map((part) => el("span", {}, part)),
    );
  }

  renderStandings(tournament, standings, final) {
    // Live while games are played, final at the end.
    this.flag.textContent = final ? "Final" : "Live";
    this.flag.className = `standings-flag ${final ? "final-tag" : "live-tag"}`;
    const rows = (standings?.standings ?? []).map((standing) => {
      const name = playerOf(standing.player);
      const rank = num(standing.rank);
      const winner = final && rank === 1;
      return el(
        "tr",
        {
          class: [winner ? "winner" : "", standing.withdrawn ? "out" : ""].join(" ").trim() || undefined,
          "data-player": name,
          "data-rank": String(rank),
        },
        el("td", { class: "num rank" }, String(rank)),
        el(
          "th",
          { scope: "row" },
          el("span", { class: "player-name" }, name),
          winner ? el("span", { class: "winner-tag" }, "winner") : null,
          standing.withdrawn ? el("span", { class: "out-tag" }, "withdrawn") : null,
        ),
        el("td", { class: "num standing-points" }, standing.points || "0"),
        el("td", { class: "num buchholz" }, standing.buchholz || "0"),
        el("td", { class: "num firsts" }, String(num(standing.firsts))),
        el("td", { class: "num game-score" }, String(num(standing.gameScore))),
        el("td", { class: "num games" }, String(num(standing.games))),
      );
    });
    this.body.replaceChildren(...rows);
    const round = num(standings?.round);
    const rounds = num(tournament.rounds);
    if (final) {
      this.note.textContent = `Final: the tournament is over after ${plural(round, "round", "rounds")}.`;
    } else if (round === 0) {
      this.note.textContent = "No round has been paired yet.";
    } else {
      this.note.textContent = `Round ${round} of ${rounds} is being played; the standings update by themselves as its games end.`;
    }
  }

  // Each round's section is rebuilt only when the round changed, so that
  // an update keeps the keyboard focus on a game's link.
  renderRounds(tournament) {
    const finished = isTournamentFinished(tournament);
    const current = num(tournament.currentRound);
    const rounds = [...(tournament.pairedRounds ?? [])].sort((a, b) => num(b.round) - num(a.round));
    const wanted = rounds.map((round) => {
      const number = num(round.round);
      const playing = !finished && number === current;
      const text = JSON.stringify([round, playing]);
      const known = this.rounds.get(number);
      if (known?.text === text) return known.element;
      const element = roundSection(round, playing);
      known?.element.replaceWith(element);
      this.rounds.set(number, { text, element });
      return element;
    });
    if (!wanted.length) wanted.push(this.roundList.querySelector(":scope > .none") ?? el("p", { class: "none muted" }, "No round has been paired yet."));
    const list = this.roundList;
    const same = wanted.length === list.children.length && wanted.every((item, index) => list.children[index] === item);
    if (!same) list.replaceChildren(...wanted);
  }

  renderSeed(tournament) {
    const line = (label, value, cls) => el("p", {}, `${label}: `, el("code", { class: `hash ${cls}` }, value));
    this.seedLines.replaceChildren(
      ...[
        line("Seed's SHA-256", tournament.seedSha256 ?? "", "seed-sha256"),
        tournament.seed ? line("Seed", tournament.seed, "seed") : el("p", { class: "muted" }, "The seed is revealed when the tournament ends."),
        tournament.pairing ? el("p", { class: "muted" }, `Paired by ${tournament.pairing}.`) : null,
      ].filter(Boolean),
    );
  }
}

/** A round: its tables, each with its games and their results, and its byes. */
function roundSection(round, playing) {
  const number = num(round.round);
  const heading = `round-${number}-title`;
  const byes = (round.byes ?? []).map(playerOf);
  return el(
    "section",
    { class: "round", "data-round": String(number), "aria-labelledby": heading },
    el("h3", { id: heading }, `Round ${number}`, playing ? el("span", { class: "status status-running" }, "Playing") : null),
    el(
      "ol",
      { class: "round-tables" },
      (round.tables ?? []).map((table, index) =>
        el(
          "li",
          { class: "round-table", "data-table": String(index + 1) },
          el("p", { class: "table-title" }, `Table ${index + 1}`),
          el(
            "ul",
            { class: "table-games" },
            (table.games ?? []).map((game, g) => gameItem(game, { round: number, table: index + 1, game: g + 1, games: (table.games ?? []).length })),
          ),
        ),
      ),
    ),
    byes.length ? el("p", { class: "byes" }, `Bye: ${listText(byes)}`) : null,
  );
}

/** One game of a table: its players in seat order, with their places and scores once it ended; a link to the game. */
function gameItem(game, where) {
  const id = gameId(game.game ?? "");
  const seats = (game.seats ?? []).map(playerOf);
  const ranks = (game.ranks ?? []).map(num);
  const scores = (game.scores ?? []).map(num);
  const ended = Boolean(game.ended);
  const aborted = ended && ranks.length === 0;
  const status = !ended ? "Running" : aborted ? "Aborted" : "Finished";
  const context = `Round ${where.round}, table ${where.table}${where.games > 1 ? `, game ${where.game}` : ""}: `;
  return el(
    "li",
    { class: "table-game", "data-game": id, "data-ended": String(ended) },
    el(
      "a",
      { class: "game-link", href: gamePath(id) },
      el("span", { class: "visually-hidden" }, context),
      where.games > 1 ? el("span", { class: "game-number" }, `Game ${where.game}`) : null,
      el(
        "span",
        { class: "table-seats" },
        seats.map((name, seat) => {
          const placed = ended && !aborted;
          const first = placed && ranks[seat] === 1;
          return el(
            "span",
            { class: `table-seat${first ? " first" : ""}`, "data-seat": String(seat) },
            seatMark(seat, 14),
            el("span", { class: "player-name" }, name),
            placed ? el("span", { class: "seat-result" }, `${ordinal(ranks[seat])}, ${plural(scores[seat] ?? 0, "point", "points")}`) : null,
            seat < seats.length - 1 ? el("span", { class: "visually-hidden" }, ";") : null,
          );
        }),
      ),
      el("span", { class: `status status-${status.toLowerCase()}` }, aborted ? "Aborted: no result" : status),
    ),
  );
}
