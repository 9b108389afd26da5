"""The public record of the current hand, as a bot may know it, read from :class:`SeatView`.

Everything here comes from what every seat sees: the discard pile (the upcard, each discard,
each card taken back from it), which seat took which discard, and the restocks. It never sees
a face drawn from the stock by another seat.

It reads the view's log events (:class:`~p2p_chinchon.view.LogEvent`, ``SeatView.events``):
"deal", "upcard", "draw_discard", "draw_stock", "discard", "reshuffle", "close". When the log
is missing or incomplete the record falls back on ``discard_top`` and ``last_from_discard``.

Cards are kept by face ``(rank, suit)`` (jokers all alike) so that two-pack copies, which the
log does not tell apart, still match.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..engine import Card
from ..view import LogEvent, SeatView

__all__ = ["Face", "face", "HandRecord", "RecordKeeper", "unseen_faces"]

Face = tuple[int, int]


def face(card: Card) -> Face:
    """The face of a card: ``(rank, suit)``, every joker ``(0, 0)``."""
    return (0, 0) if card.is_joker else (card.rank, card.suit)


@dataclass
class HandRecord:
    """What the public record says about the hand in play.

    ``pile``: discard pile faces, bottom first (as far as seen). ``holds[s]``: faces seat s took
    from the pile and has not discarded since (so it holds them). ``shed[s]``: faces seat s
    discarded this hand (cards it did not want). ``takes[s]``: how many times s took from the
    pile. ``turns``: discards seen this hand."""

    hand_no: int = -1
    pile: list[Face] = field(default_factory=list)
    holds: dict[int, Counter[Face]] = field(default_factory=dict)
    shed: dict[int, Counter[Face]] = field(default_factory=dict)
    takes: Counter[int] = field(default_factory=Counter)
    turns: int = 0
    complete: bool = False  # the log covered this hand from its deal

    def apply(self, ev: LogEvent) -> None:
        if ev.kind == "deal":
            self.pile, self.holds, self.shed = [], {}, {}
            self.takes, self.turns, self.complete = Counter(), 0, True
        elif ev.kind == "upcard" and ev.card is not None:
            self.pile = [face(ev.card)]
        elif ev.kind == "draw_discard" and ev.card is not None and ev.seat is not None:
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
        elif ev.kind == "reshuffle":
            self.pile = self.pile[-1:]  # the rest went back, face down, into the stock


class RecordKeeper:
    """Keeps a :class:`HandRecord` up to date from successive views of one seat (a bot sees a
    view at each of its decisions; events logged in between are read once, by ``log_total``)."""

    def __init__(self) -> None:
        self.record = HandRecord()
        self._seen = 0

    def update(self, view: SeatView) -> HandRecord:
        rec = self.record
        fresh = view.log_total - self._seen
        events = view.events
        fresh_events = events[-fresh:] if 0 < fresh <= len(events) else (events if fresh > 0 else ())
        self._seen = max(self._seen, view.log_total)
        dealt = False
        for ev in fresh_events:
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


def unseen_faces(view: SeatView, rec: HandRecord) -> Counter[Face]:
    """Faces this seat has not seen this hand and cannot place: each is in the stock or in an
    opponent's hand, all equally likely to be the next stock card."""
    left: Counter[Face] = Counter(face(c) for c in view.rules.deck(len(view.seats)))
    left.subtract(face(c) for c in view.hand)
    left.subtract(rec.pile)
    for seat, held in rec.holds.items():
        if seat != view.me:
            left.subtract(held)
    return +left
