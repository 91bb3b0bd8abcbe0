// The page's entry: one shell for every address, this picks the view.
//   /              the lobby
//   /games/{id}    a game (?v=N opens it at version N)

import { showGame } from "./game.js";
import { showLobby } from "./lobby.js";
import { el } from "./words.js";

const main = document.getElementById("main");
const path = location.pathname;
const game = /^\/games\/([^/]+)\/?$/.exec(path);

if (path === "/" || path === "/index.html") {
  showLobby(main);
} else if (game) {
  let id = game[1];
  try {
    id = decodeURIComponent(id);
  } catch {
    // not percent-encoded text: use it as it is
  }
  showGame(main, id);
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
