// iolab console: one page, hash routes, plain DOM (no framework, no build step, no CDN).
// Every value from the server goes into the page as text (textContent), never as HTML.
"use strict";

// The commands, their options and each option's choices come from the server
// (GET /api/form: src/serve/forms.rs, read from the command line's own definitions).
// Placeholders of the free-text options:
const HINTS = {
  duration: "5s", ramp: "500ms", repeat: "3 or auto", size: "e.g. 256M", bs: "4K",
  iodepth: "1..1024", jobs: "1", rw: "e.g. randread,randwrite", sizes: "1,cluster,cluster+1,64K",
  "latency-limit": "10ms", "max-depth": "", "step-duration": "5s", span: "percent",
  time: "e.g. 2m", recovery: "e.g. 30s,2m",
};

// ---- small helpers ----
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "className") e.className = v;
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const $ = (sel) => document.querySelector(sel);
function show(...nodes) {
  const m = $("#main");
  m.replaceChildren(...nodes);
}
// The page being shown: an answer that arrives after the page changed is dropped (a slow
// machine page painted itself over the comparison opened while it loaded).
let routeSeq = 0;
class Stale extends Error {}
// `headers`: called with the answer's headers when it is ok (the history's X-Total-Count).
async function api(path, opts, headers) {
  const seq = routeSeq;
  const r = await fetch(path, Object.assign({ credentials: "same-origin" }, opts || {}));
  const ctype = r.headers.get("content-type") || "";
  const body = ctype.includes("json") ? await r.json() : await r.text();
  if (seq !== routeSeq) throw new Stale("the page changed");
  if (!r.ok) {
    const msg = body && body.error ? body.error : String(body);
    const e = new Error(msg);
    e.status = r.status;
    throw e;
  }
  if (headers) headers(r.headers);
  return body;
}
function post(path, obj) {
  return api(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(obj || {}),
  });
}
function fmtNum(v, digits) {
  if (!Number.isFinite(v)) return "";
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(2) + " G";
  if (a >= 1e6) return (v / 1e6).toFixed(2) + " M";
  if (a >= 1e4) return (v / 1e3).toFixed(1) + " k";
  return v.toFixed(digits === undefined ? 0 : digits);
}
function fmtBytes(b) {
  if (b === null || b === undefined) return "";
  const u = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return b.toFixed(i ? 1 : 0) + " " + u[i];
}
function fmtLat(ns) {
  if (!ns) return "";
  if (ns >= 1e6) return (ns / 1e6).toFixed(2) + " ms";
  if (ns >= 1e3) return (ns / 1e3).toFixed(1) + " µs";
  return ns.toFixed(0) + " ns";
}
// A time as the terminal's lists and trends give it (src/report/history.rs short_time:
// `2026-01-31T12:34:56.789Z` -> `2026-01-31 12:34`, UTC), the full time as the cell's
// tooltip (the pages showed the full ISO time).
// On one line, as the id beside it (both broke at their hyphens beside a long headline).
function timeCell(t) {
  const short = t && t.length >= 16 && t[10] === "T" ? t.slice(0, 10) + " " + t.slice(11, 16) : t;
  return h("td", { title: t, className: "nowrap" }, short);
}
// A result's or run's id (`h-12`, `run-3`), on one line as the terminal's lists give it.
function idCell(...children) { return h("td", { className: "nowrap" }, ...children); }
// A command with the options that tell two runs of it apart (`run --preset real --size
// 1G`), as `iolab history` lists it.
function commandText(e) { return e.options ? e.command + " " + e.options : e.command; }
// Its cell: every option the run was given, whole, broken anywhere when one is long (a
// trace file's path, a list of sizes), so the table stays within the page; never inside a
// flag's name (it broke at its hyphens: "--ramp 0s -" over "-repeat 2").
function commandCell(e) {
  const words = commandText(e).split(" ");
  return h("td", { className: "command" },
    words.flatMap((w, i) => {
      const word = w.startsWith("-") ? h("span", { className: "flag" }, w) : w;
      return i ? [" ", word] : [word];
    }));
}
function table(headers, rows) {
  return h("table", {},
    h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, rows));
}
// A command line's text without its tables (their lines drawn with box characters), under
// the page's own table of the same rows: what the table does not say (files, warnings,
// verdicts, what the columns mean). The compare and trend pages gave the table twice.
function withoutTables(text) {
  return String(text || "").split("\n").filter((l) => !/^[\u2500-\u257f]/.test(l)).join("\n");
}
function errorBox(id) { return h("p", { id: id, className: "error" }); }

// ---- a line chart in SVG ----
// `empty`: what it says without points (default: "waiting for data…").
function lineChart(id, title, points, key, fmt, xfmt, empty) {
  xfmt = xfmt || ((x) => (x / 1000).toFixed(1) + " s");
  const W = 360, H = 170, L = 58, R = 10, T = 22, B = 26;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("width", W); svg.setAttribute("height", H);
  svg.setAttribute("class", "chart"); svg.setAttribute("id", id);
  const add = (tag, attrs, text) => {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    svg.append(e);
    return e;
  };
  add("text", { x: 6, y: 15, "font-weight": "bold" }, title);
  const pts = points.filter((p) => Number.isFinite(p[key]));
  if (pts.length === 0) {
    add("text", { x: L, y: H / 2 }, empty || "waiting for data…");
    return svg;
  }
  const xs = pts.map((p) => p.x), ys = pts.map((p) => p[key]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1);
  const y1 = Math.max(...ys) * 1.1 || 1;
  const px = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
  const py = (y) => H - B - (y / y1) * (H - T - B);
  add("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" });
  add("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" });
  add("text", { x: 2, y: T + 8 }, fmt(y1));
  add("text", { x: 2, y: H - B }, "0");
  add("text", { x: L, y: H - 6 }, xfmt(x0));
  // One x only (one point, or one result in a trend): no right-hand end to name (it read
  // "result 1.001", the axis' made-up width).
  if (Math.max(...xs) > x0) add("text", { x: W - R, y: H - 6, "text-anchor": "end" }, xfmt(x1));
  const d = pts.map((p, i) => (i ? "L" : "M") + px(p.x).toFixed(1) + "," + py(p[key]).toFixed(1)).join(" ");
  add("path", { d: d, fill: "none", stroke: "#1f6fb2", "stroke-width": 1.5 });
  for (const p of pts) add("circle", { cx: px(p.x), cy: py(p[key]), r: 2, fill: "#1f6fb2" });
  // A point's `text`, when given, is its figure as the command line words it (a trend's
  // Value cell): the chart says what the table under it says.
  const last = pts[pts.length - 1];
  add("text", { x: W - R, y: 15, "text-anchor": "end" }, "now " + (last.text || fmt(last[key])));
  return svg;
}

// ---- pages ----
async function pageMachine() {
  show(h("h2", {}, "This machine"), h("p", { className: "note" }, "Loading…"));
  const m = await api("/api/machine");
  $("#host").textContent = m.hostname;
  const infoBox = h("div", { id: "info" });
  const infoBtn = (path) => h("button", { onclick: () => showInfo(path, infoBox) }, "info & health");
  const useBtn = (path) => h("button", { onclick: () => { location.hash = "#/new?target=" + encodeURIComponent(path); } }, "test…");
  // Health (SMART) of each whole disk, filled in as smartctl answers.
  const healthCell = (d) => {
    const td = h("td", { className: "health", "data-device": d.dev_path });
    if (d.kind !== "disk") return td;
    td.textContent = "…";
    api("/api/info?path=" + encodeURIComponent(d.dev_path)).then((i) => {
      const s = i.smart.find((x) => x.device === d.dev_path || x.device === d.name) || i.smart[0];
      td.textContent = !s ? "" : s.health_passed === true ? "PASSED" : s.health_passed === false ? "FAILED" : (s.available ? "?" : "no SMART");
      if (s && s.reason) td.title = s.reason;
    }).catch((e) => { td.textContent = ""; td.title = e.message; });
    return td;
  };
  const devs = m.devices.map((d) => h("tr", {},
    h("td", {}, d.dev_path), h("td", {}, d.kind), h("td", { className: "num" }, fmtBytes(d.size_bytes)),
    h("td", {}, d.model || d.loop_backing_file || ""), h("td", {}, d.transport || ""),
    h("td", {}, d.rotational === true ? "HDD" : d.rotational === false ? "non-rotational" : ""),
    healthCell(d),
    h("td", {}, infoBtn(d.dev_path), useBtn(d.dev_path))));
  const fss = m.filesystems.map((f) => h("tr", {},
    h("td", {}, f.mount_point), h("td", {}, f.fs_type), h("td", {}, f.source),
    h("td", { className: "num" }, fmtBytes(f.size_bytes)), h("td", { className: "num" }, fmtBytes(f.free_bytes)),
    h("td", {}, f.class), h("td", {}, infoBtn(f.mount_point), useBtn(f.mount_point))));
  show(
    h("h2", {}, "Block devices"),
    table(["device", "kind", "size", "model / backing file", "transport", "medium", "health", ""], devs),
    h("h2", {}, "File systems"),
    table(["mount point", "type", "source", "size", "free", "kind", ""], fss),
    infoBox);
}

async function showInfo(path, box) {
  box.replaceChildren(h("p", { className: "note" }, "Reading " + path + " (SMART may take a moment)…"));
  try {
    const i = await api("/api/info?path=" + encodeURIComponent(path));
    const rows = [];
    if (i.mount) rows.push(["mount", i.mount.mount_point + " (" + i.mount.fs_type + ", " + i.mount.options + ")"]);
    rows.push(["kind", i.kind]);
    if (i.no_device_reason) rows.push(["device", i.no_device_reason]);
    for (const d of i.devices) rows.push([d.relation, d.dev_path + " " + fmtBytes(d.size_bytes) + " " + (d.model || d.loop_backing_file || "")]);
    for (const s of i.smart) {
      const health = s.health_passed === true ? "PASSED" : s.health_passed === false ? "FAILED" : (s.reason || "no SMART");
      const extra = [];
      if (s.temperature_c !== undefined && s.temperature_c !== null) extra.push(s.temperature_c + " °C");
      if (s.percentage_used !== undefined && s.percentage_used !== null) extra.push(s.percentage_used + " % used");
      if (s.power_on_hours !== undefined && s.power_on_hours !== null) extra.push(s.power_on_hours + " h on");
      rows.push(["health " + s.device, health + (extra.length ? " — " + extra.join(", ") : "")]);
    }
    box.replaceChildren(h("h3", {}, "iolab info " + path),
      table(["", ""], rows.map(([k, v]) => h("tr", {}, h("td", {}, k), h("td", {}, v)))));
  } catch (e) {
    box.replaceChildren(h("p", { className: "error" }, e.message));
  }
}

function hashQuery() {
  const q = location.hash.split("?")[1] || "";
  return new URLSearchParams(q);
}

async function pageNew() {
  const q = hashQuery();
  let machine = { devices: [], filesystems: [] };
  try { machine = await api("/api/machine"); } catch (e) { /* the form works without the list */ }
  let spec;
  try { spec = await api("/api/form"); } catch (e) { if (e instanceof Stale) throw e; show(h("p", { className: "error" }, e.message)); return; }
  const commands = Object.fromEntries(spec.map((c) => [c.command, c.options]));
  const destroys = Object.fromEntries(spec.map((c) => [c.command, c.allow_destroy]));
  const list = h("datalist", { id: "targets" },
    machine.filesystems.map((f) => h("option", { value: f.mount_point })),
    machine.devices.map((d) => h("option", { value: d.dev_path })));
  const cmd = h("select", { id: "cmd" }, spec.map((c) => h("option", { value: c.command }, c.command)));
  const target = h("input", { type: "text", id: "target", list: "targets", value: q.get("target") || "", placeholder: "/mnt/disk or /dev/sdX" });
  const confirm = h("input", { type: "text", id: "confirm", placeholder: "type the target's name again to allow destroying it" });
  const opts = h("div", { id: "options" });
  const err = errorBox("form-error");
  const destroyRow = h("div", { id: "confirm-row" }, h("label", { for: "confirm" }, "--allow-destroy"), confirm,
    h("p", { className: "note" }, "Write tests on a block device or an existing file destroy its data: type its name exactly, as with --allow-destroy on the command line. A directory needs nothing."));
  const fillOptions = () => {
    const c = cmd.value;
    // Only a command that takes --allow-destroy offers it (files never destroys data).
    destroyRow.style.display = destroys[c] ? "" : "none";
    if (!destroys[c]) confirm.value = "";
    opts.replaceChildren(...commands[c].map((opt) => {
      const o = opt.name;
      const unset = opt.default ? "(default: " + opt.default + ")" : "(default)";
      const input = opt.choices
        ? h("select", { id: "opt-" + o, name: o }, ["", ...opt.choices].map((v) => h("option", { value: v }, v || unset)))
        : h("input", { type: "text", id: "opt-" + o, name: o, placeholder: HINTS[o] || "" });
      return h("div", {}, h("label", { for: "opt-" + o }, "--" + o), input);
    }));
  };
  cmd.addEventListener("change", fillOptions);
  fillOptions();
  const start = async (ev) => {
    ev.preventDefault();
    err.textContent = "";
    const options = {};
    for (const el of opts.querySelectorAll("input, select")) if (el.value.trim()) options[el.name] = el.value.trim();
    try {
      const job = await post("/api/runs", { command: cmd.value, target: target.value.trim(), options: options, confirm: confirm.value.trim() });
      location.hash = "#/run/" + job.id;
    } catch (e) {
      err.textContent = e.message;
    }
  };
  show(
    h("h2", {}, "Start a test"),
    h("form", { className: "test", id: "test-form", onsubmit: start },
      h("div", {}, h("label", { for: "cmd" }, "test"), cmd),
      h("div", {}, h("label", { for: "target" }, "target"), target, list),
      opts,
      destroyRow,
      h("button", { type: "submit", id: "start" }, "Start"),
      err));
}

let pollTimer = null;
async function pageRun(id) {
  // Tests done: a test (its label without " [run/runs]") is done after its last run, or
  // when the next test starts (--repeat auto may stop early), or when the suite completes;
  // not once per run (a suite of 4 tests x 3 runs once showed "tests done: 12").
  // task: the task running now (its label), whose points the charts show.
  // ended: the test ended (a task without points then never gets one).
  const state = { since: 0, points: [], done: new Set(), current: "", status: "", task: "", ended: false };
  const testOf = (label) => String(label || "").replace(/ \[(\d+\/\d+|round \d+, until steady)\]$/, "");
  // Tasks that are not a test: a prefill or preconditioning (saturate's name the file:
  // "prefill /mnt/x/iolab-test-….dat", counted as a test), a --pause, a --recovery idle,
  // the removal of a stopped files test's work directory (counted as a test).
  const notTest = (label) => /^(prefill|precondition|pause|idle|removing)\b/.test(String(label || ""));
  // A task that ended without its figures (a Stop, an error): its test is not done (a
  // suite stopped in its fourth test read "tests done: 4" over a table of 3 measured).
  const cutShort = (e) => /^(interrupted|stopped|failed)$/.test(String(e.message || ""));
  const status = h("span", { id: "run-status" });
  const label = h("span", { id: "run-label" });
  const barFill = h("div", { style: "width:0%" });
  const count = h("span", { id: "point-count" }, "0");
  const done = h("span", { id: "tests-done" }, "0");
  const pointsPart = h("span", {}, "live points: ", count, " · ");
  const doneWord = h("span", {}, "tests done: ");
  const charts = h("div", { className: "charts", id: "charts" });
  // The task the charts show, above them: in each chart's title it ran into the "now" figure
  // (a saturate step's or a sustain pass's label is longer than a chart is wide).
  const chartsTask = h("p", { id: "charts-task" });
  const stop = h("button", { className: "stop", id: "stop" }, "Stop");
  const out = h("div", { id: "run-output" });
  // Its stderr, where the end shows it: while it runs, as the test writes it (what a
  // terminal shows: each task's line, notes such as a stop's, warnings, cleanup messages).
  // The stream's `note` events are lines of it, so they are not shown a second time.
  const stderr = h("pre", { id: "run-stderr" });
  const showStderr = (text) => { if (stderr.textContent !== text) stderr.textContent = text; return stderr; };
  const err = errorBox("run-error");
  const argv = h("code", { id: "run-argv" });
  stop.addEventListener("click", async () => {
    try { await post("/api/runs/" + id + "/stop"); } catch (e) { err.textContent = e.message; }
  });
  show(h("h2", {}, "Test ", id), h("p", {}, argv),
    h("p", {}, "status: ", status, " ", stop),
    h("p", {}, label, " ", h("span", { className: "bar" }, barFill)),
    h("p", {}, pointsPart, doneWord, done),
    chartsTask, charts, err, out);
  // The charts follow the task running now, from its start (each test of a suite has its
  // own scale; they showed the previous test, and the bar stayed at 100 %, until the new
  // test's first point came, 500 ms later). A prefill, pause or idle has no live figures.
  // A saturate sweep's steps (`randread depth 4 (step 3, sweep)`, its steady-state rounds)
  // are one chart, so the ramp shows as the depth rises: x is the time since the sweep's
  // first point (each step's chart started again from nothing at every step).
  let live = true;
  const sweepOf = (label) => {
    const m = /^(.+) depth \d+ \((step \d+, [^)]*|steady-state round \d+)\)$/.exec(String(label || ""));
    return m ? m[1] : null;
  };
  const draw = () => {
    if (!live) return;
    const task = state.task;
    const sweep = sweepOf(task);
    let pts = state.points.filter((p) => (sweep === null ? p.label === task : sweepOf(p.label) === sweep));
    if (sweep !== null && pts.length) {
      const t0 = pts[0].t;
      pts = pts.map((p) => Object.assign({}, p, { x: p.t - t0 }));
    }
    chartsTask.textContent = !task ? "" : sweep === null ? "charts of " + task
      : "charts of " + sweep + ": every depth step so far (now " + task.slice(sweep.length + 1) + ")";
    const empty = notTest(task) ? "no live figures during " + task.split(" ")[0]
      : state.ended ? (task ? "it ended before its first point" : "no live figures") : undefined;
    charts.replaceChildren(
      lineChart("chart-iops", "IOPS", pts, "iops", (v) => fmtNum(v), undefined, empty),
      lineChart("chart-bw", "MB/s", pts, "mbs", (v) => fmtNum(v, 1), undefined, empty),
      lineChart("chart-lat", "mean latency", pts, "lat", fmtLat, undefined, empty));
  };
  draw();
  const tick = async () => {
    if (!location.hash.startsWith("#/run/" + id)) return;
    let v;
    try {
      v = await api("/api/runs/" + id + "?since=" + state.since);
    } catch (e) {
      if (e instanceof Stale) return;
      err.textContent = e.message;
      // No such run (a mistyped address, or a run of a console since restarted): asking
      // again every 2 s forever finds nothing more; a failure that may pass is retried.
      // Its page is the message alone (it kept a Stop button, an empty bar and charts
      // "waiting for data…" that would never come), and where its result may be.
      if (e.status === 404) {
        show(h("h2", {}, "Test ", id), err,
          h("p", { className: "note" }, "A console lists the tests it started until it stops; every result is kept in the ",
            h("a", { href: "#/history" }, "History"), "."));
        return;
      }
      pollTimer = setTimeout(tick, 2000);
      return;
    }
    argv.textContent = v.argv.join(" ");
    // A saturate run's tasks are depth steps of one sweep ("tests done: 4" after 4 steps of
    // its one test).
    if (v.command === "saturate") doneWord.textContent = "steps done: ";
    if (live && v.live_points === false) {
      // No live series for this test (files): no empty charts "waiting for data…".
      live = false;
      // Nor a count of its points (it read "live points: 0"); its tasks are sizes, each a row
      // of its first table ("tests done: 2" read as if over the 8 rows "1 B create", …).
      pointsPart.remove();
      if (v.command === "files") doneWord.textContent = "sizes done: ";
      charts.replaceChildren(h("p", { className: "note", id: "no-live" }, "iolab " + v.command + " has no live series (IOPS, MB/s and latency every 500 ms are a block test's); its figures are in the table when it ends."));
    }
    state.since = v.next;
    let redraw = false;
    for (const e of v.events) {
      if (e.event === "point") {
        // x: how far into its test (the charts show one test; since the command's start, a
        // 2 s test's chart read "6.1 s" to "7.1 s").
        // t: since the command's start, the x of a depth sweep's chart (its steps in one).
        state.points.push({ x: e.elapsed_ms ?? e.t_ms, t: e.t_ms, iops: e.iops, mbs: e.bw_bytes_per_s / 1e6, lat: e.lat_mean_ns, label: e.label });
        state.task = e.label;
        redraw = true;
      }
      if (e.event === "progress") label.textContent = e.label + (e.message ? " — " + e.message : "");
      // A point has no message: the figure so far stays (a point after the progress event of
      // the same moment left the task's name alone, every other poll).
      if (e.event === "point" && !label.textContent.startsWith(e.label)) label.textContent = e.label;
      if (e.event === "progress" || e.event === "point") barFill.style.width = (100 * (e.fraction || 0)).toFixed(0) + "%";
      if (e.event === "task_start") {
        label.textContent = e.label;
        barFill.style.width = "0%";
        state.task = e.label;
        redraw = true;
        if (!notTest(e.label) && state.current && state.current !== testOf(e.label)) state.done.add(state.current);
      }
      if (e.event === "task_end" && !notTest(e.label) && !cutShort(e)) {
        state.current = testOf(e.label);
        const m = / \[(\d+)\/(\d+)\]$/.exec(e.label);
        if (!m || m[1] === m[2]) state.done.add(state.current);
      }
    }
    count.textContent = String(state.points.length);
    if (v.status === "complete" && state.current) state.done.add(state.current);
    done.textContent = String(state.done.size);
    if (redraw) draw();
    status.textContent = v.status;
    status.className = "status-" + v.status;
    const running = v.status === "running" || v.status === "stopping";
    // Stopping: the test was told once (another SIGINT would end it without cleanup).
    stop.disabled = v.status !== "running";
    stop.textContent = v.status === "stopping" ? "Stopping…" : "Stop";
    stop.style.display = running ? "" : "none";
    if (running) {
      if (v.stderr && !stderr.isConnected) out.replaceChildren(stderr);
      showStderr(v.stderr);
      pollTimer = setTimeout(tick, 500);
      return;
    }
    label.textContent = "ended (" + v.status + (v.exit_code === null ? "" : ", exit " + v.exit_code) + ")";
    // Full once complete; a stopped or failed test's bar stays where it ended (it read 100 %).
    if (v.status === "complete") barFill.style.width = "100%";
    if (!state.ended) { state.ended = true; draw(); }
    const parts = [];
    if (v.result) {
      parts.push(h("p", {}, "result ", h("strong", { id: "result-id" }, v.result), " — download: ",
        ["html", "md", "csv", "json"].map((f) => h("a", { href: "/api/results/" + v.result + "/report/" + f, className: "dl", download: "" }, f + " ")),
        v.history ? [" · in the history as ", h("a", { href: "#/history?id=" + encodeURIComponent(v.history), id: "history-id" }, v.history)] : ""));
    }
    if (v.stdout) parts.push(h("pre", { id: "result-table" }, v.stdout));
    if (v.stderr) parts.push(showStderr(v.stderr));
    out.replaceChildren(...parts);
  };
  tick();
}

async function pageRuns() {
  const runs = await api("/api/runs");
  const rows = runs.map((r) => h("tr", {},
    idCell(h("a", { href: "#/run/" + r.id }, r.id)), commandCell(r), h("td", {}, r.target),
    h("td", { className: "status-" + r.status }, r.status), timeCell(r.started_at)));
  show(h("h2", {}, "Tests started from this console"),
    rows.length ? table(["id", "command", "target", "status", "started (UTC)"], rows) : h("p", { className: "note" }, "None yet: start one under New test."));
}

async function pageHistory() {
  const q = hashQuery();
  const f = {};
  for (const k of ["device", "command", "since", "limit", "id"]) f[k] = h("input", { type: "text", id: "filter-" + k, placeholder: k, value: q.get(k) || "" });
  const err = errorBox("history-error");
  const body = h("div", { id: "history-table" });
  const apply = (ev) => {
    if (ev) ev.preventDefault();
    const p = new URLSearchParams();
    for (const [k, el] of Object.entries(f)) if (el.value.trim()) p.set(k, el.value.trim());
    location.hash = "#/history?" + p.toString();
  };
  const cmp = h("button", { id: "compare-btn" }, "Compare the two checked");
  cmp.addEventListener("click", () => {
    const picked = [...document.querySelectorAll("input.pick:checked")].map((c) => c.value);
    if (picked.length !== 2) { err.textContent = "check exactly two results (the older one is the baseline)"; return; }
    location.hash = "#/compare?a=" + encodeURIComponent(picked[1]) + "&b=" + encodeURIComponent(picked[0]);
  });
  show(h("h2", {}, "History"),
    h("form", { className: "filters", onsubmit: apply }, Object.values(f), h("button", { type: "submit" }, "Filter")),
    cmp, err, body);
  const p = new URLSearchParams();
  for (const [k, el] of Object.entries(f)) if (el.value.trim()) p.set(k, el.value.trim());
  try {
    let total = null, held = null, meaning = null;
    const list = await api("/api/history?" + p.toString(), null, (hd) => {
      total = Number(hd.get("x-total-count"));
      held = Number(hd.get("x-held-count"));
      meaning = hd.get("x-figure-meaning");
    });
    const rows = list.map((e) => h("tr", { "data-id": e.id },
      h("td", {}, h("input", { type: "checkbox", className: "pick", value: e.id })),
      idCell(e.id), timeCell(e.started_at), commandCell(e),
      h("td", { className: "status-" + e.status }, e.status), h("td", {}, e.host), h("td", {}, e.device || ""), h("td", {}, e.filesystem || "-"),
      h("td", {}, e.headline), h("td", {}, e.source),
      h("td", {}, ["html", "md", "csv", "json"].map((fm) => h("a", { href: "/api/results/" + e.id + "/report/" + fm, download: "" }, fm + " ")))));
    // As `iolab history` says under its list when the limit hid some.
    const more = total !== null && total > list.length
      ? h("p", { className: "note", id: "history-shown" }, list.length + " of " + total + " results shown (newest first; limit 0 shows all)")
      : "";
    // Under the list, as under `iolab history`'s: what a headline figure is (the server's
    // text, src/report/history.rs FIGURE_MEANING).
    const headline = meaning ? h("p", { className: "note", id: "history-headline" }, "Headline: " + meaning) : "";
    // Nothing to list: as the terminal says it, with how many results the history holds
    // (the page said "No results match." even of an empty history).
    const none = held === 0
      ? "The history holds no results yet: every measuring command records one."
      : "No result matches the filters; the history holds " + held + " result" + (held === 1 ? "" : "s") + " (empty filters list them).";
    body.replaceChildren(rows.length
      // The terminal list's columns (Command, Status, Host, Device, FS, Headline; the
      // column read "test" over a command and its options, and the host was left out).
      ? table(["", "id", "started (UTC)", "command", "status", "host", "device", "fs", "headline", "source", "download"], rows)
      : h("p", { className: "note", id: "history-none" }, none), rows.length ? headline : "", more);
  } catch (e) {
    err.textContent = e.message;
  }
}

async function pageCompare() {
  const q = hashQuery();
  const a = q.get("a"), b = q.get("b");
  show(h("h2", {}, "Compare ", a || "?", " (baseline) with ", b || "?"), h("p", { className: "note" }, "Loading…"));
  try {
    const v = await api("/api/compare?a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b));
    const rows = [];
    // Every cell is the command line's own text (src/serve/results.rs CompareCells, the
    // cells of `iolab compare`'s table: each side's mean ± interval (n=runs), the change,
    // the verdict with its test), never formatted here.
    v.comparison.pairings.forEach((p, pi) => p.rows.forEach((r, ri) => {
      const c = v.cells[pi][ri];
      rows.push(h("tr", {}, h("td", {}, c.test), h("td", { title: r.metric }, c.metric),
        h("td", { className: "num" }, c.baseline),
        h("td", { className: "num" }, c.other),
        h("td", { className: "num" }, c.change),
        h("td", {}, c.verdict)));
    }));
    // The columns named as the text under the table names the files (A, B), with the ids.
    const files = v.comparison.files;
    show(h("h2", {}, "Compare ", a, " (baseline) with ", b),
      table(["test", "metric", files[0].label + " (" + a + ")", files[1].label + " (" + b + ")", "change", "verdict"], rows),
      h("pre", { id: "compare-text" }, withoutTables(v.text)));
  } catch (e) {
    if (e instanceof Stale) throw e;
    // The two ids stay in the heading: the error alone did not say which pair it was about.
    show(h("h2", {}, "Compare ", a || "?", " (baseline) with ", b || "?"),
      h("p", { className: "error", id: "compare-error" }, e.message));
  }
}

async function pageTrend() {
  const q = hashQuery();
  const f = {};
  for (const k of ["device", "test", "metric"]) f[k] = h("input", { type: "text", id: "trend-" + k, placeholder: k, value: q.get(k) || "" });
  const out = h("div", { id: "trend-out" });
  const apply = (ev) => {
    ev.preventDefault();
    const p = new URLSearchParams();
    for (const [k, el] of Object.entries(f)) if (el.value.trim()) p.set(k, el.value.trim());
    location.hash = "#/trend?" + p.toString();
  };
  f.device.setAttribute("list", "trend-devices");
  f.test.setAttribute("list", "trend-tests");
  const devices = h("datalist", { id: "trend-devices" });
  const tests = h("datalist", { id: "trend-tests" });
  api("/api/trend/devices").then((ds) => devices.replaceChildren(...ds.map((d) => h("option", { value: d.device }, d.results + " results")))).catch(() => {});
  show(h("h2", {}, "Trend per device"),
    h("form", { className: "filters", onsubmit: apply }, Object.values(f), devices, tests, h("button", { type: "submit" }, "Show")), out);
  if (!q.get("device")) { out.replaceChildren(h("p", { className: "note" }, "Give a device (part of its name as the history lists it: model, serial, kernel name, /dev/disk/by-id link or a loop device's backing file); the test (default: among the tests run most, the first row of the newest result's table, as `iolab history trend`) and the metric (default: its headline, e.g. iops) are optional.")); return; }
  try {
    const t = await api("/api/trend?" + q.toString());
    const pts = t.points.map((p, i) => ({ x: i * 1000, v: p.value, text: t.cells[i].value }));
    // As `iolab history trend`: Change against the previous result; ◆ where the level
    // changed for good (its change against the results before). Value, interval, change and
    // mark: the command line's text (t.cells, from src/report/history.rs).
    // Each result's command with its options, as the history table gives it: a change may
    // come from another --bs or --size rather than from the device.
    const rows = t.points.map((p, i) => h("tr", {}, idCell("h-" + p.id + (p.status ? " (run " + p.status + ")" : "")), timeCell(p.started_at),
      commandCell(t.cells[i]),
      h("td", { className: "num" }, t.cells[i].value),
      h("td", { className: "num" }, t.cells[i].interval),
      h("td", { className: "num" }, t.cells[i].change),
      h("td", {}, t.cells[i].level)));
    const healthBox = h("div", { id: "health-history" });
    // The device's tests for the test field, and which one is shown when none was asked
    // for (as `iolab history trend` says on its stderr).
    tests.replaceChildren(...(t.tests || []).map((x) => h("option", { value: x.test }, x.results + " results")));
    const others = (t.tests || []).length - 1;
    const chosen = !q.get("test") && others > 0
      ? h("p", { className: "note", id: "trend-chosen" }, "showing '" + t.test + "', the first row of `iolab " + t.command + "`'s table among the tests run most on this device (" + others + " more: choose one under test)")
      : "";
    // Named as `iolab history trend` names it ("MB/s", not the key bw_bytes_per_s, which
    // stays as the tooltip: what the metric field takes); the column is its "Value", the
    // figure the run's own table gives (median, mean or best run: value_of), as the text
    // under the table says.
    const label = t.metric_label;
    out.replaceChildren(h("p", { id: "trend-what" }, t.device, " — ", t.test, " — ", h("span", { title: t.metric }, label), t.higher_is_better ? " (higher is better)" : " (lower is better)"), chosen,
      lineChart("chart-trend", label, pts, "v", (v) => t.metric.endsWith("_ns") ? fmtLat(v) : t.metric.includes("bytes_per_s") ? fmtNum(v / 1e6, 1) : fmtNum(v, 1), (x) => "result " + (x / 1000 + 1)),
      table(["id", "started (UTC)", "command", "Value", "95 % interval", "change", "level"], rows),
      h("pre", { id: "trend-text" }, withoutTables(t.text)), healthBox);
    // The drive's SMART snapshots taken with those results, where it had SMART.
    api("/api/health?device=" + encodeURIComponent(q.get("device"))).then((hh) => {
      const snaps = hh.points.filter((p) => p.smart && p.smart.available);
      if (!snaps.length) { healthBox.replaceChildren(h("p", { className: "note" }, "No SMART snapshots of this device in the history.")); return; }
      const opt = (v, unit) => (v === null || v === undefined ? "" : v + (unit || ""));
      healthBox.replaceChildren(h("h3", {}, "Health over time"), table(
        ["id", "taken (UTC)", "self-assessment", "temperature", "% used", "media errors", "reallocated", "written"],
        snaps.map((p) => h("tr", {}, idCell("h-" + p.id), timeCell(p.started_at),
          h("td", {}, p.smart.health_passed === true ? "PASSED" : p.smart.health_passed === false ? "FAILED" : ""),
          h("td", {}, opt(p.smart.temperature_c, " °C")), h("td", {}, opt(p.smart.percentage_used, " %")),
          h("td", {}, opt(p.smart.media_errors)), h("td", {}, opt(p.smart.reallocated_sectors)),
          h("td", {}, fmtBytes(p.smart.data_written_bytes))))));
    }).catch((e) => healthBox.replaceChildren(h("p", { className: "note" }, e.message)));
  } catch (e) {
    out.replaceChildren(h("p", { className: "error" }, e.message));
  }
}

// ---- router ----
async function route() {
  routeSeq++;
  if (pollTimer) { clearTimeout(pollTimer); pollTimer = null; }
  const hash = location.hash || "#/machine";
  const path = hash.slice(1).split("?")[0];
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", hash.startsWith(a.getAttribute("href")));
  try {
    if (path.startsWith("/run/")) await pageRun(path.slice(5));
    else if (path === "/new") await pageNew();
    else if (path === "/runs") await pageRuns();
    else if (path === "/history") await pageHistory();
    else if (path === "/compare") await pageCompare();
    else if (path === "/trend") await pageTrend();
    else await pageMachine();
  } catch (e) {
    if (e instanceof Stale) return;
    show(h("p", { className: "error", id: "page-error" }, e.message));
  }
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);
