// The chess-endgame training page: drills against tough perfect defence (/api/train/*), the board from
// /board.svg, the legal moves from /api/position. The page keeps the drill (its start and the moves played) and
// sends it with every request. Every text from the server goes into the page with textContent, never as HTML.
"use strict";
(() => {
  const SVG_SIZE = 390, SVG_MARGIN = 15, SVG_SQUARE = 45;
  const FILES = "abcdefgh";
  const STORE = "chess-endgame-train";
  const $ = (id) => document.getElementById(id);
  // moves: every move since the start (the user's and the program's); marks: how many there were before each of
  // the user's moves (a take-back returns there); fens: the position before each of the user's moves, and now.
  const state = { drill: null, moves: [], marks: [], fens: [], fen: null, legal: [], selected: null,
    pressed: null, lastmove: null, over: false, busy: false, counted: false };
  const PIECES = { q: "queen", n: "knight", r: "rook", b: "bishop" };  // Lichess's order of the choice

  function setText(id, text) { $(id).textContent = text; }

  async function getJson(path, query) {
    const response = await fetch(path + "?" + new URLSearchParams(query));
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) throw new Error((data && data.error) || response.status + " " + response.statusText);
    return data;
  }

  // -- progress, kept in this browser ------------------------------------------------------------------------
  function progress() {
    try { return JSON.parse(localStorage.getItem(STORE)) || {}; } catch (e) { return {}; }
  }

  function count(name, field) {
    const all = progress();
    const entry = all[name] || { attempts: 0, successes: 0 };
    entry[field] += 1;
    all[name] = entry;
    try { localStorage.setItem(STORE, JSON.stringify(all)); } catch (e) { /* storage full or off: not kept */ }
    renderProgress();
  }

  function renderProgress() {
    const rows = Object.entries(progress()).map(([name, entry]) => {
      const row = document.createElement("tr");
      for (const text of [name, String(entry.attempts), String(entry.successes)]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.appendChild(cell);
      }
      return row;
    });
    $("progress").tBodies[0].replaceChildren(...rows);
  }

  // -- the board -----------------------------------------------------------------------------------------------
  function drawBoard() {
    const query = { fen: state.fen, orientation: state.drill ? state.drill.side : "white" };
    if (state.lastmove) query.lastmove = state.lastmove;
    if (state.selected) query.selected = state.selected;
    $("board").src = "/board.svg?" + new URLSearchParams(query);
  }

  function squareAt(event) {
    const img = $("board");
    const rect = img.getBoundingClientRect();
    const scale = SVG_SIZE / rect.width;
    const x = (event.clientX - rect.left) * scale - SVG_MARGIN, y = (event.clientY - rect.top) * scale - SVG_MARGIN;
    if (x < 0 || y < 0 || x >= 8 * SVG_SQUARE || y >= 8 * SVG_SQUARE) return null;
    let file = Math.floor(x / SVG_SQUARE), rank = 7 - Math.floor(y / SVG_SQUARE);
    if (state.drill && state.drill.side === "black") { file = 7 - file; rank = 7 - rank; }
    return FILES[file] + (rank + 1);
  }

  // The move from one square to another: played at once, or, for a promotion, after the piece is chosen (the
  // Saavedra's c8=R is a rook). False when no move goes there.
  function moveFromTo(from, to) {
    const moves = state.legal.filter((m) => m.from === from && m.to === to);
    if (!moves.length) return false;
    if (moves.length === 1) { userMove(moves[0].uci); return true; }
    const order = Object.keys(PIECES);
    moves.sort((a, b) => order.indexOf(a.promotion) - order.indexOf(b.promotion));
    const buttons = moves.map((m) => {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.uci = m.uci;
      button.textContent = PIECES[m.promotion] || m.promotion;
      button.addEventListener("click", () => { hidePromotion(); userMove(m.uci); });
      return button;
    });
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.textContent = "cancel";
    cancel.addEventListener("click", () => { hidePromotion(); state.selected = null; drawBoard(); });
    const label = document.createElement("span");
    label.textContent = "promote to:";
    $("promotion").replaceChildren(label, ...buttons, cancel);
    $("promotion").hidden = false;
    return true;
  }

  function hidePromotion() {
    $("promotion").hidden = true;
    $("promotion").replaceChildren();
  }

  // A press on one of your pieces picks it; a release (after a drag) or a second click on a square moves it.
  function press(event) {
    if (state.busy || state.over || !state.drill) return;
    const square = squareAt(event);
    if (!square) return;
    hidePromotion();
    if (state.selected && square !== state.selected && moveFromTo(state.selected, square)) return;
    state.selected = state.legal.some((m) => m.from === square) ? square : null;
    state.pressed = state.selected;
    drawBoard();
  }

  function release(event) {
    const from = state.pressed;
    state.pressed = null;
    if (!from || state.busy || state.over) return;
    const square = squareAt(event);
    if (square && square !== from) moveFromTo(from, square);
  }

  // -- the drill -----------------------------------------------------------------------------------------------
  function query(extra) {
    return Object.assign({ fen: state.drill.fen, moves: state.moves.join(" "), seed: state.drill.seed }, extra);
  }

  async function loadLegal() {
    state.legal = [];
    const data = await getJson("/api/position", { fen: state.fen });
    state.legal = data.moves.filter((m) => m.from);
  }

  function goalText() {
    const d = state.drill;
    return d.name + ": you play " + d.side + ", " + (d.goal === "win" ? "win" : "hold the draw") +
      (d.description ? ". " + d.description : "");
  }

  async function newDrill(event) {
    if (event) event.preventDefault();
    const choice = $("drill").value;
    const params = { seed: String(Math.floor(Math.random() * 1e9)) };
    if (choice === "material") {
      Object.assign(params, { material: $("material").value.trim(), difficulty: $("difficulty").value,
        side: $("side").value });
    } else {
      params.classic = choice;
    }
    setText("error", "");
    setText("verdict", "…");
    setText("detail", "");
    try {
      state.busy = true;
      const drill = await getJson("/api/train/new", params);
      hidePromotion();
      Object.assign(state, { drill, moves: [], marks: [], fens: [drill.fen], fen: drill.fen, selected: null,
        lastmove: null, over: false, counted: false });
      setText("goal", goalText());
      setText("verdict", "your move");
      count(drill.name, "attempts");
      drawBoard();
      await loadLegal();
    } catch (error) {
      setText("verdict", "");
      setText("error", String(error.message || error));
    } finally {
      state.busy = false;
    }
  }

  function say(feedback) {
    if (feedback.verdict === "kept") {
      const margin = feedback.spare === null ? "" : " (" + feedback.spare + " plies to spare before the 50-move draw)";
      return feedback.move + ": " + feedback.after + " kept" + margin;
    }
    return feedback.move + (feedback.verdict === "spent" ? "?! " : "?? ") + feedback.reason;
  }

  async function userMove(uci) {
    state.busy = true;
    state.selected = null;
    setText("error", "");
    try {
      const data = await getJson("/api/train/move", query({ move: uci }));
      const f = data.feedback;
      state.marks.push(state.moves.length);
      state.moves.push(uci);
      if (data.reply) state.moves.push(data.reply);
      state.fen = data.fen;
      state.fens.push(data.fen);
      state.lastmove = data.reply || uci;
      state.over = data.over;
      setText("verdict", say(f) + (f.reply ? "; reply " + f.reply : ""));
      setText("detail", f.verdict === "kept" ? "" : "best was " + f.best + ": " + f.line.join(" ") +
        " (take back to try again)");
      if (data.over) {
        const success = state.drill.goal === "win" ? data.result === "won" : data.result !== "lost";
        setText("goal", goalText() + " — " + data.result + (success ? ": goal reached" : ": goal missed"));
        // One success an attempt: a goal reached again after a take-back is not counted twice.
        if (success && !state.counted) {
          count(state.drill.name, "successes");
          state.counted = true;
        }
      }
      drawBoard();
      if (!data.over) await loadLegal();
    } catch (error) {
      setText("error", String(error.message || error));
      drawBoard();
    } finally {
      state.busy = false;
    }
  }

  async function showBest() {
    if (!state.drill || state.over) return;
    try {
      const data = await getJson("/api/train/hint", query({}));
      setText("detail", "best: " + data.move);
      state.selected = data.uci.slice(0, 2);
      drawBoard();
    } catch (error) {
      setText("error", String(error.message || error));
    }
  }

  async function takeBack() {
    if (!state.drill || !state.marks.length || state.busy) return;
    hidePromotion();
    state.fens.pop();
    state.moves.splice(state.marks.pop());  // the user's last move and the program's reply to it
    Object.assign(state, { fen: state.fens[state.fens.length - 1], selected: null, lastmove: null, over: false });
    setText("goal", goalText());
    setText("verdict", "taken back: your move");
    setText("detail", "");
    drawBoard();
    await loadLegal();
  }

  async function init() {
    try {
      for (const classic of await getJson("/api/train/classics", {})) {
        const option = document.createElement("option");
        option.value = classic.name;
        option.textContent = classic.name + " (" + classic.goal + ")";
        $("drill").appendChild(option);
      }
    } catch (error) {
      setText("error", String(error.message || error));
    }
    $("drill").addEventListener("change", () => { $("material-label").hidden = $("drill").value !== "material"; });
    $("setup").addEventListener("submit", newDrill);
    $("board").addEventListener("pointerdown", press);
    $("board").addEventListener("pointerup", release);
    $("board").addEventListener("dragstart", (event) => event.preventDefault());
    $("hint").addEventListener("click", showBest);
    $("undo").addEventListener("click", takeBack);
    renderProgress();
    await newDrill(null);
  }

  init();
})();
