"""Turn a bot strategy into a :data:`~p2p_chinchon.net.node.Decider`.

A bot sees exactly what its seat's :class:`~p2p_chinchon.view.SeatView` shows (its own hand,
the discard pile top, public information) and answers with an intent; the table checks it with
the same engine as any peer's move.
"""

from __future__ import annotations

from typing import Any

from p2p_chinchon import view as v


def bot_decider(bot: Any, *, reenter: bool = True) -> Any:
    """``decide(view, need) -> intent`` for a bot with ``choose_draw`` / ``choose_discard``."""

    def decide(view: v.SeatView, need: str) -> Any:
        if need == "agree":
            return v.Agree()
        if need == "reenter":
            return v.Reenter(reenter)
        if need == "draw":
            if view.discard_top is None:
                return v.Draw("stock")
            return v.Draw(bot.choose_draw(list(view.hand), view.discard_top, view=view))
        if need == "discard":
            return discard_intent(bot, view)
        return None

    return decide


def discard_intent(bot: Any, view: v.SeatView) -> Any:
    """The bot's discard or close for an 8-card hand, checked against the legal closes."""
    closable = {c for c, _pts, _ch in view.close_options}
    action, card = bot.choose_discard(list(view.hand), may_close=bool(closable), view=view)
    if action == "close":
        if card in closable:
            return v.Close(card)
        if closable:  # the bot wanted to close: take the best legal close
            return v.Close(view.close_options[0][0])
        return v.Discard(card)
    return v.Discard(card)


def suggest(bot: Any, view: v.SeatView) -> Any:
    """The bot's move for this seat as an intent (:class:`~p2p_chinchon.view.Draw`,
    ``Discard`` or ``Close``), or None when it is not this seat's turn to draw or discard.
    The UI's hint key renders it in the player's language and picks its card."""
    if not view.my_turn or view.step not in ("draw", "discard"):
        return None
    if view.step == "draw":
        if view.discard_top is None:
            return v.Draw("stock")
        return v.Draw(bot.choose_draw(list(view.hand), view.discard_top, view=view))
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
        return f"close, putting {intent.card} face down ({pts} points)"
    return f"discard {intent.card}"
