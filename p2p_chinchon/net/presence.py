"""Presence: which other seats this node hears, and the heartbeat that tells it.

Every second the node sends ``H`` (:data:`HEARTBEAT`, an empty mesh payload) on every link that
is up. A seat heard from neither by frames nor heartbeats for :data:`SILENT_AFTER` seconds, or
whose link is down, is *absent*; when it is heard again it is *back* (shown for
:data:`BACK_SHOWN` s). Heartbeats are link-level (never chain envelopes): they prove nothing and
are never blamed on anyone. What an absence costs (a ``rejoin_wait``, then a removal) is the
node's clocks' and verdicts' business (:mod:`.clocks`, :mod:`.verdicts`).

A heartbeat's body says which seats its sender hears directly (:func:`heartbeat`; an empty
body, an older node's, says nothing). A seat whose own link to this node is down but that a
present seat hears is *present through* that seat (:meth:`Presence.through`): it is playing, its
envelopes forwarded, so it is not away; nobody votes it out for a link the pair lacks. The
claim is unsigned: it never blames anyone, and it holds only while the seat keeps up with the
table (a seat awaited past its limit is away again, whatever anyone says).

:class:`Presence` is the sans-I/O machine that tracks it: who was heard when, whose link is
up, who is away since when, who came back, what each seat's heartbeat says it hears, and
whether this node listens first (it was away itself). The node feeds it frames, heartbeats
and link events with trio's clock, and reads from it the :class:`Seen` snapshot its clocks
consume (:mod:`.clocks`) and the :class:`SeatPresence` of every other seat that the status
line shows (:mod:`.status`). Tests feed it numbers (tests/test_presence.py). Its timings are
this module's constants, read at each call (a test may patch them here).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

HEARTBEAT = b"H"  # mesh payload type: a heartbeat (body: :func:`heartbeat`)
HEARS = b"\x01"  # a heartbeat body's tag: the seats its sender hears directly follow, a byte each
HEARTBEAT_EVERY = 1.0  # seconds between heartbeats on each link
SILENT_AFTER = 3.5  # seconds without a frame before a seat counts as absent (shown within 5 s)
BACK_SHOWN = 5.0  # seconds "Carla is back" stays in the status


def heartbeat(hears: Iterable[int]) -> bytes:
    """The ``H`` payload of a node that hears ``hears`` directly (seats 0..255)."""
    return HEARTBEAT + HEARS + bytes(sorted(s for s in set(hears) if 0 <= s < 256))


def heard_by(body: bytes, seats: int, sender: int) -> frozenset[int] | None:
    """The seats a heartbeat's ``body`` (after ``H``) says its ``sender`` hears directly, of a
    table of ``seats``; None when it says nothing (empty: an older node) or is malformed
    (unknown tag, a seat out of range or the sender itself: ignored, heartbeats prove nothing)."""
    if body[:1] != HEARS:
        return None
    hears = frozenset(body[1:])
    if len(hears) != len(body) - 1 or any(s >= seats or s == sender for s in hears):
        return None
    return hears


@dataclass(frozen=True)
class Seen:
    """What this node knows of the other seats at one instant: ``heard`` (the seats heard at
    least once), ``away_since`` (the seats away, since when), ``returned_at`` (when a seat was
    last heard again after an absence), ``present`` (the seats present now: a live link, or
    heard through another seat) and ``others`` (the other seats still at the table)."""

    heard: Collection[int]
    away_since: Mapping[int, float]
    returned_at: Mapping[int, float]
    present: Collection[int]
    others: Sequence[int]


@dataclass(frozen=True)
class SeatPresence:
    """One other seat as this node hears it: ``connected`` (link up and heard from within
    :data:`SILENT_AFTER` s); ``away`` seconds since it was last heard while absent, else 0;
    ``back`` true for :data:`BACK_SHOWN` s after it returned."""

    seat: int
    name: str
    connected: bool
    away: float = 0.0
    back: bool = False
    relayed: bool = False  # its link runs through the transit relay


class Presence:
    """Who this node hears, since when, and who is away or back: a sans-I/O machine.

    Inputs are explicit: ``now`` (seconds on any monotonic clock), the seat a frame or link
    event concerns, and, where presence depends on the table, the table's ``others`` (the
    other seats still in the game), ``left`` (seats out of it) and ``chain`` (our chain's
    length). No trio, no sockets, no clock reads: the node feeds it trio's clock, tests feed it
    numbers (tests/test_presence.py).

    State (public, read by the node's clocks and status): ``heard`` (seat -> when last
    heard), ``up`` (seats whose link is up), ``away_since`` (seat -> since when it is away),
    ``back_at`` (seat -> when it came back, shown :data:`BACK_SHOWN` s), ``returned_at``
    (seat -> when last heard again after an absence), ``hears`` (seat -> (when, the seats its
    last heartbeat said it hears directly)), ``through_spent`` ((chain length, seat) awaited
    past its limit: not present through anyone at that length) and ``listening`` (since when
    this node listens first: it was away itself or reaches nobody; None while it plays;
    ``listen_note`` says why, "listening" or "cutoff"). While it listens nobody's absence is
    counted."""

    def __init__(self) -> None:
        self.heard: dict[int, float] = {}
        self.up: set[int] = set()
        self.away_since: dict[int, float] = {}
        self.back_at: dict[int, float] = {}
        self.returned_at: dict[int, float] = {}
        self.hears: dict[int, tuple[float, frozenset[int]]] = {}
        self.through_spent: set[tuple[int, int]] = set()
        self.listening: float | None = None
        self.listen_note = ""

    # ------------------------------------------------------------------ inputs

    def hear(self, seat: int, now: float) -> None:
        """A frame (any payload) came from ``seat``; call :meth:`update` after it."""
        self.heard[seat] = now

    def link_up(self, seat: int, now: float) -> None:
        """``seat``'s link came up (counts as hearing it); call :meth:`update` after it."""
        self.up.add(seat)
        self.heard[seat] = now

    def link_down(self, seat: int) -> None:
        """``seat``'s link went down; call :meth:`update` after it."""
        self.up.discard(seat)

    def heartbeat(self, seat: int, now: float, hears: frozenset[int]) -> None:
        """``seat``'s heartbeat said it hears ``hears`` directly (:func:`heard_by`)."""
        self.hears[seat] = (now, hears)

    def update(self, now: float, others: Iterable[int], left: Collection[int], chain: int) -> list[int]:
        """Track who went away (since when) and who came back, at ``now``; the seats that came
        back, in ``others`` order (no removal of them is signed any more). A seat never heard
        is not away (it is connecting); one whose link is up is away since its last sign of
        life, one whose link is down since ``now``. While :attr:`listening`, only returns are
        noted."""
        back = []
        for seat in others:
            if self.present(seat, now) or self.through(seat, now, left, chain) is not None:
                if self.away_since.pop(seat, None) is not None:
                    self.back_at[seat] = self.returned_at[seat] = now
                    back.append(seat)
            elif self.listening is not None:
                continue
            elif seat not in self.away_since and seat in self.heard:
                self.away_since[seat] = min(now, self.heard[seat] + SILENT_AFTER) if seat in self.up else now
                self.back_at.pop(seat, None)
        return back

    def listen(self, now: float, note: str) -> None:
        """This node was away (its clock jumped) or reaches nobody (``note``: "listening",
        "cutoff"): every other seat is unknown, not away, until :meth:`play_on`."""
        self.listening, self.listen_note = now, note
        self.away_since.clear()
        self.back_at.clear()

    def play_on(self, now: float, others: Iterable[int]) -> None:
        """This node caught up: it stops listening, and the seats of ``others`` not present
        now are away from ``now`` (their ``rejoin_wait`` starts)."""
        self.listening = None
        for seat in others:
            if not self.present(seat, now):
                self.away_since[seat] = now

    def spent(self, seat: int, chain: int) -> None:
        """``seat`` was awaited past its limit at chain length ``chain`` while only heard
        through another seat: at that length it is away (call :meth:`update` after it)."""
        self.through_spent.add((chain, seat))

    # ------------------------------------------------------------------ read-outs

    def present(self, seat: int, now: float) -> bool:
        """Whether ``seat``'s link is up and it was heard within :data:`SILENT_AFTER` s."""
        heard = self.heard.get(seat)
        return seat in self.up and heard is not None and now - heard < SILENT_AFTER

    def through(self, seat: int, now: float, left: Collection[int], chain: int) -> int | None:
        """A present seat (not in ``left``) that said, within :data:`SILENT_AFTER` s, that it
        hears ``seat`` directly (``seat`` plays through it: its envelopes come forwarded), or
        None. None too for a seat awaited past its limit at chain length ``chain``
        (:meth:`spent`): it is away then."""
        if (chain, seat) in self.through_spent:
            return None
        for other, (at, hears) in sorted(self.hears.items()):
            if (seat in hears and now - at < SILENT_AFTER and other != seat and other not in left
                    and self.present(other, now)):
                return other
        return None

    def fresh_hears(self, now: float) -> list[tuple[int, frozenset[int]]]:
        """``(seat, the seats it hears directly)`` for every linked seat whose heartbeat said
        so within :data:`SILENT_AFTER` s (the node forwards to them what they cannot hear)."""
        return [(seat, hears) for seat, (at, hears) in self.hears.items()
                if now - at < SILENT_AFTER and seat in self.up]

    def seen(self, now: float, seats: Iterable[int], others: Sequence[int]) -> Seen:
        """The snapshot :class:`~.clocks.Clocks` reads: ``seats``, every seat but ours (of
        which ``present`` is taken), and ``others``, those still in the game. It shares this
        machine's dicts (read it within the tick)."""
        return Seen(heard=self.heard, away_since=self.away_since, returned_at=self.returned_at,
                    present=frozenset(s for s in seats if self.present(s, now)), others=others)

    def shown(self, now: float, others: Iterable[int], names: Sequence[str],
              relayed: Collection[int] = ()) -> tuple[SeatPresence, ...]:
        """What the status line shows of ``others`` at ``now`` (``names``: every seat's name;
        ``relayed``: seats whose link runs through the relay): a seat away, and while this
        node plays (not listening) every seat ever heard."""
        return tuple(
            SeatPresence(s, names[s], s not in self.away_since,
                         now - self.away_since[s] if s in self.away_since else 0.0,
                         now - self.back_at.get(s, -1e9) < BACK_SHOWN, s in relayed)
            for s in others if s in self.away_since or (s in self.heard and self.listening is None)
        )

    def past(self, now: float, rejoin: float) -> list[int]:
        """The seats away for ``rejoin`` seconds or more at ``now`` (gone: the table may count
        them out)."""
        return [s for s, since in self.away_since.items() if now - since >= rejoin]
