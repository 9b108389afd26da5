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
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from p2p_chinchon import engine, schedule, view as v

from .common import Finished, Outbox, Step

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

    # Every change of the schedule goes through the methods below, which check it against
    # p2p_chinchon.schedule's tables (a change they do not allow raises ScheduleError).

    def to(self, phase: str) -> None:
        """The table enters ``phase`` (:data:`~p2p_chinchon.schedule.PHASE_EDGES`)."""
        schedule.check_phase(self.phase, phase)
        self.phase = phase

    def expect(self, kind: str, seats: Iterable[int]) -> None:
        """Queue one ``kind`` step per seat of ``seats``, in that order, after the steps
        already queued (:data:`~p2p_chinchon.schedule.PHASE_STEPS`)."""
        for seat in seats:
            schedule.check_order(self.phase, self.queue[-1].kind if self.queue else None, kind)
            self.queue.append(Step(kind, seat))

    def expect_first(self, kind: str, seats: Iterable[int]) -> None:
        """Queue one ``kind`` step per seat ahead of every queued step (only the kinds
        :data:`~p2p_chinchon.schedule.ANYWHERE` names: a removal's signers)."""
        if kind not in schedule.ANYWHERE or self.engine is None:
            raise schedule.ScheduleError(f"a {kind} step cannot go ahead of the queue in phase {self.phase}")
        self.queue.extendleft(reversed([Step(kind, s) for s in seats]))

    def done(self, kind: str) -> bool:
        """The expected step, of ``kind``, was taken: it leaves the queue. True when no
        other ``kind`` step is next (the block is done)."""
        if not self.queue or self.queue[0].kind != kind:
            head = self.queue[0].kind if self.queue else "nothing"
            raise schedule.ScheduleError(f"a {kind} step was taken while {head} was expected")
        last = self.block_ends()
        self.queue.popleft()
        return last

    def block_ends(self) -> bool:
        """The expected (queued) step is the last of its block: no step of its kind follows."""
        return len(self.queue) == 1 or self.queue[1].kind != self.queue[0].kind

    def drop(self, keep: Callable[[Step], bool]) -> None:
        """Only the queued steps ``keep`` accepts stay, in their order (a seat left or was
        removed)."""
        self.queue = deque(st for st in self.queue if keep(st))

    def finish(self) -> Finished:
        """The game is over and its end settled: nothing more is applied or signed. Returns
        the output that says so."""
        if self.finished or self.fault is not None:
            raise schedule.ScheduleError("the table finishes twice, or after it stopped")
        self.finished = True
        return Finished(self.winner)

    def stop(self, fault: v.Fault) -> None:
        """The table stops with ``fault`` (what the people are shown); any phase may stop."""
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
