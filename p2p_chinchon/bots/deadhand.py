"""A dead hand, and how a bot (and the hint) breaks it (issue 24, item 3).

When every seat draws from the stock and throws back the court card nobody wants, the stock is
re-made from those court cards again and again (000 "Playing a turn" allows it without end):
hands of 30 turns and 16 re-shuffles. A hand counts as *dead* once its stock was re-made
:data:`DEAD_AFTER` times; then a seat collects court cards instead: it takes a discarded card
of a rank it holds (a pair on the way to a set), and discards a card with no partner of its
rank rather than break a pair. Pure: reads a :class:`~p2p_chinchon.view.SeatView`.
"""

from __future__ import annotations

from typing import Any, Sequence

DEAD_AFTER = 2  # re-shuffles of one hand's stock after which the hand counts as dead


def reshuffles(view: Any) -> int:
    """Times this hand's stock was re-made, from the view's recent log (the ``reshuffle``
    events after the last ``deal``; a log window that lost the deal counts what it holds)."""
    n = 0
    for ev in view.events:
        if ev.kind == "deal":
            n = 0
        elif ev.kind == "reshuffle":
            n += 1
    return n


def is_dead(view: Any) -> bool:
    """Whether this seat should play to break a dead hand (:data:`DEAD_AFTER`)."""
    return reshuffles(view) >= DEAD_AFTER


def _rank(card: Any) -> Any:
    return getattr(card, "rank", None)


def collects(hand: Sequence[Any], top: Any) -> bool:
    """Whether to take ``top`` from the discard pile in a dead hand: it pairs with a card of
    ``hand`` by rank (jokers have no rank and never count)."""
    r = _rank(top)
    return r is not None and any(_rank(c) == r and c != top for c in hand)


def keeps_pairs(hand8: Sequence[Any], chosen: Any, rules: Any, never: Any = None) -> Any:
    """The discard in a dead hand: ``chosen`` unless it breaks a pair by rank and a card of
    no pair may go instead (the one worth most; never ``never``, the card just taken)."""
    def paired(c: Any) -> bool:
        return sum(1 for d in hand8 if _rank(d) is not None and _rank(d) == _rank(c)) >= 2

    if not paired(chosen) and chosen != never:
        return chosen
    lone = [c for c in hand8 if not paired(c) and c != never and not rules.is_wild(c)]
    return max(lone, key=rules.value) if lone else chosen
