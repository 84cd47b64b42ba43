#pragma once

// The status page, whole: HTML, CSS and script in one string, so that it
// works with no network and nothing installed. It holds no figure; its
// script reads GET /lp/v1/status once a second with the launch's secret,
// which the user pastes once and which stays in the tab's sessionStorage.
// It takes the secret from nowhere else: a secret in the page's address
// would reach the browser's command line, where ps shows it to every user.
// Everything it shows goes through textContent or an attribute, never
// through HTML parsing: a node's log line cannot add markup to the page.

#include <string_view>

namespace lp::detail {

inline constexpr std::string_view status_page_html = R"lp_page(<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Launchpad status</title>
<style>
body{font:14px system-ui,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
header{background:#1d2330;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:baseline}
header h1{font-size:18px;margin:0}
header .muted{color:#aab}
main{padding:14px 18px}
section{background:#fff;border:1px solid #dde;border-radius:6px;margin:0 0 14px;padding:10px 14px}
h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eef;font-variant-numeric:tabular-nums}
th{font-weight:600;color:#556}
.state{display:inline-block;padding:1px 7px;border-radius:9px;color:#fff;font-size:12px}
.serving{background:#2e8540}.starting{background:#8a8f98}.restarting{background:#d98b00}
.stopped{background:#5b6b86}.failed{background:#c62828}.unreachable{background:#7b1fa2}
svg text{font:12px system-ui,sans-serif}
#graph g.node rect{stroke:#1d2330;stroke-width:1}
#graph g.node.failed rect{stroke:#c62828;stroke-width:3}
.nodes{display:grid;grid-template-columns:repeat(auto-fill,minmax(420px,1fr));gap:14px}
.card h3{margin:0 0 6px;font-size:14px}
/* A card is as narrow as 420 px: its figures keep to one line each, while
   a heading wraps and a long name breaks, so that no column is pushed out
   of the card. */
.card{padding:10px}
.card table{font-size:13px}
.card th,.card td{padding:3px 5px}
.card td{white-space:nowrap}
.card td:first-child{white-space:normal;overflow-wrap:anywhere}
.failure{color:#c62828;font-weight:600;white-space:pre-wrap}
pre{background:#f2f3f6;padding:6px;max-height:160px;overflow:auto;font-size:12px;margin:6px 0}
pre.log{white-space:pre-wrap;overflow-wrap:anywhere}
.since{color:#667;font-size:12px;margin:0 0 6px}
.plots{display:flex;flex-wrap:wrap;gap:10px}
.plot{background:#fafbfc;border:1px solid #eef;max-width:100%;height:auto}
#login{display:none}#login input{width:28em}
#errors{display:none;color:#c62828}
</style></head>
<body>
<header><h1 id="program">Launchpad</h1><span id="policy" class="muted"></span>
<span id="updated" class="muted"></span></header>
<main>
<section id="login"><h2>This page needs the launch's secret</h2>
<p>Paste the contents of the file <code>secret</code> in the launch's run directory
(the launcher printed its path). This tab keeps it until it closes.</p>
<form id="login-form"><input id="secret" type="password" autocomplete="off">
<button type="submit">Show</button></form><p id="login-problem"></p></section>
<section id="errors"></section>
<section><h2>Program graph</h2><svg id="graph" width="100%" height="120"></svg></section>
<section><h2>Nodes</h2><table><thead><tr><th>node</th><th>state</th><th>pid</th><th>host</th>
<th>restarts</th><th>calls/s</th><th>RSS</th><th>CPU</th><th>threads</th><th>connections</th>
</tr></thead><tbody id="table"></tbody></table></section>
<div class="nodes" id="cards"></div>
</main>
<script>
"use strict";
const svgNS = "http://www.w3.org/2000/svg";
const shownErrors = [];
function showError(text) {
  shownErrors.push(String(text));
  const box = document.getElementById("errors");
  box.textContent = shownErrors.slice(-5).join("\n");
  box.style.display = "block";
}
window.addEventListener("error", e => showError("script error: " + e.message));
window.addEventListener("unhandledrejection", e => showError("script error: " + e.reason));

document.getElementById("login-form").addEventListener("submit", e => {
  e.preventDefault();
  sessionStorage.setItem("lp_secret", document.getElementById("secret").value.trim());
  refresh();
});

function el(tag, attributes, text) {
  const made = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes || {})) made.setAttribute(k, v);
  if (text !== undefined) made.textContent = String(text);
  return made;
}
function svg(tag, attributes, text) {
  const made = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attributes || {})) made.setAttribute(k, v);
  if (text !== undefined) made.textContent = String(text);
  return made;
}
function bytes(n) {
  if (n === undefined) return "";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return n.toFixed(i ? 1 : 0) + " " + units[i];
}
function number(n, digits) { return n === undefined || n === null ? "" : Number(n).toFixed(digits); }
// A figure as a person reads it: a whole number whole, any other to four
// significant digits (or as many as it has left of the point), not the
// seventeen a double holds.
function figure(n) {
  if (typeof n !== "number" || Number.isInteger(n) || !isFinite(n)) return String(n);
  const whole = Math.floor(Math.log10(Math.abs(n))) + 1;
  return String(parseFloat(n.toPrecision(Math.max(4, whole))));
}
function clock(t) { return new Date(t * 1000).toLocaleTimeString(); }
function duration(s) {
  if (s === null || s === undefined) return "";
  return s < 1e-3 ? (s * 1e6).toFixed(0) + " µs" : s < 1 ? (s * 1e3).toFixed(1) + " ms" : s.toFixed(2) + " s";
}
// The last calls/s of the node's present process: until a new process has
// answered twice, none.
function rateOf(node) {
  const r = node.calls_per_second || [];
  return r.length && r[r.length - 1][0] > node.since ? r[r.length - 1][1] : undefined;
}

// The graph: a row per group (the nodes outside groups first), an arrow
// from each node to those it holds handles to.
function drawGraph(status) {
  const box = document.getElementById("graph");
  box.replaceChildren();
  const rows = [[]];
  const rowOf = {"": 0};
  for (const g of status.groups) { rowOf[g] = rows.length; rows.push([]); }
  for (const node of status.nodes) rows[rowOf[node.group]].push(node);
  const used = rows.filter(r => r.length);
  const w = 150, h = 44, gapX = 30, gapY = 34, left = 90;
  const width = Math.max(...used.map(r => r.length)) * (w + gapX) + left;
  box.setAttribute("height", used.length * (h + gapY) + 10);
  box.setAttribute("viewBox", "0 0 " + width + " " + (used.length * (h + gapY) + 10));
  const defs = svg("defs");
  const marker = svg("marker", {id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
                                markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse"});
  marker.appendChild(svg("path", {d: "M 0 0 L 10 5 L 0 10 z", fill: "#778"}));
  defs.appendChild(marker);
  box.appendChild(defs);
  const at = {};
  used.forEach((row, r) => {
    const y = 5 + r * (h + gapY);
    if (row[0].group) box.appendChild(svg("text", {x: 4, y: y + h / 2 + 4, fill: "#556"}, row[0].group));
    row.forEach((node, i) => { at[node.label] = {x: left + i * (w + gapX), y: y}; });
  });
  for (const node of status.nodes)
    for (const target of node.edges) {
      const a = at[node.label], b = at[target];
      if (!a || !b) continue;
      const down = b.y > a.y, up = b.y < a.y, right = b.x > a.x;
      // Between rows: bottom to top; within a row: side to side.
      box.appendChild(svg("line", {
        x1: down || up ? a.x + w / 2 : right ? a.x + w : a.x,
        y1: down ? a.y + h : up ? a.y : a.y + h / 2,
        x2: down || up ? b.x + w / 2 : right ? b.x : b.x + w,
        y2: down ? b.y : up ? b.y + h : b.y + h / 2,
        stroke: "#99a", "marker-end": "url(#arrow)"}));
    }
  const fills = {serving: "#dff3e3", starting: "#eceef1", restarting: "#fdebc8",
                 stopped: "#e3e8f0", failed: "#fbdada", unreachable: "#eedcf3"};
  for (const node of status.nodes) {
    const p = at[node.label];
    const g = svg("g", {"class": "node " + node.state, "data-label": node.label,
                        "data-state": node.state});
    g.appendChild(svg("title", {}, node.label + ": " + node.state));
    g.appendChild(svg("rect", {x: p.x, y: p.y, width: w, height: h, rx: 6, fill: fills[node.state] || "#fff"}));
    g.appendChild(svg("text", {x: p.x + 8, y: p.y + 18, "font-weight": 600}, node.label));
    g.appendChild(svg("text", {x: p.x + 8, y: p.y + 35, fill: "#556"}, node.service + " · " + node.state));
    box.appendChild(g);
  }
}

// A line plot of [time, value] points, the last ten minutes at most, with a
// dashed line at each of `marks` (times a new process of the node began).
function plot(title, points, attributes, marks) {
  const w = 400, h = 120, pad = 32;
  const box = svg("svg", Object.assign({"class": "plot", width: w, height: h + 20,
                                        viewBox: "0 0 " + w + " " + (h + 20),
                                        "data-points": points.length}, attributes));
  box.appendChild(svg("text", {x: 4, y: 13, "font-weight": 600}, title));
  if (points.length === 0) {
    box.appendChild(svg("text", {x: pad, y: 60, fill: "#889"}, "no values yet"));
    return box;
  }
  const ts = points.map(p => p[0]), vs = points.map(p => p[1]);
  const t0 = Math.min(...ts), t1 = Math.max(...ts, t0 + 1);
  let v0 = Math.min(...vs), v1 = Math.max(...vs);
  if (v0 === v1) { v0 -= 1; v1 += 1; }
  const x = t => pad + (w - pad - 6) * (t - t0) / (t1 - t0);
  const y = v => 20 + (h - 14) * (1 - (v - v0) / (v1 - v0));
  box.appendChild(svg("text", {x: 2, y: 28, fill: "#889"}, figure(v1)));
  box.appendChild(svg("text", {x: 2, y: h + 6, fill: "#889"}, figure(v0)));
  for (const t of (marks || []).filter(t => t >= t0 && t <= t1)) {
    const line = svg("line", {"class": "new-process", x1: x(t), x2: x(t), y1: 18, y2: h + 8,
                              stroke: "#d98b00", "stroke-dasharray": "4 3"});
    line.appendChild(svg("title", {}, "a new process from " + clock(t) + ": its counts began at 0"));
    box.appendChild(line);
  }
  if (points.length === 1)
    box.appendChild(svg("circle", {cx: x(ts[0]), cy: y(vs[0]), r: 3, fill: "#2860c6"}));
  box.appendChild(svg("polyline", {fill: "none", stroke: "#2860c6", "stroke-width": 1.5,
    points: points.map(p => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" ")}));
  return box;
}

function drawTable(status) {
  const body = document.getElementById("table");
  body.replaceChildren();
  for (const node of status.nodes) {
    const row = el("tr", {"data-label": node.label});
    row.appendChild(el("td", {}, node.label));
    const state = el("td");
    state.appendChild(el("span", {"class": "state " + node.state}, node.state));
    row.appendChild(state);
    for (const text of [node.pid || "", node.host || "", node.restarts, number(rateOf(node), 1),
                        bytes(node.resident_bytes), node.cpu_percent === undefined ? "" : number(node.cpu_percent, 0) + " %",
                        node.threads === undefined ? "" : node.threads,
                        node.connections === undefined ? "" : node.connections])
      row.appendChild(el("td", {}, text));
    body.appendChild(row);
  }
}

function drawCards(status) {
  const cards = document.getElementById("cards");
  cards.replaceChildren();
  for (const node of status.nodes) {
    const card = el("section", {"class": "card", "data-label": node.label});
    const title = el("h3", {}, node.label + " ");
    title.appendChild(el("span", {"class": "state " + node.state}, node.state));
    card.appendChild(title);
    // The figures below are one process's: a restart counts from 0 again.
    if (node.since)
      card.appendChild(el("div", {"class": "since", "data-since": node.since},
                          "figures of this process (pid " + node.pid + ") since " + clock(node.since) +
                          (node.new_process_at && node.new_process_at.length
                             ? "; a new process counts from 0 again" : "")));
    if (node.failure) card.appendChild(el("div", {"class": "failure"}, "failed: " + node.failure));
    if (node.methods && node.methods.length) {
      const t = el("table");
      const head = el("tr");
      for (const h of ["method", "calls", "calls/s", "p50", "p99", "errors", "in flight"]) head.appendChild(el("th", {}, h));
      t.appendChild(head);
      for (const m of node.methods) {
        const r = el("tr");
        for (const v of [m.name, m.calls, number(m.per_second, 1), duration(m.p50), duration(m.p99), m.errors, m.in_flight])
          r.appendChild(el("td", {}, v));
        t.appendChild(r);
      }
      card.appendChild(t);
    }
    const figures = Object.assign({}, node.counters || {}, node.gauges || {});
    if (Object.keys(figures).length) {
      const t = el("table");
      for (const [k, v] of Object.entries(figures)) {
        const r = el("tr");
        r.appendChild(el("td", {}, k));
        r.appendChild(el("td", {"title": String(v)}, figure(v)));
        t.appendChild(r);
      }
      card.appendChild(t);
    }
    const plots = el("div", {"class": "plots"});
    plots.appendChild(plot("calls/s", node.calls_per_second || [], {"data-series": "calls_per_second"},
                           node.new_process_at));
    for (const [name, points] of Object.entries(node.series || {}))
      plots.appendChild(plot(name, points, {"data-series": name}));
    card.appendChild(plots);
    if (node.last_lines && node.last_lines.length) {
      card.appendChild(el("div", {}, "last lines"));
      card.appendChild(el("pre", {"class": "log"}, node.last_lines.join("\n")));
    }
    cards.appendChild(card);
  }
}

async function refresh() {
  const secret = sessionStorage.getItem("lp_secret") || "";
  let reply;
  try {
    reply = await fetch("/lp/v1/status", {headers: secret ? {"Authorization": "Bearer " + secret} : {},
                                          cache: "no-store"});
  } catch (e) {
    document.getElementById("updated").textContent = "the launcher does not answer (the program has ended?)";
    return;
  }
  const login = document.getElementById("login");
  if (reply.status === 401) {
    login.style.display = "block";
    document.getElementById("login-problem").textContent = secret ? "That is not this launch's secret." : "";
    return;
  }
  login.style.display = "none";
  const status = await reply.json();
  document.getElementById("program").textContent = status.program;
  document.getElementById("policy").textContent = status.policy;
  document.getElementById("updated").textContent = "updated " + clock(status.time);
  document.title = status.program + " · Launchpad status";
  drawGraph(status);
  drawTable(status);
  drawCards(status);
  document.body.setAttribute("data-loaded", "yes");
}
refresh();
setInterval(refresh, 1000);
</script></body></html>
)lp_page";

}  // namespace lp::detail
