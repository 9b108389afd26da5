"""Where the table is: the one state every part of the table reads and moves on.

The protocol is a schedule: at every point one seat must send one kind of message next
(docs/protocol.md "Seats, order and phases"). :class:`Flow` holds that schedule (the queue of
expected steps, or the engine's turn once a hand is dealt), the phase shown to people, the
rules engine's game, who left, and whether the table stopped or finished, in the way h11 keeps
its ``ConnectionState`` apart from the connection. Each part of the table
(docs/architecture.md) receives the one :class:`Flow` and owns the rest of its state itself;
:class:`Part` is what every part is handed. Knows nothing of envelopes, keys or cards."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from p2p_chinchon import engine, view as v

from .common import Outbox, Step

if TYPE_CHECKING:
    from .lobby import Lobby
    from .view import EventLog


class Flow:
    """The schedule of one table.

    ``queue``: the steps expected next, in order (the lobby's, a hand's deck steps, the shows,
    secrets and digests, the re-entry answers, the removes, the game's end); when it is empty
    during a hand, the engine's turn decides (a draw or a discard). ``phase``: one of
    :mod:`p2p_chinchon.view`'s phases. ``engine``: the rules engine's game once the first
    dealer is known (None before). ``hand_started``: this hand's cards are dealt (the engine
    knows its slots). ``left``: the seats that left the table or were removed (for good).
    ``held_stop``: a stop that waits for this seat's pending proof checks (faults.py).
    ``catching_up``: the driver holds this seat's own messages back while it catches up."""

    def __init__(self) -> None:
        self.queue: deque[Step] = deque()
        self.phase: str = v.LOBBY
        self.engine: engine.Game | None = None
        self.hand_started = False
        self.fault: v.Fault | None = None
        self.finished = False
        self.winner: int | None = None
        self.left: set[int] = set()
        self.held_stop: Callable[[], None] | None = None
        self.catching_up = False

    @property
    def over(self) -> bool:
        """The table stopped (a fault, a halt, this seat removed) or finished: nothing more
        is applied or signed."""
        return self.fault is not None or self.finished

    def game(self) -> engine.Game:
        """The rules engine's game. Raises :class:`RuntimeError` before the first dealer is
        known (a handler that needs it is only reached once it is)."""
        if self.engine is None:
            raise RuntimeError("no game yet: the first dealer is not known")
        return self.engine

    def expected(self) -> Step | None:
        """The seat that must speak next and what it must send, or None (stopped, finished,
        a stop held for pending proof checks, or nothing expected before a hand is dealt)."""
        if self.over or self.held_stop is not None:
            return None
        if self.queue:
            return self.queue[0]
        e = self.engine
        if e is None or not self.hand_started or e.to_play is None:
            return None
        if e.phase == engine.Phase.DRAW:
            return Step("draw", e.to_play)
        if e.phase == engine.Phase.DISCARD:
            return Step("discard", e.to_play)  # or "close"
        return None

    def stop(self, fault: v.Fault) -> None:
        """The table stops with ``fault`` (what the people are shown)."""
        self.fault = fault
        self.phase = v.STOPPED


class Part:
    """What every part of the table but the lobby is handed (docs/architecture.md): the
    ``flow``, the ``lobby`` (who sits where and the table's identity, read only), the outbox
    ``out`` and the ``events`` log."""

    def __init__(self, flow: Flow, lobby: Lobby, out: Outbox, events: EventLog) -> None:
        self.flow = flow
        self.lobby = lobby
        self.out = out
        self.events = events
