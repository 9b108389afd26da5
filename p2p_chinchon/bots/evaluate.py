"""Hand evaluation for the bots: the least deadwood of a set of cards, from the engine's exact
meld search (:func:`p2p_chinchon.engine.best_arrangement`) memoised per set of cards, and the
expected improvement of a kept hand from one stock draw (and its chance of a close)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..engine import Card, CloseOption, Rules, best_arrangement, close_options
from .record import Face

__all__ = ["Evaluator", "card_of"]

_MEMO_MAX = 100_000  # entries (~20 MB); cleared when full
_MEMOS: dict[Rules, dict[frozenset[Card], tuple[int, int, int]]] = {}


class Evaluator:
    """Memoised least-deadwood values under one table's rules.

    ``arrange(cards)`` -> ``(points, highest deadwood value)`` of the best arrangement
    (0..8 distinct cards; errors as :func:`best_arrangement`); ``shape(cards)`` adds the number
    of deadwood cards."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        # one memo per rules value, shared by every evaluator in this process (a pure function)
        self._memo: dict[frozenset[Card], tuple[int, int, int]] = _MEMOS.setdefault(rules, {})
        order = rules.pack_ranks()
        self.pos = {r: i for i, r in enumerate(order)}

    def shape(self, cards: Sequence[Card]) -> tuple[int, int, int]:
        """(deadwood points, highest deadwood value, deadwood cards) of the best arrangement."""
        key = frozenset(cards)
        got = self._memo.get(key)
        if got is None:
            if len(self._memo) > _MEMO_MAX:
                self._memo.clear()
            arr = best_arrangement(list(cards), self.rules)
            top = max((self.rules.value(c) for c in arr.deadwood), default=0)
            got = self._memo[key] = (arr.points, top, len(arr.deadwood))
        return got

    def arrange(self, cards: Sequence[Card]) -> tuple[int, int]:
        pts, top, _n = self.shape(cards)
        return pts, top

    def points(self, cards: Sequence[Card]) -> int:
        return self.arrange(cards)[0]

    def close_options(self, hand8: Sequence[Card]) -> list[CloseOption]:
        """:func:`p2p_chinchon.engine.close_options`, skipping the search when no seven kept
        cards have few enough deadwood points (the exact close needs at least as few)."""
        r = self.rules
        wilds = r.jokers or r.wild_card
        if not wilds and all(p > r.close_max_points for p, _ in self.best_kept(hand8)):
            return []
        return close_options(list(hand8), r)

    def best_kept(self, hand8: Sequence[Card]) -> list[tuple[int, Card]]:
        """(deadwood of the seven kept, discard) for every discard of an 8-card holding."""
        return [(self.points([c for c in hand8 if c is not d]), d) for d in hand8]

    def melds_with(self, u: Face, hand: Sequence[Card]) -> bool:
        """Can face ``u`` join some meld with two cards of ``hand``? (Exact without wild
        cards; with any wild card in play every card is treated as joining.)"""
        if u == (0, 0) or self.rules.is_wild(Card(*u)) or any(self.rules.is_wild(c) for c in hand):
            return True
        pu = self.pos.get(u[0])
        if pu is None:
            return False
        same_rank = {c.suit for c in hand if c.rank == u[0] and c.suit != u[1]}
        if len(same_rank) >= 2:
            return True
        near = {self.pos.get(c.rank) for c in hand if c.suit == u[1]}
        return any(a in near and b in near for a, b in
                   ((pu - 2, pu - 1), (pu - 1, pu + 1), (pu + 1, pu + 2)))

    def related(self, u: Face, c: Card) -> bool:
        """Same rank, or same suit within two run positions: ``u`` and ``c`` may share a meld."""
        if c.is_joker or u == (0, 0):
            return False
        if c.rank == u[0]:
            return c.suit != u[1]
        pu, pc = self.pos.get(u[0]), self.pos.get(c.rank)
        return c.suit == u[1] and pu is not None and pc is not None and abs(pu - pc) <= 2

    def improvement(self, kept: Sequence[Card], unseen: Counter[Face]) -> tuple[float, float, float]:
        """Over one stock draw to ``kept`` (7 cards) and the best discard, with the ``unseen``
        faces equally likely (uniform over physical cards): the expected fall of the deadwood,
        the chance of no deadwood at all (a clean close), and the chance that the hand may
        close (at most ``close_max_unmatched`` deadwood cards worth at most
        ``close_max_points``; 000 "Closing"). Approximation: the best discard after the draw
        drops the highest deadwood card of the 8-card arrangement."""
        total = sum(unseen.values())
        if not total:
            return 0.0, 0.0, 0.0
        r = self.rules
        now, top, dead = self.shape(kept)
        gain = 0.0
        clean = closes = 0
        for u, n in unseen.items():
            card = card_of(u, kept)
            if self.melds_with(u, kept):
                pts8, top8, dead8 = self.shape([*kept, card])
            else:  # joins nothing: the eighth card is one more deadwood card
                v = r.value(card)
                pts8, top8, dead8 = now + v, max(top, v), dead + 1
            after = min(now, pts8 - top8)
            if after == 0:
                clean += n
            if dead8 - 1 <= r.close_max_unmatched and pts8 - top8 <= r.close_max_points:
                closes += n
            gain += n * (now - after)
        return gain / total, clean / total, closes / total


def card_of(u: Face, avoid: Sequence[Card]) -> Card:
    """A physical card with face ``u`` that is not in ``avoid``."""
    for copy in (0, 1):
        for suit in ((0, 1) if u[0] == 0 else (u[1],)):
            c = Card(u[0], suit, copy)
            if c not in avoid:
                return c
    return Card(u[0], u[1], 0)  # pragma: no cover - more copies than the deck holds
