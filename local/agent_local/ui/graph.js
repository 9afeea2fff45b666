// The turn page: the list of recent executions and, for the selected one, the ASL drawn as a graph
// with the path taken highlighted (data from /ui/api/turns and /ui/api/graph, computed by agent_local.trace).
// Every text of a turn is user input or derived from it: it is set with textContent only, never as HTML.
"use strict";

const NODE_W = 172, NODE_H = 36, CELL_W = 200, CELL_H = 66, PAD = 24;
const SVG_NS = "http://www.w3.org/2000/svg";

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

function ms(value) {
  if (value === null || value === undefined) return "";
  return value < 1000 ? `${value} ms` : `${(value / 1000).toFixed(2)} s`;
}

function text(tag, content, cls) {
  const node = document.createElement(tag);
  node.textContent = content;
  if (cls) node.className = cls;
  return node;
}

async function getJSON(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

async function loadTurns() {
  const list = document.getElementById("turn-list");
  const turns = await getJSON("/ui/api/turns");
  list.textContent = turns.length ? "" : "No executions logged yet: run a turn (agent chat, converse, or a backend).";
  for (const turn of turns) {
    const row = document.createElement("div");
    row.className = "turn";
    row.dataset.execution = turn.execution_arn;
    const outcome = turn.reply_status || turn.status;
    const badge = text("span", outcome + (turn.reason ? ` · ${turn.reason}` : ""), `badge ${outcome}`);
    row.appendChild(badge);
    row.appendChild(text("div", turn.turn_id || turn.execution_arn, "id"));
    const question = text("div", turn.question || "(no message)", "question");
    question.dir = "auto";
    row.appendChild(question);
    // The reply's message, or what the turn ended with when it has none (a failed execution).
    const reply = text("div", turn.reply || `${outcome}${turn.reason ? ` (${turn.reason})` : ""}: no reply message`,
                       "reply");
    reply.dir = "auto";
    row.appendChild(reply);
    const when = new Date(turn.start_ms).toLocaleString();
    row.appendChild(text("div", `thread ${turn.thread_id || "-"} · ${ms(turn.duration_ms)} · ${when}`, "meta"));
    row.addEventListener("click", () => select(turn.execution_arn));
    list.appendChild(row);
  }
  const wanted = decodeURIComponent(location.hash.slice(1));
  const first = turns.find((t) => t.execution_arn === wanted || t.turn_id === wanted) || turns[0];
  if (first) await select(first.execution_arn);
}

async function select(arn) {
  for (const row of document.querySelectorAll(".turn")) {
    row.classList.toggle("selected", row.dataset.execution === arn);
  }
  history.replaceState(null, "", `#${encodeURIComponent(arn)}`);
  const graph = await getJSON(`/ui/api/graph?execution=${encodeURIComponent(arn)}`);
  drawHeader(graph);
  drawGraph(graph);
}

function drawHeader(graph) {
  const header = document.getElementById("header");
  const run = graph.execution;
  header.textContent = "";
  const title = text("div", "");
  title.appendChild(text("strong", `turn ${run.turn_id || "-"}`));
  title.appendChild(document.createTextNode(
    `  thread ${run.thread_id || "-"} · tenant ${run.tenant_id || "-"} · ${run.status} · ${ms(run.duration_ms)} · ` +
    `reply ${run.reply_status || "-"}${run.reason ? ` (${run.reason})` : ""} · ${graph.path.length} states`));
  header.appendChild(title);
  header.appendChild(text("div", run.execution_arn, "arn"));
  if (run.error) header.appendChild(text("div", `execution ${run.error}: ${run.cause || ""}`, "error"));
  for (const node of graph.nodes.filter((n) => n.failed)) {
    const error = node.errors[node.errors.length - 1];
    header.appendChild(text("div", `${node.name} failed: ${error.error}: ${error.cause}`, "error"));
  }
}

function nodeColours(node) {
  if (node.failed) return { fill: "#c62828", stroke: "#8e0000", text: "#fff" };
  if (node.visited) return { fill: "#2e7d32", stroke: node.retries ? "#f59e0b" : "#1b5e20", text: "#fff" };
  return { fill: "#eceff3", stroke: "#a7afbb", text: "#5b6472" };
}

function drawGraph(graph) {
  const holder = document.getElementById("graph");
  holder.textContent = "";
  const maxX = Math.max(...graph.nodes.map((n) => n.x));
  const maxY = Math.max(...graph.nodes.map((n) => n.y));
  const width = PAD * 2 + (maxX + 1) * CELL_W + 60;
  const height = PAD * 2 + (maxY + 1) * CELL_H;
  const svg = el("svg", { id: "asl-graph", width, height, viewBox: `0 0 ${width} ${height}` }, holder);
  const defs = el("defs", {}, svg);
  for (const [id, colour] of [["arrow", "#b5bcc7"], ["arrow-taken", "#1565c0"], ["arrow-error", "#c62828"]]) {
    const marker = el("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 10, markerHeight: 10,
                                  markerUnits: "userSpaceOnUse",
                                  orient: "auto-start-reverse" }, defs);
    el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: colour }, marker);
  }
  const place = {};
  for (const node of graph.nodes) {
    place[node.name] = { cx: PAD + node.x * CELL_W + CELL_W / 2, top: PAD + node.y * CELL_H, node };
  }
  const edgeLayer = el("g", { class: "edges" }, svg);
  // Untaken edges first so that the path is drawn on top of them.
  const edges = [...graph.edges].sort((a, b) => Number(a.taken) - Number(b.taken));
  for (const edge of edges) {
    const from = place[edge.source], to = place[edge.target];
    if (!from || !to) continue;
    let d;
    if (to.node.y <= from.node.y) {
      // A loop back up: go round the right-hand side of the drawing.
      const side = PAD + (maxX + 1) * CELL_W + 20 + (from.node.y % 3) * 10;
      const y1 = from.top + NODE_H / 2, y2 = to.top + NODE_H / 2;
      d = `M ${from.cx + NODE_W / 2} ${y1} C ${side} ${y1}, ${side} ${y2}, ${to.cx + NODE_W / 2} ${y2}`;
    } else {
      const y1 = from.top + NODE_H, y2 = to.top;
      const span = to.node.y - from.node.y;
      if (span > 1 && Math.abs(from.cx - to.cx) < CELL_W / 2) {
        // A long edge down one column would run through the states between: bow it out sideways.
        const bow = NODE_W / 2 + 14 + 6 * (span % 4);
        const sx = from.cx + (edge.kind === "catch" ? -bow : bow);
        d = `M ${from.cx} ${y1} L ${sx} ${y1 + 14} L ${sx} ${y2 - 14} L ${to.cx} ${y2}`;
      } else {
        const bend = Math.min(CELL_H * 0.8, (y2 - y1) / 2 + 10);
        d = `M ${from.cx} ${y1} C ${from.cx} ${y1 + bend}, ${to.cx} ${y2 - bend}, ${to.cx} ${y2}`;
      }
    }
    const isCatch = edge.kind === "catch";
    const colour = edge.taken ? (isCatch ? "#c62828" : "#1565c0") : "#c9ced6";
    const path = el("path", {
      d, fill: "none", stroke: colour, "stroke-width": edge.taken ? 3 : 1,
      "stroke-dasharray": isCatch ? "5 4" : "none", "stroke-opacity": edge.taken ? 1 : (isCatch ? 0.45 : 0.9),
      "marker-end": `url(#${edge.taken ? (isCatch ? "arrow-error" : "arrow-taken") : "arrow"})`,
      class: edge.taken ? "edge taken" : "edge", "data-source": edge.source, "data-target": edge.target,
    }, edgeLayer);
    const title = el("title", {}, path);
    title.textContent = `${edge.source} → ${edge.target}${edge.label ? ` [${edge.label}]` : ""}`;
  }
  const nodeLayer = el("g", { class: "nodes" }, svg);
  for (const node of graph.nodes) {
    const { cx, top } = place[node.name];
    const colours = nodeColours(node);
    const status = node.failed ? "failed" : node.visited ? "visited" : "unvisited";
    const group = el("g", { class: `node ${status}`, "data-state": node.name, "data-status": status }, nodeLayer);
    const radius = node.type === "Choice" ? 17 : node.type === "Pass" ? 9 : 3;
    el("rect", {
      x: cx - NODE_W / 2, y: top, width: NODE_W, height: NODE_H, rx: radius, fill: colours.fill,
      stroke: colours.stroke, "stroke-width": node.retries ? 3 : 1.5,
    }, group);
    const label = el("text", { x: cx, y: top + (node.visited ? 15 : 22), "text-anchor": "middle", fill: colours.text }, group);
    label.textContent = node.name;
    if (node.visited) {
      const extra = [ms(node.duration_ms)];
      if (node.visits > 1) extra.push(`×${node.visits}`);
      if (node.retries) extra.push(`${node.retries} retr${node.retries > 1 ? "ies" : "y"}`);
      const sub = el("text", { x: cx, y: top + 29, "text-anchor": "middle", fill: colours.text, class: "duration" }, group);
      sub.textContent = extra.join(" · ");
    }
    group.addEventListener("click", () => showState(node));
  }
}

function showState(node) {
  const box = document.getElementById("state-details");
  box.textContent = "";
  box.appendChild(text("h3", `${node.name} (${node.type})`));
  if (!node.visited) {
    box.appendChild(text("p", "Not visited in this execution."));
    return;
  }
  box.appendChild(text("p", `step ${node.step.join(", ")} · ${ms(node.duration_ms)} · retries ${node.retries}`));
  for (const decision of node.decisions) {
    box.appendChild(text("p", `→ ${decision.next} because ${decision.rule}`));
  }
  for (const error of node.errors) {
    box.appendChild(text("pre", `${error.error}: ${error.cause}`, "error"));
  }
}

loadTurns().catch((error) => {
  document.getElementById("turn-list").textContent = `Could not load turns: ${error.message}`;
});
