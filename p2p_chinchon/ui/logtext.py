"""The table's public log in the person's language, with their own seat said as "you".

``table.py`` logs short English sentences (``SeatView.log``, e.g. "Bruno discards 7♦",
"hand 2: Ana deals"). The UI re-renders the sentences it knows: translated, the own seat in the
second person ("You discard 7♦" rather than "Ana discards 7♦"), cards drawn in the table's faces
and colours. A sentence it does not know is shown as it came, so a new log line never breaks
the screen. Display only: nothing here decides a rule.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from .i18n import Translator
from .render import CardTextError, Faces, card_style, card_text, parse_card_text
from .text import Line

_CARD = "\x00"  # stands for a card in a formatted template, then replaced by its fragments

# (regex over the English log line, i18n key). Groups: "name" (a seat's name), "seat" (a seat
# number, shown as its name), "card" (French notation); any other group is a field.
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p), k) for p, k in (
    (r"^table '(?P<table>.*)' opened$", "log_opened"),
    (r"^fault: seat (?P<seat>\S+): (?P<rule>[a-z_]+): (?P<reason>.*)$", "log_fault"),
    (r"^dropped a frame \((?P<rule>[a-z_]+), claimed seat (?P<seat>\S+)\): (?P<reason>.*)$",
     "log_dropped"),
    (r"^stopped by (?P<name>.+?): (?P<reason>.*)$", "log_stopped_by"),
    (r"^game over: nobody wins$", "log_game_over_nobody"),
    (r"^(?P<name>.+) sat down \((?P<k>\d+)/(?P<n>\d+)\)$", "log_sat"),
    (r"^seated: (?P<names>.*)$", "log_seated"),
    (r"^(?P<name>.+) agreed to the table$", "log_agreed"),
    (r"^(?P<name>.+) deals first \(coin toss\)$", "log_first_dealer"),
    (r"^hand (?P<n>\d+): (?P<name>.+) deals$", "log_hand_deals"),
    (r"^dealt; upcard (?P<card>\S+)$", "log_dealt"),
    (r"^(?P<name>.+) draws from the stock$", "log_draw_stock"),
    (r"^(?P<name>.+) draws from the discard: (?P<card>\S+)$", "log_draw_discard"),
    (r"^(?P<name>.+) discards (?P<card>\S+)$", "log_discard"),
    (r"^(?P<name>.+) closes$", "log_close"),
    (r"^the stock is empty: (?P<n>\d+) discards are re-shuffled by every seat$", "log_restock"),
    (r"^hand void: (?P<reason>.*)$", "log_void"),
    (r"^game over: (?P<name>.+) wins$", "log_game_over"),
    (r"^Eliminated: (?P<name>.+)$", "log_out"),
    (r"^ReentryOffered: (?P<name>.+)$", "log_reentry_offer"),
    (r"^Reentered: (?P<name>.+)$", "log_reentered"),
    (r"^scores: (?P<scores>.*)$", "log_scores"),
    (r"^(?P<name>.+) left: left the table$", "log_left_table"),
    (r"^(?P<name>.+) left: (?P<reason>.*)$", "log_left"),
))

# keys with a second-person form ("<key>_you") for the own seat
YOU_KEYS = frozenset({"log_sat", "log_agreed", "log_first_dealer", "log_hand_deals",
                      "log_draw_stock", "log_draw_discard", "log_discard", "log_close",
                      "log_game_over", "log_out", "log_reentry_offer", "log_reentered",
                      "log_left", "log_left_table", "log_stopped_by"})
LOG_KEYS = frozenset(k for _, k in _PATTERNS)


def _card(text: str) -> Any:
    from ..engine import Card

    rank, suit = parse_card_text(text, "french")  # table.py logs str(Card): French notation
    return Card(rank, 0 if suit is None else suit)


def log_line(text: str, tr: Translator, faces: Faces, seats: Sequence[str] = (),
             me: int | None = None) -> Line | None:
    """``text`` (one English ``SeatView.log`` line) as a styled line in ``tr``'s language, or
    None when the sentence is not one the table writes. ``seats``: every seat's name in seat
    order (when given, a sentence about a name that is none of them is not recognised);
    ``me``: the own seat (its sentences become second person)."""
    my_name = seats[me] if me is not None and 0 <= me < len(seats) else None
    for pattern, key in _PATTERNS:
        m = pattern.match(text)
        if m is None:
            continue
        fields = m.groupdict()
        name = fields.get("name")
        if name is not None and seats and name not in seats:
            continue
        card = None
        if "card" in fields:
            try:
                card = _card(fields["card"])
            except (CardTextError, ValueError):
                continue
            fields["card"] = _CARD
        if name is not None and my_name is not None and name == my_name and key in YOU_KEYS:
            key += "_you"
        if key in ("log_fault", "log_dropped"):
            seat = fields.pop("seat")
            fields["name"] = seats[int(seat)] if seat.isdigit() and int(seat) < len(seats) else "-"
        out = tr(key, **fields)
        if card is None:
            return [("class:log", out)]
        before, _, after = out.partition(_CARD)
        frags: Line = [("class:log", before)] if before else []
        frags.append((card_style(card, faces), card_text(card, faces)))
        if after:
            frags.append(("class:log", after))
        return frags
    return None


def make_log_renderer(tr: Translator, faces: Callable[[], Faces]) -> Callable[[str, Any], Line]:
    """``render(text, view) -> Line``: :func:`log_line` for the view's seats, falling back to
    the sentence as it came."""

    def render(text: str, view: Any) -> Line:
        seats: list[str] = []
        me = None
        if view is not None:
            seats = [s.name for s in sorted(view.seats, key=lambda s: s.seat)]
            me = view.me
        line = log_line(text, tr, faces(), seats, me)
        return line if line is not None else [("class:log", text)]

    return render
