"""Turn a bot strategy into a :data:`~p2p_chinchon.net.node.Decider`.

A bot sees exactly what its seat's :class:`~p2p_chinchon.view.SeatView` shows (its own hand,
the discard pile top, public information) and answers with an intent; the table checks it with
the same engine as any peer's move.
"""

from __future__ import annotations

from typing import Any

from p2p_chinchon import view as v
from p2p_chinchon.bots import deadhand
from p2p_chinchon.engine.words import counted


def bot_decider(bot: Any, *, reenter: bool = True) -> Any:
    """``decide(view, need) -> intent`` for a bot with ``choose_draw`` / ``choose_discard``."""

    def decide(view: v.SeatView, need: str) -> Any:
        if need == "agree":
            return v.Agree()
        if need == "reenter":
            return v.Reenter(reenter)
        if need == "draw":
            return draw_intent(bot, view)
        if need == "discard":
            return discard_intent(bot, view)
        return None

    return decide


def _dead(bot: Any, view: v.SeatView) -> bool:
    """Whether ``bot`` plays this hand as a dead one (:mod:`p2p_chinchon.bots.deadhand`): from
    :data:`~p2p_chinchon.bots.deadhand.DEAD_AFTER` re-makings of the stock, or, for a bot that
    judges its cards itself (``JUDGES_DEAD_HANDS``), only once the hand is stuck
    (:data:`~p2p_chinchon.bots.deadhand.BREAK_AFTER`)."""
    return deadhand.is_stuck(view) if getattr(bot, "JUDGES_DEAD_HANDS", False) else deadhand.is_dead(view)


def draw_intent(bot: Any, view: v.SeatView) -> Any:
    """The bot's draw; in a dead hand (:func:`_dead`) it collects a discarded card that pairs
    with its hand, and in a stuck one it takes a card that went round unwanted even without a
    pair (its discard then keeps it: :func:`discard_intent`)."""
    if view.discard_top is None:
        return v.Draw("stock")
    if _dead(bot, view) and (deadhand.collects(view.hand, view.discard_top) or deadhand.breaks(view)):
        return v.Draw("discard")
    return v.Draw(bot.choose_draw(list(view.hand), view.discard_top, view=view))


def taken_now(view: v.SeatView) -> Any:
    """The card this seat took from the discard pile this turn, or None (it drew from the
    stock, or it is not its discard step)."""
    if not view.my_turn or view.step != "discard":
        return None
    for ev in reversed(view.events):
        if ev.kind in ("draw_stock", "draw_discard"):
            mine = ev.seats[:1] == (view.me,)
            return ev.cards[0] if mine and ev.kind == "draw_discard" and ev.cards else None
    return None


def discard_intent(bot: Any, view: v.SeatView) -> Any:
    """The bot's discard or close for an 8-card hand, checked against the legal closes. The
    bot never throws back the card just taken from the discard pile (legal, docs/rules.md, but
    never the advice): it chooses among the others by its own judgement (``never=``). A
    dead hand (:func:`_dead`) keeps its pairs."""
    closable = {c for c, _pts, _ch in view.close_options}
    taken = taken_now(view)
    action, card = bot.choose_discard(list(view.hand), may_close=bool(closable), view=view, never=taken)
    if action == "close":
        if card in closable:
            return v.Close(card)
        if closable:  # the bot wanted to close: take the best legal close
            return v.Close(view.close_options[0][0])
    if _dead(bot, view):
        card = deadhand.keeps_pairs(view.hand, card, view.rules, never=taken, points=_evaluator(bot, view).points)
    if taken is not None and card == taken:
        card = _best_other(bot, view, taken)
    return v.Discard(card)


def _evaluator(bot: Any, view: v.SeatView) -> Any:
    from p2p_chinchon.bots.evaluate import Evaluator

    return getattr(bot, "ev", None) or Evaluator(view.rules)


def _best_other(bot: Any, view: v.SeatView, taken: Any) -> Any:
    """The least-deadwood discard that is not ``taken``."""
    ev = _evaluator(bot, view)
    hand = list(view.hand)
    others = [(ev.points(hand[:i] + hand[i + 1:]), i) for i, c in enumerate(hand) if c != taken]
    return hand[min(others)[1]] if others else taken


def suggest(bot: Any, view: v.SeatView) -> Any:
    """The bot's move for this seat as an intent (:class:`~p2p_chinchon.view.Draw`,
    ``Discard`` or ``Close``), or None when it is not this seat's turn to draw or discard.
    The UI's hint key renders it in the player's language and picks its card."""
    if not view.my_turn or view.step not in ("draw", "discard"):
        return None
    if view.step == "draw":
        return draw_intent(bot, view)
    return discard_intent(bot, view)


def hint(bot: Any, view: v.SeatView) -> str:
    """The bot's suggestion for this seat, in English words (see :func:`suggest`)."""
    intent = suggest(bot, view)
    if intent is None:
        return "wait for your turn"
    if isinstance(intent, v.Draw):
        src = intent.source
        return f"draw from the {src}" if src == "stock" else f"take the {view.discard_top} from the discard pile"
    if isinstance(intent, v.Close):
        pts = next((p for c, p, _ in view.close_options if c == intent.card), None)
        return f"close, putting {intent.card} face down ({'?' if pts is None else counted(pts, 'point')})"
    return f"discard {intent.card}"
