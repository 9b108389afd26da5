"""A dead hand, and how a bot (and the hint) breaks it.

When every seat draws from the stock and throws back the court card nobody wants, the stock is
re-made from those court cards again and again (000 "Playing a turn" allows it without end):
hands of 30 turns and 16 re-shuffles. A hand counts as *dead* once its stock was re-made
:data:`DEAD_AFTER` times; then a seat collects court cards instead: it takes a discarded card
of a rank it holds (a pair on the way to a set), and discards a card with no partner of its
rank rather than break a pair. A bot that judges every card itself (``normal``, ``hard``:
their draw and discard already weigh what a card may meld with) plays so only once the hand
is stuck (:func:`is_stuck`); collecting earlier cost them their edge in long hands
(:mod:`p2p_chinchon.autoplay`).

That alone does not end a hand where the seats hold every number card and only court cards
(of ranks nobody holds) go round: nobody ever takes one. Once the stock was re-made
:data:`BREAK_AFTER` times a seat also takes a card that *cycled* (was discarded before the
stock's last re-making: nobody wanted it a whole round) even without a pair, and throws a
card of its deadwood instead (never the card taken): a card that was held goes round, the
hands change and someone can meld. Pure and deterministic: reads a
:class:`~p2p_chinchon.view.SeatView`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

DEAD_AFTER = 2  # re-shuffles of one hand's stock after which the hand counts as dead
# Re-shuffles after which a seat takes a cycled card without a pair (one more than DEAD_AFTER:
# collecting pairs gets its round first; a hand that needs this is stuck, not just slow).
BREAK_AFTER = DEAD_AFTER + 1


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


def is_stuck(view: Any) -> bool:
    """Whether the hand is stuck, not just slow: its stock was re-made :data:`BREAK_AFTER`
    times (a bot that judges every card itself plays it as dead only from here)."""
    return reshuffles(view) >= BREAK_AFTER


def cycled(view: Any, card: Any) -> bool:
    """Whether ``card`` was discarded in this hand before the stock's last re-making, from the
    view's recent log (``discard`` events, then ``reshuffle``, after the last ``deal``): it
    went round the whole table unwanted."""
    seen = went_round = False
    for ev in view.events:
        if ev.kind == "deal":
            seen = went_round = False
        elif ev.kind == "discard" and card in ev.cards:
            seen = True
        elif ev.kind == "reshuffle" and seen:
            went_round = True
    return went_round


def breaks(view: Any) -> bool:
    """Whether to take the discard top without a pair to break a stuck hand: the stock was
    re-made :data:`BREAK_AFTER` times and the top card :func:`cycled` (a wild card is worth
    taking anyway; the bot's own judgement decides it)."""
    top = view.discard_top
    return (top is not None and is_stuck(view) and not view.rules.is_wild(top)
            and cycled(view, top))


def _rank(card: Any) -> Any:
    return getattr(card, "rank", None)


def collects(hand: Sequence[Any], top: Any) -> bool:
    """Whether to take ``top`` from the discard pile in a dead hand: it pairs with a card of
    ``hand`` by rank (jokers have no rank and never count)."""
    r = _rank(top)
    return r is not None and any(_rank(c) == r and c != top for c in hand)


def keeps_pairs(hand8: Sequence[Any], chosen: Any, rules: Any, never: Any = None,
                points: Callable[[list[Any]], int] | None = None) -> Any:
    """The discard in a dead hand: ``chosen`` unless it breaks a pair by rank or is ``never``
    (the card just taken); then the card that breaks no meld (with ``points``, the deadwood of
    a list of cards: its going lowers the deadwood by its whole value), then no pair, then the
    one worth most (never a wild card)."""
    def paired(c: Any) -> bool:
        return sum(1 for d in hand8 if _rank(d) is not None and _rank(d) == _rank(c)) >= 2

    if not paired(chosen) and chosen != never:
        return chosen
    ours = [c for c in hand8 if c != never and not rules.is_wild(c)]
    if not ours:
        return chosen
    whole = points(list(hand8)) if points is not None else 0

    def melded(c: Any) -> bool:
        return points is not None and points([d for d in hand8 if d is not c]) > whole - rules.value(c)

    return min(ours, key=lambda c: (melded(c), paired(c), -rules.value(c), c))
