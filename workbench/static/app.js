// toolsift workbench: plain browser JavaScript, no build step. Talks to the JSON API in workbench/app.py.
"use strict";

const state = {
  config: null,      // GET /api/config
  proposal: null,    // {weights: {...}, rerank_weight}
  search: null,      // the last POST /api/search answer
  setIds: new Set(), // tools of PTR's set for the last search
  open: new Set(),   // result ids whose explanation is open
};

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) node.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children.flat()) if (child !== null && child !== undefined) node.append(child);
  return node;
};
const fmt = (v, digits = 3) => (v === null || v === undefined ? "–" : Number(v).toFixed(digits));
const clone = (x) => JSON.parse(JSON.stringify(x));
const FIELD_LABEL = { first_stage_rank: "first-stage rank", w_req: "missing req.", w_opt: "missing opt.", tau: "τ",
                      server_weight: "β server", prerequisite_tools: "M prereq.",
                      lexical_weight: "λ words" };
const planned = () => state.config && state.config.ranking === "multi-need";

// --- API keys: when the workbench has keys configured, a call answering 401 asks for the key once;
// it is kept in sessionStorage (this tab only) and sent as `Authorization: Bearer` on every /api call.
const KEY_STORE = "toolsift-workbench-key";
let keyDeclined = false; // the user cancelled the prompt: do not ask again until the page reloads
function storedKey() { try { return sessionStorage.getItem(KEY_STORE) || null; } catch (e) { return null; } }
function storeKey(key) {
  try { if (key) sessionStorage.setItem(KEY_STORE, key); else sessionStorage.removeItem(KEY_STORE); } catch (e) { /* storage off */ }
}
function send(path, body, key) {
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (key) headers["Authorization"] = `Bearer ${key}`;
  const init = body === undefined ? { headers } : { method: "POST", headers, body: JSON.stringify(body) };
  return fetch(path, init);
}

async function api(path, body) {
  const sent = storedKey();
  let answer = await send(path, body, sent);
  if (answer.status === 401) {
    let key = storedKey();
    if (key === sent && !keyDeclined) { // nobody entered a key meanwhile: ask once
      const why = await answer.clone().json().then((d) => d.error).catch(() => null);
      const typed = window.prompt(`${why || "This workbench needs an API key."}\nAPI key:`);
      key = typed ? typed.trim() : null;
      if (!key) keyDeclined = true;
      storeKey(key);
    }
    if (key && key !== sent) {
      answer = await send(path, body, key);
      if (answer.status === 401 && storedKey() === key) storeKey(null); // a wrong key: ask again next time
    }
  }
  const data = await answer.json().catch(() => ({ error: `HTTP ${answer.status}` }));
  if (!answer.ok) {
    const message = data.error || (data.detail ? JSON.stringify(data.detail) : `HTTP ${answer.status}`);
    showError(message);
    throw new Error(message);
  }
  hideError();
  return data;
}
function showError(message) { const box = $("#error"); box.textContent = message; box.hidden = false; }
function hideError() { $("#error").hidden = true; }

function debounce(fn, ms) {
  let timer = null;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

// --- tabs ----------------------------------------------------------------------------------------
for (const tab of document.querySelectorAll(".tab")) {
  tab.addEventListener("click", () => {
    for (const t of document.querySelectorAll(".tab")) t.classList.toggle("active", t === tab);
    for (const page of document.querySelectorAll(".page")) page.hidden = page.id !== `page-${tab.dataset.tab}`;
    if (tab.dataset.tab === "judge") loadJudgePage();
    if (tab.dataset.tab === "metrics") loadMetricsPage();
    if (tab.dataset.tab === "review") loadReviewPage();
  });
}

// --- configuration and sliders -------------------------------------------------------------------
async function loadConfig() {
  const config = await api("/api/config");
  state.config = config;
  state.proposal = clone(config.weights);
  const weights = config.weights_version || "fixed field weights";
  $("#status").textContent = `${config.index} · ${config.tools} tools · ${config.retriever} · ${config.ranker} · weights ${weights}` +
    ` · query log ${config.query_log.on ? "on" : "off"}`;
  $("#current-label").textContent = `${config.ranker}, ${weights}`;
  const mode = { fixed: "Fixed field weights (normalised field scores); penalties start at 0.",
                 tuned: "Tuned field weights pushed to this index (normalised field scores).",
                 learned: "Learned MFTR weights (raw field scores, bias and penalties)." }[config.weights_mode];
  $("#weights-hint").textContent = planned()
    ? "This index holds servers: its searches (CLI, API, MCP and here) are ranked by the multi-need search — each tool by its " +
      "best need score plus β × its server's score (the request's own words are one more need, at λ), then the " +
      "prerequisites of the best M tools right after them. β, M and λ re-rank the current search's rankings exactly as a search with them would; pushing makes every searcher use them."
    : `${mode} Moving a slider re-ranks the current candidates; the first stage changes once the weights are pushed.`;
  renderSliders();
  fillSetSelect(config.query_sets);
  renderLegend();
}

function renderSliders() {
  const box = $("#sliders");
  box.replaceChildren();
  const w = state.proposal.weights, base = state.config.weights.weights, ranges = state.config.ranges;
  let fields = box;
  if (planned()) {
    const p = state.proposal.planner, was = state.config.weights.planner, r = state.config.planner_ranges;
    box.append(el("div", { class: "kind", text: "multi-need search (ranks this index)" }));
    for (const name of ["server_weight", "prerequisite_tools", "lexical_weight"]) box.append(slider(null, name, "planner", p[name], was[name], r[name]));
    // the field weights rank only what the multi-need search does not take: they stay tunable, apart
    fields = el("details", { class: "fields-off" },
      el("summary", { text: "field weights (only for requests with agent or tag filters, or multi_need off)" }));
    box.append(fields);
  }
  for (const kind of w.kinds) {
    fields.append(el("div", { class: "kind", text: kind === "dense" ? "dense (MiniLM cosine)" : kind }));
    for (const f of w.features) fields.append(slider(kind, f, "field_weights", w.field_weights[kind][f], base.field_weights[kind][f], ranges[kind][f]));
    for (const name of ["tau", "w_req", "w_opt"]) fields.append(slider(kind, name, name, w[name][kind], base[name][kind], ranges[kind][name]));
  }
  if (state.config.reranker) {
    box.append(el("div", { class: "kind", text: `reranker (${state.config.reranker})` }));
    box.append(slider(null, "rerank_weight", "rerank_weight", state.proposal.rerank_weight ?? 0.5, state.config.weights.rerank_weight ?? 0.5, [0, 1, 0.01]));
  }
}

function slider(kind, name, table, value, original, range) {
  const id = `w-${kind || "x"}-${name}`;
  const show = (v) => (name === "prerequisite_tools" ? String(v) : fmt(v));
  const input = el("input", { type: "range", id, min: range[0], max: range[1], step: range[2], value, "data-kind": kind || "", "data-name": name });
  const out = el("output", { for: id, text: show(value) });
  const row = el("div", { class: "slider" + (Math.abs(value - original) > 1e-12 ? " changed" : "") },
    el("label", { for: id, text: FIELD_LABEL[name] || (name === "rerank_weight" ? "λ" : name) }), input, out);
  input.addEventListener("input", () => {
    const v = Number(input.value);
    out.textContent = show(v);
    if (table === "rerank_weight") state.proposal.rerank_weight = v;
    else if (table === "planner") state.proposal.planner[name] = v;
    else if (table === "field_weights") state.proposal.weights.field_weights[kind][name] = v;
    else state.proposal.weights[table][kind] = v;
    row.classList.toggle("changed", Math.abs(v - original) > 1e-12);
    onWeightsChanged();
  });
  return row;
}

const onWeightsChanged = debounce(() => { rerank(); compareOnSet(); }, 150);

$("#reset-weights").addEventListener("click", () => {
  state.proposal = clone(state.config.weights);
  renderSliders();
  rerank();
  compareOnSet();
});

function proposalBody() {
  const w = state.proposal.weights;
  return { weights: { field_weights: w.field_weights, tau: w.tau, w_req: w.w_req, w_opt: w.w_opt, bias: w.bias },
           rerank_weight: state.config.reranker ? state.proposal.rerank_weight : null,
           planner: planned() ? state.proposal.planner : null };
}

// --- searching -----------------------------------------------------------------------------------
$("#search-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const query = $("#query").value.trim();
  if (!query) return;
  $("#search-button").disabled = true;
  try {
    state.search = await api("/api/search", { query, top_k: Number($("#top-k").value), proposal: proposalBody() });
    state.setIds = new Set();
    state.open = new Set();
    renderStructured();
    renderLists();
    loadSet(state.search.search_id);
  } finally {
    $("#search-button").disabled = false;
  }
});

async function rerank() {
  if (!state.search) return;
  const answer = await api("/api/rerank", { search_id: state.search.search_id, proposal: proposalBody() });
  state.search.proposed = answer.proposed;
  renderLists();
}

async function loadSet(searchId) {
  const box = $("#set");
  box.hidden = false;
  box.replaceChildren(el("h2", { text: "Precise tool set (PTR)" }), el("p", { class: "hint", text: "recommending…" }));
  const answer = await api("/api/set", { search_id: searchId }).catch(() => null);
  if (!answer || !state.search || state.search.search_id !== searchId) return;
  state.setIds = new Set(answer.tools.map((t) => t.tool_id));
  box.replaceChildren(...[
    el("h2", { text: "Precise tool set (PTR)" }),
    el("p", { class: "hint", text: answer.size_rule || "" }),
    el("ol", { class: "set-members" }, answer.tools.map((t) => el("li", {},
      el("strong", { text: t.name }), ` — covers “${t.need || "the request"}”: ${t.why}`))),
    answer.unsolved_needs.length ? el("p", { class: "hint", text: `unsolved: ${answer.unsolved_needs.join(" | ")}` }) : null,
  ].filter(Boolean));
  renderLists();
}

function renderStructured() {
  const s = state.search, box = $("#structured");
  const needs = s.structured_query.tool_needs || [];
  const args = Object.entries(s.structured_query.extracted_arguments || {});
  box.hidden = false;
  box.className = "panel structured";
  box.replaceChildren(
    el("h2", {}, "Rewritten query ", el("small", { text: `rewrite: ${s.rewrite_source} · ${s.candidates} candidates · ${fmt(s.timings_ms.total, 0)} ms` + (s.degraded ? ` · DEGRADED: ${s.degraded_reason}` : "") })),
    s.ranking === "multi-need" ? el("p", { class: "hint", id: "planned-texts", text: `ranked by ${s.ranker}; searched as ${s.texts.length} text(s): ${s.texts.map((t) => `“${t}”`).join(" · ")}` }) : null,
    el("ol", { class: "needs" }, needs.map((n) => el("li", {},
      el("strong", { text: n.user_intent }),
      n.tool_description && n.tool_description !== n.user_intent ? el("span", { class: "hint", text: ` — tool: ${n.tool_description}` }) : null,
      n.expected_response && n.expected_response !== n.user_intent ? el("span", { class: "hint", text: ` — returns: ${n.expected_response}` }) : null))),
    el("div", { class: "chips", style: "margin-left:0" },
      args.length ? args.map(([k, v]) => el("span", { class: "chip", text: `${k} = ${v}` })) : el("span", { class: "hint", text: "no extracted arguments (penalties apply only to requests with arguments)" })),
  );
}

function renderLegend() {
  const names = planned() ? ["need", "server", "prerequisite"]
    : [...state.config.fields, "bias", "penalty", ...(state.config.reranker ? ["reranker"] : [])];
  const box = $("#legend");
  box.hidden = false;
  box.replaceChildren(el("span", { text: "bars: weighted contribution of" }),
    ...names.map((n) => el("span", {}, el("i", { style: `background:var(--${n}, #888)` }), FIELD_LABEL[n] || n)));
}

function renderLists() {
  const s = state.search;
  if (!s) return;
  const currentRank = new Map(s.current.map((t) => [t.id, t.rank]));
  const all = [...s.current, ...s.proposed];
  const scale = Math.max(1e-9, ...all.map((t) => Object.values(t.contributions).reduce((a, v) => a + Math.abs(v), 0)));
  $("#current").replaceChildren(...s.current.map((t) => resultItem(t, scale, null, "current")));
  $("#proposed").replaceChildren(...s.proposed.map((t) => resultItem(t, scale, currentRank, "proposed")));
}

function resultItem(t, scale, currentRank, list) {
  let move = null;
  if (currentRank) {
    const before = currentRank.get(t.id);
    if (before === undefined) move = el("span", { class: "move new", text: "new" });
    else if (before > t.rank) move = el("span", { class: "move up", text: `▲${before - t.rank}` });
    else if (before < t.rank) move = el("span", { class: "move down", text: `▼${t.rank - before}` });
    else move = el("span", { class: "move", text: "" });
  }
  const key = `${list}:${t.id}`;
  const item = el("li", { class: "result" + (state.setIds.has(t.id) ? " in-set" : ""), "data-id": t.id, "data-rank": t.rank },
    el("div", { class: "head" },
      el("span", { class: "rank", text: String(t.rank) }), move,
      el("button", { class: "name", type: "button", title: t.id, text: t.name, onclick: () => toggleExplain(key) }),
      el("span", { class: "agent", text: t.agent ? `· ${t.agent}` : "" }),
      el("span", { class: "score", text: fmt(t.score, 4) }),
      list === "current" ? judgeButtons(t) : null),
    bars(t.contributions, scale),
    chips(t),
  );
  if (state.open.has(key)) item.append(explanation(t));
  return item;
}

function bars(contributions, scale) {
  const neg = el("div", { class: "neg" }), pos = el("div", { class: "pos" });
  for (const [name, value] of Object.entries(contributions)) {
    if (Math.abs(value) < 1e-9) continue;
    const seg = el("span", { class: `seg seg-${name}`, title: `${FIELD_LABEL[name] || name}: ${fmt(value, 4)}`,
      style: `width:${(100 * Math.abs(value) / scale).toFixed(2)}%;background:var(--${name}, #888)` });
    (value < 0 ? neg : pos).append(seg);
  }
  return el("div", { class: "bars" }, neg, pos);
}

function chips(t) {
  const out = [];
  if (state.setIds.has(t.id)) out.push(el("span", { class: "chip set", text: "in PTR set" }));
  if (t.reranker_score !== null) out.push(el("span", { class: "chip rerank", text: `reranker ${fmt(t.reranker_score)}` }));
  for (const p of t.missing_required_parameters) out.push(el("span", { class: "chip missing", text: `missing: ${p}` }));
  // The ingest screen's reasons (toolsift.screen.screening): shown as text, never as markup.
  for (const reason of t.risk || []) out.push(el("span", { class: "chip risk", title: "flagged at ingest: hostile tool text", text: `⚠ ${reason}` }));
  return out.length ? el("div", { class: "chips" }, out) : null;
}

function judgeButtons(t) {
  const mark = async (relevant) => {
    const next = t.judged === relevant ? null : relevant;
    await api("/api/judgments", { query: state.search.query, tool_id: t.id, relevant: next, tool_name: t.name,
                                  agent_id: t.agent_id, query_set: $("#compare-set").value || null });
    for (const list of [state.search.current, state.search.proposed]) for (const x of list) if (x.id === t.id) x.judged = next;
    renderLists();
  };
  return el("span", { class: "judge" },
    el("button", { type: "button", class: "yes" + (t.judged === true ? " on" : ""), title: "relevant", text: "✓", onclick: () => mark(true) }),
    el("button", { type: "button", class: "no" + (t.judged === false ? " on" : ""), title: "not relevant", text: "✗", onclick: () => mark(false) }));
}

function toggleExplain(key) {
  if (state.open.has(key)) state.open.delete(key); else state.open.add(key);
  renderLists();
}

function explanation(t) {
  const e = t.explanation || {};
  const facts = `id ${t.id} · score ${fmt(t.score, 4)} · missing required: ${t.missing_required_parameters.join(", ") || "none"} · judged: ${t.judged === null || t.judged === undefined ? "no" : (t.judged ? "relevant" : "not relevant")}`;
  if (e.kind === "prerequisite") {
    return el("div", { class: "explain" },
      el("p", { class: "why", text: `prerequisite of ${e.prerequisite_of}: a tool of its server it needs called first, placed right after it and scored below it` }),
      el("p", { class: "hint", text: facts }));
  }
  if (e.kind === "multi-need") {
    return el("div", { class: "explain" },
      el("table", {}, el("thead", {}, el("tr", {}, el("th", { text: "term" }), el("th", { text: "from" }), el("th", { text: "contribution" }))),
        el("tbody", {},
          el("tr", {}, el("td", { text: "need" }), el("td", { text: `“${e.need.text}” (its best text)` }), el("td", { text: fmt(e.need.score, 4) })),
          el("tr", {}, el("td", { text: "server" }), el("td", { text: `β × the score of ${t.agent || e.server.agent_id}` }), el("td", { text: fmt(e.server.score, 4) })))),
      el("p", { class: "hint", text: `${facts} · rank in that text's joint ranking ${t.first_stage_rank || "–"}` }));
  }
  const kinds = Object.keys(t.raw_scores);
  const fields = [...new Set([...state.config.fields, ...Object.keys(t.field_scores)])];
  const rows = fields.map((f) => el("tr", {},
    el("td", { text: FIELD_LABEL[f] || f }),
    ...kinds.map((k) => el("td", { text: fmt(t.raw_scores[k]?.[f], 4) })),
    el("td", { text: fmt(t.field_scores[f], 4) }),
    el("td", { text: fmt(t.contributions[f], 4) })));
  for (const extra of ["bias", "penalty", "reranker"]) {
    if (t.contributions[extra] !== undefined) rows.push(el("tr", {}, el("td", { text: extra }), ...kinds.map(() => el("td", { text: "" })), el("td", { text: "" }), el("td", { text: fmt(t.contributions[extra], 4) })));
  }
  return el("div", { class: "explain" },
    el("table", {}, el("thead", {}, el("tr", {}, el("th", { text: "field" }), ...kinds.map((k) => el("th", { text: `raw ${k}` })), el("th", { text: "score used" }), el("th", { text: "contribution" }))), el("tbody", {}, rows)),
    el("p", { class: "hint", text: `id ${t.id} · first-stage rank ${t.first_stage_rank || "–"} · base score ${fmt(t.base_score ?? t.score, 4)} · reranker ${fmt(t.reranker_score)} · missing required: ${t.missing_required_parameters.join(", ") || "none"} · judged: ${t.judged === null || t.judged === undefined ? "no" : (t.judged ? "relevant" : "not relevant")}` }));
}

// --- query-set comparison ------------------------------------------------------------------------
function fillSetSelect(sets) {
  for (const select of [$("#compare-set")]) {
    const chosen = select.value;
    select.replaceChildren(el("option", { value: "", text: "— choose —" }), ...sets.map((s) => el("option", { value: s.name, text: `${s.name} (${s.size})` })));
    if (sets.some((s) => s.name === chosen)) select.value = chosen;
  }
}

$("#compare-set").addEventListener("change", () => compareOnSet());

async function compareOnSet() {
  const name = $("#compare-set").value, box = $("#compare-result");
  if (!name) return;
  box.textContent = "measuring…";
  const r = await api("/api/compare", { query_set: name, proposal: proposalBody() }).catch(() => null);
  if (!r || $("#compare-set").value !== name) return;
  const measures = Object.keys(r.current);
  const cls = (d) => (d > 1e-9 ? "delta pos" : d < -1e-9 ? "delta neg" : "delta");
  box.replaceChildren(...[
    el("div", {}, el("span", { class: "big", id: "ndcg-current", text: fmt(r.current[measures[0]], 4) }), " → ",
      el("span", { class: "big", id: "ndcg-proposed", text: fmt(r.proposed[measures[0]], 4) }), " ",
      el("span", { class: cls(r.delta[measures[0]]), id: "ndcg-delta", text: `(${r.delta[measures[0]] >= 0 ? "+" : ""}${fmt(r.delta[measures[0]], 4)})` })),
    el("div", { class: "hint", text: `${measures[0].toUpperCase()} on ${r.queries} queries; ${measures.slice(1).map((m) => `${m.toUpperCase()} ${fmt(r.current[m], 4)} → ${fmt(r.proposed[m], 4)}`).join(", ")}` }),
    r.movers.length ? el("ul", { class: "hint movers" }, r.movers.slice(0, 5).map((m) => el("li", { text: `${m.delta > 0 ? "+" : ""}${fmt(m.delta, 3)} ${m.query.slice(0, 70)}` }))) : null,
  ].filter(Boolean));
}

// --- save and push -------------------------------------------------------------------------------
let savedPath = null;
$("#save-weights").addEventListener("click", async () => {
  const answer = await api("/api/weights/save", { name: $("#weights-name").value.trim(), proposal: proposalBody(),
                                                  query_set: $("#compare-set").value || null });
  savedPath = answer.path;
  $("#push-weights").disabled = false;
  $("#weights-result").textContent = `saved ${answer.version} (${answer.path})`;
});
$("#push-weights").addEventListener("click", async () => {
  if (!savedPath) return;
  const answer = await api("/api/weights/push", { path: savedPath });
  $("#weights-result").textContent = `pushed ${answer.version} to ${answer.index}: ${answer.pipelines.length} search pipelines updated`;
  await loadConfig();
  if (state.search) $("#search-form").requestSubmit();
});
$("#clear-weights").addEventListener("click", async () => {
  await api("/api/weights/clear", {});
  $("#weights-result").textContent = "the index ranks with the fixed field weights again";
  await loadConfig();
});

// --- judgments and query sets --------------------------------------------------------------------
async function loadJudgePage() {
  const [sets, judged] = await Promise.all([api("/api/querysets"), api("/api/judgments?limit=100")]);
  $("#query-sets tbody").replaceChildren(...sets.query_sets.map((s) => el("tr", {},
    el("td", { text: s.name }), el("td", { text: s.origin }), el("td", { text: String(s.size) }), el("td", { text: (s.created || "").replace("T", " ").slice(0, 19) }))));
  $("#judgments tbody").replaceChildren(...judged.judgments.map((j) => el("tr", {},
    el("td", { text: (j.judged_at || "").replace("T", " ").slice(0, 19) }), el("td", { text: j.query }),
    el("td", { text: j.tool_name || j.tool_id }), el("td", { text: j.relevant ? "relevant" : "not relevant" }))));
  fillSetSelect(sets.query_sets);
}

$("#import-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("#sets-result").textContent = "importing…";
  const answer = await api("/api/querysets/import", { path: $("#import-path").value.trim(), name: $("#import-name").value.trim() || null })
    .catch(() => null);
  $("#sets-result").textContent = answer ? `imported ${answer.name}: ${answer.size} queries (${JSON.stringify(answer.notes)})` : "";
  loadJudgePage();
});
$("#from-judgments-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await api("/api/querysets/from-judgments", { name: $("#judged-set-name").value.trim() }).catch(() => null);
  $("#sets-result").textContent = answer ? `built ${answer.name}: ${answer.size} judged queries` : "";
  loadJudgePage();
});

// --- review queue: changed tool definitions (toolsift.ingest.approvals) ---------------------------
async function loadReviewPage() {
  const answer = await api("/api/approvals");
  if (!answer) return;
  $("#review-empty").textContent = answer.pending.length ? "" : "Nothing waits: every served definition is approved.";
  $("#review-queue").replaceChildren(...answer.pending.map((p) => el("li", { class: "review-item", "data-id": p.id },
    el("div", { class: "head" },
      el("strong", { text: p.id }),
      el("span", { class: "chip", text: p.reason }),
      el("span", { class: "hint", text: ` from ${p.source}${p.approved_source ? ` (pinned from ${p.approved_source})` : " (nothing served yet)"} · since ${(p.since || "").slice(0, 19)}` })),
    p.risk.length ? el("div", { class: "chips" }, p.risk.map((r) => el("span", { class: "chip risk", text: `⚠ ${r}` }))) : null,
    el("pre", { class: "diff" }, p.diff.map((line) => el("span", {
      class: line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : "",
      text: line + "\n" }))),
    el("div", { class: "row" },
      el("button", { type: "button", class: "approve", text: "Approve", onclick: () => decide(p.id, "approve") }),
      el("button", { type: "button", class: "reject", text: "Reject", onclick: () => decide(p.id, "reject") })))));
}

async function decide(id, decision) {
  const done = await api(`/api/approvals/${encodeURIComponent(id).replace(/%2F/g, "/")}/${decision}`, {});
  if (done) loadReviewPage();
}

// --- metrics -------------------------------------------------------------------------------------
const charts = {};
function drawChart(id, data, series, opts = {}) {
  const box = $(`#${id}`);
  if (charts[id]) { charts[id].destroy(); delete charts[id]; }
  box.replaceChildren();
  if (!data[0].length) { box.append(el("p", { class: "hint", text: opts.empty || "nothing recorded yet" })); return; }
  const palette = ["#2f6fdf", "#e0661b", "#18a37a", "#9b51e0", "#d93838", "#5f7384"];
  charts[id] = new uPlot({
    width: Math.max(400, box.clientWidth || 800), height: 260,
    // one point: a range around it (uPlot would otherwise stretch the axis over years)
    scales: { x: { time: true, range: (u, min, max) => (max - min < 60 ? [min - 1800, max + 1800] : [min, max]) } },
    series: [{}, ...series.map((label, i) => ({ label, stroke: palette[i % palette.length], width: 2, points: { show: true, size: 6 }, spanGaps: true }))],
    axes: [{}, { label: opts.y || "" }],
  }, data, box);
}

async function loadMetricsPage() {
  const runs = await api("/api/metrics/evalruns");
  const select = $("#metric-set");
  const sets = Object.keys(runs.series).sort();
  const chosen = select.value;
  select.replaceChildren(...sets.map((s) => el("option", { value: s, text: s })));
  if (sets.includes(chosen)) select.value = chosen;
  drawEvalRuns(runs);
  drawLatency();
}

function drawEvalRuns(runs) {
  const set = $("#metric-set").value, measure = $("#metric-measure").value;
  const rows = (runs.series || {})[set] || {};
  const names = Object.keys(rows).filter((r) => rows[r].some((p) => p[measure] !== null && p[measure] !== undefined));
  const times = [...new Set(names.flatMap((r) => rows[r].map((p) => Date.parse(p.recorded_at) / 1000)))].sort((a, b) => a - b);
  const data = [times, ...names.map((r) => times.map((t) => { const p = rows[r].find((q) => Date.parse(q.recorded_at) / 1000 === t); return p ? p[measure] : null; }))];
  drawChart("eval-chart", data, names, { y: measure, empty: runs.runs ? `no ${measure} in the runs of ${set}` : "no eval runs recorded yet: run `toolsift eval`" });
  const flat = names.flatMap((r) => rows[r].map((p) => ({ row: r, ...p }))).sort((a, b) => b.recorded_at.localeCompare(a.recorded_at)).slice(0, 30);
  $("#eval-table tbody").replaceChildren(...flat.map((p) => el("tr", {},
    el("td", { text: p.recorded_at.replace("T", " ").slice(0, 19) }), el("td", { text: p.row }),
    el("td", { text: fmt(p.ndcg_10, 4) }), el("td", { text: fmt(p.recall_10, 4) }), el("td", { text: fmt(p.tracc, 4) }), el("td", { text: p.source || "" }))));
}
$("#metric-set").addEventListener("change", () => api("/api/metrics/evalruns").then(drawEvalRuns));
$("#metric-measure").addEventListener("change", () => api("/api/metrics/evalruns").then(drawEvalRuns));

async function drawLatency() {
  const q = `interval=${$("#latency-interval").value}&since=${$("#latency-since").value}`;
  const r = await api(`/api/metrics/latency?${q}`);
  const o = r.overall || {};
  $("#latency-summary").textContent = r.searches
    ? `${r.searches} logged searches (${Object.entries(r.by_source).map(([k, v]) => `${k} ${v}`).join(", ")}): p50 ${fmt(o.p50, 1)} ms · p95 ${fmt(o.p95, 1)} ms · p99 ${fmt(o.p99, 1)} ms`
    : (r.logging ? "no searches logged in this window yet" : "the query log is off (query_log = false): searches are not recorded");
  const b = r.buckets || [];
  drawChart("latency-chart", [b.map((x) => Date.parse(x.t) / 1000), b.map((x) => x.p50), b.map((x) => x.p95), b.map((x) => x.p99)],
    ["p50 ms", "p95 ms", "p99 ms"], { y: "ms", empty: "no logged searches in this window" });
}
$("#latency-interval").addEventListener("change", drawLatency);
$("#latency-since").addEventListener("change", drawLatency);

loadConfig().catch((e) => { $("#status").textContent = "not connected"; showError(String(e.message || e)); });
