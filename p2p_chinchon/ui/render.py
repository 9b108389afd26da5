"""Card faces for the terminal, and reading card names a person types.

Display only: nothing here knows a rule. A card is anything with ``.rank`` and ``.suit``
(:class:`p2p_chinchon.engine.Card`): rank 1..9, 10 = J/sota, 11 = Q/caballo, 12 = K/rey,
13 = the pip ten of the 52-card deck, 0 = joker; suit 0..3 = oros/♦, copas/♥, espadas/♠, bastos/♣ (the traditional correspondence,
000 "The cards", 002 "La baraja").

Faces come in two decks (French ♠♥♦♣ as in 000/001/003, Spanish oros/copas/espadas/bastos as in
002) and three charsets: ``unicode`` (suit symbols, colour), ``mono`` (symbols, no colour) and
``ascii`` ("7d", "Qs"; Spanish names are ASCII already). :func:`resolve_faces` picks them from
the table's rules and the terminal (encoding, ``TERM``, ``NO_COLOR``).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

CHARSETS = ("auto", "unicode", "mono", "ascii")

SUIT_SYMBOL = ("♦", "♥", "♠", "♣")
SUIT_LETTER = ("d", "h", "s", "c")
SUIT_SPANISH = ("oros", "copas", "espadas", "bastos")
SUIT_SPANISH_TINY = ("o", "c", "e", "b")
RANK_FRENCH = {1: "A", 10: "J", 11: "Q", 12: "K", 13: "10"}  # 13: pip ten of the 52-card deck
RANK_SPANISH = {10: "sota", 11: "caballo", 12: "rey", 13: "diez"}
RANK_SPANISH_TINY = {10: "S", 11: "C", 12: "R", 13: "T"}  # 10 would read as the sota

# prompt_toolkit style classes (see app.STYLE); French: red/black, Spanish: the pack's colours.
_FRENCH_CLASS = ("card.red", "card.red", "card.black", "card.black")
_SPANISH_CLASS = ("card.oros", "card.copas", "card.espadas", "card.bastos")


class CardLike(Protocol):
    """What a face needs of a card (:class:`p2p_chinchon.engine.Card` is one)."""

    @property
    def rank(self) -> int: ...

    @property
    def suit(self) -> int: ...


CardT = TypeVar("CardT", bound=CardLike)


class CardTextError(ValueError):
    """A typed card name could not be read, or names no card in the hand."""


@dataclass(frozen=True)
class Faces:
    """How to draw cards: ``deck`` is "french" or "spanish"; ``unicode`` allows suit symbols;
    ``color`` allows coloured suits; ``courts``: the letters of the French deck's jack, queen
    and king in the reader's language ("JQK"; French readers: "VDR", valet, dame, roi);
    ``fixed``: ``deck`` was chosen by the person (``--faces``), whatever the table's deck (the
    suits map one to one: ♦ oros, ♥ copas, ♠ espadas, ♣ bastos)."""

    deck: str = "french"
    unicode: bool = True
    color: bool = True
    courts: str = "JQK"
    fixed: bool = False


def deck_style(rules: Any) -> str:
    """"french" or "spanish" for a table's rules (engine ``Rules``; None -> "french").

    Reads the first of the fields ``faces``, ``card_faces``, ``deck_style``, ``suits``,
    ``deck`` that holds a string naming a style; anything else means French faces."""
    for attr in ("faces", "card_faces", "deck_style", "suits", "deck"):
        value = getattr(rules, attr, None)
        if isinstance(value, str):
            low = value.lower()
            if "span" in low or "esp" in low or "baraja" in low:
                return "spanish"
            if "fren" in low or "fran" in low or "poker" in low or "anglo" in low:
                return "french"
    return "french"


def detect_charset(charset: str = "auto", *, encoding: str | None = None,
                   env: Mapping[str, str] | None = None) -> tuple[bool, bool]:
    """``(unicode, color)`` for ``charset`` in :data:`CHARSETS`.

    "auto": Unicode when ``encoding`` (default: the locale's preferred encoding) can encode the
    suit symbols and ``TERM`` is set and not "dumb" (otherwise ASCII, no colour); colour unless
    ``NO_COLOR`` is set (https://no-color.org). Raises ValueError for an unknown charset."""
    if charset not in CHARSETS:
        raise ValueError(f"charset must be one of {', '.join(CHARSETS)}, not {charset!r}")
    if charset == "unicode":
        return True, True
    if charset == "mono":
        return True, False
    if charset == "ascii":
        return False, False
    env = os.environ if env is None else env
    if encoding is None:
        import locale

        encoding = locale.getpreferredencoding(False)
    try:
        "♦♥♠♣ñé·▶".encode(encoding)
        can_unicode = True
    except (UnicodeEncodeError, LookupError):
        can_unicode = False
    term = env.get("TERM", "")
    if not can_unicode or term in ("", "dumb"):
        return False, False
    return True, "NO_COLOR" not in env


def resolve_faces(rules: Any = None, charset: str = "auto", *, encoding: str | None = None,
                  env: Mapping[str, str] | None = None, deck: str | None = None) -> Faces:
    """:class:`Faces` for a table (deck from ``rules``, or ``deck``, "french" or "spanish",
    when the person chose the faces) on this terminal (``charset``)."""
    uni, color = detect_charset(charset, encoding=encoding, env=env)
    return Faces(deck or deck_style(rules), uni, color, fixed=deck is not None)


def is_joker(card: object) -> bool:
    return getattr(card, "rank", None) == 0


def card_text(card: CardLike, faces: Faces, compact: bool = False) -> str:
    """The face of one card, e.g. "7♦", "7d", "7 oros", "sota espadas" (``compact``: "7o",
    "Se"). Spanish names are whole words, never abbreviated: the compact form is the short one."""
    rank, suit = card.rank, card.suit
    if faces.deck == "spanish":
        if rank == 0:
            return "*" if compact else ("comodín" if faces.unicode else "comodin")
        if compact:
            return f"{RANK_SPANISH_TINY.get(rank, str(rank))}{SUIT_SPANISH_TINY[suit]}"
        return f"{RANK_SPANISH.get(rank, str(rank))} {SUIT_SPANISH[suit]}"
    if rank == 0:
        return "JK"
    r = faces.courts[rank - 10] if 10 <= rank <= 12 else RANK_FRENCH.get(rank, str(rank))
    return r + (SUIT_SYMBOL[suit] if faces.unicode else SUIT_LETTER[suit])


COURTS = {"fr": "VDR"}  # language -> French-deck court letters (default "JQK")


def card_style(card: CardLike, faces: Faces) -> str:
    """prompt_toolkit style class for a card ("" without colour)."""
    if not faces.color:
        return ""
    if is_joker(card):
        return "class:card.joker"
    table = _SPANISH_CLASS if faces.deck == "spanish" else _FRENCH_CLASS
    return "class:" + table[card.suit]


def cards_text(cards: Sequence[CardLike], faces: Faces, sep: str = " ") -> str:
    return sep.join(card_text(c, faces) for c in cards)


# ---------------------------------------------------------------- reading typed card names

def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKD", text.strip().lower())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


_JOKER_WORDS = ("comodin", "joker", "jk", "*", "★")
# rank words, longest first so "12" wins over "1" and "sota" over "s"
_RANK_WORDS: tuple[tuple[str, int], ...] = tuple(sorted(
    [("caballo", 11), ("cab", 11), ("sota", 10), ("rey", 12), ("as", 1), ("ace", 1),
     ("jack", 10), ("queen", 11), ("king", 12), ("valet", 10), ("dame", 11), ("roi", 12),
     ("diez", 13), ("10", 10), ("11", 11), ("12", 12), ("a", 1), ("j", 10), ("q", 11), ("k", 12),
     ("v", 10), ("d", 11), ("r", 12), ("s", 10), ("c", 11), ("t", 13)]
    + [(str(n), n) for n in range(1, 10)],
    key=lambda kv: -len(kv[0])))
_SUIT_WORDS: tuple[tuple[str, int], ...] = (
    ("♦", 0), ("♥", 1), ("♠", 2), ("♣", 3), ("♢", 0), ("♡", 1), ("♤", 2), ("♧", 3),
    ("oros", 0), ("copas", 1), ("espadas", 2), ("bastos", 3),
    ("diamonds", 0), ("hearts", 1), ("spades", 2), ("clubs", 3),
    ("carreau", 0), ("coeur", 1), ("pique", 2), ("trefle", 3),
)


_FRENCH_MARKS = frozenset(("♦", "♥", "♠", "♣", "♢", "♡", "♤", "♧", "d", "h", "s"))


def _suit_of(word: str, deck: str) -> int | None:
    word = word.strip(" .-")
    if word.startswith("de "):
        word = word[3:].strip()
    if not word:
        return None
    for full, suit in _SUIT_WORDS:
        if word == full or (len(word) >= 2 and full.startswith(word) and full.isalpha()):
            return suit
    one = {"d": 0, "h": 1, "s": 2, "o": 0, "e": 2, "b": 3}
    if word == "c":  # clubs in the French deck, copas in the Spanish one
        return 1 if deck == "spanish" else 3
    return one.get(word)


def parse_card_text(text: str, deck: str = "french") -> tuple[int, int | None]:
    """Read a typed card name into ``(rank, suit)``; jokers give ``(0, None)``.

    Accepts "7d", "7♦", "7D", "Qs", "Ad", "1d", "10d"/"Td" (French pip ten), "7 oros", "7-oros",
    "7 de oros", "sota esp", "Se", "Te" (pip ten), "12 bastos", "JK", "comodín". "c" is clubs
    with French faces and copas with Spanish ones; with Spanish faces "10 oros" is the sota
    (Spanish numbering) but "10♦"/"10d" the pip ten, as French faces print it.
    Raises :class:`CardTextError` with a one-line message."""
    word = _fold(text)
    if not word:
        raise CardTextError("no card named")
    if word in _JOKER_WORDS:
        return 0, None
    for rank_word, rank in _RANK_WORDS:
        if rank_word == "10" and (deck != "spanish" or word[2:].strip(" .-") in _FRENCH_MARKS):
            rank = 13  # French numbering (or a French suit mark): 10 is the pip ten
        if word.startswith(rank_word):
            suit = _suit_of(word[len(rank_word):], deck)
            if suit is not None:
                return rank, suit
    raise CardTextError(f"not a card name: {text.strip()!r}")


def find_card(text: str, hand: Sequence[CardT], deck: str = "french") -> CardT:
    """The card in ``hand`` that ``text`` names (the first of two identical copies).

    Raises :class:`CardTextError` when the name is unreadable or the card is not in the hand."""
    rank, suit = parse_card_text(text, deck)
    for card in hand:
        if card.rank == rank and (suit is None or rank == 0 or card.suit == suit):
            return card
    raise CardTextError(f"not in your hand: {text.strip()!r}")
