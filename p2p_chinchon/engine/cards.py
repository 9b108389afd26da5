"""Cards: French and Spanish names, parsing.

A :class:`Card` is ``Card(rank, suit, copy)``:

* ``rank`` 1..7; 8 and 9 (48- and 52-card decks only); 10 = J / sota, 11 = Q / caballo,
  12 = K / rey; 13 = the pip ten of the 52-card French deck (002 "La baraja"); 0 = joker.
* ``suit`` 0..3 = oros/♦, copas/♥, espadas/♠, bastos/♣ (the traditional correspondence).
  For a joker, suit 0 or 1 tells the two jokers of one pack apart.
* ``copy`` 0/1 tells the two packs apart in two-pack games (000 "Variants").

Ranks are identities, not run positions: which ranks are adjacent depends on the deck and is
decided by :meth:`p2p_chinchon.engine.rules.Rules.run_position` (in the 40-card deck the 7 and
the J are neighbours, 000 "The cards").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "Card",
    "CardError",
    "parse_card",
    "parse_cards",
    "JOKER",
    "TEN",
    "SUITS_FRENCH",
    "SUITS_SPANISH",
    "SUITS_ASCII",
    "SUITS_ASCII_SPANISH",
    "CARD_STYLES",
]

CARD_STYLES = ("french", "spanish", "ascii", "ascii-spanish")

JOKER = 0
TEN = 13  # pip ten, only in the 52-card French deck

SUITS_FRENCH = ("♦", "♥", "♠", "♣")
SUITS_SPANISH = ("oros", "copas", "espadas", "bastos")
SUITS_ASCII = ("d", "h", "s", "c")

_FRENCH_RANK = {1: "A", 10: "J", 11: "Q", 12: "K", 13: "10"}
_ASCII_RANK = {1: "A", 10: "J", 11: "Q", 12: "K", 13: "T"}
_SPANISH_RANK = {10: "sota", 11: "caballo", 12: "rey", 13: "diez"}
# The short Spanish notation (style "ascii-spanish"): suits o c e b, courts S C R (sota,
# caballo, rey), T the pip ten (10 is the sota in Spanish numbering).
_SHORT_SPANISH_RANK = {10: "S", 11: "C", 12: "R", 13: "T"}
SUITS_ASCII_SPANISH = ("o", "c", "e", "b")


class CardError(ValueError):
    """A card text or card value that names no card. The message is one line."""


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One physical card. Frozen, hashable and ordered by (rank, suit, copy)."""

    rank: int
    suit: int
    copy: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.rank, int) or not 0 <= self.rank <= 13:
            raise CardError(f"bad rank {self.rank!r} (0 joker, 1..13)")
        if not isinstance(self.suit, int) or not 0 <= self.suit <= 3:
            raise CardError(f"bad suit {self.suit!r} (0..3)")
        if self.rank == JOKER and self.suit > 1:
            raise CardError(f"bad joker suit {self.suit!r} (0 or 1)")
        if not isinstance(self.copy, int) or not 0 <= self.copy <= 1:
            raise CardError(f"bad copy {self.copy!r} (0 or 1)")

    @property
    def is_joker(self) -> bool:
        return self.rank == JOKER

    def name(self, style: str = "french") -> str:
        """Display name. ``style``: "french" ("7♦", "J♠", "10♠", "JK"), "spanish" ("7-oros",
        "sota-espadas", "diez-espadas", "comodín"), "ascii" ("7d", "Js", "Ts", "JK"; ``c`` is
        clubs) or "ascii-spanish" ("7o", "Se", "Te", "JK"; ``c`` is copas: the short notation
        :func:`parse_card` reads with ``deck="spanish"``). The copy is not shown.
        Raises ValueError for another style."""
        if style == "french":
            if self.is_joker:
                return "JK"
            return _FRENCH_RANK.get(self.rank, str(self.rank)) + SUITS_FRENCH[self.suit]
        if style == "spanish":
            if self.is_joker:
                return "comodín"
            return f"{_SPANISH_RANK.get(self.rank, str(self.rank))}-{SUITS_SPANISH[self.suit]}"
        if style == "ascii":
            if self.is_joker:
                return "JK"
            return _ASCII_RANK.get(self.rank, str(self.rank)) + SUITS_ASCII[self.suit]
        if style == "ascii-spanish":
            if self.is_joker:
                return "JK"
            return _SHORT_SPANISH_RANK.get(self.rank, str(self.rank)) + SUITS_ASCII_SPANISH[self.suit]
        raise ValueError(f"unknown card style {style!r} ({', '.join(CARD_STYLES)})")

    def same_face(self, other: Card) -> bool:
        """True when the two cards look alike (ignores the pack copy; jokers all alike)."""
        if self.is_joker or other.is_joker:
            return self.is_joker and other.is_joker
        return self.rank == other.rank and self.suit == other.suit

    def __str__(self) -> str:
        return self.name("french")

    def __repr__(self) -> str:
        extra = f", copy={self.copy}" if self.copy else ""
        return f"Card({self.name('ascii')}{'' if not self.is_joker else str(self.suit)}{extra})"


_SUIT_WORDS = {
    "♦": 0, "♢": 0, "d": 0, "oros": 0, "oro": 0,
    "♥": 1, "♡": 1, "h": 1, "copas": 1, "copa": 1,
    "♠": 2, "♤": 2, "s": 2, "espadas": 2, "espada": 2,
    "♣": 3, "♧": 3, "c": 3, "bastos": 3, "basto": 3,
}
# French / ascii rank tokens.
_FRENCH_RANK_WORDS = {
    "a": 1, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
    "10": TEN, "t": TEN, "j": 10, "q": 11, "k": 12,
    "v": 10, "d": 11, "r": 12,  # French readers: valet, dame, roi
}
# Spanish rank words: the Spanish deck numbers its court cards 10, 11, 12.
_SPANISH_RANK_WORDS = {
    "1": 1, "as": 1, "uno": 1, "2": 2, "dos": 2, "3": 3, "tres": 3, "4": 4, "cuatro": 4,
    "5": 5, "cinco": 5, "6": 6, "seis": 6, "7": 7, "siete": 7, "8": 8, "ocho": 8,
    "9": 9, "nueve": 9, "10": 10, "sota": 10, "11": 11, "caballo": 11, "12": 12, "rey": 12,
    "diez": TEN,
}
_JOKER_WORDS = {"jk", "joker", "comodin", "comodín", "jkr", "wild"}

_FRENCH_RE = re.compile(r"^(10|[a1-9tjqkvdr])\s*([♦♢♥♡♠♤♣♧dhsc])$")
# Short notation on a Spanish deck (``deck="spanish"``): Spanish numbering (10 sota, 11
# caballo, 12 rey) and suit letters o, c (copas, not clubs), e, b; the symbols and d/h/s too.
# A 10 with a French suit mark (symbol or d/h/s) is the French pip ten, as printed ("10♦").
_SPANISH_SHORT_RE = re.compile(r"^(1[0-2]|[a1-9jqkscrt])\s*([♦♢♥♡♠♤♣♧dhsoceb])$")
_SPANISH_SHORT_COURTS = {"a": 1, "j": 10, "q": 11, "k": 12, "s": 10, "c": 11, "r": 12, "t": TEN}
_FRENCH_SUIT_MARKS = frozenset("♦♢♥♡♠♤♣♧dhs")
_SPANISH_SHORT_SUITS = {"o": 0, "d": 0, "♦": 0, "♢": 0, "c": 1, "h": 1, "♥": 1, "♡": 1,
                        "e": 2, "s": 2, "♠": 2, "♤": 2, "b": 3, "♣": 3, "♧": 3}
_SPANISH_RE = re.compile(
    r"^([a-z0-9ñ]+)(?:\s*-\s*|\s+de\s+|\s+)(oros?|copas?|espadas?|bastos?)$"
)


def parse_card(text: str, deck: str | None = None) -> Card:
    """Parse one card in French (``5♦``, ``5d``, ``5D``, ``A♠``, ``T♣``/``10♣`` for the pip
    ten; courts ``J Q K`` or, for French readers, ``V D R``), Spanish (``5-oros``,
    ``5 de oros``, ``sota-copas``, ``rey-espadas``, ``1-bastos``; Spanish numbering, so
    ``10-copas`` is the sota) or joker (``JK``, ``joker``, ``comodín``/``comodin``) notation.
    ``deck="spanish"`` (a Spanish table's cards) also reads the short Spanish notation, ``1o``,
    ``5c`` (copas), ``12e``, ``7b``, ``Sc``/``Jc`` (sota de copas), ``Cb`` (caballo), ``Rb``,
    ``Tb`` (the pip ten), with Spanish numbering for the short forms (``10o`` is the sota de
    oros) and ``c`` for copas; a 10 with a French suit mark stays the pip ten (``10♦``, ``10d``),
    as the French names print it. Returns copy 0 (and joker suit 0); use
    :func:`parse_cards` for a hand with duplicates.

    Raises :class:`CardError` with a one-line message when the text names no card.
    """
    if not isinstance(text, str):
        raise CardError(f"not a card: {text!r}")
    t = text.strip().replace("\ufe0f", "").lower()
    if t in _JOKER_WORDS:
        return Card(JOKER, 0)
    if deck == "spanish":
        m = _SPANISH_SHORT_RE.match(t)
        if m:
            rank = _SPANISH_SHORT_COURTS.get(m.group(1)) or int(m.group(1))
            if m.group(1) == "10" and m.group(2) in _FRENCH_SUIT_MARKS:
                rank = TEN
            return Card(rank, _SPANISH_SHORT_SUITS[m.group(2)])
    m = _FRENCH_RE.match(t)
    if m:
        return Card(_FRENCH_RANK_WORDS[m.group(1)], _SUIT_WORDS[m.group(2)])
    m = _SPANISH_RE.match(t)
    if m and m.group(1) in _SPANISH_RANK_WORDS:
        suit = m.group(2)
        if not suit.endswith("s"):
            suit += "s"
        return Card(_SPANISH_RANK_WORDS[m.group(1)], _SUIT_WORDS[suit])
    raise CardError(f"not a card: {text.strip()!r} (try 5♦, 5d, 5-oros, sota-copas, JK)")


def parse_cards(texts: Iterable[str] | str, deck: str | None = None) -> list[Card]:
    """Parse several cards. A single string is split on spaces and commas (Spanish
    ``5 de oros`` is kept together). Repeated faces get the next ``copy`` (two packs) and a
    second joker gets suit 1, so the result names distinct physical cards.

    ``deck``: as :func:`parse_card`. Raises :class:`CardError` for a bad card, or for more
    than two of one face (jokers: four).
    """
    if isinstance(texts, str):
        texts = split_card_text(texts)
    out: list[Card] = []
    seen: set[Card] = set()
    for text in texts:
        card = parse_card(text, deck)
        candidates = (
            [Card(JOKER, s, c) for c in (0, 1) for s in (0, 1)]
            if card.is_joker
            else [Card(card.rank, card.suit, c) for c in (0, 1)]
        )
        for cand in candidates:
            if cand not in seen:
                seen.add(cand)
                out.append(cand)
                break
        else:
            most = "4 jokers" if card.is_joker else f"2 copies of {card}"
            raise CardError(f"too many copies of {card}: two packs hold at most {most}")
    return out


_SPLIT_RE = re.compile(r"[,\s]+")


def split_card_text(text: str) -> list[str]:
    """Split ``"5♦ 6♦, 7-oros, 5 de copas"`` into card texts (``de`` joins its neighbours)."""
    words = [w for w in _SPLIT_RE.split(text.strip()) if w]
    out: list[str] = []
    i = 0
    while i < len(words):
        if i + 2 < len(words) and words[i + 1].lower() == "de":
            out.append(" ".join(words[i : i + 3]))
            i += 3
        else:
            out.append(words[i])
            i += 1
    return out
