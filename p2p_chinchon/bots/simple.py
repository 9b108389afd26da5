"""A simple Chinchón bot: greedy on the best arrangement.

It sees only what its seat knows (its own cards and the top of the discard pile; anything else
public may be passed as keyword arguments and is ignored by this version). Each decision costs
at most nine best-arrangement searches (well under 10 ms), memoised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ..engine import Card, Rules
from ..rng import Rng
from .evaluate import Evaluator
from .record import face

__all__ = ["SimpleBot"]

_SLACK = 3
_PATIENCE = 8


class SimpleBot:
    """Greedy bot. ``rng`` (``token_bytes``/``randbelow``) breaks ties between equally good
    discards so that it is not fully predictable; pass a SeededRng for reproducible games."""

    def __init__(self, rules: Rules, rng: Rng) -> None:
        self.rules = rules
        self.rng = rng
        self.ev = Evaluator(rules)  # memoised: same values, fewer searches
        self._stale = 0
        self._last = 1 << 30

    def _scored_discards(self, hand8: Sequence[Card]) -> list[tuple[int, Card]]:
        """(deadwood of the seven kept cards, discard) for every discard."""
        out = []
        for i, c in enumerate(hand8):
            kept = list(hand8[:i]) + list(hand8[i + 1 :])
            out.append((self.ev.points(kept), c))
        return out

    def choose_draw(
        self, hand: Sequence[Card], discard_top: Card | None, **public: Any
    ) -> Literal["stock", "discard"]:
        """"discard" only when taking ``discard_top`` lowers the best arrangement's deadwood
        (after the best discard that is not the taken card itself), else "stock"."""
        if discard_top is None:
            return "stock"
        now = self.ev.points(hand)
        eight = [*hand, discard_top]
        joins = self.ev.melds_with(face(discard_top), hand)
        best: int | None = None
        for i in range(len(hand)):
            if not joins and self.rules.value(hand[i]) <= self.rules.value(discard_top):
                # the taken card stays deadwood, so swapping it for a card worth no more
                # cannot lower the deadwood: skip the search (same answer, less work)
                continue
            kept = [c for j, c in enumerate(eight) if j != i]
            pts = self.ev.points(kept)
            best = pts if best is None else min(best, pts)
        return "discard" if best is not None and best < now else "stock"

    def choose_discard(
        self, hand8: Sequence[Card], may_close: bool, *, never: Card | None = None, **public: Any
    ) -> tuple[Literal["discard", "close"], Card]:
        """("close", card) when closing is allowed (the best close: a chinchón, else the
        lowest score, so a clean close is preferred), else ("discard", card) cutting deadwood,
        never ``never`` (the card just taken); among equal discards the highest-value card,
        then a random one. After every 8 turns
        without progress it may (one time in three) pick at random among discards up to 3 more
        points worse per 8 turns (never a wild card), to break deadlocks."""
        if may_close:
            opts = self.ev.close_options(hand8)
            if opts:
                return "close", opts[0].discard
        # Greedy bots holding each other's cards can cycle forever on a 40-card deck, so after
        # many turns without progress accept, now and then, a discard up to `slack` worse.
        scored = [(p, c) for p, c in self._scored_discards(hand8) if c != never] or self._scored_discards(hand8)
        best = min(p for p, _ in scored)
        slack = _SLACK * (self._stale // _PATIENCE)
        pool = [(p, c) for p, c in scored if p == best]
        if slack and self.rng.randbelow(3) == 0:
            wider = [(p, c) for p, c in scored if p <= best + slack and not self.rules.is_wild(c)]
            if wider:
                pool = wider
        else:
            top = max(self.rules.value(c) for _, c in pool)
            pool = [(p, c) for p, c in pool if self.rules.value(c) == top]
        pool.sort(key=lambda pc: pc[1])
        points, card = pool[self.rng.randbelow(len(pool))]
        self._stale = 0 if points < self._last else self._stale + 1
        self._last = points
        return "discard", card
