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
const state = { docs: [], current: -1, known: new Map(), labels: [], shorts: new Map(), token: "", run: null,
                rate: null, threshold: null,  // threshold: the model's operating point, as /health gives it
                documents: [],  // the suffixes of the documents the server reads (.hwpx, .docx, .pdf, ...)
                pending: null };  // pending: an every-occurrence key (A / R) waiting for its second press

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

function options() {  // the threshold only where the clerk changed it: else the model's operating point runs
  const threshold = parseFloat($("threshold").value);
  const changed = Number.isFinite(threshold) && threshold !== state.threshold;
  return { operator: $("operator").value, threshold: changed ? threshold : null };
}

const doc = () => state.docs[state.current];
const textOf = (d, s) => d.chars.slice(s.start, s.end).join("");
const keyOf = (d, s) => textOf(d, s).replace(/\s+/g, "");  // an entity: every mention of the same text, spacing aside
const applied = (s) => s.state === "accepted" || s.state === "added";
const undecided = (d) => d.spans.filter((s) => s.state === "suggested").length;  // possible misses not yet decided

function entityLabels(d) {
  // Entity key -> one {label, category, tier1}: the most confident span's (a relabel gives every mention the clerk's)
  const best = new Map();
  for (const s of d.spans.filter(applied)) {
    const key = keyOf(d, s);
    if (!best.has(key) || s.score > best.get(key).score) best.set(key, s);
  }
  return new Map([...best].map(([key, { label, category, tier1 }]) => [key, { label, category, tier1 }]));
}

function applyBody(d) {  // what re-applying sends: the replaced spans, one label per entity, the letters shown and
  // the rejected occurrences (kept as written, whatever is replaced elsewhere)
  const labels = entityLabels(d);
  const spans = d.spans.filter(applied).map((s) => ({ start: s.start, end: s.end, label: labels.get(keyOf(d, s)).label,
                                                     score: s.score, source: s.source, origin: s.origin ?? null }));
  const letters = new Map();  // every entity keeps its letter (a rejected one too); a new one takes the next free
  for (const s of d.spans) {
    if (s.placeholder && s.state !== "suggested" && !letters.has(keyOf(d, s))) letters.set(keyOf(d, s), s.placeholder);
  }
  const rejected = d.spans.filter((s) => s.state === "rejected").map((s) => ({ start: s.start, end: s.end }));
  return { id: d.id, text: d.text, spans, letters: [...letters].map(([text, letter]) => ({ text, letter })),
           rejected, operator: options().operator };
}

// ------------------------------------------------------------------------------------------------ documents

function newDoc(id, text, document = null, filename = null) {
  // document: a chosen HWPX / DOCX / PDF file (base64), whose text the server extracts (text is "" until then)
  return { id, text, chars: Array.from(text), spans: [], output: "", dirty: false, page: 0, cursor: -1, undo: [],
           risk: null, unmarkedRisk: null, riskReason: null, document, filename };
}

const sizeOf = (d) => d.chars.length || (d.document ? d.document.length * 3 / 4 : 0);  // a document: its bytes

function spanOf({ start, end, label, category, tier1, placeholder, score, source, origin, reason, found }, spanState,
                checked = false) {
  // found: a span the clerk added where no possible miss pointed (a leak the risk's unmarked part expected); origin:
  // a propagated span's [start, end) of the span whose text it repeats
  return { start, end, label, category, tier1, placeholder, score, source, origin: origin ?? null,
           reason: reason ?? null, state: spanState, checked, found: !!found };
}

function adopt(d, result) {
  // Spans from the server; rejected spans that no new span overlaps stay, still rejected.
  const found = new Set(d.spans.filter((s) => s.found && applied(s)).map((s) => `${s.start}:${s.end}`));
  const spans = result.spans.map((s) => spanOf({ ...s, found: found.has(`${s.start}:${s.end}`) },
                                               SUGGESTED_SOURCES.has(s.source) ? "suggested"
                                                 : s.source === "reviewer" ? "added" : "accepted"));
  for (const s of result.suggestions || []) spans.push(spanOf(s, "suggested"));
  const overlaps = (r) => spans.some((s) => applied(s) && s.start < r.end && r.start < s.end);
  const rejected = d.spans.filter((r) => r.state === "rejected");
  const kept = rejected.filter((r) => !overlaps(r));
  const pending = result.suggestions ? [] : d.spans.filter((r) => r.state === "suggested" && !overlaps(r));
  d.spans = spans.filter((s) => applied(s) || !kept.some((r) => s.start < r.end && r.start < s.end))
                 .concat(kept, pending).sort((a, b) => a.start - b.start);  // undecided possible misses stay
  const labels = entityLabels(d);
  for (const s of d.spans.filter(applied)) Object.assign(s, labels.get(keyOf(d, s)));
  d.output = result.text;
  d.dirty = false;
  if (result.risk !== undefined) {  // the triage's chance that something was left in (null: nothing judges it)
    d.risk = result.risk;
    d.unmarkedRisk = result.unmarked_risk ?? null;
    d.riskReason = result.risk_reason ?? null;
  }
  return rejected.length - kept.length;  // rejected spans replaced anyway (the same text is kept elsewhere)
}

async function deidentifyAll(items) {
  state.docs = items.map(({ id, text, document, filename }) => newDoc(id, text ?? "", document, filename));
  const total = state.docs.reduce((n, d) => n + sizeOf(d), 0);
  const run = startRun(total);
  let next = 0;
  async function worker() {  // a few requests at a time; the server batches them onto the model
    while (next < state.docs.length && !run.controller.signal.aborted) {
      const d = state.docs[next++];
      run.inFlight.add(d);
      try {
        const source = d.document ? { document: d.document, filename: d.filename } : { text: d.text };
        const result = await api("/v1/deid", { id: d.id, ...source, ...options() }, run.controller.signal);
        if (d.document) Object.assign(d, { text: result.extracted, chars: Array.from(result.extracted) });
        adopt(d, result);
      } finally {
        run.inFlight.delete(d);
      }
      run.done += sizeOf(d);
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
  focusDocument();  // the keys work at once
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
    if (state.rate) for (const d of run.inFlight) estimate += Math.min(sizeOf(d), state.rate * seconds);
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

function foundLeaks(d) {  // entities the clerk added where no possible miss pointed: leaks no mark pointed at, found
  return new Set(d.spans.filter((s) => s.found && applied(s)).map((s) => keyOf(d, s))).size;
}

function riskNow(d) {
  // The chance that an identifier is still left in, as the review stands: the part no possible miss carries, and
  // each possible miss not yet decided (an accepted one is replaced, a rejected one judged no identifier). The
  // unmarked part is the chance of at least one of the leaks no mark points at, exp(-n) for none with n expected
  // (the rule's rate times the length): each entity the clerk adds where no mark pointed is one of them found, one
  // fewer expected. Every mark decided and nothing added: the unmarked part alone, the rule's estimate for the text
  // no mark covered.
  if (d.risk === null || d.risk === undefined) return null;
  if (d.unmarkedRisk === null || d.unmarkedRisk === undefined) return d.risk;  // a server that does not split it
  const open = d.spans.filter((s) => s.state === "suggested" && s.reason);
  const expected = Math.max(0, -Math.log(Math.max(1e-12, 1 - d.unmarkedRisk)) - foundLeaks(d));
  return 1 - Math.exp(-expected) * open.reduce((p, s) => p * (1 - Number(s.score)), 1);
}

function docLabel(d) {
  const risk = riskNow(d);
  return `${d.id} (${d.spans.length - undecided(d)}${risk === null ? "" : `, risk ${risk.toFixed(2)}`})`;
}

function showDocList() {
  const nav = $("docs");
  nav.replaceChildren();
  if (state.docs.length < 2) return;
  state.docs.forEach((d, i) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = docLabel(d);
    button.addEventListener("click", () => select(i));
    nav.append(button);
  });
}

function renderRisk() {  // every document, a single pasted one too; recomputed as the marks are decided
  const d = doc();
  const risk = riskNow(d);
  const open = d.spans.filter((s) => s.state === "suggested" && s.reason).length;
  $("risk").textContent = risk === null
    ? `risk: not judged (${d.riskReason || "no triage in the answer"})`
    : `risk ${risk.toFixed(2)} that an identifier is still left in` +
      (Math.abs(risk - d.risk) > 0.005 ? ` (${d.risk.toFixed(2)} before review)` : "") +
      ` · ${open} possible miss${open === 1 ? "" : "es"} undecided`;
  const button = $("docs").children[state.current];
  if (button) button.textContent = docLabel(d);  // the list's counts and risk follow the review
}

function select(index) {
  state.current = index;
  [...$("docs").children].forEach((b, i) => b.classList.toggle("current", i === index));
  $("review").hidden = false;
  $("download-document").hidden = !doc().document;  // a judgment opened from a document goes back as that document
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
  focusDocument();
  markOf(index)?.scrollIntoView({ block: "nearest" });
}

// ------------------------------------------------------------------------------------------------ rendering

function refresh() {
  renderPage();
  renderInspector();
  renderOutput();
  renderLegend();
  renderEntities();
}

function badge(span) {  // the short spelling of the label: a long category name would cover the text
  const letter = span.state === "rejected" ? "✗" : span.state === "suggested" ? "?" : span.placeholder || "+";
  return `${letter} ${shortLabel(span.label)}${span.checked && applied(span) ? " ✓" : ""}`;
}

function shortLabels(names) {
  // One short spelling per label, the same on every badge: up to 5 characters as written, a longer one as its head
  // and tail (사건관계인특정정보 → 사건…정보), longer where two labels would share a spelling.
  const shorts = new Map();
  const taken = new Set(names.filter((n) => Array.from(n).length <= 5));
  for (const name of names) {
    const c = Array.from(name);
    if (shorts.has(name)) continue;
    let short = name;
    if (c.length > 5) {
      for (const [head, tail] of [[2, 2], [3, 2], [2, 3], [3, 3], [4, 3], [4, 4]]) {
        if (head + tail >= c.length - 1) break;
        const candidate = `${c.slice(0, head).join("")}…${c.slice(c.length - tail).join("")}`;
        if (!taken.has(candidate)) { short = candidate; break; }
      }
    }
    taken.add(short);
    shorts.set(name, short);
  }
  return shorts;
}

const shortLabel = (label) => state.shorts.get(label) ?? label;

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
    mark.id = `mark-${i}`;  // no tabindex: a drag that starts on a highlight must still select text
    mark.textContent = textOf(d, span);
    paint(mark, span, i);
    fragment.append(mark);
    position = span.end;
  }
  fragment.append(d.chars.slice(position, end).join(""));
  view.replaceChildren(fragment);
  view.dataset.start = start;
  markCursor();
  $("pager").hidden = count < 2;
  $("page-info").textContent = ` page ${d.page + 1} of ${count} `;
}

function markOf(index) {
  return $("original").querySelector(`mark[data-index="${index}"]`);
}

function markCursor() {  // the current span: framed, and the text's active descendant (the focus stays on the text)
  $("original").querySelector("mark.cursor")?.classList.remove("cursor");
  const mark = markOf(doc().cursor);
  mark?.classList.add("cursor");
  if (mark) $("original").setAttribute("aria-activedescendant", mark.id);
  else $("original").removeAttribute("aria-activedescendant");
}

function repaint(indices) {  // only the marks that changed, not the page
  for (const i of indices) {
    const mark = markOf(i);
    if (mark) paint(mark, doc().spans[i], i);
  }
}

function renderInspector() {
  renderRisk();
  const d = doc();
  const span = d.spans[d.cursor];
  const buttons = ["accept", "reject", "accept-all", "reject-all", "start-left", "start-right", "end-left", "end-right"];
  for (const id of [...buttons, "relabel"]) $(id).disabled = !span;
  if (!span) {
    $("current").textContent = d.spans.length ? "no span selected (n: next)" : "no spans";
    $("relabel").textContent = "Relabel…";
    return;
  }
  const occurrences = mentionsOf(d, d.cursor).length;
  $("current").textContent = `${textOf(d, span)} · ${span.label} · ${span.state} · ${span.source}`;
  $("relabel").textContent = `Relabel ${occurrences > 1 ? `all ${occurrences} ` : ""}(${span.label})…`;
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
        button.textContent = `${label} ${e.mentions}`;  // the count it changes, before it is pressed
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
  cancelSpread();  // a preview of an earlier change no longer speaks
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

function rollback() {  // an edit refused after remember(): as it was, and no undo step for it
  const d = doc();
  const last = d.undo.pop();
  d.spans = last.spans;
  d.cursor = last.cursor;
}

function settle(d, span, strict) {
  // `span` (in d.spans) has its new offsets: spans of its label that it overlaps or touches merge into it (one
  // entity: 올림픽선수기자촌 + 아파트), possible misses and rejected spans under it give way (the dashed 동 of 원시동
  // is absorbed, a part outside it stays). Strict: a kept span of another label under it refuses the edit (a message,
  // nothing changed). Returns the message or {merged, absorbed}.
  const overlaps = (s) => s.start < span.end && span.start < s.end;
  const blocking = d.spans.find((s) => s !== span && applied(s) && s.label !== span.label && overlaps(s));
  if (strict && blocking) {
    return `that would overlap “${textOf(d, blocking)}” (${blocking.label}): reject or relabel it first`;
  }
  const merged = d.spans.filter((s) => s !== span && applied(s) && s.label === span.label &&
                                       s.start <= span.end && span.start <= s.end);
  for (const s of merged) Object.assign(span, { start: Math.min(span.start, s.start), end: Math.max(span.end, s.end) });
  let absorbed = 0;
  const kept = [];
  for (const s of d.spans) {
    if (merged.includes(s)) continue;
    if (s === span || applied(s) || !overlaps(s)) {
      kept.push(s);
      continue;
    }
    absorbed++;
    for (const [start, end] of [[s.start, span.start], [span.end, s.end]]) {  // the parts outside it stay
      if (end > start && d.chars.slice(start, end).join("").trim()) kept.push({ ...s, start, end });
    }
  }
  d.spans = kept.sort((a, b) => a.start - b.start);
  if (merged.length) {  // a new entity: its letter comes with re-applying
    Object.assign(span, { source: "reviewer", state: "added", checked: true, score: 1.0, placeholder: "", origin: null });
  }
  d.cursor = d.spans.indexOf(span);
  return { merged: merged.length, absorbed };
}

function settled({ merged, absorbed }) {
  return (merged ? `; merged with ${merged} span(s) of its label into one entity` : "") +
         (absorbed ? `; absorbed ${absorbed} possible miss(es) or rejected span(s)` : "");
}

function setSpans(indices, target) {
  const d = doc();
  remember();
  for (const i of indices) {
    const span = d.spans[i];
    if (span.state === "suggested" && target !== "rejected") {  // accepted: the reviewer's, its own entity
      Object.assign(span, { source: "reviewer", placeholder: "" });
    }
    Object.assign(span, { state: decided(span, target), checked: true });
  }
  if (indices.length !== 1 || target === "rejected") {
    changed(indices);
    return "";
  }
  const span = d.spans[indices[0]];
  const result = settle(d, span, false);  // one span accepted beside a span of its label: one entity
  if (result.merged || result.absorbed) changed(); else changed(indices);
  previewSpread(d, span, `accepted “${textOf(d, span)}”${settled(result)}`);
  return settled(result);
}

function setCurrent(target) {
  const d = doc();
  const span = d.spans[d.cursor];
  if (!span) return;
  const text = textOf(d, span);
  const note = setSpans([d.cursor], target);
  if (target === "rejected") setStatus(`rejected “${text}”`);
  else setStatus(`accepted “${textOf(d, d.spans[d.cursor])}”${note}`);
  focusDocument();
}

function setEntity(index, target) {
  const indices = mentionsOf(doc(), index);
  setSpans(indices, target);
  setStatus(`${target === "rejected" ? "rejected" : "accepted"} ${indices.length} occurrence(s)`);
}

function everyOccurrence(target, key) {  // A / R: the count first, the second press decides
  const d = doc();
  if (!d.spans[d.cursor]) return;
  const indices = mentionsOf(d, d.cursor);
  const pending = state.pending;
  state.pending = null;
  if (indices.length > 1 && !(pending && pending.key === key && pending.span === d.spans[d.cursor])) {
    state.pending = { key, span: d.spans[d.cursor] };
    return setStatus(`${target === "rejected" ? "reject" : "accept"} all ${indices.length} occurrences of ` +
                     `“${textOf(d, d.spans[d.cursor])}”? press ${key} again to do it, any other key cancels`);
  }
  setEntity(d.cursor, target);
}

function toggle(index) {  // Enter / Space on a highlight
  const d = doc();
  d.cursor = index;
  markCursor();
  setCurrent(applied(d.spans[index]) ? "rejected" : "accepted");  // a suggestion is accepted
}

function selectSpan(index) {  // a click: the highlight becomes the current span; its state stays as it is
  const d = doc();
  d.cursor = index;
  markCursor();
  renderInspector();
  const span = d.spans[index];
  setStatus(`“${textOf(d, span)}” ${span.label} · ${span.state}: a accept · r reject · l relabel · [ ] { } edges`);
  focusDocument();
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
  renderLegend();
  setStatus(`relabelled ${indices.length} occurrence(s) as ${label}`);
}

function move(edge, step) {  // edge "start" or "end", step -1 / +1 code point; a text selection takes it first
  if (moveSelection(edge, step)) return;
  const d = doc();
  const span = d.spans[d.cursor];
  if (!span) return;
  const start = span.start + (edge === "start" ? step : 0);
  const end = span.end + (edge === "end" ? step : 0);
  if (start < 0 || end > d.chars.length || end <= start) return setStatus("a span keeps at least one character", true);
  remember();
  Object.assign(span, { start, end });
  const result = settle(d, span, true);
  if (typeof result === "string") {
    rollback();
    return setStatus(result, true);
  }
  Object.assign(span, { source: "reviewer", state: "added", checked: true, score: 1.0, placeholder: "", origin: null });
  changed();
  renderLegend();
  focusDocument();
  setStatus(`“${textOf(d, span)}” (${span.label})${settled(result)}`);
}

// ------------------------------------------------------------------------------------------------ text selection

function pointOf(root, node, at) {  // code points from the start of the document to a DOM position in #original
  const before = document.createRange();
  before.selectNodeContents(root);
  before.setEnd(node, at);
  return Number(root.dataset.start) + Array.from(before.toString()).length;
}

function selectionRange(collapsed = false) {  // [start, end) of the selection in #original, or null
  const selection = window.getSelection();
  const root = $("original");
  if (!selection.rangeCount || (selection.isCollapsed && !collapsed)) return null;
  const range = selection.getRangeAt(0);
  if (!root.contains(range.startContainer) || !root.contains(range.endContainer)) return null;
  return [pointOf(root, range.startContainer, range.startOffset), pointOf(root, range.endContainer, range.endOffset)];
}

function selectPoints(start, end) {  // select code points [start, end) of the document, on the page holding start
  const d = doc();
  const starts = pages(d);
  let page = 0;
  while (page + 1 < starts.length && starts[page + 1] <= start) page++;
  if (page !== d.page) {
    d.page = page;
    renderPage();
  }
  end = Math.min(end, starts[page + 1] ?? d.chars.length);
  const root = $("original");
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let seen = Number(root.dataset.start), node, started = false;
  while ((node = walker.nextNode())) {
    const points = Array.from(node.data), last = seen + points.length;
    const at = (k) => points.slice(0, k - seen).join("").length;
    if (!started && start < last) {
      range.setStart(node, at(start));
      started = true;
    }
    if (started && end <= last) {
      range.setEnd(node, at(end));
      break;
    }
    seen = last;
  }
  if (!document.activeElement?.closest?.("#original")) $("original").focus({ preventScroll: true });
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  range.startContainer.parentElement?.scrollIntoView({ block: "nearest" });
  setStatus(`selected “${d.chars.slice(start, end).join("")}”: e adds it · [ ] { } or Shift+←/→ move its edges · ` +
            "Escape drops it");
}

function moveSelection(edge, step) {  // the edge keys on a text selection; false where there is none
  const found = selectionRange();
  if (!found) return false;
  let [start, end] = found;
  if (edge === "start") start += step; else end += step;
  if (start < 0 || end > doc().chars.length || end <= start) {
    setStatus("a selection keeps at least one character", true);
  } else {
    selectPoints(start, end);
  }
  return true;
}

function startSelection() {  // v: one character at the caret (a click in the text), or just after the current span
  const d = doc();
  const caret = selectionRange(true);
  const span = d.spans[d.cursor];
  const inSpan = caret && span && span.start <= caret[0] && caret[0] < span.end;  // a click on it put the caret there
  let start = caret && !inSpan ? caret[0] : span ? span.end : pageRange(d).start;
  while (start < d.chars.length - 1 && /\s/.test(d.chars[start])) start++;
  if (start >= d.chars.length) return setStatus("no text after the current span", true);
  selectPoints(start, start + 1);
}

const finder = { from: null };  // where find starts: the selection (the last hit) when / was pressed

function openFinder() {
  finder.from = selectionRange();  // read now: the focus in the find box drops the document's selection
  $("finder").hidden = false;
  $("find").select();
  $("find").focus();
}

function closeFinder() {
  $("finder").hidden = true;
  focusDocument();
}

function find(backward) {  // the next (previous) occurrence of the finder's text after (before) the selection
  const d = doc();
  const needle = $("find").value.trim();
  if (!needle) return closeFinder();
  const here = finder.from || (d.spans[d.cursor] ? [d.spans[d.cursor].start, d.spans[d.cursor].end]
                                                 : [pageRange(d).start, pageRange(d).start]);
  const units = (points) => d.chars.slice(0, points).join("").length;  // code points -> UTF-16 index
  let at = backward ? d.text.lastIndexOf(needle, units(here[0]) - 1) : d.text.indexOf(needle, units(here[1]));
  if (at < 0 || (backward && units(here[0]) === 0)) {  // wrap around
    at = backward ? d.text.lastIndexOf(needle) : d.text.indexOf(needle);
  }
  $("finder").hidden = true;
  if (at < 0) {
    focusDocument();
    return setStatus(`“${needle}” is not in this document`, true);
  }
  const start = Array.from(d.text.slice(0, at)).length;
  $("original").focus({ preventScroll: true });
  selectPoints(start, start + Array.from(needle).length);
  let hits = 0, nth = 0;
  for (let i = d.text.indexOf(needle); i >= 0; i = d.text.indexOf(needle, i + 1)) {
    hits++;
    if (i <= at) nth++;
  }
  setStatus(`“${needle}” ${nth} of ${hits} (/ then Enter: the next) · ${$("status").textContent}`);
}

function addSelected() {  // the button: the selection with the label of the toolbar's list
  const found = selectionRange();
  if (!found) return setStatus("select text in the original first", true);
  addRange(found, $("label").value);
}

function addByKey() {  // e: the selection, with a label chosen in the searchable box
  const found = selectionRange();
  if (!found) return setStatus("select text first: / finds it, v starts a selection, or drag over it", true);
  openPicker("add", found);
}

function addRange([start, end], label) {
  const d = doc();
  while (start < end && /\s/.test(d.chars[start])) start++;
  while (end > start && /\s/.test(d.chars[end - 1])) end--;
  if (start === end) return setStatus("select text in the original first", true);
  const inside = d.spans.find((s) => applied(s) && s.start <= start && end <= s.end);
  if (inside) return setStatus(`“${textOf(d, inside)}” (${inside.label}) is a span already`, true);
  const info = state.known.get(label) || {};
  remember();
  const span = spanOf({ start, end, label, category: info.category ?? null, tier1: info.tier1 ?? null,
                        placeholder: "", score: 1.0, source: "reviewer" }, "added", true);
  d.spans.push(span);
  d.spans.sort((a, b) => a.start - b.start);
  const marked = d.spans.some((s) => s.state === "suggested" && s.reason && s.start < end && start < s.end);
  const result = settle(d, span, true);  // a possible miss or a rejected span gives way to the selection
  if (typeof result === "string") {
    rollback();
    return setStatus(result.replace("that would overlap", "the selection overlaps"), true);
  }
  span.found = !marked && !result.merged;  // a leak no mark pointed at: the risk's unmarked part goes down
  window.getSelection().removeAllRanges();
  changed();
  renderLegend();
  focusDocument();
  previewSpread(d, span, `added “${textOf(d, span)}” as ${label}${settled(result)}`);
  setStatus(`added “${textOf(d, span)}” as ${label}${settled(result)}; re-apply to update the de-identified text`);
}

let spreadAsked = 0, spreadTimer = null, spreadController = null;
function cancelSpread() {
  spreadAsked++;
  clearTimeout(spreadTimer);
  spreadController?.abort();
  spreadController = null;
}

async function previewSpread(d, span, said) {
  // Re-applying replaces an accepted text wherever it stands as a word (the server decides: 신호 accepted leaves
  // 신호등 alone): where the text occurs more than once, ask the server, without changing anything, how many
  // occurrences re-applying will replace, and say it before the clerk re-applies.
  cancelSpread();
  const asked = spreadAsked;
  const text = textOf(d, span);
  if (Array.from(text.replace(/\s+/g, "")).length < 2 || d.text.split(text).length - 1 < 2) return;
  await new Promise((resolve) => { spreadTimer = setTimeout(resolve, 300); });  // keys pressed fast ask once
  if (asked !== spreadAsked) return;
  spreadController = new AbortController();
  let result;
  try {
    result = await api("/v1/apply", applyBody(d), spreadController.signal);
  } catch (error) {
    return;  // only a preview: re-apply reports any failure
  }
  if (asked !== spreadAsked || doc() !== d) return;  // another action since
  const key = text.replace(/\s+/g, "");
  const replaced = result.spans.filter((s) => s.text.replace(/\s+/g, "") === key).length;
  const total = d.text.split(text).length - 1;
  setStatus(`${said}; re-applying will replace “${text}” ${replaced} time(s)` +
            (total > replaced ? ` (it occurs ${total} times; inside longer words it stays)` : ""));
}

// ------------------------------------------------------------------------------------------------ the label box

const picker = { mode: null, range: null, items: [], active: 0 };

function openPicker(mode, range = null) {  // l: relabel the current span; e: add the selection
  const d = doc();
  const span = d.spans[d.cursor];
  if (mode === "relabel" && !span) return setStatus("no span selected (n: next)", true);
  Object.assign(picker, { mode, range });
  if (mode === "relabel") {
    const count = mentionsOf(d, d.cursor).length;
    $("picker-title").textContent = `relabel “${textOf(d, span)}” (${span.label}): Enter changes ` +
                                    `${count} occurrence(s)`;
  } else {
    $("picker-title").textContent = `add “${d.chars.slice(range[0], range[1]).join("").trim()}” as`;
  }
  $("picker-filter").value = "";
  $("picker").hidden = false;
  renderPicker(mode === "relabel" ? span.label : $("label").value);
  $("picker-filter").focus();
}

function renderPicker(keep = null) {
  const query = $("picker-filter").value.trim().toLowerCase();
  const rank = (l) => {  // the label typed in full first, then those starting with it, containing it, its category's
    const name = l.name.toLowerCase();
    return name === query ? 0 : name.startsWith(query) ? 1 : name.includes(query) ? 2 : 3;
  };
  picker.items = state.labels.filter((l) => !query || rank(l) < 3 || (l.category || "").toLowerCase().includes(query))
                             .sort((a, b) => rank(a) - rank(b));  // stable: the taxonomy's order within a rank
  const shown = picker.items;
  picker.active = Math.max(0, shown.findIndex((l) => l.name === keep));
  const list = $("picker-list");
  list.replaceChildren(...shown.map((l, i) => {
    const item = document.createElement("li");
    item.id = `pick-${i}`;
    item.setAttribute("role", "option");
    item.dataset.label = l.name;
    item.textContent = l.name;
    const category = document.createElement("span");
    category.className = "hint";
    category.textContent = ` ${l.category || ""}`;
    item.append(category);
    item.addEventListener("mousedown", (event) => event.preventDefault());  // the filter keeps the focus
    item.addEventListener("click", () => choose(i));
    return item;
  }));
  $("picker-count").textContent = picker.items.length ? `${picker.items.length} label(s)` : "no label matches";
  highlight(picker.active);
}

function highlight(index) {  // moves the highlight in the list only: nothing is applied before Enter
  const items = $("picker-list").children;
  if (!items.length) return;
  picker.active = Math.max(0, Math.min(items.length - 1, index));
  for (const item of items) item.setAttribute("aria-selected", "false");
  items[picker.active].setAttribute("aria-selected", "true");
  items[picker.active].scrollIntoView({ block: "nearest" });
  $("picker-filter").setAttribute("aria-activedescendant", items[picker.active].id);
}

function choose(index) {
  const item = $("picker-list").children[index];
  if (!item) return setStatus("no label matches", true);
  const { mode, range } = picker;
  closePicker(false);
  if (mode === "relabel") {
    relabel(item.dataset.label);
  } else {
    $("label").value = item.dataset.label;
    addRange(range, item.dataset.label);
  }
  focusDocument();
}

function closePicker(restore = true) {
  const { mode, range } = picker;
  $("picker").hidden = true;
  picker.mode = null;
  focusDocument();
  if (restore && mode === "add") selectPoints(...range);  // Escape: the selection is still there
}

function onPickerKey(event) {
  const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
  if (event.key in moves) {
    event.preventDefault();
    highlight(picker.active + moves[event.key]);
  } else if (event.key === "Enter") {
    event.preventDefault();
    choose(picker.active);
  } else if (event.key === "Escape") {
    event.preventDefault();
    closePicker();
    setStatus("nothing changed");
  }
}

function focusDocument() {  // keys go to the document again (the text holds the focus, the current span is framed)
  if (document.activeElement !== $("original")) $("original").focus({ preventScroll: true });
}

async function reapplyDoc(d) {
  const result = await api("/v1/apply", applyBody(d));
  const checked = new Map(d.spans.filter((s) => s.checked).map((s) => [`${s.start}:${s.end}`, true]));
  const overridden = adopt(d, result);
  for (const s of d.spans) if (checked.has(`${s.start}:${s.end}`)) s.checked = true;
  d.cursor = Math.min(d.cursor, d.spans.length - 1);
  return overridden;
}

async function reapply() {
  const d = doc();
  remember();
  const counts = () => {
    const found = new Map();
    for (const s of d.spans.filter(applied)) found.set(textOf(d, s), (found.get(textOf(d, s)) || 0) + 1);
    return found;
  };
  const before = counts();
  const overridden = await reapplyDoc(d);
  refresh();
  save();
  const spread = [...counts()].filter(([text, n]) => n > (before.get(text) || 0))  // where the server spread a text
                              .map(([text, n]) => `“${text}” ${n - (before.get(text) || 0)} more`);
  setStatus(`re-applied: ${d.spans.length - undecided(d)} span(s)` +
            (spread.length ? `; replaced where it stands as a word: ${spread.slice(0, 5).join(", ")}` +
                             (spread.length > 5 ? `, and ${spread.length - 5} more text(s)` : "") : "") +
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

function download(name, content, type) {  // content: a string or bytes
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([content], { type }));
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function pastedName(text) {  // the name typed for it, else one made from the text: two judgments never share one
  const typed = $("name").value.trim();
  if (typed) return typed;
  let hash = 0x811c9dc5;  // FNV-1a over the UTF-16 code units
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return `judgment-${hash.toString(16).padStart(8, "0")}`;
}

function downloadName(suffix) {  // after the source (a file's or a typed name); a batch after its first and its size
  const [first, ...rest] = state.docs;
  return `${baseName(first.id)}${rest.length ? `-and-${rest.length}-more` : ""}${suffix}`;
}

function baseName(id) {
  return id.replace(/\.[^.\/]*$/, "").replace(/[^\w가-힣.-]+/g, "_") || "document";
}

async function downloadText() {
  await reviewed(state.docs);
  if (state.docs.length === 1) {
    const d = state.docs[0];
    return download(downloadName(".deid.txt"), d.output, "text/plain;charset=utf-8");
  }
  const lines = state.docs.map((d) => JSON.stringify({ id: d.id, text: d.output }) + "\n");
  download(downloadName(".deid.jsonl"), lines.join(""), "application/jsonl;charset=utf-8");
}

function downloadSpans() {  // gold format of thunder.evaluation.gold.read_gold: {"id", "text", "spans": [[s, e, label]]}
  const lines = state.docs.map((d) => JSON.stringify({
    id: d.id, text: d.text, spans: d.spans.filter(applied).map((s) => [s.start, s.end, s.label]),
    rejected: d.spans.filter((s) => s.state === "rejected").map((s) => [s.start, s.end, s.label]),
  }) + "\n");
  download(downloadName(".reviewed.jsonl"), lines.join(""), "application/jsonl;charset=utf-8");
}

function toBase64(buffer) {  // a file's bytes for a JSON body
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

async function downloadDocument() {  // the chosen document in its own format (a PDF as text) with the review made
  const d = doc();
  if (!d.document) throw new Error("this judgment was not opened from a document (HWPX, DOCX, PDF): D downloads its text");
  await reviewed([d]);
  const result = await api("/v1/apply", { ...applyBody(d), document: d.document, filename: d.filename });
  if (result.text !== d.output) throw new Error("the document written differs from the review: nothing was saved");
  const bytes = Uint8Array.from(atob(result.document), (c) => c.charCodeAt(0));
  const suffix = result.filename.slice(result.filename.lastIndexOf("."));
  download(`${baseName(d.id)}.deid${suffix}`, bytes, "application/octet-stream");
  setStatus(`downloaded ${baseName(d.id)}.deid${suffix}: the reviewed document, checked for every replaced text`);
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

const suffixOf = (name) => (name.match(/\.[^.]+$/) || [""])[0].toLowerCase();

async function readFiles(files) {
  // A document the server reads (HWPX, DOCX, PDF) goes as it is; other files are text.
  const items = [], legacy = [];
  for (const file of files) {
    if (state.documents.includes(suffixOf(file.name))) {
      items.push({ id: file.name, document: toBase64(await file.arrayBuffer()), filename: file.name });
      continue;
    }
    const [text, encoding] = decode(file.name, await file.arrayBuffer());
    if (encoding !== "UTF-8") legacy.push(file.name);
    items.push({ id: file.name, text });
  }
  return [items, legacy];
}

// ------------------------------------------------------------------------------------------------ this tab's store

let saveTimer = null;
function save() {  // sessionStorage: survives a reload, gone with the tab; never sent anywhere
  clearTimeout(saveTimer);
  saveTimer = setTimeout(() => {
    const docs = state.docs.map(({ id, text, output, dirty, page, cursor, spans, risk, unmarkedRisk, riskReason,
                                   document, filename }) => ({
      id, text, output, dirty, page, cursor, risk, unmarkedRisk, riskReason, document, filename,
      spans: spans.map((s) => [s.start, s.end, s.label, s.category, s.tier1, s.placeholder, s.score, s.source,
                               s.state, s.checked ? 1 : 0, s.reason, s.found ? 1 : 0]),
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
  state.docs = stored.docs.map((d) => Object.assign(newDoc(d.id, d.text, d.document, d.filename), {
    output: d.output, dirty: d.dirty, page: d.page, cursor: d.cursor, risk: d.risk ?? null,
    unmarkedRisk: d.unmarkedRisk ?? null, riskReason: d.riskReason ?? null,
    spans: d.spans.map(([start, end, label, category, tier1, placeholder, score, source, spanState, checked, reason,
                         found]) =>
      spanOf({ start, end, label, category, tier1, placeholder, score, source, reason, found }, spanState, !!checked)),
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

const KEYS = {  // the page's keys; index.html lists them, docs/serving.md too
  n: () => step(1), j: () => step(1), p: () => step(-1), k: () => step(-1),
  a: () => setCurrent("accepted"), r: () => setCurrent("rejected"), x: () => setCurrent("rejected"),
  A: () => everyOccurrence("accepted", "A"), R: () => everyOccurrence("rejected", "R"),
  X: () => everyOccurrence("rejected", "X"),
  l: () => openPicker("relabel"), e: addByKey, "+": addByKey, "/": openFinder, v: startSelection, u: undo,
  "[": () => move("start", -1), "]": () => move("start", 1), "{": () => move("end", -1), "}": () => move("end", 1),
  "=": guarded(reapply), d: guarded(downloadReviewedSpans), D: guarded(downloadText), o: guarded(downloadDocument),
};

function onKey(event) {
  if (!doc() || $("review").hidden) return;
  const target = event.target;
  if (target.closest("input, textarea, select") || target.isContentEditable) return;
  if (["Shift", "Control", "Alt", "Meta", "CapsLock"].includes(event.key)) return;
  const pending = state.pending;
  state.pending = null;  // A / R wait for their own key only
  if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
    event.preventDefault();
    return undo();
  }
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.shiftKey && (event.key === "ArrowLeft" || event.key === "ArrowRight")) {  // the end of the selection/span
    event.preventDefault();
    return move("end", event.key === "ArrowLeft" ? -1 : 1);
  }
  if (event.key === "Escape") {
    if (selectionRange()) setStatus("selection dropped");
    else if (pending) setStatus("nothing changed");
    window.getSelection().removeAllRanges();
    return;
  }
  if ((event.key === "Enter" || event.key === " ") && (target === $("original") || target === document.body)) {
    if (doc().spans[doc().cursor]) {  // on a button, Enter presses the button
      event.preventDefault();
      toggle(doc().cursor);
    }
    return;
  }
  const action = KEYS[event.key];
  if (action) {
    event.preventDefault();
    if (pending && pending.key === event.key) state.pending = pending;
    action();
  }
}

// ------------------------------------------------------------------------------------------------ start

function guarded(action) {
  return () => Promise.resolve().then(action).catch((error) => setStatus(error.message, true));
}

function fillLabels(data) {
  state.known = new Map([...data.labels, ...data.entity_types].map((l) => [l.name, l]));
  const modelTypes = data.granularity && data.granularity !== "label" ? data.entity_types : [];
  state.labels = [...new Map([...modelTypes, ...data.labels].map((l) => [l.name, l])).values()];  // the box's list
  state.shorts = shortLabels(state.labels.map((l) => l.name));
  for (const id of ["label"]) {
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
  state.threshold = health.threshold;  // the model's operating point (or the server's --threshold)
  state.documents = health.documents || [];
  $("files").accept = [".txt", ".md", "text/plain", ...state.documents].join(",");
  if (health.threshold !== null && $("threshold").value === "") $("threshold").value = String(health.threshold);
  if (restore()) setStatus(`review restored from this tab: ${state.docs.length} document(s)`);
  else setStatus("ready");
}

function reviewedSoFar() {  // decisions a new run would discard
  return state.docs.reduce((n, d) => n + d.spans.filter((s) => s.checked).length, 0) ||
         (state.docs.some((d) => d.undo.length) ? 1 : 0);
}

function showSource() {  // a chosen file is de-identified, not the text box: the page says so, and greys the box
  const files = [...$("files").files];
  $("input").disabled = $("name").disabled = files.length > 0;  // files are named after themselves
  $("source").hidden = !files.length;
  $("source-text").textContent = files.length ? `de-identifying ${files.length} chosen file(s), not the text box: ` +
                                                files.map((f) => f.name).join(", ") : "";
}

function downloadReviewedSpans() {
  return reviewed(state.docs).then(downloadSpans);
}

function bind() {
  $("run").addEventListener("click", guarded(async () => {
    const files = $("files").files;
    const decisions = reviewedSoFar();
    if (decisions && !window.confirm(`De-identify again and discard the current review (${decisions} decision(s) ` +
                                     `in ${state.docs.length} document(s))? Download it first to keep it.`)) {
      return setStatus("the current review is kept");
    }
    const pasted = $("input").value;
    const [items, legacy] = files.length ? await readFiles(files) : [[{ id: pastedName(pasted), text: pasted }], []];
    if (!items.some(({ text, document }) => document || text.trim())) {
      throw new Error("paste a judgment or choose files first");
    }
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
  $("download-spans").addEventListener("click", guarded(downloadReviewedSpans));
  $("download-document").addEventListener("click", guarded(downloadDocument));
  $("copy").addEventListener("click", guarded(copyOutput));
  $("accept").addEventListener("click", () => setCurrent("accepted"));
  $("reject").addEventListener("click", () => setCurrent("rejected"));
  $("accept-all").addEventListener("click", () => setEntity(doc().cursor, "accepted"));
  $("reject-all").addEventListener("click", () => setEntity(doc().cursor, "rejected"));
  $("relabel").addEventListener("click", () => openPicker("relabel"));
  $("picker-filter").addEventListener("input", () => renderPicker());
  $("picker-filter").addEventListener("keydown", onPickerKey);
  $("picker").addEventListener("focusout", (event) => {  // a click elsewhere closes the box, changing nothing
    if (!$("picker").hidden && !$("picker").contains(event.relatedTarget)) {
      $("picker").hidden = true;
      picker.mode = null;
    }
  });
  $("find").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();
      find(event.shiftKey);
    } else if (event.key === "Escape") {
      event.preventDefault();
      closeFinder();
    }
  });
  $("files").addEventListener("change", showSource);
  $("files-clear").addEventListener("click", () => {
    $("files").value = "";
    showSource();
    $("input").focus();
  });
  $("input").addEventListener("keydown", (event) => {  // Ctrl+Enter in the text box: de-identify
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      $("run").click();
    }
  });
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
    if (mark && window.getSelection().isCollapsed) selectSpan(Number(mark.dataset.index));  // a key decides
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
  showSource();  // files the browser kept chosen across a reload
  state.token = sessionStorage.getItem(`${STORE}-token`) || "";
  guarded(connect)();
});
