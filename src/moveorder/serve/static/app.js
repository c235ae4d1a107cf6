// moveorder's page: a position to order (placed on the board or loaded from an SGF), its answer stepped
// through move by move, and a results folder's runs. The server does every check and every search; this
// file draws boards and talks to /api. No build step, no library.
"use strict";

const COLUMNS = "ABCDEFGHJKLMNOPQRST";
const SIZE = 19;
const CELL = 30;
const MARGIN = 32;
const SVGNS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

// ---- board drawing -------------------------------------------------------------------------------------

function vertex(row, col) { return COLUMNS[col] + (SIZE - row); }

function parseVertex(text) {
  const col = COLUMNS.indexOf(text[0]);
  const row = SIZE - parseInt(text.slice(1), 10);
  return [row, col];
}

function el(name, attrs, parent) {
  const node = document.createElementNS(SVGNS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function xy(row, col) { return [MARGIN + col * CELL, MARGIN + row * CELL]; }

// An empty board as SVG: lines, star points, coordinates. `onClick(row, col)` for a board one can edit.
function emptyBoard(container, onClick) {
  container.textContent = "";
  const span = (SIZE - 1) * CELL + 2 * MARGIN;
  const svg = el("svg", { viewBox: `0 0 ${span} ${span}`, class: "goban", role: "img" }, container);
  el("rect", { x: 0, y: 0, width: span, height: span, class: "wood" }, svg);
  for (let k = 0; k < SIZE; k++) {
    const [x0, y0] = xy(k, 0), [x1] = xy(k, SIZE - 1);
    el("line", { x1: x0, y1: y0, x2: x1, y2: y0, class: "grid" }, svg);
    const [cx, cy0] = xy(0, k), [, cy1] = xy(SIZE - 1, k);
    el("line", { x1: cx, y1: cy0, x2: cx, y2: cy1, class: "grid" }, svg);
    const label = el("text", { x: cx, y: MARGIN - 16, class: "coord" }, svg);
    label.textContent = COLUMNS[k];
    const label2 = el("text", { x: cx, y: span - MARGIN + 22, class: "coord" }, svg);
    label2.textContent = COLUMNS[k];
    const row = el("text", { x: MARGIN - 18, y: y0 + 4, class: "coord" }, svg);
    row.textContent = String(SIZE - k);
    const row2 = el("text", { x: span - MARGIN + 18, y: y0 + 4, class: "coord" }, svg);
    row2.textContent = String(SIZE - k);
  }
  for (const r of [3, 9, 15]) for (const c of [3, 9, 15]) {
    const [x, y] = xy(r, c);
    el("circle", { cx: x, cy: y, r: 3.2, class: "star" }, svg);
  }
  const stones = el("g", { class: "stones" }, svg);
  if (onClick) {
    svg.classList.add("editable");
    svg.addEventListener("click", (event) => {
      const point = svg.createSVGPoint();
      point.x = event.clientX; point.y = event.clientY;
      const p = point.matrixTransform(svg.getScreenCTM().inverse());
      const col = Math.round((p.x - MARGIN) / CELL), row = Math.round((p.y - MARGIN) / CELL);
      if (row >= 0 && row < SIZE && col >= 0 && col < SIZE) onClick(row, col);
    });
  }
  return stones;
}

function drawStone(layer, row, col, colour, attrs) {
  const [x, y] = xy(row, col);
  const g = el("g", Object.assign({ class: `stone ${colour === "B" ? "black" : "white"}`, "data-point": vertex(row, col),
    "data-colour": colour }, attrs || {}), layer);
  el("circle", { cx: x, cy: y, r: CELL / 2 - 1 }, g);
  return g;
}

// The figure of an order (the server's figure_data) up to move `step`, as a Go book draws it: each point
// numbered with its first move, numbers in the stone's contrasting colour, moves off the game's number
// ringed red, moves in doubt ringed purple and dashed, their numbers in purple italics; points played again go
// to the notes ("20 = 112"). `step` 0 shows the empty board.
function drawFigure(container, figure, step) {
  const layer = emptyBoard(container);
  for (const s of figure.stones) {
    if (s.number > step) continue;
    const g = drawStone(layer, s.row, s.col, s.colour,
      { "data-number": s.number, "data-mismatch": s.mismatch ? "1" : "0", "data-doubt": s.doubt ? "1" : "0" });
    const [x, y] = xy(s.row, s.col);
    if (s.mismatch) el("circle", { cx: x, cy: y, r: CELL / 2 + 1.5, class: "mismatch" }, g);
    if (s.doubt) el("circle", { cx: x, cy: y, r: s.mismatch ? CELL / 2 - 3 : CELL / 2 + 1.5, class: "doubt" }, g);
    const text = el("text", { x: x, y: y + 4.5,
      class: `number len${String(s.number).length}` + (s.doubt ? " doubtful" : "") }, g);
    text.textContent = String(s.number);
    if (s.number === step) g.classList.add("last");
  }
  const notes = [];
  for (const n of figure.notes) {
    const shown = n.numbers.filter((k) => k <= step);
    if (shown.length > 1) notes.push({ text: shown.join(" = "), mismatch: n.mismatch, last: shown.includes(step) });
  }
  return notes;
}

function showNotes(target, notes) {
  target.textContent = "";
  notes.forEach((n, k) => {
    const span = document.createElement("span");
    span.className = "note" + (n.mismatch ? " mismatch" : "") + (n.last ? " last" : "");
    span.textContent = n.text;
    target.appendChild(span);
    if (k < notes.length - 1) target.appendChild(document.createTextNode(", "));
  });
  if (notes.length) target.insertBefore(document.createTextNode("Points played again: "), target.firstChild);
}

// ---- talking to the server -----------------------------------------------------------------------------

async function api(method, path, body) {
  const options = { method: method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (err) { data = null; }
  if (!response.ok) {
    const error = new Error((data && data.error) || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

// `api`, its refusal shown in `box` (null then).
async function attempt(box, method, path, body) {
  try {
    return await api(method, path, body);
  } catch (err) {
    showError(box, err.message);
    return null;
  }
}

function showError(target, message) {
  target.textContent = message || "";
  target.hidden = !message;
}

// ---- the position view ---------------------------------------------------------------------------------

const state = {
  stones: new Map(),   // "row,col" -> "B" | "W": the position being edited
  record: null,        // a loaded game record: { sgf, name, moves, total }
  loaded: null,        // a loaded file of setup stones: { sgf, name } until the stones are edited
  answer: null,        // the server's answer
  shown: 0,            // the order shown (0: the best, k: alternative k + 1)
  step: 0,
  job: null,           // the running search's id
  nextColour: "B",
};

function key(row, col) { return `${row},${col}`; }

function drawPosition() {
  const layer = emptyBoard($("board-main"), editPoint);
  for (const [k, colour] of state.stones) {
    const [row, col] = k.split(",").map(Number);
    drawStone(layer, row, col, colour);
  }
  const black = [...state.stones.values()].filter((c) => c === "B").length;
  const white = state.stones.size - black;
  $("counts").textContent = `${black} black and ${white} white stones` +
    (state.record ? ` (a game record of ${state.record.total} moves)` : "");
  $("caption-main").textContent = state.record
    ? `${state.record.name}: the position after move ${state.record.moves}`
    : (state.loaded ? `${state.loaded.name}: setup stones` : "The position: click to place or remove stones, or load an SGF");
  $("stepper").hidden = true;
  $("figure-game").hidden = true;
  $("notes").textContent = "";
}

function editPoint(row, col) {
  if (state.answer || state.job) return;
  const k = key(row, col);
  if (state.stones.has(k)) {
    state.stones.delete(k);
  } else {
    const tool = document.querySelector("input[name=tool]:checked").value;
    const colour = tool === "alternate" ? state.nextColour : tool;
    state.stones.set(k, colour);
    state.nextColour = colour === "B" ? "W" : "B";
  }
  state.record = null;   // an edited position is setup stones, whatever it was loaded from
  state.loaded = null;
  $("record-row").hidden = true;
  setPrisonersEditable(true);
  showError($("error"), "");
  drawPosition();
}

function setPrisonersEditable(editable) {
  $("prisoners-b").disabled = !editable;
  $("prisoners-w").disabled = !editable;
}

function sgfPoint(row, col) { return String.fromCharCode(97 + col) + String.fromCharCode(97 + row); }

// The position being edited as an SGF of setup stones, as a player would write it by hand.
function setupSgf() {
  const black = [], white = [];
  for (const [k, colour] of state.stones) {
    const [row, col] = k.split(",").map(Number);
    (colour === "B" ? black : white).push(`[${sgfPoint(row, col)}]`);
  }
  let text = "(;GM[1]FF[4]SZ[19]";
  if (black.length) text += "AB" + black.join("");
  if (white.length) text += "AW" + white.join("");
  return text + ")";
}

// What the server is asked about: the loaded file as it is (a record with its move number), or setup stones.
function positionBody() {
  const body = {};
  if (state.record) {
    Object.assign(body, { sgf: state.record.sgf, name: state.record.name, moves: state.record.moves });
  } else if (state.loaded) {
    Object.assign(body, { sgf: state.loaded.sgf, name: state.loaded.name });
  } else {
    Object.assign(body, { sgf: setupSgf(), name: "position.sgf" });
  }
  if (!state.record) {
    const b = $("prisoners-b").value.trim(), w = $("prisoners-w").value.trim();
    if ((b && b !== "0") || (w && w !== "0")) body.prisoners = [Number(b || 0), Number(w || 0)];
  }
  const komi = $("komi").value.trim();
  const fileKomi = state.record || state.loaded ? state.fileKomi : undefined;   // none for stones placed here
  if (komi !== "" && Number(komi) !== fileKomi) body.komi = Number(komi);
  return body;
}

async function loadSgf(text, name, moves) {
  showError($("error"), "");
  const body = { sgf: text, name: name || "position.sgf" };
  if (moves !== undefined) body.moves = moves;
  const data = await attempt($("error"), "POST", "/api/position", body);
  if (!data) return;
  clearAnswer();
  state.stones = new Map();
  for (const v of data.black) state.stones.set(key(...parseVertex(v)), "B");
  for (const v of data.white) state.stones.set(key(...parseVertex(v)), "W");
  state.record = data.record_moves ? { sgf: text, name: body.name, moves: data.moves, total: data.record_moves } : null;
  state.loaded = data.record_moves ? null : { sgf: text, name: body.name };
  state.fileKomi = data.komi === null ? null : Number(data.komi);
  $("komi").value = data.komi === null ? "" : data.komi;
  $("prisoners-b").value = data.prisoners[0];
  $("prisoners-w").value = data.prisoners[1];
  setPrisonersEditable(!state.record);
  $("record-row").hidden = !state.record;
  if (state.record) {
    $("moves").max = state.record.total;
    $("moves").value = state.record.moves;
    const players = data.players.filter(Boolean).join(" (B) - ") + (data.players[1] ? " (W)" : "");
    $("record-info").textContent = `of ${state.record.total}` + (players ? `; ${players}` : "");
  }
  drawPosition();
}

function readFile(file) {
  if (!file) return;
  if (file.size > info.limits.sgf_bytes) {
    showError($("error"), `${file.name}: ${file.size.toLocaleString("en")} bytes: the one-position tool reads an SGF ` +
      `of at most ${info.limits.sgf_bytes.toLocaleString("en")} bytes`);
    return;
  }
  const reader = new FileReader();
  reader.onload = () => loadSgf(String(reader.result), file.name);
  reader.readAsText(file);
}

// The answer's panel shown (editing the stones off) or hidden (editing on).
function answerShown(shown) {
  $("answer").hidden = !shown;
  $("edit").hidden = !shown;
  $("ask").hidden = shown;
  $("tools").classList.toggle("disabled", shown);
}

function clearAnswer() {
  state.answer = null;
  state.shown = 0;
  answerShown(false);
}

async function ask() {
  showError($("error"), "");
  const body = Object.assign(positionBody(), {
    quality: $("quality").value,
    network: $("network").value,
    alternatives: Number($("alternatives").value || 1),
  });
  const job = await attempt($("error"), "POST", "/api/jobs", body);
  if (!job) return;
  state.job = job.job;
  $("ask").disabled = true;
  $("cancel").hidden = false;
  $("progress-box").hidden = false;
  $("progress").value = 0;
  $("status").textContent = job.place ? waiting(job.place) : "searching...";
  poll(job.job);
}

function waiting(place) {
  return `waiting: ${place} search${place > 1 ? "es" : ""} before yours`;
}

async function poll(id) {
  while (state.job === id) {
    let data;
    try {
      data = await api("GET", `/api/jobs/${id}`);
    } catch (err) {
      finishJob();
      showError($("error"), err.message);
      return;
    }
    if (data.state === "queued") {
      $("status").textContent = waiting(data.place);
    } else if (data.state === "running") {
      $("progress").value = data.fraction;
      $("status").textContent = `searching... ${Math.round(100 * data.fraction)}%`;
    } else {
      finishJob();
      if (data.state === "done") showAnswer(data.answer, id);
      else if (data.state === "cancelled") $("status").textContent = "cancelled";
      else showError($("error"), data.error);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

function finishJob() {
  state.job = null;
  $("ask").disabled = false;
  $("cancel").hidden = true;
  $("progress-box").hidden = true;
}

async function cancel() {
  const id = state.job;
  if (!id) return;
  finishJob();
  $("progress-box").hidden = false;
  $("status").textContent = "cancelled";
  try { await api("DELETE", `/api/jobs/${id}`); } catch (err) { /* finished meanwhile */ }
}

function showAnswer(answer, id) {
  state.answer = answer;
  state.shown = 0;
  answerShown(true);
  const n = answer.orders[0].figure.moves;
  $("summary").textContent = `The likeliest order found: ${n} moves, LGM ${answer.lgm.toFixed(4)} ` +
    `(${answer.seconds.toFixed(1)} s).`;
  $("comparison").textContent = answer.comparison || "";
  $("confidence").textContent = answer.confidence.charAt(0).toUpperCase() + answer.confidence.slice(1) + ".";
  $("doubt-legend").hidden = !(answer.orders[0].figure.doubt || []).length;
  $("doubt-text").textContent = `dashed purple: ${answer.doubt_legend}`;
  const body = $("alternatives-table").tBodies[0];
  body.textContent = "";
  const best = answer.orders[0].order;
  answer.orders.forEach((o, k) => {
    const tr = document.createElement("tr");
    tr.dataset.index = k;
    let leaves = 0;
    while (leaves < best.length && o.order[leaves] === best[leaves]) leaves++;
    const cells = [k === 0 ? "the best" : `alternative ${k + 1}`, k === 0 ? "1" : `x${o.relative.toPrecision(4)}`,
      o.lgm.toFixed(4), k === 0 ? "" : `move ${leaves + 1}`];
    for (const c of cells) { const td = document.createElement("td"); td.textContent = c; tr.appendChild(td); }
    tr.addEventListener("click", () => selectOrder(k));
    body.appendChild(tr);
  });
  $("lines").textContent = answer.lines.join("\n");
  for (const kind of ["sgf", "svg", "png"]) $(`download-${kind}`).href = `/api/jobs/${id}/${kind}`;
  $("download-sgf").setAttribute("download", `${answer.name}-ordered.sgf`);
  $("download-svg").setAttribute("download", `${answer.name}-order.svg`);
  $("download-png").setAttribute("download", `${answer.name}-order.png`);
  $("figure-game").hidden = !answer.actual;
  $("stepper").hidden = false;
  $("step").max = n;
  selectOrder(0);
  setStep(n);
  $("board-main").focus();
}

function selectOrder(k) {
  state.shown = k;
  for (const tr of $("alternatives-table").tBodies[0].rows) tr.classList.toggle("selected", Number(tr.dataset.index) === k);
  $("caption-main").textContent = k === 0 ? "The inferred order" : `Alternative ${k + 1}`;
  setStep(state.step);
}

function setStep(step) {
  if (!state.answer) return;
  const n = state.answer.orders[0].figure.moves;
  state.step = Math.max(0, Math.min(n, step));
  $("step").value = state.step;
  $("step-label").textContent = `move ${state.step} of ${n}`;
  const notes = drawFigure($("board-main"), state.answer.orders[state.shown].figure, state.step);
  showNotes($("notes"), notes);
  if (state.answer.actual) drawFigure($("board-game"), state.answer.actual, state.step);
}

// ---- the run view --------------------------------------------------------------------------------------

const run = { rows: [], sortKey: "id", ascending: true, boards: null, step: 0, name: "" };

async function loadRuns() {
  const data = await attempt($("run-error"), "GET", "/api/runs");
  if (!data) return;
  const select = $("runs");
  select.textContent = "";
  for (const r of data.runs) {
    const option = document.createElement("option");
    option.value = r.run;
    option.textContent = `${r.set}, ${r.n} moves: ${r.network} / ${r.label}`;
    select.appendChild(option);
  }
  $("run-info").textContent = data.runs.length ? `${data.runs.length} runs in ${data.folder}` : `no inference runs in ${data.folder}`;
  if (data.runs.length) openRun(data.runs[0].run);
}

async function openRun(name) {
  showError($("run-error"), "");
  const data = await attempt($("run-error"), "GET", `/api/runs/table?run=${encodeURIComponent(name)}`);
  if (!data) return;
  run.rows = data.rows;
  run.name = name;
  const exact = data.rows.filter((r) => r.exact_match).length;
  const stated = data.rows.filter((r) => r.chance !== null);
  const mean = stated.reduce((sum, r) => sum + r.chance, 0) / Math.max(1, stated.length);
  $("run-info").textContent = `${data.rows.length} arrangements, ${exact} exact` +
    (stated.length ? ` (the answers stated ${Math.round(mean * 100)}% on average)` : "") +
    (data.scored_by ? `; losses by KataGo ${data.scored_by}` : "; not scored by KataGo");
  $("run-boards").hidden = true;
  drawTable();
}

function fmt(value, digits) {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "number" && !Number.isInteger(value)) return value.toFixed(digits);
  return String(value);
}

function drawTable() {
  const key = run.sortKey, sign = run.ascending ? 1 : -1;
  const rows = [...run.rows].sort((a, b) => {
    const x = a[key], y = b[key];
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * sign;
  });
  for (const th of $("run-table").tHead.rows[0].cells) {
    th.classList.toggle("sorted", th.dataset.key === key);
    th.dataset.direction = th.dataset.key === key ? (run.ascending ? "ascending" : "descending") : "";
  }
  const body = $("run-table").tBodies[0];
  body.textContent = "";
  for (const r of rows) {
    const tr = document.createElement("tr");
    tr.dataset.id = r.id;
    const values = [r.id, r.set, r.n, fmt(r.actual_lgm, 4), r.found ? fmt(r.lgm, 4) : "none found",
      fmt(r.exact_match), r.chance === null ? "" : `${Math.round(r.chance * 100)}%`, r.matching_prefix, r.matching_moves, fmt(r.loss_actual, 3), fmt(r.loss_inferred, 3)];
    for (const v of values) { const td = document.createElement("td"); td.textContent = v; tr.appendChild(td); }
    if (r.exact_match) tr.classList.add("exact");
    tr.addEventListener("click", () => openBoards(r.id));
    body.appendChild(tr);
  }
}

async function openBoards(id) {
  const data = await attempt($("run-error"), "GET", `/api/runs/boards?run=${encodeURIComponent(run.name)}&id=${encodeURIComponent(id)}`);
  if (!data) return;
  run.boards = data;
  for (const tr of $("run-table").tBodies[0].rows) tr.classList.toggle("selected", tr.dataset.id === id);
  $("run-boards").hidden = false;
  $("run-step").max = data.actual.moves;
  const r = data.row;
  $("run-summary").textContent = `${r.id} (${r.source}): ${r.exact_match ? "the exact order" :
    `${r.matching_moves} of ${r.n} moves at the game's own number, the first ${r.matching_prefix} in a row`}; ` +
    `LGM inferred ${r.found ? r.lgm.toFixed(4) : "(none found)"}, actual ${r.actual_lgm.toFixed(4)}.`;
  setRunStep(data.actual.moves);
}

function setRunStep(step) {
  if (!run.boards) return;
  const n = run.boards.actual.moves;
  run.step = Math.max(0, Math.min(n, step));
  $("run-step").value = run.step;
  $("run-step-label").textContent = `move ${run.step} of ${n}`;
  drawFigure($("board-run-actual"), run.boards.actual, run.step);
  if (run.boards.inferred) drawFigure($("board-run-inferred"), run.boards.inferred, run.step);
  else emptyBoard($("board-run-inferred"));
}

// ---- wiring --------------------------------------------------------------------------------------------

let info = null;

function showView(name) {
  $("view-position").hidden = name !== "position";
  $("view-run").hidden = name !== "run";
  $("tab-position").classList.toggle("active", name === "position");
  $("tab-run").classList.toggle("active", name === "run");
}

function onKey(event) {
  const tag = (event.target.tagName || "").toLowerCase();
  if (tag === "input" && event.target.type !== "range" || tag === "textarea" || tag === "select") return;
  const inRun = !$("view-run").hidden;
  const current = inRun ? run.step : state.step;
  const set = inRun ? setRunStep : setStep;
  const moves = { ArrowLeft: current - 1, ArrowRight: current + 1, Home: 0, End: 1e9 };
  if (event.key in moves) {
    set(moves[event.key]);
    event.preventDefault();
  }
}

async function start() {
  info = await api("GET", "/api/info");
  for (const [name, text] of Object.entries(info.qualities)) {
    const option = document.createElement("option");
    option.value = name;
    option.textContent = `${name}: ${text}`;
    if (name === info.quality) option.selected = true;
    $("quality").appendChild(option);
  }
  for (const name of info.networks) {
    const option = document.createElement("option");
    option.value = option.textContent = name;
    if (name === info.network) option.selected = true;
    $("network").appendChild(option);
  }
  $("alternatives").max = info.limits.alternatives;
  $("footer").textContent = `moveorder ${info.version}`;
  $("tab-run").hidden = !info.results;
  $("tab-position").addEventListener("click", () => showView("position"));
  $("tab-run").addEventListener("click", () => { showView("run"); if (!run.name) loadRuns(); });
  $("file").addEventListener("change", (e) => { readFile(e.target.files[0]); e.target.value = ""; });
  const drop = $("board-main");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    if (!state.job) readFile(e.dataTransfer.files[0]);
  });
  $("load-paste").addEventListener("click", () => loadSgf($("paste").value, "pasted.sgf"));
  $("moves").addEventListener("change", () => {   // an emptied field is no move number yet
    const text = $("moves").value.trim();
    if (state.record && text !== "") loadSgf(state.record.sgf, state.record.name, Number(text));
  });
  $("clear").addEventListener("click", () => {
    if (state.job) return;
    clearAnswer();
    Object.assign(state, { stones: new Map(), record: null, loaded: null, nextColour: "B" });
    $("record-row").hidden = true;
    $("prisoners-b").value = 0; $("prisoners-w").value = 0;
    setPrisonersEditable(true);
    showError($("error"), "");
    drawPosition();
  });
  $("ask").addEventListener("click", ask);
  $("cancel").addEventListener("click", cancel);
  $("edit").addEventListener("click", () => { clearAnswer(); drawPosition(); });
  $("step").addEventListener("input", (e) => setStep(Number(e.target.value)));
  for (const [id, delta] of [["prev", -1], ["next", 1]]) $(id).addEventListener("click", () => setStep(state.step + delta));
  $("first").addEventListener("click", () => setStep(0));
  $("last").addEventListener("click", () => setStep(1e9));
  $("runs").addEventListener("change", (e) => openRun(e.target.value));
  $("run-step").addEventListener("input", (e) => setRunStep(Number(e.target.value)));
  $("run-prev").addEventListener("click", () => setRunStep(run.step - 1));
  $("run-next").addEventListener("click", () => setRunStep(run.step + 1));
  for (const th of $("run-table").tHead.rows[0].cells) {
    th.addEventListener("click", () => {
      run.ascending = run.sortKey === th.dataset.key ? !run.ascending : true;
      run.sortKey = th.dataset.key;
      drawTable();
    });
  }
  document.addEventListener("keydown", onKey);
  drawPosition();
  if (location.hash === "#run" && info.results) { showView("run"); loadRuns(); }
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((err) => showError($("error"), `the page could not start: ${err.message}`));
});
