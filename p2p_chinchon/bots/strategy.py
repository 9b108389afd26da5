"""The ``normal`` and ``hard`` bots.

Both decide from a :class:`~p2p_chinchon.view.SeatView` only (passed as ``view=``), through
the public record of :mod:`.record`; neither ever sees another seat's hidden cards.

* ``normal`` plays the greedy least-deadwood game of ``easy`` but remembers the discard pile
  and what each opponent took from it: it does not feed the next player's melds (the only seat
  that can take its discard), counts half of the expected deadwood fall from the next draw and
  half of hard's worth of the chance that this draw lets it close in favour of a kept hand,
  and times its close (waits for a clean close while nobody looks close). Its weights are
  class constants.
* ``hard`` scores every kept hand by its **expected deadwood after the next stock draw**, the
  average over the unseen cards (exact enumeration over the faces it cannot place, which is
  the Monte Carlo estimate with every sample taken once), less the worth of the **chance that
  this draw lets it close** (a close ends the hand with its own penalty near zero and every
  opponent's deadwood counted), picks draws, discards and closes by that expected penalty,
  and chases a chinchón (an instant win, 000 "Chinchón") when it is far behind. A discard
  taken from the pile is weighed against a stock draw at the same horizon: the kept hand
  after the take is valued after one more draw, so the stock draw is credited part of that
  second draw's gain too.

Neither throws back the card just taken from the pile: ``choose_discard(..., never=card)``
picks among the other cards by the level's own evaluation, as its draw assumed. Both judge a
slow hand's cards themselves; :mod:`p2p_chinchon.autoplay` plays the dead-hand heuristic of
:mod:`.deadhand` for them only once the hand is stuck.

Hands are valued with :class:`.evaluate.Evaluator` (the engine's exact meld search, memoised).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

from ..engine import Card, Rules
from ..rng import Rng
from ..view import SeatView
from .evaluate import Evaluator, card_of
from .record import Face, HandRecord, RecordKeeper, face, unseen_faces

__all__ = ["NormalBot", "HardBot"]


def _next_active(view: SeatView) -> int | None:
    n = len(view.seats)
    if view.me is None or not n:
        return None
    for k in range(1, n):
        s = (view.me + k) % n
        if not view.seats[s].eliminated:
            return s
    return None


class _ViewBot:
    """Shared plumbing: the record keeper, the evaluator, the easy fallback without a view."""

    level = "?"
    # Judges a slow hand's cards itself: plays it as dead (collects pairs, takes a cycled card;
    # p2p_chinchon.autoplay) only once it is stuck (deadhand.BREAK_AFTER re-makings).
    JUDGES_DEAD_HANDS = True

    def __init__(self, rules: Rules, rng: Rng) -> None:
        self.rules = rules
        self.rng = rng
        self.ev = Evaluator(rules)
        self.keeper = RecordKeeper()

    def _record(self, view: SeatView | None) -> HandRecord | None:
        return self.keeper.update(view) if view is not None and view.rules is not None else None

    def danger(self, card: Card, view: SeatView, rec: HandRecord) -> float:
        """How much discarding ``card`` may feed the next seat: one unit per card it holds
        from the pile that ``card`` would meld with, less when it shed that rank already."""
        nxt = _next_active(view)
        if nxt is None:
            return 0.0
        f = face(card)
        held = rec.holds.get(nxt, Counter())
        d = 0.0
        for h, k in held.items():
            if k > 0 and h != f and self.ev.related(h, card):
                d += k
        shed = rec.shed.get(nxt, Counter())
        if any(s[0] == f[0] for s in shed):
            d -= 0.5
        return max(0.0, d)

    def looks_close(self, view: SeatView, rec: HandRecord) -> bool:
        """An opponent may close soon: it took two discards, or one and the hand is old."""
        active = sum(1 for s in view.seats if not s.eliminated) or 1
        rounds = rec.turns / active
        for s in view.seats:
            if s.seat == view.me or s.eliminated:
                continue
            t = rec.takes.get(s.seat, 0)
            if t >= 2 or (t >= 1 and rounds >= 3):
                return True
        return rounds >= 6

    def _pick(self, scored: list[tuple[float, Card]]) -> Card:
        """Lowest score; ties: the highest-value card, then a random one."""
        best = min(s for s, _ in scored)
        pool = sorted(c for s, c in scored if s <= best + 1e-9)
        top = max(self.rules.value(c) for c in pool)
        pool = [c for c in pool if self.rules.value(c) == top]
        return pool[self.rng.randbelow(len(pool))]


class NormalBot(_ViewBot):
    """Level ``normal``: greedy on deadwood, with memory of the pile (see the module doc)."""

    level = "normal"
    WAIT_OUTS = 2  # unseen cards that would make the close clean, to be worth a wait
    DANGER = 3.0  # points per unit of danger to the next seat
    OUTS = 0.01  # points per unseen card that melds with the kept hand (a tie-break)
    POTENTIAL = 0.5  # weight of the expected deadwood fall from the next draw (hard uses 1)
    CLOSE_WORTH = 28.0  # points per unit of chance that the next draw lets it close (hard: 56)

    def choose_draw(
        self, hand: Sequence[Card], discard_top: Card | None, *, view: SeatView | None = None,
        **public: Any,
    ) -> Literal["stock", "discard"]:
        """"discard" when taking ``discard_top`` lowers the deadwood (after the best discard of
        another card), else "stock"."""
        self._record(view)
        if discard_top is None:
            return "stock"
        now = self.ev.points(hand)
        eight = [*hand, discard_top]
        best = min(p for p, d in self.ev.best_kept(eight) if d is not discard_top)
        return "discard" if best < now else "stock"

    def choose_discard(
        self, hand8: Sequence[Card], may_close: bool, *, view: SeatView | None = None,
        never: Card | None = None, **public: Any,
    ) -> tuple[Literal["discard", "close"], Card]:
        """The least-deadwood discard, ``DANGER`` points dearer per unit of danger to the next
        seat, ``POTENTIAL`` times the expected deadwood fall from the next draw and
        ``CLOSE_WORTH`` times the chance that this draw lets it close cheaper,
        never ``never`` (the card just taken; a close may still put it face down). Closes at
        once for a chinchón or a clean close, or when an opponent looks close; else waits
        while at least ``WAIT_OUTS`` unseen cards would make the close clean."""
        rec = self._record(view)
        opts = self.ev.close_options(hand8) if may_close else []
        scored = _others(self.ev.best_kept(hand8), never)
        if rec is None or view is None:
            if opts:
                return "close", opts[0].discard
            return "discard", self._pick([(float(p), c) for p, c in scored])
        unseen = unseen_faces(view, rec)
        if opts:
            o = opts[0]
            if o.chinchon or o.score <= 0 or self.looks_close(view, rec):
                return "close", o.discard
            kept = [c for c in hand8 if c is not o.discard]
            outs = sum(n for u, n in unseen.items() if self._cleans(kept, u))
            if outs < self.WAIT_OUTS:
                return "close", o.discard
        out: list[tuple[float, Card]] = []
        for p, c in scored:
            kept = [x for x in hand8 if x is not c]
            outs = sum(n for u, n in unseen.items() if self.ev.melds_with(u, kept))
            gain, _clean, closes = self.ev.improvement(kept, unseen)
            out.append((p + self.DANGER * self.danger(c, view, rec) - self.OUTS * outs
                        - self.POTENTIAL * gain - self.CLOSE_WORTH * closes, c))
        return "discard", self._pick(out)

    def _cleans(self, kept: Sequence[Card], u: Face) -> bool:
        if not self.ev.melds_with(u, kept):
            return False
        pts8, top8 = self.ev.arrange([*kept, card_of(u, kept)])
        return pts8 - top8 == 0


class HardBot(_ViewBot):
    """Level ``hard``: expected penalty over the unseen cards (see the module doc)."""

    level = "hard"
    DANGER = 3.0  # points per unit of danger to the next seat
    POTENTIAL = 1.0  # weight of the expected deadwood fall from the next draw
    WAIT = 4.0  # expected points a wait for a clean close must save (the others improve too)
    # Share of a second draw's expected gain credited to a stock draw (0: the take is judged a
    # draw further ahead than the stock; 1: the full gain, which undervalues the sure card).
    # Tuned against three easy bots: 0.5 cut hard's penalty per hand by ~0.3 points.
    STOCK_AHEAD = 0.5
    # Points a chance of closing after the next draw is worth, per unit of probability. Tuned
    # on single hands against three easy bots (paired deals): the mean of the opponents'
    # penalty less hard's rose by 0.6 at 28, 0.8 at 42-84 (1.6 points a hand, was 0.8);
    # an opponent caught by a close pays ~14 and the closer ~0.
    CLOSE_WORTH = 56.0

    def value(self, kept: Sequence[Card], unseen: Counter[Face], chase: bool, ahead: float = 0.0) -> float:
        """Expected deadwood of ``kept`` after the next draw (lower is better), with ``ahead``
        more of that draw's expected gain for a draw after it, less ``CLOSE_WORTH`` times the
        chance that the draw lets it close; when chasing, cards in one suit's longest run
        window count as worth keeping."""
        now = self.ev.points(kept)
        gain, _clean, closes = self.ev.improvement(kept, unseen)
        v = now - (1.0 + ahead) * self.POTENTIAL * gain - self.CLOSE_WORTH * closes
        if chase:
            v -= 2.0 * _run_window(kept, self.ev)
        return v

    def _chasing(self, view: SeatView | None) -> bool:
        """Far behind: the chinchón (an instant win) is worth more than a few points."""
        if view is None or view.me is None or not self.rules.chinchon_wins:
            return False
        mine = view.seats[view.me].total
        others = [s.total for s in view.seats if s.seat != view.me and not s.eliminated]
        return bool(others) and (mine >= self.rules.limit * 0.7 and mine - min(others) >= 30)

    def choose_draw(
        self, hand: Sequence[Card], discard_top: Card | None, *, view: SeatView | None = None,
        **public: Any,
    ) -> Literal["stock", "discard"]:
        """"discard" when the best kept hand with ``discard_top`` has a lower expected
        deadwood than the hand now has after a stock draw, the stock credited
        ``STOCK_AHEAD`` of the draw after (the take's value already looks one draw ahead)."""
        rec = self._record(view)
        if discard_top is None:
            return "stock"
        if rec is None or view is None:
            now = self.ev.points(hand)
            best = min(p for p, d in self.ev.best_kept([*hand, discard_top]) if d is not discard_top)
            return "discard" if best < now else "stock"
        now, top = self.ev.arrange(hand)
        if not self.ev.melds_with(face(discard_top), hand) and self.rules.value(discard_top) >= top:
            return "stock"  # it joins no meld and is no lower than my worst deadwood card
        unseen = unseen_faces(view, rec)
        chase = self._chasing(view)
        stock = self.value(hand, unseen, chase, ahead=self.STOCK_AHEAD)
        eight = [*hand, discard_top]
        kept = self._shortlist(eight, keep=discard_top)
        take = min(self.value([c for c in eight if c is not d], unseen, chase) for d in kept)
        return "discard" if take < stock - 0.5 else "stock"

    SLACK = 5  # only discards within this many deadwood points of the least are valued

    def _shortlist(self, hand8: Sequence[Card], keep: Card | None = None) -> list[Card]:
        """Discards worth valuing: deadwood within ``SLACK`` of the least (never ``keep``)."""
        scored = _others(self.ev.best_kept(hand8), keep)
        low = min(p for p, _ in scored)
        return [c for p, c in scored if p <= low + self.SLACK]

    def choose_discard(
        self, hand8: Sequence[Card], may_close: bool, *, view: SeatView | None = None,
        never: Card | None = None, **public: Any,
    ) -> tuple[Literal["discard", "close"], Card]:
        """Discard minimising expected deadwood plus danger to the next seat, never ``never``
        (the card just taken; a close may still put it face down). Close at once for a
        chinchón or a clean close; with points left, wait only when the chance of a clean
        close next turn saves more than ``WAIT`` points and nobody looks close."""
        rec = self._record(view)
        opts = self.ev.close_options(hand8) if may_close else []
        if rec is None or view is None:
            if opts:
                return "close", opts[0].discard
            return "discard", self._pick([(float(p), c) for p, c in _others(self.ev.best_kept(hand8), never)])
        unseen = unseen_faces(view, rec)
        chase = self._chasing(view)
        if opts:
            o = opts[0]
            if o.chinchon or o.score <= 0 or self.looks_close(view, rec):
                return "close", o.discard
            _gain, p_clean, _closes = self.ev.improvement(list(o.kept), unseen)
            need = self.WAIT if not chase else self.WAIT / 2
            if p_clean * (o.score - self.rules.clean_close_points) <= need:
                return "close", o.discard
        scored = [
            (self.value([x for x in hand8 if x is not c], unseen, chase)
             + self.DANGER * self.danger(c, view, rec), c)
            for c in self._shortlist(hand8, keep=never)
        ]
        return "discard", self._pick(scored)


def _others(scored: list[tuple[int, Card]], never: Card | None) -> list[tuple[int, Card]]:
    """``scored`` (deadwood, discard) without the discard ``never`` (all of it when that would
    leave nothing: a hand of one card)."""
    rest = [(p, c) for p, c in scored if c != never]
    return rest or scored


def _run_window(cards: Sequence[Card], ev: Evaluator) -> int:
    """The most natural cards of one suit inside seven consecutive run positions."""
    best = 0
    by_suit: dict[int, list[int]] = {}
    for c in cards:
        p = ev.pos.get(c.rank)
        if p is not None and not ev.rules.is_wild(c) and not c.is_joker:
            by_suit.setdefault(c.suit, []).append(p)
    for ps in by_suit.values():
        ps.sort()
        for i, lo in enumerate(ps):
            best = max(best, sum(1 for p in ps[i:] if p < lo + 7))
    return best
