// The chess-endgame explorer: shows what /api/position and /api/search answer for a position.
// Every text from the server or the address bar goes into the page with textContent, never as HTML.
"use strict";
(() => {
  const START = "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1";
  // python-chess's SVG board: a 390-unit square with a 15-unit margin for the coordinates.
  const SVG_SIZE = 390, SVG_MARGIN = 15, SVG_SQUARE = 45;
  const FILES = "abcdefgh";
  const $ = (id) => document.getElementById(id);
  const state = { history: [], index: -1, orientation: "white", selected: null, data: null, controller: null };
  // Marks this page's entries of the browser's history, so that its Back and Forward step through the positions.
  const SESSION = Math.random().toString(36).slice(2);

  function fenFromAddress() {
    const fen = new URLSearchParams(location.hash.slice(1)).get("fen");
    return fen && fen.length <= 128 ? fen : null;
  }

  function current() { return state.history[state.index]; }

  // A FEN as the API takes it may have underscores for spaces (as in a shared link): the page shows spaces.
  function tidy(fen) { return fen.replace(/_/g, " ").trim(); }

  function address(fen) { return "#" + new URLSearchParams({ fen }); }

  // A new position: an entry of its own in the browser's history ("push"), or in place of the entry the browser
  // has just made for a link typed or pasted into the address bar ("replace").
  function play(fen, lastmove, how = "push") {
    fen = tidy(fen);
    state.history = state.history.slice(0, state.index + 1);
    state.history.push({ fen, lastmove });
    state.index = state.history.length - 1;
    const mark = { session: SESSION, index: state.index };
    if (how === "push") history.pushState(mark, "", address(fen));
    else history.replaceState(mark, "", address(fen));
    show();
  }

  // The page's back and forward go through the browser's history, as its own buttons do (popstate shows it).
  function step(delta) {
    const index = state.index + delta;
    if (index < 0 || index >= state.history.length) return;
    history.go(delta);
  }

  function revisit(event) {
    const mark = event.state;
    if (mark && mark.session === SESSION && mark.index >= 0 && mark.index < state.history.length) {
      if (mark.index !== state.index) {
        state.index = mark.index;
        show();
      }
      return;
    }
    // A link typed into the address bar, or an entry from before the page was loaded again.
    const fen = fenFromAddress();
    if (fen && (!current() || tidy(fen) !== current().fen)) play(fen, null, "replace");
  }

  function drawBoard() {
    const entry = current();
    const query = { fen: entry.fen, orientation: state.orientation };
    if (entry.lastmove) query.lastmove = entry.lastmove;
    if (state.selected) query.selected = state.selected;
    $("board").src = "/board.svg?" + new URLSearchParams(query);
  }

  function setText(id, text) { $(id).textContent = text; }

  function show() {
    const entry = current();
    state.selected = null;
    state.data = null;
    $("fen").value = entry.fen;
    $("back").disabled = state.index <= 0;
    $("forward").disabled = state.index >= state.history.length - 1;
    $("board").hidden = true;  // drawn once the server has accepted the position
    if (state.controller) state.controller.abort();
    const controller = new AbortController();
    state.controller = controller;
    setText("verdict", "…");
    setText("search", "");
    setText("error", "");
    $("moves").tBodies[0].replaceChildren();
    load(entry.fen, controller.signal);
  }

  async function getJson(path, query, signal) {
    const response = await fetch(path + "?" + new URLSearchParams(query), { signal });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) throw new Error((data && data.error) || response.status + " " + response.statusText);
    return data;
  }

  async function load(fen, signal) {
    try {
      const data = await getJson("/api/position", { fen }, signal);
      if (signal.aborted) return;
      state.data = data;
      current().fen = data.fen;  // the server's own writing of it
      $("fen").value = data.fen;
      history.replaceState(history.state, "", address(data.fen));
      $("board").hidden = false;
      drawBoard();
      render(data);
      if (!data.tablebase && !data.status) {
        setText("search", "searching…");
        let found;
        try {
          found = await getJson("/api/search", { fen }, signal);  // the server's --search-ms
        } catch (error) {
          // The position stands (its board, verdict and moves): only the search failed, a busy server say.
          if (error.name !== "AbortError") setText("search", "search failed: " + String(error.message || error));
          return;
        }
        renderSearch(found);
      }
    } catch (error) {
      if (error.name === "AbortError") return;
      $("board").hidden = true;  // no board for a position the server refused: the error says why
      setText("verdict", "");
      setText("search", "");
      setText("error", String(error.message || error));
    }
  }

  function side(turn) { return turn === "white" ? "White" : "Black"; }

  // Lichess's five kinds of result, each with a colour of its own (explorer.css).
  const KIND = { "win": "win", "syzygy-win": "cursed", "maybe-win": "cursed", "cursed-win": "cursed", "draw": "draw",
    "blessed-loss": "blessed", "syzygy-loss": "blessed", "maybe-loss": "blessed", "loss": "loss" };

  function render(data) {
    let verdict = side(data.turn) + " to move: ";
    if (data.verdict) {
      const v = data.verdict;
      verdict += v.category + " (" + v.class + ", DTZ " + v.dtz + ", halfmove clock " + v.halfmove_clock + ")";
    } else {
      verdict += "beyond the tables (" + data.not_covered + ")";
    }
    if (data.status) verdict += "; " + data.status;
    setText("verdict", verdict);
    const body = $("moves").tBodies[0];
    const rows = data.moves.map((move) => {
      const row = document.createElement("tr");
      row.dataset.uci = move.uci;
      row.className = move.category ? KIND[move.category] : "beyond";
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = move.san;
      button.addEventListener("click", () => play(move.fen, move.uci));
      const cells = [button, move.category || "no table", move.dtz === undefined || move.dtz === null ? "–" :
        String(move.dtz), move.class || "–"];
      for (const content of cells) {
        const cell = document.createElement("td");
        if (typeof content === "string") cell.textContent = content; else cell.appendChild(content);
        row.appendChild(cell);
      }
      if (move.beyond) row.title = "no table covers the position after it: " + move.beyond;
      return row;
    });
    body.replaceChildren(...rows);
  }

  function renderSearch(found) {
    let score = "";
    if (found.score) score = found.score.mate !== undefined ? "mate " + found.score.mate : "cp " + found.score.cp;
    const line = found.pv.map((m) => m.san).join(" ");
    setText("search", "search: " + (found.san || "-") + ", score " + score + " (side to move), depth " + found.depth +
      ", " + found.nodes + " nodes, " + found.time_ms + " ms; line: " + line);
    // The searcher's move gets its score in the list, where no table says more.
    const row = found.move && document.querySelector('#moves tbody tr[data-uci="' + found.move + '"].beyond');
    if (row) row.cells[1].textContent = "search: " + score;
  }

  function squareAt(event) {
    const img = $("board");
    const scale = SVG_SIZE / img.clientWidth;
    const x = event.offsetX * scale - SVG_MARGIN, y = event.offsetY * scale - SVG_MARGIN;
    if (x < 0 || y < 0 || x >= 8 * SVG_SQUARE || y >= 8 * SVG_SQUARE) return null;
    let file = Math.floor(x / SVG_SQUARE), rank = 7 - Math.floor(y / SVG_SQUARE);
    if (state.orientation === "black") { file = 7 - file; rank = 7 - rank; }
    return FILES[file] + (rank + 1);
  }

  function clickBoard(event) {
    const data = state.data;
    const square = squareAt(event);
    if (!data || !square) return;
    if (state.selected) {
      const moves = data.moves.filter((m) => m.from === state.selected && m.to === square);
      if (moves.length) {
        const move = moves.find((m) => m.promotion === "q") || moves[0];
        play(move.fen, move.uci);
        return;
      }
    }
    state.selected = data.moves.some((m) => m.from === square) && state.selected !== square ? square : null;
    drawBoard();
  }

  function init() {
    $("back").addEventListener("click", () => step(-1));
    $("forward").addEventListener("click", () => step(1));
    $("flip").addEventListener("click", () => {
      state.orientation = state.orientation === "white" ? "black" : "white";
      drawBoard();
    });
    $("board").addEventListener("click", clickBoard);
    $("fen-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const fen = $("fen").value.trim();
      if (fen) play(fen, null);
    });
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLInputElement) return;
      if (event.key === "ArrowLeft") step(-1);
      else if (event.key === "ArrowRight") step(1);
      else if (event.key === "f") $("flip").click();
    });
    // The browser's Back and Forward, and a new position in the address (a pasted link).
    window.addEventListener("popstate", revisit);
    window.addEventListener("hashchange", () => revisit({ state: history.state }));
    play(fenFromAddress() || START, null, "replace");
  }

  init();
})();
