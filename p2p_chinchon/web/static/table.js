// The browser table: one WebSocket to this seat's own node (docs/web.md). Every message from the
// server is a whole page state; the page draws it and sends intents, picks, the hand's order,
// answers and hint requests back. The page holds no rules: the node checks every intent.

import { cardElement, cardBack } from "./cards.js";
import { EN, SERVER_KEYS } from "./texts.js";

const $ = (id) => document.getElementById(id);

let state = null; // the last STATE from the server
let ws = null;
let clockDeadline = null; // performance.now() when the turn clock reaches 0
let clockKey = null; // the seat and turn the clock counts for
let clockTotal = 0; // its seconds when first seen: the ring's full circle
let waitDeadline = null;
let panel = null; // "help" | "pile" | null: the open side sheet
let showdownHidden = false; // the held showdown was put away here (until the server lets it go)
let showdownRecalled = false; // "l": the last showdown shown again
let reconnectDelay = 250;

// ---------------------------------------------------------------- texts

/** The page's label for `key` in the player's language (the server's `texts`, else English),
 * with {name} fields filled from `fields`. */
export function t(key, fields = {}) {
  const table = (state && state.texts) || {};
  let s = table[`web_${key}`];
  if (s == null) {
    const alias = SERVER_KEYS[key];
    const [other, template] = Array.isArray(alias) ? alias : [alias, "{text}"];
    s = other && table[other] != null ? template.split("{text}").join(table[other]) : (EN[key] ?? key);
  }
  s = pluralForm(s, fields);
  for (const [k, v] of Object.entries(fields)) s = s.split(`{${k}}`).join(String(v));
  return s;
}

// A plural entry of the server's texts ({count, one, many, zero_is_one}, docs/web.md): the
// form for the number in fields[count]; a plain template stands as it is.
function pluralForm(entry, fields) {
  while (entry && typeof entry === "object") {
    const n = Math.abs(Number(fields[entry.count]));
    const one = Number.isInteger(n) && (n === 1 || (entry.zero_is_one && n === 0));
    entry = one ? entry.one : entry.many;
  }
  return String(entry ?? "");
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

// A part of the page is rebuilt only when what it shows changed: a state that changes something
// else (a countdown, a status line) keeps its scroll position, focus and the element under the
// pointer.
const drawn = new WeakMap();
function unchanged(root, ...inputs) {
  const key = JSON.stringify([state.lang, state.deck, ...inputs]);
  if (drawn.get(root) === key) return true;
  drawn.set(root, key);
  return false;
}

function button(label, onClick, cls = "") {
  const b = el("button", cls, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function deck() {
  return (state && state.deck) || "french";
}

function face(card) {
  return cardElement(card, deck(), { wildWord: t("wild") });
}

function back() {
  return cardBack(deck(), t("card_back"));
}

// ---------------------------------------------------------------- the connection

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

function intent(name, extra = {}) {
  send({ type: "intent", intent: name, ...extra });
}

let lostSince = null;  // when the WebSocket closed (ms), null while it is open
const LOST_AFTER_MS = 8000;

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  ws = new WebSocket(`${proto}//${location.host}/ws`);
  ws.addEventListener("open", () => {
    reconnectDelay = 250;
    lostSince = null;
    $("conn").hidden = true;
    document.body.classList.remove("offline");
  });
  ws.addEventListener("message", (ev) => {
    let msg;
    try {
      msg = JSON.parse(ev.data);
    } catch {
      return;
    }
    if (msg.type === "state") setState(msg.state);
    else if (msg.type === "rejected") toast(msg.reason);
  });
  ws.addEventListener("close", () => {
    if (state && state.ended) return; // the node is done: nothing to reconnect to
    const c = $("conn");
    lostSince ??= Date.now();
    // a while without the seat: it may have stopped (a crash); run again, it serves a new address
    c.textContent = t(Date.now() - lostSince > LOST_AFTER_MS ? "seat_gone" : "reconnecting");
    c.hidden = false;
    document.body.classList.add("offline");  // nothing on the felt answers while the seat is away
    setTimeout(connect, reconnectDelay);
    reconnectDelay = Math.min(reconnectDelay * 2, 4000);
  });
}

let toastTimer = null;
function toast(text) {
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, 4000);
}

// ---------------------------------------------------------------- state

function setState(s) {
  state = s;
  if (!s.showdown_held) showdownHidden = false; // the next held showdown shows again
  const now = performance.now();
  clockDeadline = s.clock ? now + s.clock.seconds_left * 1000 : null;
  const key = s.clock ? `${s.clock.seat}:${s.hand_no}:${(s.log || []).length}:${s.stock_size}` : null;
  if (key !== clockKey) {
    clockKey = key;
    clockTotal = s.clock ? s.clock.seconds_left : 0;
  }
  clockTotal = Math.max(clockTotal, s.clock ? s.clock.seconds_left : 0);
  waitDeadline = s.waiting && s.waiting.seconds_left != null ? now + s.waiting.seconds_left * 1000 : null;
  render();
}

/** The hand in display order: [{card, idx, kind, group}] from `groups` (melds, then deadwood). */
function displayOrder() {
  const hand = state.hand || [];
  const groups = state.groups && state.groups.length
    ? state.groups
    : [{ kind: "deadwood", cards: hand.map((_, i) => i) }];
  const out = [];
  groups.forEach((g, gi) => {
    for (const i of g.cards) if (hand[i]) out.push({ card: hand[i], idx: i, kind: g.kind, group: gi });
  });
  return out;
}

function render() {
  if (!state) return;
  document.documentElement.lang = state.lang || "en";
  document.body.dataset.phase = state.phase || "";
  renderBar();
  renderOpponents();
  renderCenter();
  renderMine();
  renderLobby();
  renderPicker();
  renderShowdown();
  renderPanel();
  renderQuestion();
  renderEnded();
  renderLines();
  tick();
}

function renderBar() {
  $("table-name").textContent = state.table_name || "p2p-chinchon";
  // the tab's title says when the table waits for this seat (the terminal rings its bell)
  const asked = state.my_turn || !!state.question || !!(state.lobby && state.lobby.can_agree);
  document.title = `${asked ? "● " : ""}${state.table_name ? `${state.table_name} · ` : ""}p2p-chinchon`;
  $("hand-no").textContent = state.hand_no && state.phase !== "lobby" ? t("hand_no", { n: state.hand_no }) : "";
  $("status").textContent = state.phase_text || "";
  $("status").classList.toggle("mine", !!state.my_turn);
  const inGame = !["lobby", "connecting"].includes(state.phase) && !state.picker;
  $("btn-pile").hidden = !inGame;
  $("btn-pile").textContent = t("pile");
  $("btn-last").hidden = !state.showdown;
  $("btn-last").textContent = t("last_showdown");
  $("btn-help").textContent = t("help");
  $("btn-leave").textContent = t("leave");
  $("btn-leave").hidden = !!state.ended;
  for (const id of ["btn-pile", "btn-last", "btn-help", "btn-leave"]) {
    $(id).title = `${$(id).textContent} (${$(id).dataset.key})`;
  }
}

// The terminal's words for a seat (you, dealer, out, bot, offline, agreed), then what the page
// adds: left for good, came back, link relayed.
function seatBadges(s) {
  const out = (s.flags || []).map((f) => ["flag", f]);
  if (s.left) out.push(["left", t("left")]);
  if (s.back) out.push(["back", t("back")]);
  if (s.relayed) out.push(["relayed", t("relayed")]);
  return out;
}

function seatBox(s, withCards) {
  const box = el("div", "seat");
  box.dataset.seat = s.seat;
  if (s.to_play) box.classList.add("to-play");
  if (s.left) box.classList.add("gone");
  if (s.away) box.classList.add("away");
  if (s.eliminated) box.classList.add("out");
  const head = el("div", "seat-head");
  head.append(el("span", "seat-name", s.name));
  if (s.to_play) head.append(el("span", "turn-dot", "●"));
  box.append(head);
  box.append(el("div", "fp", s.fingerprint || ""));
  if (withCards && s.cards > 0) {
    const fan = el("div", "fan");
    fan.setAttribute("aria-label", t("n_cards", { n: s.cards }));
    fan.setAttribute("role", "img");
    for (let i = 0; i < s.cards; i++) {
      const b = back();
      b.setAttribute("aria-hidden", "true");
      fan.append(b);
    }
    box.append(fan);
  }
  const score = el("div", "score");
  score.append(el("span", "total", t("points_n", { n: s.total ?? 0 })));
  if (s.to_limit != null) score.append(el("span", "to-limit", t("to_limit_n", { n: s.to_limit })));
  box.append(score);
  const badges = seatBadges(s);
  if (badges.length) {
    const row = el("div", "badges");
    for (const [cls, text] of badges) row.append(el("span", `badge ${cls}`, text));
    box.append(row);
  }
  if (withCards && s.last_turn) {
    const lt = el("div", "last-turn");
    lt.title = s.last_turn.text || "";
    if (s.last_turn.threw) {
      const w = el("div", "card tiny");
      w.append(face(s.last_turn.threw));
      lt.append(w);
    }
    lt.append(el("span", "", s.last_turn.text || ""));
    box.append(lt);
  }
  if (state.clock && state.clock.seat === s.seat) {
    const c = el("div", "clock");
    c.dataset.clock = "1";
    box.append(c);
  }
  return box;
}

function renderOpponents() {
  const root = $("opponents");
  root.replaceChildren();
  const seats = state.seats || [];
  const mine = seats.findIndex((s) => s.me);
  // in playing order from the seat after mine: they sit around the table clockwise
  const others = mine < 0 ? seats : [...seats.slice(mine + 1), ...seats.slice(0, mine)];
  root.dataset.count = others.length;
  others.forEach((s, i) => {
    const b = seatBox(s, true);
    b.classList.add(`pos-${i}`);
    root.append(b);
  });
}

function renderCenter() {
  const p = state.progress;
  $("progress").hidden = !p;
  if (p) {
    $("progress-label").textContent = p.text || "";
    $("progress-fill").style.width = `${p.total ? Math.round((100 * p.done) / p.total) : 0}%`;
  }
  const stock = $("stock");
  stock.replaceChildren();
  const canStock = !!(state.can_draw && state.can_draw.stock);
  const canDiscard = !!(state.can_draw && state.can_draw.discard);
  stock.classList.toggle("live", canStock);
  if (state.stock_size > 0) stock.append(back());
  else stock.append(el("div", "empty-spot"));
  stock.append(el("div", "pile-count", t("stock_n", { n: state.stock_size ?? 0 })));
  stock.setAttribute("aria-label", `${t("draw_stock")} (${t("stock_n", { n: state.stock_size ?? 0 })})`);

  const disc = $("discard");
  disc.replaceChildren();
  disc.classList.toggle("live", canDiscard);
  disc.classList.toggle("target", !!state.can_discard);
  if (state.discard_top) disc.append(face(state.discard_top));
  else disc.append(el("div", "empty-spot"));
  disc.append(el("div", "pile-count", t("discard_n", { n: state.discard_size ?? 0 })));
  disc.setAttribute("aria-label", canDiscard ? t("take_discard") : t("discard_pile"));

  const log = $("log");
  log.replaceChildren();
  const lines = [...(state.notices || []).map((x) => ["notice", x]), ...(state.log || []).map((x) => ["event", x])];
  for (const [cls, text] of lines.slice(-8)) log.append(el("li", cls, text));
  log.scrollTop = log.scrollHeight; // the latest line in sight
}

function renderMine() {
  const me = (state.seats || []).find((s) => s.me);
  const seat = $("my-seat");
  seat.replaceChildren();
  if (me) {
    const b = seatBox(me, false);
    b.classList.add("me");
    seat.append(b);
  }
  renderActions();
  const hand = $("hand");
  if (unchanged(hand, state.hand, state.groups, state.picked, state.hint, state.my_turn)) return;
  hand.replaceChildren();
  hand.classList.toggle("my-turn", !!state.my_turn);
  const order = displayOrder();
  let current = null;
  for (const item of order) {
    if (!current || current.dataset.group !== String(item.group)) {
      current = el("div", `group ${item.kind}`);
      current.dataset.group = item.group;
      current.append(el("div", "group-label", t(item.kind === "custom" ? "your_order" : item.kind)));
      hand.append(current);
    }
    const c = el("div", "card");
    c.setAttribute("role", "button");
    c.tabIndex = 0;
    c.dataset.id = item.card.id;
    c.dataset.idx = item.idx;
    const svg = face(item.card);
    c.setAttribute("aria-label", svg.getAttribute("aria-label"));
    c.setAttribute("aria-pressed", state.picked === item.idx ? "true" : "false");
    if (state.picked === item.idx) c.classList.add("picked");
    if (state.hint && state.hint.card && state.hint.card.id === item.card.id) c.classList.add("hinted");
    c.append(svg);
    c.addEventListener("pointerdown", (e) => startDrag(e, "hand", item.card));
    current.append(c);
  }
}

function renderActions() {
  const bar = $("actions");
  const msg = $("message");
  const text = state.message || (state.hint && state.hint.text) || "";
  msg.hidden = !text;
  msg.textContent = text;
  msg.className = state.message_kind || "info";
  if (unchanged(bar, state.my_turn, state.step, state.can_draw, state.can_discard, state.close_options, state.picked,
    state.hand, state.phase, state.custom_order, state.reentry_offer, state.hand_summary, state.close_text)) return;
  bar.replaceChildren();
  const can = state.can_draw || {};
  if (state.my_turn && state.step === "draw") {
    const s = button(t("draw_stock"), () => intent("draw", { source: "stock" }), "primary");
    s.disabled = !can.stock;
    const d = button(t("take_discard"), () => intent("draw", { source: "discard" }));
    d.disabled = !can.discard;
    bar.append(s, d);
  }
  if (state.can_discard) {
    const picked = pickedCard();
    const d = button(picked ? t("discard_card", { card: picked.label }) : t("discard"), () => discardPicked(), "primary");
    d.disabled = !picked;
    bar.append(d);
    for (const opt of state.close_options || []) {
      const label = t(opt.chinchon ? "close_chinchon" : "close_with", { card: opt.card.label, n: opt.points });
      const b = button(label, () => intent("close", { card: opt.card.id }), opt.over_limit ? "close warn" : "close");
      if (opt.over_limit) b.title = t("over_limit");
      bar.append(b);
      if (opt.over_limit) bar.append(el("span", "warn-text", t("over_limit")));
    }
  }
  if (state.my_turn && state.phase === "playing") {
    bar.append(button(t("hint"), () => send({ type: "hint" }), "ghost"));
  }
  if (state.custom_order) bar.append(button(t("regroup"), () => send({ type: "regroup" }), "ghost"));
  if (state.reentry_offer) {
    bar.append(button(t("reenter_yes"), () => intent("reenter", { accept: true }), "primary"));
    bar.append(button(t("reenter_no"), () => intent("reenter", { accept: false })));
  }
  const info = el("div", "hand-info");
  if (state.hand_summary) info.append(el("span", "summary", state.hand_summary));
  if (state.close_text) info.append(el("span", "close-text", state.close_text));
  if (info.childNodes.length) bar.prepend(info);
}

function pickedCard() {
  if (state.picked == null) return null;
  return (state.hand || [])[state.picked] || null;
}

function discardPicked() {
  const c = pickedCard();
  if (c && state.can_discard) intent("discard", { card: c.id });
}

function pick(card) {
  const idx = (state.hand || []).findIndex((c) => c.id === card.id);
  if (idx < 0) return;
  if (state.picked === idx && state.can_discard) {
    intent("discard", { card: card.id }); // a second click on the picked card throws it
    return;
  }
  state.picked = idx; // drawn at once; the server's next state confirms it for every tab
  send({ type: "pick", card: card.id });
  renderMine();
}

function sendOrder(ids) {
  // the new order shows at once, the server keeps it for every tab
  const byId = new Map((state.hand || []).map((c) => [c.id, c]));
  const pickedId = pickedCard()?.id;
  state.hand = ids.map((id) => byId.get(id)).filter(Boolean);
  state.groups = regroup(state.hand);
  state.picked = pickedId ? state.hand.findIndex((c) => c.id === pickedId) : null;
  send({ type: "order", cards: ids });
  renderMine();
}

// Until the server's state answers, the reordered hand keeps its groups by card.
function regroup(hand) {
  const old = displayOrder();
  const kindOf = new Map(old.map((o) => [o.card.id, [o.group, o.kind]]));
  const groups = [];
  hand.forEach((c, i) => {
    const [g, kind] = kindOf.get(c.id) ?? [0, "deadwood"];
    let last = groups[groups.length - 1];
    if (!last || last.g !== g) groups.push((last = { g, kind, cards: [] }));
    last.cards.push(i);
  });
  return groups.map(({ kind, cards }) => ({ kind, cards }));
}

function moveCard(id, beforeId) {
  const ids = displayOrder().map((o) => o.card.id).filter((x) => x !== id);
  const at = beforeId == null ? ids.length : ids.indexOf(beforeId);
  ids.splice(at < 0 ? ids.length : at, 0, id);
  sendOrder(ids);
}

function shiftPicked(delta) {
  const c = pickedCard();
  if (!c) return;
  const ids = displayOrder().map((o) => o.card.id);
  const i = ids.indexOf(c.id);
  const j = i + delta;
  if (j < 0 || j >= ids.length) return;
  [ids[i], ids[j]] = [ids[j], ids[i]];
  sendOrder(ids);
}

// ---------------------------------------------------------------- dragging (pointer events)

let drag = null;

function startDrag(e, kind, payload) {
  if (e.button !== 0 || !state) return;
  drag = { kind, payload, x0: e.clientX, y0: e.clientY, src: e.currentTarget, ghost: null };
  e.preventDefault();
}

function dropTarget(d, x, y) {
  const under = document.elementFromPoint(x, y);
  if (!under) return null;
  if (d.kind === "hand") {
    if (under.closest("#discard")) return { kind: "discard", el: $("discard") };
    const card = under.closest("#hand .card");
    if (card && card.dataset.id !== d.payload.id) {
      const r = card.getBoundingClientRect();
      return { kind: "before", el: card, after: x > r.left + r.width / 2 };
    }
    if (under.closest("#mine")) return { kind: "end", el: $("hand") };
    return null;
  }
  if (under.closest("#mine")) return { kind: "draw", el: $("hand") };
  return null;
}

function clearMarks() {
  for (const m of document.querySelectorAll(".drop-here, .drop-after")) m.classList.remove("drop-here", "drop-after");
}

document.addEventListener("pointermove", (e) => {
  if (!drag) return;
  if (!drag.ghost) {
    if (Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < 6) return;
    const r = drag.src.getBoundingClientRect();
    const g = drag.src.cloneNode(true);
    g.classList.add("ghost");
    g.style.width = `${r.width}px`;
    g.style.height = `${r.height}px`;
    drag.dx = drag.x0 - r.left;
    drag.dy = drag.y0 - r.top;
    document.body.append(g);
    drag.ghost = g;
    drag.src.classList.add("dragging");
  }
  drag.ghost.style.left = `${e.clientX - drag.dx}px`;
  drag.ghost.style.top = `${e.clientY - drag.dy}px`;
  clearMarks();
  const target = dropTarget(drag, e.clientX, e.clientY);
  if (target) target.el.classList.add(target.after ? "drop-after" : "drop-here");
});

document.addEventListener("pointerup", (e) => {
  if (!drag) return;
  const d = drag;
  drag = null;
  clearMarks();
  if (!d.ghost) {
    click(d.kind, d.payload);
    return;
  }
  d.ghost.remove();
  d.src.classList.remove("dragging");
  const target = dropTarget(d, e.clientX, e.clientY);
  if (!target) return;
  if (d.kind === "hand") {
    if (target.kind === "discard") {
      if (state.can_discard) intent("discard", { card: d.payload.id });
      else toast(t("not_now"));
    } else if (target.kind === "before") {
      const ids = displayOrder().map((o) => o.card.id).filter((x) => x !== d.payload.id);
      const at = ids.indexOf(target.el.dataset.id) + (target.after ? 1 : 0);
      moveCard(d.payload.id, ids[at] ?? null);
    } else if (target.kind === "end") {
      moveCard(d.payload.id, null);
    }
  } else if (target.kind === "draw") {
    drawFrom(d.kind);
  }
});

document.addEventListener("pointercancel", () => {
  if (drag && drag.ghost) {
    drag.ghost.remove();
    drag.src.classList.remove("dragging");
  }
  drag = null;
  clearMarks();
});

function click(kind, payload) {
  if (kind === "hand") pick(payload);
  else if (kind === "stock") drawFrom("stock");
  else if (kind === "discard") {
    if (state.can_discard && pickedCard()) discardPicked();
    else if (state.can_draw && state.can_draw.discard) drawFrom("discard");
    else openPanel("pile");
  }
}

function drawFrom(source) {
  if (state.can_draw && state.can_draw[source]) intent("draw", { source });
  else toast(t("not_now"));
}

// ---------------------------------------------------------------- sheets: lobby, picker, showdown, end

function cardRow(cards, cls = "row") {
  const row = el("div", cls);
  for (const c of cards) {
    const w = el("div", "card small");
    w.append(face(c));
    row.append(w);
  }
  return row;
}

function renderLobby() {
  const root = $("lobby");
  const lobby = state.lobby;
  const show = !!lobby && state.phase === "lobby" && !state.ended;
  root.hidden = !show;
  $("felt").classList.toggle("under-sheet", show || !!state.picker || !!state.ended);
  if (!show || unchanged(root, lobby, state.rules_lines, state.status, state.table_name, state.my_fingerprint)) return;
  root.replaceChildren();
  root.append(el("h1", "", state.table_name || t("lobby")));
  if (lobby.code_word) {
    const cw = el("div", "code-word");
    cw.append(el("div", "code-label", t("code_word")));
    cw.append(el("div", "code", lobby.code_word));
    root.append(cw);
  }
  if (lobby.code_join && lobby.code_join !== lobby.code_word) root.append(el("p", "code-join", lobby.code_join));
  if (lobby.code_met) root.append(el("p", "code-met", lobby.code_met));
  const seats = el("ul", "lobby-seats");
  for (const s of lobby.seats || []) {
    const li = el("li");
    li.append(el("span", "seat-name", s.name));
    li.append(el("span", "fp big", s.fingerprint));
    if (s.me) li.append(el("span", "badge me", t("you")));
    if (s.agreed) li.append(el("span", "badge agreed", t("agreed")));
    seats.append(li);
  }
  for (let i = 0; i < (lobby.free_seats || 0); i++) seats.append(el("li", "free", t("free_seat")));
  root.append(el("h2", "", t("players")));
  root.append(seats);
  if (state.my_fingerprint) {
    const mine = el("p", "my-fp");
    mine.append(el("span", "", `${t("your_fingerprint")}: `));
    mine.append(el("span", "fp big", state.my_fingerprint));
    root.append(mine);
  }
  const actions = el("div", "sheet-actions");
  if (lobby.agreed) actions.append(el("span", "badge agreed", t("agreed")));
  else if (lobby.can_agree) {
    const b = button(t("agree"), () => intent("agree"), "primary");
    b.id = "btn-agree";
    actions.append(b);
  }
  if (actions.childNodes.length) root.append(actions);
  if (state.status) root.append(el("p", "sheet-status", state.status));
  root.append(el("h2", "", t("rules")));
  const rules = el("ul", "rules");
  for (const line of state.rules_lines || []) rules.append(el("li", "", line));
  root.append(rules);
}

function renderPicker() {
  const root = $("picker");
  const p = state.picker;
  root.hidden = !p || !!state.ended;
  if (!p || unchanged(root, p, state.status)) return;
  root.replaceChildren();
  root.append(el("h1", "", t("pick_table")));
  const list = el("ul", "tables");
  for (const tb of p.tables || []) {
    const li = el("li");
    const b = button("", () => send({ type: "pick_table", index: tb.index }), "table-choice");
    b.append(el("span", "seat-name", tb.name));
    b.append(el("span", "", `${tb.host}:${tb.port} · ${tb.preset || ""} · ${tb.seats_taken}/${tb.max_seats}`));
    b.append(el("span", "fp", tb.fingerprint || ""));
    li.append(b);
    list.append(li);
  }
  if (!(p.tables || []).length) list.append(el("li", "free", t("no_tables")));
  root.append(list);
  root.append(button(t("pick_none"), () => send({ type: "pick_table", index: null })));
  if (state.status) root.append(el("p", "sheet-status", state.status));
}


function renderShowdown() {
  const root = $("showdown");
  const sd = state.showdown;
  const show = !!sd && !state.ended && (showdownRecalled || (!!state.showdown_held && !showdownHidden)
    || state.phase === "over");
  root.hidden = !show;
  if (!show || unchanged(root, sd, state.scores, state.outcome, state.winner_text, state.phase === "over", showdownRecalled,
    state.reentry_offer, state.phase === "over" ? state.status : null, !!state.question,
    state.hand_no, (state.seats || []).map((x) => x.name))) return;
  root.replaceChildren();
  const names = new Map((state.seats || []).map((s) => [s.seat, s.name]));
  const handNo = sd.hand ?? state.hand_no ?? "";  // the showdown's own hand: the next may be dealt already
  if (sd.said) root.append(el("h1", "", `${t("hand_no", { n: handNo })} · ${sd.said}`));
  else root.append(el("h1", "", t("showdown_title", { n: handNo, name: sd.closer_name ?? names.get(sd.closer) ?? "" })));
  // every lay-off lands on its meld: collect them by (seat, meld)
  const landing = new Map();
  for (const h of sd.hands || []) {
    for (const lo of h.laid_off || []) {
      const k = `${lo.onto_seat}:${lo.onto_meld}`;
      if (!landing.has(k)) landing.set(k, []);
      landing.get(k).push({ card: lo.card, from: h.name });
    }
  }
  const over = state.phase === "over";
  if (over) {
    for (const line of state.outcome || []) {
      root.append(el("p", line === state.winner_text ? "winner" : "outcome", line));
    }
    if (state.winner_text && !(state.outcome || []).includes(state.winner_text)) {
      root.append(el("p", "winner", state.winner_text));
    }
    root.append(scoreSheet());
    // never a silent wait: what the seat waits for now (the others' records, the rematch vote)
    if (state.status && !state.question) root.append(el("p", "sheet-status", state.status));
    root.append(el("h2", "", t("last_showdown")));
  }
  const hands = el("div", "sd-hands");
  for (const h of sd.hands || []) {
    const box = el("div", "sd-hand");
    box.dataset.seat = h.seat;
    if (h.seat === sd.closer) box.classList.add("closer");
    const head = el("div", "sd-head");
    head.append(el("span", "seat-name", h.name));
    if (h.seat === sd.closer) head.append(el("span", "badge closer", t("closed")));
    head.append(el("span", "penalty", t("penalty_n", { n: h.penalty })));
    box.append(head);
    const melds = el("div", "sd-melds");
    (h.melds || []).forEach((m, mi) => {
      const row = cardRow(m, "meld-row");
      for (const lo of landing.get(`${h.seat}:${mi}`) || []) {
        const w = el("div", "card small laid-off");
        w.append(face(lo.card));
        w.title = t("laid_off_by", { name: lo.from });
        w.append(el("span", "from", lo.from));
        row.append(w);
      }
      melds.append(row);
    });
    box.append(melds);
    if ((h.deadwood || []).length) {
      const dw = el("div", "sd-deadwood");
      dw.append(el("span", "group-label", t("deadwood")));
      dw.append(cardRow(h.deadwood));
      melds.append(dw);
    }
    // a lay-off no single meld takes stays with the hand that laid it off
    const loose = (h.laid_off || []).filter((lo) => lo.onto_seat == null || lo.onto_meld == null);
    if (loose.length) {
      const lo = el("div", "sd-deadwood");
      lo.append(el("span", "group-label", t("laid_off")));
      lo.append(cardRow(loose.map((x) => x.card)));
      melds.append(lo);
    }
    hands.append(box);
  }
  root.append(hands);
  if (!over) {
    root.append(scoreSheet());
    for (const line of state.outcome || []) root.append(el("p", "outcome", line));
  }
  if (state.phase !== "over" || showdownRecalled) {
    const actions = el("div", "sheet-actions");
    if (state.reentry_offer) {  // asked over this sheet: the action bar is under it
      actions.append(button(t("reenter_yes"), () => intent("reenter", { accept: true }), "primary"));
      actions.append(button(t("reenter_no"), () => intent("reenter", { accept: false })));
    }
    const b = button(t("continue"), () => {
      if (showdownRecalled) showdownRecalled = false;
      else {
        showdownHidden = true;
        intent("showdown_seen");
      }
      render();
    }, "primary");
    b.id = "btn-continue";
    actions.append(b);
    root.append(actions);
  }
}

function scoreSheet() {
  const sc = state.scores;
  const wrap = el("div", "score-sheet");
  if (!sc || !(sc.names || []).length) return wrap;
  wrap.append(el("h2", "", t("score_sheet")));
  const table = el("table");
  const head = el("tr");
  head.append(el("th", "", "#"));
  for (const n of sc.names) head.append(el("th", "", n));
  table.append(head);
  for (const r of sc.rows || []) {
    const tr = el("tr");
    tr.append(el("td", "", String(r.hand)));
    (r.points || []).forEach((v, i) => {
      const td = el("td", "", v == null ? "–" : String(v));
      const seat = (sc.seats || [])[i];
      if ((r.out || []).includes(seat)) td.classList.add("bust");
      const back = (r.back || []).find(([s]) => s === seat);
      if (back) td.title = t("bought_back", { n: back[1] });
      tr.append(td);
    });
    table.append(tr);
  }
  const tot = el("tr", "totals");
  tot.append(el("th", "", t("total")));
  for (const v of sc.totals || []) {
    const td = el("th", "", String(v));
    if ((sc.limit != null && v > sc.limit) || (sc.eliminated || [])[sc.totals.indexOf(v)]) td.classList.add("bust");
    tot.append(td);
  }
  table.append(tot);
  if (sc.tonight) {
    const tn = el("tr", "tonight");
    tn.append(el("td", "", t("tonight")));
    for (const v of sc.tonight) tn.append(el("td", "", v ?? ""));
    table.append(tn);
  }
  wrap.append(table);
  for (const n of sc.notes || []) wrap.append(el("p", "note", n));
  if (sc.limit != null) wrap.append(el("p", "limit", t("limit_n", { n: sc.limit })));
  return wrap;
}

function renderLines() {
  const st = $("status-line");
  st.hidden = !state.status;
  st.textContent = state.status || "";
  const sp = $("stopped");
  sp.hidden = !state.stopped_text || !!state.ended; // the end's sheet says it then
  sp.textContent = state.stopped_text || "";
}

function renderEnded() {
  const root = $("ended");
  const e = state.ended;
  root.hidden = !e;
  if (!e || unchanged(root, e, state.scores)) return;
  root.replaceChildren();
  root.classList.toggle("error", !!e.error);
  root.append(el("h1", "", t("ended_title")));
  root.append(el("p", "how", e.how));
  if (e.transcript) {
    const p = el("p", "transcript");
    p.append(el("span", "", `${t("transcript")}: `));
    p.append(el("code", "", e.transcript));
    root.append(p);
  }
  if (e.exit_code != null) root.append(el("p", "exit", t("exit_code", { n: e.exit_code })));
  if (state.scores && (state.scores.rows || []).length) root.append(scoreSheet());
}

// ---------------------------------------------------------------- side sheet: help and pile

function openPanel(name) {
  panel = panel === name ? null : name;
  renderPanel();
}

function renderPanel() {
  const root = $("panel");
  root.hidden = !panel;
  if (!panel || unchanged(root, panel, state.pile, state.help, state.rules_lines)) return;
  root.replaceChildren();
  const close = button("×", () => openPanel(null), "close-x");
  close.setAttribute("aria-label", t("close_panel"));
  root.append(close);
  if (panel === "help") {
    root.append(el("h1", "", t("help")));
    if ((state.help || []).length) {
      const pre = el("ul", "help-lines");
      for (const line of state.help) pre.append(el("li", "", line));
      root.append(pre);
    }
    const dl = el("dl", "keys");
    dl.hidden = (state.help || []).length > 0; // the terminal's own help says the keys
    for (const [k, key] of [["s", "key_s"], ["d", "key_d"], ["← → 1-8", "key_pick"], ["Enter", "key_enter"],
      ["c", "key_c"], ["< >", "key_move"], ["h", "key_h"], ["l", "key_l"], ["p", "key_p"], ["?", "key_help"],
      ["g", "key_g"], ["a", "key_a"], ["q", "key_q"], ["y n b", "key_yn"]]) {
      dl.append(el("dt", "", k));
      dl.append(el("dd", "", t(key)));
    }
    root.append(dl);
    root.append(el("p", "", t("mouse_help")));
    if ((state.rules_lines || []).length) {
      root.append(el("h2", "", t("rules")));
      const ul = el("ul", "rules");
      for (const line of state.rules_lines) ul.append(el("li", "", line));
      root.append(ul);
    }
  } else if (panel === "pile") {
    root.append(el("h1", "", t("pile_title")));
    const ol = el("ol", "pile-history");
    for (const p of state.pile || []) {
      const li = el("li", p.what);
      if (p.card) {
        const w = el("div", "card tiny");
        w.append(face(p.card));
        li.append(w);
      }
      li.append(el("span", "", t(`pile_${p.what}`, { name: p.name ?? "", n: p.count ?? 0 })));
      ol.append(li);
    }
    if (!(state.pile || []).length) ol.append(el("li", "free", t("pile_empty")));
    root.append(ol);
  }
}

// ---------------------------------------------------------------- the question

function renderQuestion() {
  const q = state.question;
  const root = $("question");
  root.hidden = !q;
  if (!q) return;
  if (root.dataset.qid === String(q.id) && root.dataset.qtext === q.text) return;
  root.dataset.qid = q.id;
  root.dataset.qtext = q.text;
  $("question-text").textContent = q.text;
  const row = $("question-buttons");
  row.replaceChildren();
  const yes = button(t("yes"), () => answer(true), "primary");
  yes.id = "btn-yes";
  row.append(yes);
  const no = button(t("no"), () => answer(false));
  no.id = "btn-no";
  row.append(no);
  if (q.block) {
    const b = button(t("block"), () => answer("block"), "warn");
    b.id = "btn-block";
    row.append(b);
  }
  yes.focus();
}

function answer(value) {
  if (!state.question) return;
  send({ type: "answer", id: state.question.id, value });
  state.question = null;
  $("question").hidden = true;
  $("question").dataset.qid = "";
}

// ---------------------------------------------------------------- clocks

function fmt(seconds) {
  const s = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function tick() {
  if (!state) return;
  const now = performance.now();
  for (const c of document.querySelectorAll("[data-clock]")) {
    if (clockDeadline == null) continue;
    const left = (clockDeadline - now) / 1000;
    c.textContent = fmt(left);
    c.classList.toggle("low", left <= 10);
    if (clockTotal > 0) c.style.setProperty("--frac", String(Math.max(0, left) / clockTotal));
  }
  const w = state.waiting;
  const line = $("waiting");
  // the status line says a wait in words; a wait it does not tell gets this line, and a seat
  // whose turn clock shows is marked on the table too
  line.hidden = !w || !!state.ended || !!state.status;
  if (!line.hidden) {
    const secs = waitDeadline == null ? "" : ` · ${fmt((waitDeadline - now) / 1000)}`;
    const text = t(w.absent ? "waiting_absent" : "waiting_for", { name: w.name ?? "", what: "" });
    line.textContent = text.replace(/[:\s]+$/, "") + secs;
  }
}
setInterval(tick, 250);

// ---------------------------------------------------------------- keys (the terminal's)

document.addEventListener("keydown", (e) => {
  if (!state || e.ctrlKey || e.metaKey || e.altKey) return;
  const k = e.key;
  if (state.question) {
    if (k === "y" || k === "Y") answer(true);
    else if (k === "n" || k === "N" || k === "Escape") answer(false);
    else if ((k === "b" || k === "B") && state.question.block) answer("block");
    else return;
    e.preventDefault();
    return;
  }
  if (e.target instanceof HTMLElement && e.target.matches("input, textarea")) return;
  if (panel && k === "Escape") { openPanel(null); e.preventDefault(); return; }
  const order = displayOrder();
  const pickedId = pickedCard()?.id;
  switch (k) {
    case "s": drawFrom("stock"); break;
    case "d": drawFrom("discard"); break;
    case "Enter":
      if (e.target instanceof HTMLElement && e.target.matches("button")) return;
      if (e.target instanceof HTMLElement && e.target.matches("#hand .card") && e.target.dataset.id !== pickedId) {
        pick(order.find((o) => o.card.id === e.target.dataset.id).card);
      } else discardPicked();
      break;
    case "ArrowLeft":
    case "ArrowRight": {
      if (!order.length) return;
      const i = order.findIndex((o) => o.card.id === pickedId);
      const j = i < 0 ? 0 : (i + (k === "ArrowLeft" ? order.length - 1 : 1)) % order.length;
      pick(order[j].card);
      break;
    }
    case "c": {
      const opts = state.close_options || [];
      const opt = opts.find((o) => o.card.id === pickedId) || (opts.length === 1 ? opts[0] : null);
      if (opt) intent("close", { card: opt.card.id });
      else toast(t(opts.length ? "close_pick" : "close_not_now"));
      break;
    }
    case "<": shiftPicked(-1); break;
    case ">": shiftPicked(1); break;
    case "h": send({ type: "hint" }); break;
    case "g": send({ type: "regroup" }); break;
    case "a": if (state.lobby && state.lobby.can_agree) intent("agree"); break;
    case "l":
      if (state.showdown) { showdownRecalled = !showdownRecalled; render(); }
      break;
    case "p": openPanel("pile"); break;
    case "?": openPanel("help"); break;
    case "q": intent("leave"); break;
    default:
      if (/^[1-9]$/.test(k) && order[Number(k) - 1]) pick(order[Number(k) - 1].card);
      else return;
  }
  e.preventDefault();
});

for (const [id, fn] of [
  ["btn-pile", () => openPanel("pile")],
  ["btn-help", () => openPanel("help")],
  ["btn-leave", () => intent("leave")],
  ["btn-last", () => { showdownRecalled = true; render(); }],
]) $(id).addEventListener("click", fn);
$("stock").addEventListener("pointerdown", (e) => startDrag(e, "stock", null));
$("discard").addEventListener("pointerdown", (e) => startDrag(e, "discard", null));
for (const id of ["stock", "discard"]) {
  $(id).addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") { click(id, null); e.preventDefault(); e.stopPropagation(); }
  });
}

connect();
