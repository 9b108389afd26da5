"""Table rules: one frozen :class:`Rules` value per table, built from a preset plus options.

Every field is a plain int/bool/str so that the value travels in msgpack (``to_wire`` /
``from_wire``) and is signed by every seat in the lobby. The presets are one per rule document
in ``shared/rules/`` (000 classic, 001 online, 002 fournier, 003 cardgames); where a document is
silent the preset's docstring (and ``docs/rules.md``) says what was chosen and why.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, cast

from .cards import JOKER, TEN, Card, CardError, parse_card

__all__ = ["Rules", "RulesError", "PRESETS", "make_rules", "FIELD_HELP"]


class RulesError(ValueError):
    """Unknown preset or option, a value of the wrong type or out of range."""


# One line per field, shown by ``p2p-chinchon rules``.
FIELD_HELP: dict[str, str] = {
    "preset": "name of the preset these rules were built from",
    "deck_size": "cards per pack: 40 (A-7, J Q K), 48 (adds 8 9), 52 (French, adds 8 9 10)",
    "decks": "packs: 1 or 2, 0 = automatic (two from `two_decks_from` players)",
    "two_decks_from": "with decks=0: number of players from which two packs are used (0 never)",
    "min_players": "fewest players",
    "max_players": "most players",
    "jokers": "jokers per pack (0..2), wild cards worth `wild_points`",
    "wild_card": "a natural card that is wild (ascii name, e.g. 'Ad' = A♦ = 1 de oros), '' none",
    "wild_points": "penalty for an unmatched joker or wild card",
    "max_wild_per_meld": "most wild cards in one meld",
    "min_real_per_meld": "fewest real (non-wild) cards in one meld",
    "court_points": "J Q K values: 'flat' 10 10 10, 'rank' 10 11 12, 'auto' rank in deck 48, 'position' 8 9 10",
    "suits": "display names: 'french' or 'spanish'",
    "close_max_points": "most unmatched points with which a hand may close",
    "close_max_unmatched": "most unmatched cards with which a hand may close",
    "close_wild_unmatched": "may a wild card be among the unmatched cards of a close",
    "first_round_ban": "nobody may close before every player has had a turn",
    "clean_close_points": "the closer's score with all seven cards matched",
    "chinchon_wins": "a seven-card run without wild cards closed wins the game",
    "wild_chinchon_points_1": "closer's score for a seven-card run with one wild card",
    "wild_chinchon_points_2": "closer's score for a seven-card run with two or more wild cards",
    "lay_off": "where others lay off: 'all' melds on the table, 'closer' only, 'none'",
    "lay_off_after_clean": "after a clean close: 'same', 'others' (not on the closer), 'none'",
    "limit": "a total over this is out",
    "reentries": "times each player may re-enter (buy back in)",
    "reentry_min_remaining": "re-entry only while at least this many players are still in",
    "reentry_score": "re-entry total: 'highest' = highest total of the players still in",
    "shuffle_proof_rounds": "k, shadow shuffles in the cut-and-choose shuffle proof",
    "shuffle_proof": "shuffle proof system: 'terelius-wikstrom' or 'cut-and-choose'",
    "showdown_time": "seconds the showdown stays on screen unless everyone pressed a key (0: no wait)",
    "turn_time": "seconds per move before the bot plays it for the seat (0 = no clock)",
    "rejoin_wait": "seconds the others wait for a disconnected seat to come back",
    "stall_limit": "seconds a table that cannot play on (no majority to remove the absent) waits before it stops, "
                   "signing nothing (resumable)",
    "discard_taken": "may the card just taken from the discard pile be discarded in the same turn "
                     "(the documents are silent: yes by default)",
    "max_reshuffles": "times a hand's stock may be re-made from the discard pile; the next time "
                      "it runs out the hand ends as reshuffle_end says (0 = no limit, as every rule document)",
    "reshuffle_end": "how a hand ends when its stock runs out after max_reshuffles re-shuffles: 'void' "
                     "(nobody scores) or 'score' (every hand is shown and scores as it stands, no lay-offs)",
}


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules of one table. Build with :func:`make_rules`; see ``docs/rules.md``.

    Field meanings are in :data:`FIELD_HELP`. Methods give the deck, card values and run
    positions; they raise :class:`RulesError` when the table cannot be played as configured.
    """

    preset: str = "classic"
    deck_size: int = 40
    decks: int = 0
    two_decks_from: int = 5
    min_players: int = 2
    max_players: int = 8
    jokers: int = 0
    wild_card: str = ""
    wild_points: int = 25
    max_wild_per_meld: int = 2
    min_real_per_meld: int = 2
    court_points: str = "auto"
    suits: str = "french"
    close_max_points: int = 4
    close_max_unmatched: int = 1
    close_wild_unmatched: bool = False
    first_round_ban: bool = True
    clean_close_points: int = -10
    chinchon_wins: bool = True
    wild_chinchon_points_1: int = -50
    wild_chinchon_points_2: int = -25
    lay_off: str = "all"
    lay_off_after_clean: str = "others"
    limit: int = 100
    reentries: int = 1
    reentry_min_remaining: int = 3
    reentry_score: str = "highest"
    shuffle_proof_rounds: int = 64
    shuffle_proof: str = "terelius-wikstrom"
    showdown_time: int = 30  # UI pacing only; never read by the engine
    turn_time: int = 60  # the node's clocks (net/node.py); never read by the engine
    rejoin_wait: int = 120
    stall_limit: int = 900  # the node's clock; never read by the engine
    max_reshuffles: int = 0  # an option no document states; off by default
    discard_taken: bool = True  # the documents are silent; legal unless forbidden
    reshuffle_end: str = "void"  # what max_reshuffles does ("void" or "score")

    def __post_init__(self) -> None:
        _validate(self)

    # -- wire ---------------------------------------------------------------------------
    def to_wire(self) -> dict[str, int | bool | str]:
        """All fields as a plain dict (msgpack-ready); an optional field (:data:`OPTIONAL_FIELDS`)
        is left out at its default, so tables that do not use it sign what they always did."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if not (f.name in OPTIONAL_FIELDS and getattr(self, f.name) == f.default)}

    @classmethod
    def from_wire(cls, d: Mapping[str, object]) -> Rules:
        """Strict inverse of :meth:`to_wire`: every field present with its exact type (an
        optional field present exactly when it is not at its default: one encoding per rules).

        Raises :class:`RulesError` for a non-mapping, an unknown, missing or mistyped field,
        or values out of range."""
        if not isinstance(d, Mapping):
            raise RulesError("rules must be a map")
        names = {f.name: f for f in fields(cls)}
        unknown = sorted(str(k) for k in d if k not in names)
        if unknown:
            raise RulesError(f"unknown rules {'field' if len(unknown) == 1 else 'fields'}: {', '.join(unknown)}")
        missing = sorted(n for n in names if n not in d and n not in OPTIONAL_FIELDS)
        if missing:
            raise RulesError(f"missing rules {'field' if len(missing) == 1 else 'fields'}: {', '.join(missing)}")
        kw: dict[str, Any] = {}  # each value's type is checked against _FIELD_TYPES below
        for name, f in names.items():
            if name not in d:
                continue  # an optional field at its default
            v = d[name]
            want = _FIELD_TYPES[name]
            if type(v) is not want:
                raise RulesError(f"rules field {name} must be {want.__name__}, got {v!r}")
            if name in OPTIONAL_FIELDS and v == f.default:
                raise RulesError(f"rules field {name} at its default must be left out")
            kw[name] = v
        return cls(**kw)

    # -- cards --------------------------------------------------------------------------
    def packs(self, n_players: int) -> int:
        """Packs used by a table of ``n_players`` (1 or 2)."""
        if self.decks:
            return self.decks
        if self.two_decks_from and n_players >= self.two_decks_from:
            return 2
        return 1

    def max_packs(self) -> int:
        """Most packs any table under these rules uses: 1 when ``decks=1`` or when no allowed
        player count reaches ``two_decks_from`` (e.g. the online preset), else 2."""
        if self.decks:
            return self.decks
        return 2 if self.two_decks_from and self.two_decks_from <= self.max_players else 1

    def pack_ranks(self) -> tuple[int, ...]:
        """Ranks in one pack in run order (lowest first): 40 = A-7 J Q K (000 "The cards")."""
        if self.deck_size == 40:
            return (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
        if self.deck_size == 48:
            return (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
        return (1, 2, 3, 4, 5, 6, 7, 8, 9, TEN, 10, 11, 12)

    def run_position(self, rank: int) -> int:
        """Position of a rank in a run (0 = ace); -1 when the rank is not in this deck."""
        try:
            return self.pack_ranks().index(rank)
        except ValueError:
            return -1

    def deck(self, n_players: int) -> tuple[Card, ...]:
        """The physical deck for ``n_players`` in canonical order: pack by pack, suit by suit,
        rank in run order, then the pack's jokers. Index i of this tuple is card index i of the
        mental-poker deck.

        Raises :class:`RulesError` when ``n_players`` is outside min..max players or the deck
        cannot deal seven cards each, an upcard and one card of stock (7n + 2)."""
        if not isinstance(n_players, int) or not self.min_players <= n_players <= self.max_players:
            raise RulesError(
                f"{n_players!r} players: this table takes {self.min_players}-{self.max_players}"
            )
        out: list[Card] = []
        for copy in range(self.packs(n_players)):
            for suit in range(4):
                out.extend(Card(r, suit, copy) for r in self.pack_ranks())
            out.extend(Card(JOKER, j, copy) for j in range(self.jokers))
        if len(out) < 7 * n_players + 2:
            raise RulesError(
                f"{len(out)} cards cannot deal {n_players} hands of 7 plus upcard and stock"
            )
        return tuple(out)

    def wild(self) -> Card | None:
        """The designated natural wild card (copy 0), or None."""
        return parse_card(self.wild_card) if self.wild_card else None

    def is_wild(self, card: Card) -> bool:
        """Jokers and the designated wild card (any pack) are wild."""
        if card.is_joker:
            return True
        w = self._wild_face()
        return w is not None and card.rank == w[0] and card.suit == w[1]

    def _wild_face(self) -> tuple[int, int] | None:
        return _wild_face(self.wild_card)

    def value(self, card: Card) -> int:
        """Penalty points of an unmatched card (000 "Scoring"; 001 "Value of the cards")."""
        if self.is_wild(card):
            return self.wild_points
        r = card.rank
        if r <= 9:
            return r
        if r == TEN:
            return 10
        if self.court_points == "position":  # J Q K count their place in the 40-card order
            return r - 2
        flat = self.court_points == "flat" or (self.court_points == "auto" and self.deck_size != 48)
        return 10 if flat else r

    def most_wild_per_meld(self) -> int:
        """The most wild cards one meld can hold at any table under these rules: the least of
        ``max_wild_per_meld``, the wild cards of the largest deck (``jokers`` and the
        ``wild_card`` in each pack) and the places a longest run leaves beside
        ``min_real_per_meld`` real cards. ``max_wild_per_meld`` limits nothing when it is
        not below this."""
        in_deck = (self.jokers + (1 if self.wild_card else 0)) * self.max_packs()
        room = len(self.pack_ranks()) - self.min_real_per_meld
        return max(0, min(self.max_wild_per_meld, in_deck, room))

    def wild_cap_binds(self) -> bool:
        """Does ``max_wild_per_meld`` forbid a meld the deck's wild cards could otherwise form?"""
        uncapped = dataclasses.replace(self, max_wild_per_meld=_RANGES["max_wild_per_meld"][1])
        return self.max_wild_per_meld < uncapped.most_wild_per_meld()

    def has_card(self, card: Card) -> bool:
        """Is ``card`` one of the physical cards of some table under these rules? A second
        pack's copy only when :meth:`max_packs` is 2; jokers only up to ``jokers`` per pack."""
        if card.copy >= self.max_packs():
            return False
        if card.is_joker:
            return card.suit < self.jokers
        return card.rank in self.pack_ranks()


@functools.lru_cache(maxsize=64)
def _wild_face(text: str) -> tuple[int, int] | None:
    if not text:
        return None
    c = parse_card(text)
    return (c.rank, c.suit)


# Fields added after the wire format was fixed: absent on the wire means the default.
# Pacing fields (screen and clocks, never the engine): on the wire exactly when not at their
# default, so each rules value has one encoding and tables made before them still decode.
OPTIONAL_FIELDS = frozenset({"showdown_time", "turn_time", "rejoin_wait", "stall_limit", "max_reshuffles",
                             "discard_taken", "reshuffle_end"})

_FIELD_TYPES: dict[str, type] = {
    f.name: {"int": int, "bool": bool, "str": str}[f.type if isinstance(f.type, str) else f.type.__name__]
    for f in fields(Rules)
}

_CHOICES: dict[str, tuple[object, ...]] = {
    "deck_size": (40, 48, 52),
    "decks": (0, 1, 2),
    "court_points": ("flat", "rank", "auto", "position"),
    "suits": ("french", "spanish"),
    "lay_off": ("all", "closer", "none"),
    "lay_off_after_clean": ("same", "others", "none"),
    "reentry_score": ("highest",),
    "shuffle_proof": ("terelius-wikstrom", "cut-and-choose"),  # p2p_chinchon.deck.PROOF_SYSTEMS
    "reshuffle_end": ("void", "score"),
}
_RANGES: dict[str, tuple[int, int]] = {
    "two_decks_from": (0, 8),
    "min_players": (2, 8),
    "max_players": (2, 8),
    "jokers": (0, 2),
    "wild_points": (0, 1000),
    "max_wild_per_meld": (0, 8),
    "min_real_per_meld": (1, 3),
    "close_max_points": (0, 1000),
    "close_max_unmatched": (0, 7),
    "clean_close_points": (-1000, 1000),
    "wild_chinchon_points_1": (-1000, 1000),
    "wild_chinchon_points_2": (-1000, 1000),
    "limit": (1, 100000),
    "reentries": (0, 100),
    "reentry_min_remaining": (2, 8),
    "shuffle_proof_rounds": (1, 128),  # the wire's bound; the deck supports up to 256
    "showdown_time": (0, 600),
    "turn_time": (0, 3600),
    "rejoin_wait": (0, 86400),
    "stall_limit": (1, 7 * 86400),
    "max_reshuffles": (0, 100),
}


def _validate(r: Rules) -> None:
    for f in fields(r):
        v = getattr(r, f.name)
        want = _FIELD_TYPES[f.name]
        if type(v) is not want:
            raise RulesError(f"rules field {f.name} must be {want.__name__}, got {v!r}")
        if f.name in _CHOICES and v not in _CHOICES[f.name]:
            opts = ", ".join(str(c) for c in _CHOICES[f.name])
            raise RulesError(f"{f.name} must be one of {opts}; got {v!r}")
        if f.name in _RANGES:
            lo, hi = _RANGES[f.name]
            if not lo <= cast(int, v) <= hi:  # the ranged fields are ints (checked above)
                raise RulesError(f"{f.name} must be in {lo}..{hi}; got {v!r}")
    if r.min_players > r.max_players:
        raise RulesError("min_players is more than max_players")
    if r.preset not in PRESET_NAMES:
        raise RulesError(f"unknown preset {r.preset!r}")
    if r.wild_card:
        try:
            c = parse_card(r.wild_card)
        except CardError as exc:
            raise RulesError(f"wild_card: {exc}") from None
        if c.is_joker or c.rank not in r.pack_ranks():
            raise RulesError(f"wild_card {r.wild_card!r} is not a natural card of this deck")


PRESET_NAMES = ("classic", "online", "fournier", "cardgames")


# No document caps the wild cards of one meld except 003 ("one per meld"); 000
# asks only for two real cards per meld, 001 is silent: no cap (8) beyond what they state.
CLASSIC = Rules(preset="classic", max_wild_per_meld=8)
CLASSIC_DOC = """classic (000, the English full rules).

Stated: 40 cards (A-7 J Q K), 2-8 players, two packs for 5-8; close with all matched, or six
matched and one card of 4 or less; no close in the first round; -10 clean; chinchón wins; lay
off on any meld on the table, not on the closer's after a clean close; out over 100; re-entry at
the highest total still in, not once only two are left. Variants are options: jokers=2 (each meld
needs two real cards, and no other cap on its wild cards; a seven-run with one joker -50, two -25, no chinchón), wild_card=Ad (A♦ the
only wild card), close_max_points=5 (Fournier's five points), limit=70, deck=48 (J Q K 10 11 12
via court_points=auto), decks=2.

Silent, chosen: J Q K count 10 each (the tips say a King costs 10; cases G5 and G6 need J=Q=10;
Spanish tradition "figuras 10"); jokers and the A♦ wild card count 25 unmatched (case G5, as in
001/002/003); reentries=1 ("many tables allow it only once"); a wild card never stays unmatched
in a close (it is worth 25, over any limit); the closer does not lay off.
"""

ONLINE = Rules(
    preset="online",
    deck_size=40,
    two_decks_from=0,
    max_players=5,  # what one 40-card pack deals (7 x 5 + upcard + stock)
    wild_card="Ad",
    suits="spanish",
    max_wild_per_meld=8,  # 001 states no cap (one wild card in its deck anyway)
    min_real_per_meld=1,  # 001 states none; one wild card leaves two real cards in any meld
    court_points="flat",
    close_max_points=3,
    close_max_unmatched=1,
    wild_chinchon_points_1=-25,
    wild_chinchon_points_2=-25,
    lay_off="all",
    lay_off_after_clean="none",
    limit=50,
    reentries=0,
    reentry_min_remaining=2,
)
ONLINE_DOC = """online (001, an online site's rules).

Stated: Spanish 40 cards, the 1 de oros is wild and worth 25, figures 10; close only after
everyone has played, with all matched or six matched and the last card 1-3; -10 clean and then
nobody lays off at all; a seven-run with the wild card -25, without it wins; others lay off on
any meld shown (chaining: "another player could discard the six"); out over 50; all out in one
hand: lowest total wins, tie: the last closer, else the hand's first player.

Silent, chosen: 2-5 players, one pack (the one Spanish deck deals five hands); no re-entry
(none offered); no cap on the wild cards of one meld and no least number of real cards (the
document states neither; with one wild card in the deck every meld holds two real cards); the
wild card counts as wild even in its own place (a seven-run using it is "formed with the wild
card").
"""

FOURNIER = Rules(
    preset="fournier",
    deck_size=40,
    two_decks_from=6,
    max_players=6,
    jokers=0,
    suits="spanish",
    max_wild_per_meld=8,
    min_real_per_meld=1,
    court_points="flat",
    close_max_points=5,
    close_max_unmatched=7,
    first_round_ban=False,  # 002 states no first-round ban
    wild_chinchon_points_1=-10,
    wild_chinchon_points_2=-10,
    lay_off="none",
    lay_off_after_clean="none",
    limit=100,
    reentries=1,
    reentry_min_remaining=2,
)
FOURNIER_DOC = """fournier (002, the Spanish card maker's rules).

Stated: 40 or 48 Spanish cards (deck=48), or the 52-card French deck with two jokers
(deck=52 jokers=2); 2-6 players; close when the cards left over from the melds total 5 or
less, however many they are ("las cartas que te sobran ... suman 5 puntos o menos"); figures 10,
jokers free and worth 25; chinchón must be authentic; -10 clean; re-buy once at the highest
current score (the sample game re-admits Bo with two players left, so re-entry needs only two
still in); 50/70 tables (limit) and no re-buy (reentries=0) are options.

Silent, chosen: "jokers are free" = any number per meld, one real card is enough; "two melds
of three and a loose card, or three and four" describes the usual seven-card shapes, not a
limit on the cards left over; no lay-off (after the cut "everyone else shows their hand and
adds up their unmatched cards"; option lay_off=all); a seven-run with jokers is an ordinary
clean close (-10); no first-round ban (the document states none: a player may cut on their
first turn); two packs from six players (one 40-card pack cannot deal six hands).
"""

CARDGAMES = Rules(
    preset="cardgames",
    deck_size=40,
    two_decks_from=5,
    jokers=2,
    suits="spanish",
    max_wild_per_meld=1,
    min_real_per_meld=2,
    court_points="flat",
    close_max_points=5,
    close_max_unmatched=7,
    close_wild_unmatched=False,
    first_round_ban=False,  # 003 states no first-round ban
    wild_chinchon_points_1=-10,
    wild_chinchon_points_2=-10,
    lay_off="closer",
    lay_off_after_clean="same",  # 003: the others lay off on the closer's melds after any close
    limit=100,
    reentries=0,
    reentry_min_remaining=2,
)
CARDGAMES_DOC = """cardgames (003, the French cardgames.zone rules).

Stated: Spanish 40 cards with 2 jokers, at most one joker per meld; close when the unmatched
cards total at most 5 (option 3) and include no joker, however many they are; others lay off on
the closer's melds only, after any close ("Après une fermeture"); a chinchón with a joker is
only a -10 close; out over 100 (option 50); buy back (variant) at the worst remaining score.

Silent, chosen: figures 10 and jokers 25 (the penalty table is missing; both as in 001/002);
no buy-back by default (it is a variant; reentries=1 enables it, allowed while two are still
in); no first-round ban and lay-off after a clean close too (the document states neither
limit; first_round_ban=yes and lay_off_after_clean=none give the 000/001 tradition); 2-8
players, two packs from five, as in 000.
"""

PRESETS: dict[str, Rules] = {
    "classic": CLASSIC,
    "online": ONLINE,
    "fournier": FOURNIER,
    "cardgames": CARDGAMES,
}
PRESET_DOCS: dict[str, str] = {
    "classic": CLASSIC_DOC,
    "online": ONLINE_DOC,
    "fournier": FOURNIER_DOC,
    "cardgames": CARDGAMES_DOC,
}

# Option names used by the rule cases (tests/data/cases) that differ from the field name
# (``deck`` is taken by the method Rules.deck(n_players)).
OPTION_ALIASES = {"deck": "deck_size"}

_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}


def _coerce(name: str, value: object) -> object:
    want = _FIELD_TYPES[name]
    if type(value) is want:
        return value
    if isinstance(value, str):
        s = value.strip()
        if want is bool:
            if s.lower() in _TRUE:
                return True
            if s.lower() in _FALSE:
                return False
        elif want is int:
            try:
                return int(s)
            except ValueError:
                pass
        elif want is str:
            return s
    elif want is int and isinstance(value, bool):
        pass
    raise RulesError(f"option {name} must be {want.__name__}, got {value!r}")


def make_rules(preset: str = "classic", options: Mapping[str, object] | None = None) -> Rules:
    """The preset ``preset`` with ``options`` (field name -> value; CLI strings are coerced:
    "5", "true", "no") applied. ``wild_card`` accepts any card notation.

    Raises :class:`RulesError` for an unknown preset or option or a bad value."""
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {preset!r} (one of {', '.join(PRESETS)})")
    base = PRESETS[preset]
    kw: dict[str, Any] = {}  # values coerced to their field's type; _validate checks them
    for key, value in (options or {}).items():
        key = OPTION_ALIASES.get(key, key)
        if key not in _FIELD_TYPES or key == "preset":
            raise RulesError(f"unknown option {key!r} (see `p2p-chinchon rules`)")
        v = _coerce(key, value)
        if key == "wild_card" and v:
            try:
                v = parse_card(str(v)).name("ascii")
            except CardError as exc:
                raise RulesError(f"wild_card: {exc}") from None
        kw[key] = v
    try:
        return dataclasses.replace(base, **kw)
    except TypeError as exc:  # pragma: no cover - defensive
        raise RulesError(str(exc)) from None
