"""The public record of the current hand, as a bot may know it, read from :class:`SeatView`.

Everything here comes from what every seat sees: the discard pile (the upcard, each discard,
each card taken back from it), which seat took which discard, and the restocks. It never sees
a face drawn from the stock by another seat.

:func:`read_log_events` is the one adapter from the view's English log lines (``table.py``:
"hand 3: Ana deals", "dealt; upcard 5♦", "Ana draws from the discard: 5♦", "Ana draws from the
stock", "Ana discards 7♣", "the stock is empty: ...") to structured events; when the table
publishes structured events it is the only function to repoint. When the log is missing or
incomplete the record falls back on ``discard_top`` and ``last_from_discard``.

Cards are kept by face ``(rank, suit)`` (jokers all alike) so that two-pack copies, which the
log does not tell apart, still match.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ..engine import Card, CardError, parse_card
from ..view import SeatView

__all__ = ["Face", "face", "LogEvent", "read_log_events", "HandRecord", "RecordKeeper", "unseen_faces"]

Face = tuple[int, int]


def face(card: Card) -> Face:
    """The face of a card: ``(rank, suit)``, every joker ``(0, 0)``."""
    return (0, 0) if card.is_joker else (card.rank, card.suit)


@dataclass(frozen=True)
class LogEvent:
    """One public happening: ``kind`` is "deal", "upcard", "take" (a seat took ``card`` from
    the discard pile), "stock" (a seat drew from the stock), "discard", "restock" or "close"."""

    kind: str
    seat: int | None = None
    card: Card | None = None


def _card(text: str) -> Card | None:
    try:
        return parse_card(text)
    except CardError:
        return None


def read_log_events(lines: Iterable[str], names: Sequence[str]) -> list[LogEvent]:
    """Structured events from the table's English log lines (unknown lines are skipped).
    ``names[i]`` is seat i's name; the longest matching name wins."""
    by_len = sorted(((n, i) for i, n in enumerate(names) if n), key=lambda t: -len(t[0]))
    out: list[LogEvent] = []
    for line in lines:
        if line.startswith("hand ") and line.endswith(" deals"):
            out.append(LogEvent("deal"))
            continue
        if line.startswith("dealt; upcard "):
            out.append(LogEvent("upcard", None, _card(line[len("dealt; upcard "):])))
            continue
        if line.startswith("the stock is empty"):
            out.append(LogEvent("restock"))
            continue
        for name, seat in by_len:
            if not line.startswith(name + " "):
                continue
            rest = line[len(name) + 1:]
            if rest.startswith("draws from the discard: "):
                out.append(LogEvent("take", seat, _card(rest[len("draws from the discard: "):])))
            elif rest == "draws from the stock":
                out.append(LogEvent("stock", seat))
            elif rest.startswith("discards "):
                out.append(LogEvent("discard", seat, _card(rest[len("discards "):])))
            elif rest == "closes":
                out.append(LogEvent("close", seat))
            break
    return out


@dataclass
class HandRecord:
    """What the public record says about the hand in play.

    ``pile``: discard pile faces, bottom first (as far as seen). ``holds[s]``: faces seat s took
    from the pile and has not discarded since (so it holds them). ``shed[s]``: faces seat s
    discarded this hand (cards it did not want). ``takes[s]``: how many times s took from the
    pile. ``turns``: discards seen this hand."""

    hand_no: int = -1
    pile: list[Face] = field(default_factory=list)
    holds: dict[int, Counter] = field(default_factory=dict)
    shed: dict[int, Counter] = field(default_factory=dict)
    takes: Counter = field(default_factory=Counter)
    turns: int = 0
    complete: bool = False  # the log covered this hand from its deal

    def apply(self, ev: LogEvent) -> None:
        if ev.kind == "deal":
            self.pile, self.holds, self.shed = [], {}, {}
            self.takes, self.turns, self.complete = Counter(), 0, True
        elif ev.kind == "upcard" and ev.card is not None:
            self.pile = [face(ev.card)]
        elif ev.kind == "take" and ev.card is not None and ev.seat is not None:
            f = face(ev.card)
            if self.pile and self.pile[-1] == f:
                self.pile.pop()
            self.holds.setdefault(ev.seat, Counter())[f] += 1
            self.takes[ev.seat] += 1
        elif ev.kind == "discard" and ev.card is not None and ev.seat is not None:
            f = face(ev.card)
            self.pile.append(f)
            self.shed.setdefault(ev.seat, Counter())[f] += 1
            held = self.holds.get(ev.seat)
            if held and held[f]:
                held[f] -= 1
            self.turns += 1
        elif ev.kind == "restock":
            self.pile = self.pile[-1:]  # the rest went back, face down, into the stock


class RecordKeeper:
    """Keeps a :class:`HandRecord` up to date from successive views of one seat (a bot sees a
    view at each of its decisions; lines logged in between are read once, by ``log_total``)."""

    def __init__(self) -> None:
        self.record = HandRecord()
        self._seen = 0

    def update(self, view: SeatView) -> HandRecord:
        rec = self.record
        fresh = view.log_total - self._seen
        lines = view.log[-fresh:] if 0 < fresh <= len(view.log) else (view.log if fresh > 0 else ())
        self._seen = max(self._seen, view.log_total)
        names = [s.name for s in view.seats]
        dealt = False
        for ev in read_log_events(lines, names):
            dealt = dealt or ev.kind == "deal"
            rec.apply(ev)
        if rec.hand_no != view.hand_no and not dealt:
            # a new hand whose deal line we did not see: start from what the view shows
            self.record = rec = HandRecord()
        rec.hand_no = view.hand_no
        self._resync(rec, view)
        return rec

    @staticmethod
    def _resync(rec: HandRecord, view: SeatView) -> None:
        top = face(view.discard_top) if view.discard_top is not None else None
        if top is None:
            rec.pile = []
        elif not rec.pile or rec.pile[-1] != top:
            rec.pile.append(top)
        del rec.pile[: max(0, len(rec.pile) - view.discard_size)]
        if rec.complete:
            return
        for seat, card in view.last_from_discard.items():
            if seat == view.me or card is None:
                continue
            held = rec.holds.setdefault(seat, Counter())
            f = face(card)
            if not held[f] and not rec.shed.get(seat, Counter())[f]:
                held[f] += 1


def unseen_faces(view: SeatView, rec: HandRecord) -> Counter:
    """Faces this seat has not seen this hand and cannot place: each is in the stock or in an
    opponent's hand, all equally likely to be the next stock card."""
    left: Counter = Counter(face(c) for c in view.rules.deck(len(view.seats)))
    left.subtract(face(c) for c in view.hand)
    left.subtract(rec.pile)
    for seat, held in rec.holds.items():
        if seat != view.me:
            left.subtract(held)
    return +left
