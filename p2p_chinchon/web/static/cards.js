// Card faces and backs drawn as SVG: French suits (pips, J Q K figures), Spanish suits (oros,
// copas, espadas, bastos; sota, caballo, rey as 10, 11, 12 with a small figure), jokers, backs.
//
// CARD (docs/web.md): {id, rank, suit, label, alt, joker, wild}. rank: 0 joker, 1..9, 10..12 the
// courts (J Q K / sota caballo rey), 13 the pip ten of the 52-card deck. suit: "d" "h" "s" "c" on a
// French deck, "o" "c" "e" "b" on a Spanish one (so the deck is always passed: "c" is both).
// Every element returned carries role="img" and an aria-label (the card's `alt`, plus the wild
// word when the card is wild). Only SVG presentation attributes are used: no style attributes, so
// the page's content security policy holds.

const NS = "http://www.w3.org/2000/svg";
export const CARD_W = 60;
export const CARD_H = 84;

// Suit shapes, each drawn in a 10x10 box.
const FRENCH = {
  d: { color: "#c8102e", body: '<path d="M5 0L9.2 5L5 10L0.8 5Z"/>' },
  h: { color: "#c8102e", body: '<path d="M5 9.6C1.2 6.7 0 4.7 0 3C0 1.2 1.3 0 2.9 0C3.9 0 4.6 0.6 5 1.5C5.4 0.6 6.1 0 7.1 0C8.7 0 10 1.2 10 3C10 4.7 8.8 6.7 5 9.6Z"/>' },
  s: { color: "#1b1b1b", body: '<path d="M5 0C8.8 3 10 4.9 10 6.4C10 8 8.8 8.9 7.5 8.9C6.6 8.9 5.9 8.5 5.5 7.9L6.3 10H3.7L4.5 7.9C4.1 8.5 3.4 8.9 2.5 8.9C1.2 8.9 0 8 0 6.4C0 4.9 1.2 3 5 0Z"/>' },
  c: { color: "#1b1b1b", body: '<circle cx="5" cy="2.6" r="2.4"/><circle cx="2.5" cy="6.1" r="2.4"/><circle cx="7.5" cy="6.1" r="2.4"/><path d="M4.5 5.5L3.7 10H6.3L5.5 5.5Z"/>' },
};
const SPANISH = {
  o: { color: "#b8860b", body: '<circle cx="5" cy="5" r="4.8" fill="#e0b12c" stroke="#8a6508" stroke-width="0.5"/><circle cx="5" cy="5" r="2.9" fill="none" stroke="#8a6508" stroke-width="0.5"/><circle cx="5" cy="5" r="1" fill="#c8102e"/>' },
  c: { color: "#b3261e", body: '<path d="M1 0.4H9C9 3.9 7.6 5.4 5.8 5.8V8H7.6V9.6H2.4V8H4.2V5.8C2.4 5.4 1 3.9 1 0.4Z"/><path d="M1.6 1.6H8.4" stroke="#e0b12c" stroke-width="0.6"/>' },
  e: { color: "#1f4e9c", body: '<path d="M5 0L6.7 1.8V6.6H3.3V1.8Z"/><path d="M5 1.2V6.2" stroke="#9fb8e6" stroke-width="0.5"/><path d="M0.8 6.5H9.2V7.9H0.8Z" fill="#d39e12"/><path d="M4 7.9H6V9.1H4Z"/><circle cx="5" cy="9.3" r="0.85" fill="#d39e12"/>' },
  b: { color: "#2e7d32", body: '<path d="M3.4 10L2.4 2.4C2.1 0.7 3.5 0 5 0C6.5 0 7.9 0.7 7.6 2.4L6.6 10Z" fill="#8a5a2b"/><path d="M7.3 2.8L9.2 1.8M2.7 4.6L0.8 3.8M7 6.2L8.9 5.5" stroke="#2e7d32" stroke-width="1.2" stroke-linecap="round"/><path d="M4 2.5L4.4 9" stroke="#b07a45" stroke-width="0.5"/>' },
};

const FRENCH_RANK = { 1: "A", 10: "J", 11: "Q", 12: "K", 13: "10" };
const SPANISH_RANK = { 13: "10" };

/** The suit table for a deck ("french" | "spanish"). */
function suits(deck) {
  return deck === "spanish" ? SPANISH : FRENCH;
}

/** One suit sign as SVG markup: `size` units wide, centred on (x, y), turned upside down when
 * `flip` (the lower half of a French card). Unknown suits draw nothing. */
export function pipMarkup(deck, suit, x, y, size, flip = false) {
  const s = suits(deck)[suit];
  if (!s) return "";
  const k = size / 10;
  const rot = flip ? ` rotate(180 5 5)` : "";
  return `<g transform="translate(${x - size / 2} ${y - size / 2}) scale(${k})${rot}" fill="${s.color}">${s.body}</g>`;
}

// Pip positions (x, y) in the 60x84 card for 1..10 pips.
const L = 20, C = 30, R = 40;
const LAYOUT = {
  1: [[C, 42]],
  2: [[C, 22], [C, 62]],
  3: [[C, 22], [C, 42], [C, 62]],
  4: [[L, 22], [R, 22], [L, 62], [R, 62]],
  5: [[L, 22], [R, 22], [C, 42], [L, 62], [R, 62]],
  6: [[L, 22], [R, 22], [L, 42], [R, 42], [L, 62], [R, 62]],
  7: [[L, 22], [R, 22], [C, 32], [L, 42], [R, 42], [L, 62], [R, 62]],
  8: [[L, 22], [R, 22], [C, 32], [L, 42], [R, 42], [C, 52], [L, 62], [R, 62]],
  9: [[L, 20], [R, 20], [L, 35], [R, 35], [C, 42], [L, 49], [R, 49], [L, 64], [R, 64]],
  10: [[L, 20], [R, 20], [C, 28], [L, 35], [R, 35], [L, 49], [R, 49], [C, 56], [L, 64], [R, 64]],
};

/** The rank as printed in the card's corners. */
export function rankText(card, deck) {
  if (card.joker || card.rank === 0) return "★";
  const table = deck === "spanish" ? SPANISH_RANK : FRENCH_RANK;
  return table[card.rank] ?? String(card.rank);
}

function pipCount(rank) {
  return rank === 13 ? 10 : rank;
}

function isCourt(rank) {
  return rank >= 10 && rank <= 12;
}

// A court figure in a frame: a robed figure with a crown (K / rey), a diadem (Q), a cap (J /
// sota), or a horse's head (caballo), holding the suit sign. Simple shapes, clear at 40 px.
function courtMarkup(card, deck, color) {
  const spanish = deck === "spanish";
  const r = card.rank;
  let head;
  if (spanish && r === 11) {
    // the caballo: a horse's head and neck
    head = `<path d="M24 44C22 36 24 27 31 24L34 20L36 24C40 26 42 31 41 35L37 35C35 33 33 33 32 35C31 38 33 42 34 44Z" fill="${color}"/><circle cx="35" cy="28" r="1.1" fill="#fff"/>`;
  } else {
    const hat = r === 12
      ? `<path d="M24 23L26 16L28.5 21L30 14.5L31.5 21L34 16L36 23Z" fill="#e0b12c" stroke="#8a6508" stroke-width="0.5"/>`
      : r === 11
        ? `<path d="M25 23.5Q30 17 35 23.5Z" fill="#e0b12c" stroke="#8a6508" stroke-width="0.5"/><circle cx="30" cy="19.5" r="1.2" fill="#c8102e"/>`
        : `<path d="M24.5 24Q25 18 30 18Q35 18 35.5 24Z" fill="${color}"/><path d="M35 21L39 19" stroke="${color}" stroke-width="1.4" stroke-linecap="round"/>`;
    head = `<circle cx="30" cy="28" r="5" fill="#f3d6b3" stroke="#6b4a2b" stroke-width="0.6"/>${hat}`
      + `<path d="M21 46C21 38 25 34 30 34C35 34 39 38 39 46Z" fill="${color}"/>`
      + `<path d="M30 34V46" stroke="#e0b12c" stroke-width="1.2"/>`;
  }
  return `<rect x="12" y="13" width="36" height="58" rx="3" fill="#fbf7ec" stroke="${color}" stroke-width="0.8"/>`
    + head
    + pipMarkup(deck, card.suit, 30, 58, 13)
    + `<path d="M14 48H46" stroke="${color}" stroke-width="0.5" opacity="0.5"/>`;
}

function jokerMarkup(card) {
  const color = card.suit === "d" || card.suit === "o" || card.suit === 0 ? "#c8102e" : "#1b1b1b";
  return `<path d="M30 24L34.4 35.6L46.6 36L37 43.6L40.4 55.4L30 48.6L19.6 55.4L23 43.6L13.4 36L25.6 35.6Z" fill="${color}"/>`
    + `<circle cx="30" cy="42" r="4" fill="#e0b12c"/>`
    + `<text x="30" y="68" text-anchor="middle" font-family="sans-serif" font-weight="700" font-size="8" fill="${color}" letter-spacing="1">JOKER</text>`;
}

/** The whole face of one card as SVG markup (the inside of a 60x84 viewBox). */
export function faceMarkup(card, deck) {
  const joker = card.joker || card.rank === 0;
  const s = suits(deck)[card.suit];
  const color = joker ? "#6a1b9a" : (s ? s.color : "#333");
  const rank = rankText(card, deck);
  const small = rank.length > 1 ? 9 : 11;
  let out = `<rect x="0.5" y="0.5" width="59" height="83" rx="5" fill="#fff" stroke="#9a9a9a"/>`;
  if (card.wild) {
    out += `<rect x="2" y="2" width="56" height="80" rx="4" fill="none" stroke="#e0a800" stroke-width="2.2"/>`;
  }
  // corner indices: rank over suit, top left and (turned) bottom right
  const corner = `<text x="7" y="12.5" text-anchor="middle" font-family="sans-serif" font-weight="700" font-size="${small}" fill="${color}">${rank}</text>`
    + (joker ? "" : pipMarkup(deck, card.suit, 7, 19, 7));
  out += corner + `<g transform="rotate(180 30 42)">${corner}</g>`;
  if (joker) out += jokerMarkup(card);
  else if (isCourt(card.rank)) out += courtMarkup(card, deck, color);
  else {
    const n = pipCount(card.rank);
    const big = n === 1 ? (deck === "spanish" ? 26 : 22) : (n >= 9 ? 9 : deck === "spanish" ? 12 : 11);
    const flip = deck !== "spanish";
    for (const [x, y] of LAYOUT[n] ?? []) out += pipMarkup(deck, card.suit, x, y, big, flip && y > 42);
  }
  if (card.wild) {
    out += `<g transform="translate(50 3)"><circle cx="5" cy="5" r="5" fill="#e0a800"/><path d="M5 1.6L6 4L8.6 4.1L6.6 5.7L7.3 8.3L5 6.8L2.7 8.3L3.4 5.7L1.4 4.1L4 4Z" fill="#fff"/></g>`;
  }
  return out;
}

const BACK_LATTICE = (() => {
  let d = "";
  for (let i = -84; i <= 60; i += 8) d += `M${i} 0L${i + 84} 84M${i + 84} 0L${i} 84`;
  return d;
})();

/** A card back as SVG markup (the inside of a 60x84 viewBox). */
export function backMarkup(deck = "french") {
  const ink = deck === "spanish" ? "#8e1b1b" : "#1d3f7a";
  return `<rect x="0.5" y="0.5" width="59" height="83" rx="5" fill="#fff" stroke="#9a9a9a"/>`
    + `<rect x="4" y="4" width="52" height="76" rx="3" fill="${ink}"/>`
    + `<svg x="4" y="4" width="52" height="76" viewBox="4 4 52 76"><path d="${BACK_LATTICE}" stroke="#ffffff" stroke-opacity="0.22" stroke-width="1.2"/></svg>`
    + `<rect x="7" y="7" width="46" height="70" rx="2" fill="none" stroke="#ffffff" stroke-opacity="0.55" stroke-width="0.8"/>`
    + `<circle cx="30" cy="42" r="8" fill="${ink}" stroke="#e0b12c" stroke-width="1.2"/>`
    + pipMarkup(deck, deck === "spanish" ? "o" : "h", 30, 42, 8);
}

function svgElement(inner, label) {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${CARD_W} ${CARD_H}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", label);
  svg.setAttribute("class", "card-svg");
  svg.innerHTML = `<title></title>${inner}`;
  svg.firstChild.textContent = label;
  return svg;
}

/** The words for a card: its `alt`, and `wildWord` when it is wild ("seven of diamonds, wild"). */
export function cardWords(card, wildWord = "wild") {
  const base = card.alt || card.label || String(card.id);
  return card.wild ? `${base}, ${wildWord}` : base;
}

/**
 * A card face as an <svg> element (role="img", aria-label and <title> from the card's words).
 * card: CARD; deck: "french" | "spanish"; opts.wildWord: the wild word in the page's language.
 * The element scales to its CSS box (viewBox 60x84).
 */
export function cardElement(card, deck, opts = {}) {
  const svg = svgElement(faceMarkup(card, deck), cardWords(card, opts.wildWord));
  svg.classList.add("card-face");
  if (card.wild) svg.classList.add("wild");
  svg.dataset.card = card.id;
  return svg;
}

/** A card back as an <svg> element; `label` is its text alternative ("card back"). */
export function cardBack(deck = "french", label = "card back") {
  const svg = svgElement(backMarkup(deck), label);
  svg.classList.add("card-back");
  return svg;
}
