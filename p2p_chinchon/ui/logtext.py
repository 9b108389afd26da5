"""The table's public log in the person's language, with their own seat said as "you".

The table logs :class:`~p2p_chinchon.view.LogEvent` values (``SeatView.events``): a kind and
its seats, names, cards and numbers. Each kind is said here from those fields: translated, the
own seat in the second person ("You discard 7♦" rather than "Ana discards 7♦"), cards drawn in
the table's faces and colours. Nothing is parsed back from the English ``text``. Display only:
nothing here decides a rule.
"""

from __future__ import annotations

from collections.abc import Callable

from ..i18n import Translator
from ..view import Leave as _Leave, LogEvent, SeatView
from .render import Faces, card_style, card_text
from .text import Line

_CARD = "\x00"  # stands for a card in a formatted template, then replaced by its fragments
_LEFT_TABLE = _Leave().reason  # a leave for no other reason has its own, shorter sentence

# log event kind -> i18n key
KIND_KEYS = {
    "opened": "log_opened", "fault": "log_fault", "dropped": "log_dropped",
    "stopped": "log_stopped_by", "game_over": "log_game_over", "seated": "log_sat",
    "unseated": "log_unseated", "seating": "log_seated", "agreed": "log_agreed",
    "first_dealer": "log_first_dealer", "deal": "log_hand_deals", "upcard": "log_dealt",
    "draw_stock": "log_draw_stock", "draw_discard": "log_draw_discard", "discard": "log_discard",
    "close": "log_close", "reshuffle": "log_restock", "void": "log_void", "dead_hand": "log_dead_hand",
    "eliminated": "log_out", "reentry_offer": "log_reentry_offer", "reenter": "log_reentered",
    "score": "log_scores", "left": "log_left", "removed": "log_removed_absent", "voided": "log_voided",
    "unsigned_end": "log_unsigned_end",
}

# keys with a second-person form ("<key>_you") for the own seat
YOU_KEYS = frozenset({"log_sat", "log_agreed", "log_first_dealer", "log_hand_deals",
                      "log_draw_stock", "log_draw_discard", "log_discard", "log_close",
                      "log_game_over", "log_out", "log_reentry_offer", "log_reentered",
                      "log_left", "log_left_table", "log_stopped_by"})
LOG_KEYS = frozenset(KIND_KEYS.values()) | {"log_game_over_nobody", "log_left_table", "log_removed_left"}


def _key(ev: LogEvent) -> str:
    key = KIND_KEYS[ev.kind]
    if ev.kind == "game_over" and ev.seat is None:
        return "log_game_over_nobody"
    if ev.kind == "left" and ev.detail == _LEFT_TABLE:
        return "log_left_table"
    if ev.kind == "removed" and ev.detail == "left":
        return "log_removed_left"
    return key


def log_line(ev: LogEvent, tr: Translator, faces: Faces, me: int | None = None) -> Line:
    """``ev`` as a styled line in ``tr``'s language; ``me``: the own seat (the events it acts
    in are said in the second person)."""
    key = _key(ev)
    if me is not None and ev.seat == me and key in YOU_KEYS:
        key += "_you"
    fields = ev.fields()
    if ev.kind == "void" and ev.detail == "reshuffles":  # table option max_reshuffles
        fields["reason"] = tr("void_reshuffles")
    card = ev.card
    if card is not None:
        fields["card"] = _CARD
    out = tr(key, **fields)
    if card is None:
        return [("class:log", out)]
    before, _, after = out.partition(_CARD)
    frags: Line = [("class:log", before)] if before else []
    frags.append((card_style(card, faces), card_text(card, faces)))
    if after:
        frags.append(("class:log", after))
    return frags


def make_log_renderer(tr: Translator, faces: Callable[[], Faces]) -> Callable[[LogEvent, SeatView | None], Line]:
    """``render(event, view) -> Line``: :func:`log_line` for the view's own seat."""

    def render(ev: LogEvent, view: SeatView | None) -> Line:
        return log_line(ev, tr, faces(), view.me if view is not None else None)

    return render
