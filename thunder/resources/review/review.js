// Thunder review page: de-identify, review the spans (accept / reject / add), re-apply, download.
// Offsets are in Unicode code points, as in Python (Array.from(text) splits by code point).
"use strict";

const $ = (id) => document.getElementById(id);
const state = { docs: [], current: -1, labels: [] };

function setStatus(message, isError = false) {
  $("status").textContent = message;
  $("status").className = isError ? "error" : "";
}

function colorOf(category) {
  let hash = 0;
  for (const c of category || "other") hash = (hash * 31 + c.codePointAt(0)) >>> 0;
  return `hsl(${hash % 360}, 85%, 78%)`;
}

async function post(path, body) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
                                       body: JSON.stringify(body) });
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function options() {
  const threshold = parseFloat($("threshold").value);
  return { operator: $("operator").value, threshold: Number.isFinite(threshold) ? threshold : null };
}

function adopt(doc, result) {
  // New spans from the server (all accepted); rejected spans that no new span overlaps stay, still rejected.
  const spans = result.spans.map((s) => ({ ...s, state: s.source === "reviewer" ? "added" : "accepted" }));
  const kept = doc.spans.filter((r) => r.state === "rejected" &&
                                       !spans.some((s) => s.start < r.end && r.start < s.end));
  doc.spans = spans.concat(kept).sort((a, b) => a.start - b.start);
  doc.output = result.text;
}

async function deidentifyAll(items) {
  setStatus(`de-identifying ${items.length} document(s)…`);
  state.docs = items.map(([id, text]) => ({ id, text, spans: [], output: "" }));
  let next = 0;
  async function worker() {  // a few requests at a time; the server batches them onto the model
    while (next < state.docs.length) {
      const doc = state.docs[next++];
      adopt(doc, await post("/v1/deid", { id: doc.id, text: doc.text, ...options() }));
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()]);
  showDocList();
  select(0);
  setStatus(`${state.docs.length} document(s), ${state.docs.reduce((n, d) => n + d.spans.length, 0)} span(s)`);
}

function showDocList() {
  const nav = $("docs");
  nav.replaceChildren();
  if (state.docs.length < 2) return;
  state.docs.forEach((doc, i) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = `${doc.id} (${doc.spans.length})`;
    button.addEventListener("click", () => select(i));
    nav.append(button);
  });
}

function select(index) {
  state.current = index;
  [...$("docs").children].forEach((b, i) => b.classList.toggle("current", i === index));
  $("review").hidden = false;
  render();
}

function render() {
  const doc = state.docs[state.current];
  const chars = Array.from(doc.text);
  const view = $("original");
  view.replaceChildren();
  let position = 0;
  doc.spans.forEach((span, i) => {
    view.append(chars.slice(position, span.start).join(""));
    const mark = document.createElement("mark");
    mark.className = `span ${span.state}`;
    mark.dataset.index = i;
    mark.dataset.category = span.category || "";
    const letter = span.state === "rejected" ? "✗" : span.placeholder || "+";  // letters change on re-apply
    mark.dataset.badge = `${letter} ${Number(span.score).toFixed(2)}`;
    mark.title = `${span.label} · ${span.category || "-"} · ${span.source} · ${span.state}`;
    mark.style.setProperty("--color", colorOf(span.category || span.label));
    mark.textContent = chars.slice(span.start, span.end).join("");
    mark.tabIndex = 0;  // reachable with Tab; Enter or Space toggles
    mark.addEventListener("click", () => toggle(i));
    mark.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        toggle(i);
        view.querySelector(`mark[data-index="${i}"]`).focus();
      }
    });
    view.append(mark);
    position = span.end;
  });
  view.append(chars.slice(position).join(""));
  $("output").textContent = doc.output;
  const legend = $("legend");
  legend.replaceChildren();
  for (const category of new Set(doc.spans.map((s) => s.category || s.label))) {
    const item = document.createElement("span");
    item.textContent = category;
    item.style.setProperty("--color", colorOf(category));
    legend.append(item);
  }
}

function toggle(index) {
  const span = state.docs[state.current].spans[index];
  span.state = span.state === "rejected" ? (span.source === "reviewer" ? "added" : "accepted") : "rejected";
  render();
}

function codePointOffset(root, node, offset) {
  const range = document.createRange();
  range.selectNodeContents(root);
  range.setEnd(node, offset);
  return Array.from(range.toString()).length;
}

function addSelected() {
  const selection = window.getSelection();
  const root = $("original");
  if (!selection.rangeCount || selection.isCollapsed) return setStatus("select text in the original first", true);
  const range = selection.getRangeAt(0);
  if (!root.contains(range.startContainer) || !root.contains(range.endContainer)) {
    return setStatus("select text in the original first", true);
  }
  const start = codePointOffset(root, range.startContainer, range.startOffset);
  const end = codePointOffset(root, range.endContainer, range.endOffset);
  const doc = state.docs[state.current];
  if (doc.spans.some((s) => s.state !== "rejected" && s.start < end && start < s.end)) {
    return setStatus("the selection overlaps a span: reject that span first", true);
  }
  const label = $("label").value;
  const info = state.labels.find((l) => l.name === label) || {};
  doc.spans = doc.spans.filter((s) => !(s.start < end && start < s.end));
  doc.spans.push({ start, end, text: Array.from(doc.text).slice(start, end).join(""), label,
                   category: info.category || null, tier1: info.tier1 || null, placeholder: "",
                   score: 1.0, source: "reviewer", state: "added" });
  doc.spans.sort((a, b) => a.start - b.start);
  selection.removeAllRanges();
  render();
  setStatus("span added; re-apply to update the de-identified text");
}

function kept(doc) {
  return doc.spans.filter((s) => s.state !== "rejected");
}

async function reapply() {
  const doc = state.docs[state.current];
  const spans = kept(doc).map(({ start, end, label, score, source }) => ({ start, end, label, score, source }));
  adopt(doc, await post("/v1/apply", { id: doc.id, text: doc.text, spans, operator: options().operator }));
  render();
  setStatus(`re-applied: ${doc.spans.length} span(s)`);
}

function download(name, content, type) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([content], { type }));
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function baseName(id) {
  return id.replace(/\.[^.\/]*$/, "").replace(/[^\w가-힣.-]+/g, "_") || "document";
}

function downloadText() {
  if (state.docs.length === 1) {
    const doc = state.docs[0];
    return download(`${baseName(doc.id)}.deid.txt`, doc.output, "text/plain;charset=utf-8");
  }
  const lines = state.docs.map((d) => JSON.stringify({ id: d.id, text: d.output }) + "\n");
  download("deidentified.jsonl", lines.join(""), "application/jsonl;charset=utf-8");
}

function downloadSpans() {  // gold format of thunder.evaluate.read_jsonl: {"id", "text", "spans": [[s, e, label]]}
  const lines = state.docs.map((d) => JSON.stringify({
    id: d.id, text: d.text, spans: kept(d).map((s) => [s.start, s.end, s.label]),
    rejected: d.spans.filter((s) => s.state === "rejected").map((s) => [s.start, s.end, s.label]),
  }) + "\n");
  download("reviewed-spans.jsonl", lines.join(""), "application/jsonl;charset=utf-8");
}

async function readFiles(files) {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const items = [];
  for (const file of files) {
    try {
      items.push([file.name, decoder.decode(await file.arrayBuffer())]);
    } catch (error) {
      throw new Error(`${file.name}: not valid UTF-8`);
    }
  }
  return items;
}

function guarded(action) {
  return () => action().catch((error) => setStatus(error.message, true));
}

async function init() {
  const labels = await (await fetch("/v1/labels")).json();
  state.labels = labels.labels;
  for (const label of state.labels) {
    const option = document.createElement("option");
    option.value = label.name;
    option.textContent = `${label.name} (${label.category})`;
    $("label").append(option);
  }
  $("run").addEventListener("click", guarded(async () => {
    const files = $("files").files;
    const items = files.length ? await readFiles(files) : [["pasted", $("input").value]];
    if (!items.some(([, text]) => text.trim())) throw new Error("paste a judgment or choose files first");
    await deidentifyAll(items);
  }));
  $("add").addEventListener("click", addSelected);
  $("reapply").addEventListener("click", guarded(reapply));
  $("download-text").addEventListener("click", downloadText);
  $("download-spans").addEventListener("click", downloadSpans);
  setStatus("ready");
}

document.addEventListener("DOMContentLoaded", () => init().catch((error) => setStatus(error.message, true)));
