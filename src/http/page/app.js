// The page's entry: one shell for every address, this picks the view.
//   /                    the lobby
//   /games/{id}          a game (?v=N opens it at version N)
//   /tournaments/{id}    a tournament: its standings and rounds

import { showGame } from "./game.js";
import { showLobby } from "./lobby.js";
import { showTournament } from "./tournament.js";
import { el } from "./words.js";

const main = document.getElementById("main");
const path = location.pathname;
const game = /^\/games\/([^/]+)\/?$/.exec(path);
const tournament = /^\/tournaments\/([^/]+)\/?$/.exec(path);

/** An id from the address: percent-decoded when it can be. */
function decoded(id) {
  try {
    return decodeURIComponent(id);
  } catch {
    return id; // not percent-encoded text: use it as it is
  }
}

if (path === "/" || path === "/index.html") {
  showLobby(main);
} else if (game) {
  showGame(main, decoded(game[1]));
} else if (tournament) {
  showTournament(main, decoded(tournament[1]));
} else {
  document.title = "Not found · Carcassonne";
  main.replaceChildren(
    el(
      "section",
      { class: "problem", "data-problem": "not-found" },
      el("h1", {}, "Page not found"),
      el("p", {}, "There is nothing at this address."),
      el("p", {}, el("a", { href: "/" }, "See all games")),
    ),
  );
}
