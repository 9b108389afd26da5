// The replay page: steps through the model served at /replay.json (web/replay.py's shape;
// docs/web.md "Replay"): the audit's verdict on top, the table after each envelope, the
// showdown once a hand is scored, and the scores across hands as an SVG plot drawn here.
import { cardBack, cardElement } from "./cards.js";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#f2c94c", "#56ccf2", "#ff8a80", "#b39ddb", "#a5d6a7", "#ffcc80", "#f48fb1", "#e0e0e0"];
const $ = (id) => document.getElementById(id);

// what each envelope kind says a seat did (docs/protocol.md "Messages")
const DID = {
  offer: "opens the table", seating: "seats the players", agree: "agrees to the table", toss: "tosses for the deal",
  key_commit: "commits to a hand key", key_share: "publishes its hand key", shuffle: "shuffles the deck",
  deal_shares: "opens the deal", draw: "draws", draw_share: "helps open a stock draw", discard: "discards",
  close: "closes", show: "shows the hand", secret: "reveals the hand's secret", hand_digest: "signs the hand",
  reenter: "answers the re-entry", game_end: "signs the game's end", remove: "removes a seat", leave: "leaves",
  fault: "stops the table with a fault",
};

let model = null;
let positions = []; // indices into model.steps the arrows stop at
let at = 0; // index into positions

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

// A card of a step: [card index | null, public 0|1]. Hidden until the hand's secrets unless
// "cards revealed at the hand's end" is on.
function drawCard([idx, pub]) {
  if (idx === null || idx === undefined || (!pub && !$("reveal").checked)) {
    return cardBack(model.deck, "hidden card");
  }
  const svg = cardElement(model.cards[idx], model.deck);
  if (!pub) {
    svg.classList.add("hidden-known");
    svg.setAttribute("aria-label", `${model.cards[idx].alt} (hidden then, revealed at the hand's end)`);
  }
  return svg;
}

function isPosition(step, i) {
  if ($("every").checked || i === model.steps.length - 1 || i === 0) return true;
  if (step.move) return true;
  const hand = step.hand === null ? null : model.hands[step.hand];
  if (!hand) return false;
  if (hand.scored_step === i) return true;
  // the deal opened: the first step of the hand whose upcard is face up
  const prev = model.steps[i - 1];
  const open = (s) => s && s.hand === step.hand && s.pile.length > 0 && s.pile[0][1] === 1;
  return open(step) && !open(prev);
}

function buildPositions() {
  const current = positions.length ? positions[at] : 0;
  positions = model.steps.map((s, i) => (isPosition(s, i) ? i : -1)).filter((i) => i >= 0);
  at = Math.max(0, positions.findIndex((i) => i >= current));
  if (positions[at] === undefined) at = positions.length - 1;
}

function showVerdict() {
  const v = model.verdict;
  const box = $("verdict");
  box.textContent = "";
  box.className = v.verdict === "ok" ? "ok" : v.verdict === "incomplete" ? "incomplete" : "bad";
  const head = {
    ok: "Audit: a complete, valid game",
    incomplete: "Audit: valid, but the game does not finish in this record",
    cheat: "Audit: CHEAT",
    accused: "Audit: the table stopped on an accusation",
    corrupt: "Audit: the file is damaged",
    unsupported: "Audit: another protocol version",
  }[v.verdict] || `Audit: ${v.verdict}`;
  box.append(el("span", "head", head));
  const lines = v.summary.split("\n");
  box.append(el("span", "detail", lines[lines.length - 1]));
  const f = model.failed;
  const failed = $("failed");
  failed.hidden = !f;
  if (f) {
    const who = f.seat !== null && model.players[f.seat] ? `seat ${f.seat} (${model.players[f.seat].name})` : "no seat";
    failed.textContent = `Envelope ${f.index}${f.kind ? ` (${f.kind})` : ""}, ${who}: ${f.rule || v.verdict}: ${f.reason}. Nothing after it is shown.`;
  }
  $("title").textContent = `Replay: ${model.table_name || "a game"} · ${model.file || ""}`;
}

function seatBox(step, s, hand) {
  const p = model.players[s.seat] || { name: `seat ${s.seat}`, fingerprint: "" };
  const box = el("div", "seat");
  box.dataset.seat = s.seat;
  if (step.to_play === s.seat) box.classList.add("to-play");
  if (s.eliminated) box.classList.add("out");
  const head = el("div", "seat-head");
  const name = el("span", "name", p.name);
  const marks = [];
  if (hand && hand.dealer === s.seat) marks.push("dealer"); // step.dealer moves on once scored
  if (step.to_play === s.seat) marks.push("to play");
  if (s.eliminated) marks.push("out");
  head.append(name, el("span", "fp", p.fingerprint));
  if (marks.length) head.append(el("span", "marks", marks.join(" · ")));
  head.append(el("span", "total", `${s.total}${model.limit ? ` / ${model.limit}` : ""}`));
  box.append(head);
  const row = el("div", "cards");
  row.setAttribute("aria-label", `${p.name}'s cards`);
  for (const c of s.cards) row.append(drawCard(c));
  box.append(row);
  return box;
}

function render() {
  const i = positions[at];
  const step = model.steps[i];
  const hand = step.hand === null ? null : model.hands[step.hand];
  const moves = positions.filter((k) => model.steps[k].hand === step.hand);
  const pos = moves.indexOf(i) + 1;
  const actor = step.seat !== null && model.players[step.seat] ? model.players[step.seat].name : `seat ${step.seat}`;
  $("where").textContent = `${hand ? `Hand ${hand.hand + 1} of ${model.hands.length}` : "Before the deal"}`
    + ` · ${pos}/${moves.length} · envelope ${step.index + 1}/${model.steps.length}`;
  $("prev").disabled = at === 0;
  $("next").disabled = at === positions.length - 1;
  $("prev-hand").disabled = at === 0;
  $("next-hand").disabled = !positions.some((k) => k > i && model.steps[k].hand !== step.hand);
  $("event").textContent = `${actor} ${DID[step.kind] || step.kind}`;
  const log = $("log");
  log.textContent = "";
  for (const line of step.log) log.append(el("li", "", line));

  const seats = $("seats");
  seats.textContent = "";
  for (const s of step.seats) seats.append(seatBox(step, s, hand));

  const stock = $("stock");
  stock.textContent = "";
  if (hand) {
    stock.append(step.stock_size ? cardBack(model.deck, "stock") : el("span", "", "—"), el("span", "", `stock ${step.stock_size}`));
  }
  const pile = $("pile");
  pile.textContent = "";
  if (hand && step.pile.length) {
    const fan = el("div", "fan");
    for (const c of step.pile.slice(-5)) fan.append(drawCard(c));
    pile.append(fan, el("span", "", `discards ${step.pile.length}`));
  }
  $("failed").classList.toggle("here", at === positions.length - 1);
  renderShowdown(hand, i);
  renderScores(hand, i);
}

function renderShowdown(hand, i) {
  const box = $("showdown");
  box.textContent = "";
  const sd = hand && hand.scored_step !== null && i >= hand.scored_step ? hand.showdown : null;
  box.hidden = !(hand && hand.scored_step !== null && i >= hand.scored_step);
  if (box.hidden) return;
  if (!sd) {
    box.append(el("h2", "", `Hand ${hand.hand + 1}: void, nobody scores`));
    return;
  }
  const closer = model.players[sd.closer] ? model.players[sd.closer].name : "nobody";
  const title = el("h2", "", `Hand ${hand.hand + 1}: showdown (${closer} closed`);
  if (hand.face_down !== null && $("reveal").checked) {
    const card = cardElement(model.cards[hand.face_down], model.deck);
    card.classList.add("hidden-known", "inline");
    title.append(", face down ", card);
  }
  title.append(")");
  box.append(title);
  const laidOn = new Map(); // "seat/meld" -> [card index] laid off onto that meld
  for (const h of sd.hands) {
    for (const lo of h.laid_off) {
      const key = `${lo.onto_seat}/${lo.onto_meld}`;
      laidOn.set(key, [...(laidOn.get(key) || []), lo.card]);
    }
  }
  for (const h of sd.hands) {
    const row = el("div", "shown");
    row.dataset.seat = h.seat;
    row.append(el("span", "who", h.name));
    h.melds.forEach((m, k) => {
      const meld = el("div", "meld");
      meld.setAttribute("aria-label", `meld ${k + 1}`);
      for (const c of m) meld.append(cardElement(model.cards[c], model.deck));
      for (const c of laidOn.get(`${h.seat}/${k}`) || []) {
        const svg = cardElement(model.cards[c], model.deck);
        svg.classList.add("laid");
        meld.append(svg);
      }
      row.append(meld);
    });
    if (h.deadwood.length) {
      const dead = el("div", "deadwood");
      dead.setAttribute("aria-label", "deadwood");
      for (const c of h.deadwood) dead.append(cardElement(model.cards[c], model.deck));
      row.append(dead);
    }
    if (h.laid_off.length) {
      const words = h.laid_off.map((lo) => {
        const onto = model.players[lo.onto_seat] ? model.players[lo.onto_seat].name : lo.onto_seat;
        return `${model.cards[lo.card].label} on ${onto}'s meld ${lo.onto_meld + 1}`;
      });
      row.append(el("span", "layoffs", `lays off ${words.join(", ")}`));
    }
    row.append(el("span", "penalty", `${h.penalty >= 0 ? "+" : ""}${h.penalty}`));
    box.append(row);
  }
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// The running totals after each hand, one line per seat, the limit dashed; the hand on screen
// marked. Hands are scored in order, so a hand not scored yet at this step is not plotted.
function renderScores(hand, i) {
  const sc = model.scores;
  const shown = model.hands.filter((h) => h.scored_step !== null && h.scored_step <= i).length;
  const totals = sc.totals.slice(0, shown);
  const W = 360, H = 220, L = 34, R = 10, T = 12, B = 24;
  const n = Math.max(1, sc.totals.length);
  const top = Math.max(sc.limit || 0, ...sc.totals.flat(), 1);
  const low = Math.min(0, ...sc.totals.flat());
  const x = (h) => L + (W - L - R) * (h / n);
  const y = (v) => T + (H - T - B) * (1 - (v - low) / (top - low || 1));
  const plot = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "running totals after each hand" });
  plot.append(svg("line", { class: "axis", x1: L, y1: y(low), x2: W - R, y2: y(low) }));
  plot.append(svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (let h = 0; h <= n; h++) plot.append(svg("text", { x: x(h), y: H - 8, "text-anchor": "middle" }, String(h)));
  for (const v of [low, Math.round((low + top) / 2), top]) {
    plot.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, String(v)));
  }
  if (sc.limit) plot.append(svg("line", { class: "limit", x1: L, y1: y(sc.limit), x2: W - R, y2: y(sc.limit) }));
  if (hand) plot.append(svg("line", { class: "now", x1: x(hand.hand + 0.5), y1: T, x2: x(hand.hand + 0.5), y2: H - B }));
  sc.names.forEach((name, s) => {
    const apart = (s - (sc.names.length - 1) / 2) * 2; // equal totals stay visible side by side
    const pts = [[x(0), y(0) + apart], ...totals.map((row, h) => [x(h + 1), y(row[s]) + apart])];
    const back = new Map(sc.marks.filter((k) => k.seat === s && k.event === "reentered").map((k) => [k.after_hand, k.total]));
    const segments = pts.map((p, h) => (back.has(h) ? [[p[0], y(back.get(h)) + apart]] : []));
    const color = COLORS[s % COLORS.length];
    // one polyline per stretch between re-entries (the total jumps down between them)
    let line = [];
    pts.forEach((p, h) => {
      line.push(p);
      if (segments[h].length || h === pts.length - 1) {
        plot.append(svg("polyline", { points: line.map((q) => q.join(",")).join(" "), fill: "none", stroke: color, "stroke-width": 2 }));
        line = [...segments[h]];
      }
    });
    for (const [px, py] of pts.slice(1)) plot.append(svg("circle", { cx: px, cy: py, r: 3, fill: color }));
    for (const m of sc.marks.filter((k) => k.seat === s && k.after_hand <= shown)) {
      const px = x(m.after_hand);
      if (m.event === "reentered") { // bought back in: the total drops to m.total before the next hand
        plot.append(svg("line", { class: "reentry", x1: px, y1: y(totals[m.after_hand - 1][s]) + apart, x2: px, y2: y(m.total) + apart, stroke: color }));
        plot.append(svg("circle", { cx: px, cy: y(m.total) + apart, r: 3.5, fill: "none", stroke: color }));
      } else {
        const word = svg("text", { x: px - 5, y: y(m.total) + apart + 4, "text-anchor": "end" }, "out");
        word.style.fill = color; // over the stylesheet's grey for the axis labels
        plot.append(word);
      }
    }
  });
  const box = $("plot");
  box.textContent = "";
  box.append(plot);

  const sheet = $("sheet");
  sheet.textContent = "";
  const head = el("tr");
  head.append(el("th", "", "Hand"));
  sc.names.forEach((name, s) => {
    const th = el("th");
    const sw = el("span", "swatch");
    sw.style.background = COLORS[s % COLORS.length];
    th.append(sw, name);
    head.append(th);
  });
  sheet.append(head);
  sc.rows.slice(0, shown).forEach((row, h) => {
    const tr = el("tr", hand && hand.hand === h ? "current" : "");
    tr.append(el("td", "", String(h + 1)), ...row.map((p) => el("td", "", `${p >= 0 ? "+" : ""}${p}`)));
    sheet.append(tr);
  });
  if (shown) {
    const tr = el("tr", "total");
    tr.append(el("td", "", "Total"), ...totals[totals.length - 1].map((t) => el("td", "", String(t))));
    sheet.append(tr);
  }
}

function go(k) {
  at = Math.max(0, Math.min(positions.length - 1, k));
  render();
}

function handStart(hand) {
  return positions.findIndex((k) => model.steps[k].hand === hand);
}

function nextHand() {
  const h = model.steps[positions[at]].hand;
  const k = positions.findIndex((p) => p > positions[at] && model.steps[p].hand !== h);
  if (k >= 0) go(k);
}

function prevHand() {
  const h = model.steps[positions[at]].hand;
  const start = handStart(h);
  if (start < at) return go(start);
  const before = at > 0 ? model.steps[positions[at - 1]].hand : h;
  go(handStart(before));
}

function keys(ev) {
  if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const act = { ArrowRight: () => go(at + 1), ArrowLeft: () => go(at - 1), PageDown: nextHand, PageUp: prevHand,
                Home: () => go(0), End: () => go(positions.length - 1) }[ev.key];
  if (act) {
    ev.preventDefault();
    act();
  }
}

async function main() {
  const res = await fetch("replay.json", { credentials: "same-origin" });
  model = await res.json();
  showVerdict();
  buildPositions();
  $("next").addEventListener("click", () => go(at + 1));
  $("prev").addEventListener("click", () => go(at - 1));
  $("next-hand").addEventListener("click", nextHand);
  $("prev-hand").addEventListener("click", prevHand);
  $("every").addEventListener("change", () => { buildPositions(); render(); });
  $("reveal").addEventListener("change", render);
  document.addEventListener("keydown", keys);
  document.body.dataset.ready = "1";
  render();
}

main().catch((err) => {
  $("verdict").className = "bad";
  $("verdict").textContent = `The replay could not be loaded: ${err}`;
});
