// Thunder review page: de-identify, review the spans (accept / reject / relabel / move / add), re-apply, download.
// Offsets are in Unicode code points, as in Python (Array.from(text) splits by code point). A span's state is
// "accepted" or "added" (replaced on re-apply), "rejected" (kept in the text) or "suggested" (a possible miss,
// shown apart and replaced only once accepted). The review lives in this tab (sessionStorage), never on the server.
"use strict";

const $ = (id) => document.getElementById(id);
const PAGE_CHARS = 3000;  // characters per page of the original: a long judgment never puts 10k marks in the DOM
const SUGGESTED_SOURCES = new Set(["possible_miss"]);  // spans the server proposes but does not replace
const STORE = "thunder-review";
const UNDO_DEPTH = 100;
const state = { docs: [], current: -1, known: new Map(), token: "", run: null, rate: null };

// ------------------------------------------------------------------------------------------------ helpers

function setStatus(message, isError = false) {
  $("status").textContent = message;
  $("status").className = isError ? "error" : "";
}

function colorOf(category) {
  let hash = 0;
  for (const c of category || "other") hash = (hash * 31 + c.codePointAt(0)) >>> 0;
  return `hsl(${hash % 360}, 85%, 78%)`;
}

async function api(path, body, signal) {
  const headers = { "Content-Type": "application/json" };
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  const response = await fetch(path, body === undefined ? { headers, signal }
                                     : { method: "POST", headers, body: JSON.stringify(body), signal });
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (response.status === 401) {
    $("token-panel").hidden = false;
    throw new Error(`${data.error || "this server needs a token"}: enter the access token above`);
  }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function options() {
  const threshold = parseFloat($("threshold").value);
  return { operator: $("operator").value, threshold: Number.isFinite(threshold) ? threshold : null };
}

const doc = () => state.docs[state.current];
const textOf = (d, s) => d.chars.slice(s.start, s.end).join("");
const keyOf = (d, s) => textOf(d, s).replace(/\s+/g, "");  // an entity: every mention of the same text, spacing aside
const applied = (s) => s.state === "accepted" || s.state === "added";
const undecided = (d) => d.spans.filter((s) => s.state === "suggested").length;  // possible misses not yet decided

// ------------------------------------------------------------------------------------------------ documents

function newDoc(id, text) {
  return { id, text, chars: Array.from(text), spans: [], output: "", dirty: false, page: 0, cursor: -1, undo: [],
           risk: null };
}

function spanOf({ start, end, label, category, tier1, placeholder, score, source, reason }, spanState,
                checked = false) {
  return { start, end, label, category, tier1, placeholder, score, source, reason: reason ?? null, state: spanState,
           checked };
}

function adopt(d, result) {
  // Spans from the server; rejected spans that no new span overlaps stay, still rejected.
  const spans = result.spans.map((s) => spanOf(s, SUGGESTED_SOURCES.has(s.source) ? "suggested"
                                                 : s.source === "reviewer" ? "added" : "accepted"));
  for (const s of result.suggestions || []) spans.push(spanOf(s, "suggested"));
  const overlaps = (r) => spans.some((s) => applied(s) && s.start < r.end && r.start < s.end);
  const rejected = d.spans.filter((r) => r.state === "rejected");
  const kept = rejected.filter((r) => !overlaps(r));
  const pending = result.suggestions ? [] : d.spans.filter((r) => r.state === "suggested" && !overlaps(r));
  d.spans = spans.filter((s) => applied(s) || !kept.some((r) => s.start < r.end && r.start < s.end))
                 .concat(kept, pending).sort((a, b) => a.start - b.start);  // undecided possible misses stay
  d.output = result.text;
  d.dirty = false;
  if (result.risk !== undefined) d.risk = result.risk;  // the triage's chance that something was left in
  return rejected.length - kept.length;  // rejected spans replaced anyway (the same text is kept elsewhere)
}

async function deidentifyAll(items) {
  state.docs = items.map(([id, text]) => newDoc(id, text));
  const total = state.docs.reduce((n, d) => n + d.chars.length, 0);
  const run = startRun(total);
  let next = 0;
  async function worker() {  // a few requests at a time; the server batches them onto the model
    while (next < state.docs.length && !run.controller.signal.aborted) {
      const d = state.docs[next++];
      run.inFlight.add(d);
      try {
        adopt(d, await api("/v1/deid", { id: d.id, text: d.text, ...options() }, run.controller.signal));
      } finally {
        run.inFlight.delete(d);
      }
      run.done += d.chars.length;
    }
  }
  try {
    await Promise.all([worker(), worker(), worker(), worker()]);
  } catch (error) {
    state.docs = [];
    throw run.controller.signal.aborted ? new Error("cancelled") : error;
  } finally {
    endRun(run);
  }
  showDocList();
  select(0);
  save();
  const suggested = state.docs.reduce((n, d) => n + undecided(d), 0);
  const spans = state.docs.reduce((n, d) => n + d.spans.length, 0) - suggested;
  setStatus(`${state.docs.length} document(s), ${spans} span(s)` +
            (suggested ? `, ${suggested} possible miss(es) (dashed: a accepts, r rejects)` : ""));
}

function startRun(total) {
  // Progress: finished characters plus the estimated share of those in flight (the server's measured rate).
  const run = { controller: new AbortController(), done: 0, inFlight: new Set(), started: performance.now() };
  state.run = run;
  $("progress").hidden = $("cancel").hidden = false;
  $("progress").removeAttribute("value");  // indeterminate until there is an estimate
  $("run").disabled = true;
  const tick = () => {
    const seconds = (performance.now() - run.started) / 1000;
    let estimate = run.done;
    if (state.rate) for (const d of run.inFlight) estimate += Math.min(d.chars.length, state.rate * seconds);
    if (state.rate || run.done) $("progress").value = Math.min(0.99, estimate / Math.max(1, total));
    setStatus(`de-identifying ${state.docs.length} document(s), ${total.toLocaleString()} characters… ` +
              `${Math.round(seconds)} s`);
  };
  tick();
  run.timer = setInterval(tick, 250);
  return run;
}

function endRun(run) {
  clearInterval(run.timer);
  state.run = null;
  $("progress").hidden = $("cancel").hidden = true;
  $("run").disabled = false;
}

function showDocList() {
  const nav = $("docs");
  nav.replaceChildren();
  if (state.docs.length < 2) return;
  state.docs.forEach((d, i) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = `${d.id} (${d.spans.length - undecided(d)}${d.risk ? `, risk ${d.risk.toFixed(2)}` : ""})`;
    button.addEventListener("click", () => select(i));
    nav.append(button);
  });
}

function select(index) {
  state.current = index;
  [...$("docs").children].forEach((b, i) => b.classList.toggle("current", i === index));
  $("review").hidden = false;
  refresh();
  save();
}

// ------------------------------------------------------------------------------------------------ pages

function pages(d) {
  // Page starts: about PAGE_CHARS characters each, cut after a line end where one is near, never inside a span.
  const starts = [0];
  let i = 0;
  while (starts[starts.length - 1] + PAGE_CHARS < d.chars.length) {
    const from = starts[starts.length - 1];
    let cut = from + PAGE_CHARS;
    for (let j = cut; j > from + PAGE_CHARS / 2; j--) if (d.chars[j - 1] === "\n") { cut = j; break; }
    while (i < d.spans.length && d.spans[i].end <= cut) i++;
    if (i < d.spans.length && d.spans[i].start < cut) cut = d.spans[i].end;
    if (cut >= d.chars.length) break;
    starts.push(cut);
  }
  return starts;
}

function pageRange(d) {
  const starts = pages(d);
  d.page = Math.min(d.page, starts.length - 1);
  return { start: starts[d.page], end: starts[d.page + 1] ?? d.chars.length, count: starts.length };
}

function firstSpanFrom(d, position) {  // binary search: the first span ending after position
  let lo = 0, hi = d.spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (d.spans[mid].end <= position) lo = mid + 1; else hi = mid;
  }
  return lo;
}

function showSpan(index) {  // the page holding span `index`, then focus it
  const d = doc();
  const span = d.spans[index];
  const starts = pages(d);
  let page = 0;
  while (page + 1 < starts.length && starts[page + 1] <= span.start) page++;
  d.cursor = index;
  if (page !== d.page) {
    d.page = page;
    renderPage();
  } else {
    markCursor();
  }
  renderInspector();
  const mark = markOf(index);
  if (mark) {
    mark.focus({ preventScroll: true });
    mark.scrollIntoView({ block: "nearest" });
  }
}

// ------------------------------------------------------------------------------------------------ rendering

function refresh() {
  renderPage();
  renderInspector();
  renderOutput();
  renderLegend();
  renderEntities();
}

function badge(span) {
  const letter = span.state === "rejected" ? "✗" : span.state === "suggested" ? "?" : span.placeholder || "+";
  return `${letter} ${span.label}${span.checked && applied(span) ? " ✓" : ""}`;
}

function paint(mark, span, index) {
  mark.className = `span ${span.state} source-${span.source}${index === doc().cursor ? " cursor" : ""}`;
  mark.dataset.badge = badge(span);
  mark.title = `${span.label} · ${span.category || "-"} · ${span.reason || span.source} · ` +
               `${Number(span.score).toFixed(2)} · ${span.state}`;
  mark.style.setProperty("--color", colorOf(span.category || span.label));
}

function renderPage() {
  const d = doc();
  const { start, end, count } = pageRange(d);
  const view = $("original");
  const fragment = document.createDocumentFragment();
  let position = start;
  for (let i = firstSpanFrom(d, start); i < d.spans.length && d.spans[i].start < end; i++) {
    const span = d.spans[i];
    fragment.append(d.chars.slice(position, span.start).join(""));
    const mark = document.createElement("mark");
    mark.dataset.index = i;
    mark.tabIndex = -1;
    mark.textContent = textOf(d, span);
    paint(mark, span, i);
    fragment.append(mark);
    position = span.end;
  }
  fragment.append(d.chars.slice(position, end).join(""));
  view.replaceChildren(fragment);
  view.dataset.start = start;
  $("pager").hidden = count < 2;
  $("page-info").textContent = ` page ${d.page + 1} of ${count} `;
}

function markOf(index) {
  return $("original").querySelector(`mark[data-index="${index}"]`);
}

function markCursor() {
  $("original").querySelector("mark.cursor")?.classList.remove("cursor");
  markOf(doc().cursor)?.classList.add("cursor");
}

function repaint(indices) {  // only the marks that changed, not the page
  for (const i of indices) {
    const mark = markOf(i);
    if (mark) paint(mark, doc().spans[i], i);
  }
}

function renderInspector() {
  const d = doc();
  const span = d.spans[d.cursor];
  const buttons = ["accept", "reject", "accept-all", "reject-all", "start-left", "start-right", "end-left", "end-right"];
  for (const id of [...buttons, "relabel"]) $(id).disabled = !span;
  if (!span) {
    $("current").textContent = d.spans.length ? "no span selected (n: next)" : "no spans";
    return;
  }
  const occurrences = mentionsOf(d, d.cursor).length;
  $("current").textContent = `${textOf(d, span)} · ${span.state} · ${span.source}`;
  $("relabel").value = span.label;
  $("accept-all").textContent = `Accept all ${occurrences}`;
  $("reject-all").textContent = `Reject all ${occurrences}`;
}

let shownOutput = null;
function renderOutput() {  // a judgment's text is set again only when it changed: a 100k-character relayout is slow
  const d = doc();
  if (shownOutput !== d.output) $("output").textContent = shownOutput = d.output;
  $("output").classList.toggle("stale", d.dirty);
  $("stale").hidden = !d.dirty;
}

function renderLegend() {
  const legend = $("legend");
  legend.replaceChildren();
  for (const category of new Set(doc().spans.map((s) => s.category || s.label))) {
    const item = document.createElement("span");
    item.textContent = category;
    item.style.setProperty("--color", colorOf(category));
    legend.append(item);
  }
}

function entities(d) {
  const groups = new Map();
  d.spans.forEach((s, i) => {
    const key = keyOf(d, s);
    if (!groups.has(key)) {
      groups.set(key, { key, text: textOf(d, s), label: s.label, first: i, mentions: 0, kept: 0, rejected: 0 });
    }
    const group = groups.get(key);
    group.mentions++;  // a possible miss still undecided is neither kept nor rejected
    if (applied(s)) group.kept++; else if (s.state === "rejected") group.rejected++;
  });
  return [...groups.values()];
}

let entityTimer = null;
function renderEntities() {  // only while the table is open, at most every 200 ms
  clearTimeout(entityTimer);
  if (!$("entities-panel").open) return;
  entityTimer = setTimeout(() => {
    const d = doc();
    const filter = $("entity-filter").value.trim();
    const all = entities(d);
    const shown = all.filter((e) => !filter || e.text.includes(filter) || e.label.includes(filter)).slice(0, 300);
    const rows = shown.map((e) => {
      const row = document.createElement("tr");
      const cells = [e.text, e.label, e.mentions, e.kept, e.rejected];
      for (const value of cells) row.insertCell().textContent = value;
      row.cells[0].className = "go";
      row.cells[0].addEventListener("click", () => showSpan(e.first));
      const actions = row.insertCell();
      for (const [label, target] of [["accept all", "accepted"], ["reject all", "rejected"]]) {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = label;
        button.addEventListener("click", () => setEntity(e.first, target));
        actions.append(button);
      }
      return row;
    });
    $("entities").tBodies[0].replaceChildren(...rows);
    $("entities-panel").querySelector("summary").textContent =
      `Entities (${all.length}${shown.length < all.length ? `, ${shown.length} shown` : ""})`;
  }, 0);
}

// ------------------------------------------------------------------------------------------------ review actions

function remember() {  // before every change: what undo restores
  const d = doc();
  d.undo.push({ spans: d.spans.map((s) => ({ ...s })), output: d.output, dirty: d.dirty, cursor: d.cursor });
  if (d.undo.length > UNDO_DEPTH) d.undo.shift();
}

function changed(indices = null) {
  const d = doc();
  d.dirty = true;
  if (indices) repaint(indices); else renderPage();
  renderInspector();
  renderOutput();
  renderEntities();
  save();
}

function undo() {
  const d = doc();
  const last = d.undo.pop();
  if (!last) return setStatus("nothing to undo");
  Object.assign(d, last);
  refresh();
  save();
  setStatus("undone");
}

function mentionsOf(d, index) {
  const key = keyOf(d, d.spans[index]);
  const found = [];
  d.spans.forEach((s, i) => { if (keyOf(d, s) === key) found.push(i); });
  return found;
}

function decided(span, target) {
  if (target === "rejected") return "rejected";
  return span.source === "reviewer" ? "added" : "accepted";
}

function setSpans(indices, target) {
  const d = doc();
  remember();
  for (const i of indices) {
    const span = d.spans[i];
    if (span.state === "suggested" && target !== "rejected") span.source = "reviewer";  // accepted: the reviewer's
    Object.assign(span, { state: decided(span, target), checked: true });
  }
  changed(indices);
}

function setCurrent(target) {
  const d = doc();
  if (d.spans[d.cursor]) setSpans([d.cursor], target);
}

function setEntity(index, target) {
  const indices = mentionsOf(doc(), index);
  setSpans(indices, target);
  setStatus(`${target === "rejected" ? "rejected" : "accepted"} ${indices.length} occurrence(s)`);
}

function toggle(index) {
  const d = doc();
  d.cursor = index;
  markCursor();
  setSpans([index], applied(d.spans[index]) ? "rejected" : "accepted");  // a suggestion is accepted by a click
}

function relabel(label) {
  const d = doc();
  if (!d.spans[d.cursor]) return;
  const info = state.known.get(label) || {};
  const indices = mentionsOf(d, d.cursor);
  remember();
  for (const i of indices) {
    Object.assign(d.spans[i], { label, category: info.category ?? null, tier1: info.tier1 ?? null, checked: true });
  }
  changed(indices);
  setStatus(`relabelled ${indices.length} occurrence(s) as ${label}`);
}

function overlapsAnother(d, index, start, end, yielding = ["rejected"]) {  // spans in a yielding state give way
  return d.spans.some((s, i) => i !== index && !yielding.includes(s.state) && s.start < end && start < s.end);
}

function move(edge, step) {  // edge "start" or "end", step -1 / +1 code point
  const d = doc();
  const span = d.spans[d.cursor];
  if (!span) return;
  const start = span.start + (edge === "start" ? step : 0);
  const end = span.end + (edge === "end" ? step : 0);
  if (start < 0 || end > d.chars.length || end <= start) return setStatus("a span keeps at least one character", true);
  if (overlapsAnother(d, d.cursor, start, end)) return setStatus("that would overlap another span", true);
  remember();
  Object.assign(span, { start, end, source: "reviewer", state: "added", checked: true, score: 1.0 });
  changed();
  markOf(d.cursor)?.focus({ preventScroll: true });
}

function selectionRange() {
  const selection = window.getSelection();
  const root = $("original");
  if (!selection.rangeCount || selection.isCollapsed) return null;
  const range = selection.getRangeAt(0);
  if (!root.contains(range.startContainer) || !root.contains(range.endContainer)) return null;
  const offset = (node, at) => {
    const before = document.createRange();
    before.selectNodeContents(root);
    before.setEnd(node, at);
    return Array.from(before.toString()).length;
  };
  const base = Number(root.dataset.start);
  return [base + offset(range.startContainer, range.startOffset), base + offset(range.endContainer, range.endOffset)];
}

function addSelected() {
  const found = selectionRange();
  if (!found) return setStatus("select text in the original first", true);
  let [start, end] = found;
  const d = doc();
  while (start < end && /\s/.test(d.chars[start])) start++;
  while (end > start && /\s/.test(d.chars[end - 1])) end--;
  if (start === end) return setStatus("select text in the original first", true);
  if (overlapsAnother(d, -1, start, end, ["rejected", "suggested"])) {  // a possible miss gives way to the selection
    return setStatus("the selection overlaps a span: reject that span first", true);
  }
  const label = $("label").value;
  const info = state.known.get(label) || {};
  remember();
  d.spans = d.spans.filter((s) => !(s.start < end && start < s.end));
  const span = spanOf({ start, end, label, category: info.category ?? null, tier1: info.tier1 ?? null,
                        placeholder: "", score: 1.0, source: "reviewer" }, "added", true);
  d.spans.push(span);
  d.spans.sort((a, b) => a.start - b.start);
  d.cursor = d.spans.indexOf(span);
  window.getSelection().removeAllRanges();
  changed();
  renderLegend();
  setStatus("span added; re-apply to update the de-identified text");
}

async function reapplyDoc(d) {
  const spans = d.spans.filter(applied).map(({ start, end, label, score, source }) => ({ start, end, label, score,
                                                                                          source }));
  const result = await api("/v1/apply", { id: d.id, text: d.text, spans, operator: options().operator });
  const checked = new Map(d.spans.filter((s) => s.checked).map((s) => [`${s.start}:${s.end}`, true]));
  const overridden = adopt(d, result);
  for (const s of d.spans) if (checked.has(`${s.start}:${s.end}`)) s.checked = true;
  d.cursor = Math.min(d.cursor, d.spans.length - 1);
  return overridden;
}

async function reapply() {
  const d = doc();
  remember();
  const overridden = await reapplyDoc(d);
  refresh();
  save();
  setStatus(`re-applied: ${d.spans.length - undecided(d)} span(s)` +
            (overridden ? `; ${overridden} rejected span(s) replaced anyway because the same text is kept ` +
                          "elsewhere: reject every occurrence" : ""));
}

async function reviewed(docs) {
  // Download and copy only what reflects the review: documents changed since their last de-identification are
  // re-applied first; if that fails, the caller refuses with the reason.
  for (const d of docs.filter((x) => x.dirty)) {
    try {
      await reapplyDoc(d);
    } catch (error) {
      throw new Error(`${d.id}: re-applying the review failed (${error.message}); nothing was saved, because the ` +
                      "de-identified text would not reflect your review");
    }
  }
  if (doc()) refresh();
  save();
}

// ------------------------------------------------------------------------------------------------ output

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

async function downloadText() {
  await reviewed(state.docs);
  if (state.docs.length === 1) {
    const d = state.docs[0];
    return download(`${baseName(d.id)}.deid.txt`, d.output, "text/plain;charset=utf-8");
  }
  const lines = state.docs.map((d) => JSON.stringify({ id: d.id, text: d.output }) + "\n");
  download("deidentified.jsonl", lines.join(""), "application/jsonl;charset=utf-8");
}

function downloadSpans() {  // gold format of thunder.evaluation.gold.read_gold: {"id", "text", "spans": [[s, e, label]]}
  const lines = state.docs.map((d) => JSON.stringify({
    id: d.id, text: d.text, spans: d.spans.filter(applied).map((s) => [s.start, s.end, s.label]),
    rejected: d.spans.filter((s) => s.state === "rejected").map((s) => [s.start, s.end, s.label]),
  }) + "\n");
  download("reviewed-spans.jsonl", lines.join(""), "application/jsonl;charset=utf-8");
}

async function copyOutput() {
  await reviewed([doc()]);
  const text = doc().output;
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
  } else {  // plain http beyond localhost: the clipboard API is not offered
    const area = document.createElement("textarea");
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  setStatus(`copied ${Array.from(text).length} characters`);
}

// ------------------------------------------------------------------------------------------------ files

function decode(name, buffer) {
  // UTF-8, else EUC-KR (the WHATWG "euc-kr" decoder is CP949, Korean Windows' code page, as courts still write).
  for (const [encoding, label] of [["utf-8", "UTF-8"], ["euc-kr", "EUC-KR/CP949"]]) {
    try {
      return [new TextDecoder(encoding, { fatal: true }).decode(buffer), label];
    } catch (error) {
      // try the next encoding
    }
  }
  throw new Error(`${name}: neither UTF-8 nor EUC-KR/CP949 text`);
}

async function readFiles(files) {
  const items = [], legacy = [];
  for (const file of files) {
    const [text, encoding] = decode(file.name, await file.arrayBuffer());
    if (encoding !== "UTF-8") legacy.push(file.name);
    items.push([file.name, text]);
  }
  return [items, legacy];
}

// ------------------------------------------------------------------------------------------------ this tab's store

let saveTimer = null;
function save() {  // sessionStorage: survives a reload, gone with the tab; never sent anywhere
  clearTimeout(saveTimer);
  saveTimer = setTimeout(() => {
    const docs = state.docs.map(({ id, text, output, dirty, page, cursor, spans, risk }) => ({
      id, text, output, dirty, page, cursor, risk,
      spans: spans.map((s) => [s.start, s.end, s.label, s.category, s.tier1, s.placeholder, s.score, s.source,
                               s.state, s.checked ? 1 : 0, s.reason]),
    }));
    try {
      sessionStorage.setItem(STORE, JSON.stringify({ version: 1, current: state.current, docs }));
    } catch (error) {
      setStatus("this review is too large to keep across reloads of the page: download it before leaving", true);
    }
  }, 300);
}

function restore() {
  let stored;
  try {
    stored = JSON.parse(sessionStorage.getItem(STORE) || "null");
  } catch (error) {
    return false;
  }
  if (!stored || stored.version !== 1 || !stored.docs.length) return false;
  state.docs = stored.docs.map((d) => Object.assign(newDoc(d.id, d.text), {
    output: d.output, dirty: d.dirty, page: d.page, cursor: d.cursor, risk: d.risk ?? null,
    spans: d.spans.map(([start, end, label, category, tier1, placeholder, score, source, spanState, checked, reason]) =>
      spanOf({ start, end, label, category, tier1, placeholder, score, source, reason }, spanState, !!checked)),
  }));
  showDocList();
  select(Math.min(stored.current, state.docs.length - 1));
  return true;
}

function forget() {
  clearTimeout(saveTimer);
  sessionStorage.removeItem(STORE);
  state.docs = [];
  state.current = -1;
  $("review").hidden = true;
  $("docs").replaceChildren();
  setStatus("review forgotten");
}

// ------------------------------------------------------------------------------------------------ keys

function step(direction) {
  const d = doc();
  if (!d.spans.length) return;
  let index = d.cursor;
  if (index < 0) {  // from the page on screen
    index = firstSpanFrom(d, pageRange(d).start) - (direction > 0 ? 1 : 0);
  }
  showSpan(Math.max(0, Math.min(d.spans.length - 1, index + direction)));
}

const KEYS = {
  n: () => step(1), j: () => step(1), p: () => step(-1), k: () => step(-1),
  a: () => setCurrent("accepted"), r: () => setCurrent("rejected"), x: () => setCurrent("rejected"),
  A: () => doc().spans[doc().cursor] && setEntity(doc().cursor, "accepted"),
  R: () => doc().spans[doc().cursor] && setEntity(doc().cursor, "rejected"),
  X: () => doc().spans[doc().cursor] && setEntity(doc().cursor, "rejected"),
  e: addSelected, "+": addSelected, u: undo, l: () => $("relabel").focus(),
  "[": () => move("start", -1), "]": () => move("start", 1), "{": () => move("end", -1), "}": () => move("end", 1),
};

function onKey(event) {
  if (!doc() || $("review").hidden) return;
  const target = event.target;
  if (target.closest("input, textarea, select") || target.isContentEditable) return;
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
    event.preventDefault();
    return undo();
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (target.matches?.("mark.span") && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    toggle(Number(target.dataset.index));
    return;
  }
  const action = KEYS[event.key];
  if (action) {
    event.preventDefault();
    action();
  }
}

// ------------------------------------------------------------------------------------------------ start

function guarded(action) {
  return () => Promise.resolve().then(action).catch((error) => setStatus(error.message, true));
}

function fillLabels(data) {
  state.known = new Map([...data.labels, ...data.entity_types].map((l) => [l.name, l]));
  for (const id of ["label", "relabel"]) {
    const select = $(id);
    select.replaceChildren();
    if (data.granularity && data.granularity !== "label" && data.entity_types.length) {
      const group = document.createElement("optgroup");
      group.label = `the model's ${data.granularity === "category" ? "categories" : "types"}`;
      for (const type of data.entity_types) group.append(new Option(type.name, type.name));
      select.append(group);
    }
    const byCategory = new Map();
    for (const label of data.labels) {
      if (!byCategory.has(label.category)) byCategory.set(label.category, []);
      byCategory.get(label.category).push(label);
    }
    for (const [category, labels] of byCategory) {
      const group = document.createElement("optgroup");
      group.label = category;
      for (const label of labels) group.append(new Option(label.name, label.name));
      select.append(group);
    }
  }
}

async function connect() {
  fillLabels(await api("/v1/labels"));
  $("token-panel").hidden = true;
  const health = await api("/health");
  state.rate = health.batches.characters_per_second;
  if (restore()) setStatus(`review restored from this tab: ${state.docs.length} document(s)`);
  else setStatus("ready");
}

function bind() {
  $("run").addEventListener("click", guarded(async () => {
    const files = $("files").files;
    const [items, legacy] = files.length ? await readFiles(files) : [[["pasted", $("input").value]], []];
    if (!items.some(([, text]) => text.trim())) throw new Error("paste a judgment or choose files first");
    state.rate = (await api("/health")).batches.characters_per_second || state.rate;
    await deidentifyAll(items);
    if (legacy.length) setStatus(`${$("status").textContent}; read as EUC-KR/CP949: ${legacy.join(", ")}`);
  }));
  $("cancel").addEventListener("click", () => state.run?.controller.abort());
  $("forget").addEventListener("click", forget);
  $("add").addEventListener("click", addSelected);
  $("undo").addEventListener("click", undo);
  $("reapply").addEventListener("click", guarded(reapply));
  $("download-text").addEventListener("click", guarded(downloadText));
  $("download-spans").addEventListener("click", guarded(async () => { await reviewed(state.docs); downloadSpans(); }));
  $("copy").addEventListener("click", guarded(copyOutput));
  $("accept").addEventListener("click", () => setCurrent("accepted"));
  $("reject").addEventListener("click", () => setCurrent("rejected"));
  $("accept-all").addEventListener("click", () => setEntity(doc().cursor, "accepted"));
  $("reject-all").addEventListener("click", () => setEntity(doc().cursor, "rejected"));
  $("relabel").addEventListener("change", (event) => relabel(event.target.value));
  for (const [id, edge, direction] of [["start-left", "start", -1], ["start-right", "start", 1],
                                       ["end-left", "end", -1], ["end-right", "end", 1]]) {
    $(id).addEventListener("click", () => move(edge, direction));
  }
  $("page-prev").addEventListener("click", () => { doc().page = Math.max(0, doc().page - 1); renderPage(); });
  $("page-next").addEventListener("click", () => { doc().page += 1; renderPage(); });
  $("entities-panel").addEventListener("toggle", renderEntities);
  $("entity-filter").addEventListener("input", renderEntities);
  $("original").addEventListener("click", (event) => {  // one listener for every mark of the page
    const mark = event.target.closest("mark.span");
    if (mark && window.getSelection().isCollapsed) toggle(Number(mark.dataset.index));
  });
  document.addEventListener("keydown", onKey);
  $("token-use").addEventListener("click", guarded(async () => {
    state.token = $("token").value.trim();
    sessionStorage.setItem(`${STORE}-token`, state.token);
    await connect();
  }));
}

document.addEventListener("DOMContentLoaded", () => {
  bind();
  state.token = sessionStorage.getItem(`${STORE}-token`) || "";
  guarded(connect)();
});
