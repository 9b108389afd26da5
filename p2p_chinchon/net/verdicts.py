"""The node's verdicts as a sans-I/O machine: what a node does once a tick, and when a wait
runs out.

:class:`Verdicts` reads the current :class:`~.status.Wait` (from :class:`~.clocks.Clocks`,
or :func:`listen_wait` while the node listens first), the table's expected step and a
:class:`~.presence.Presence`, and says what to do: listen first (this node's clock jumped, or
it reaches nobody), count a seat gone, vote to remove a seat, and, when the wait ran out, one
:class:`Verdict` (nothing, stop waiting, co-sign a removal, play the bot's move, blame an
absent seat, blame nobody, stop counting a seat present through another, or fault a
``timeout``). Every input is explicit: ``now`` (seconds on any monotonic clock) and the state
passed in; no trio, no sockets, no clock reads. The node applies a verdict (the I/O:
:meth:`.node.Node._tick`); tests feed it numbers (tests/test_verdicts.py).

The rules (docs/reliability.md): a present seat silent past its limit is faulted ``timeout``;
an absent one is waited for ``rejoin_wait`` and then voted out (``absent``, never a cheat),
or, before the game began, recorded ``absent``; a node that hears nobody blames nobody; a seat
heard only through another seat is never blamed (it is away from then on); this seat's own
turn clock plays the bot's move; a wait that can end only by a return stops, signing nothing,
after the table's ``stall_limit``. A node back from away (asleep, resumed) listens first:
it catches up before it speaks, and stops after :data:`NOBODY_ANSWERS` s if no seat answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .presence import Presence
from .status import DECISIONS, Wait, english

if TYPE_CHECKING:
    from p2p_chinchon import table as tbl

SHOWN_AFTER = 2.0  # seconds before a routine protocol wait is shown
WAKE_AFTER = 5.0  # a clock tick this late (s) means this node was asleep (lid, SIGSTOP): it listens first
LISTEN_FOR_GAPS = 10.0  # s a listening node waits for what links envelopes buffered ahead of its chain
# a node back from away (asleep, resumed) that hears no seat of its table for this long (s)
# stops, signing nothing: the others may have finished without it (its record resumes)
NOBODY_ANSWERS = 60.0
NOBODY_SHOWN = 10.0  # s without an answer before its screen says nobody answers

# what a wait that ran out calls for (:attr:`Verdict.act`)
NOTHING = "nothing"  # it did not run out, or there is nothing to do
HALT = "halt"  # stop waiting, signing nothing (the table's stall_limit; the record resumes)
COSIGN = "cosign"  # our own clock for the seat being removed ran out: co-sign its removal
BOT = "bot"  # this seat's turn clock ran out: play the bot's move and say so
ABSENT = "absent"  # before the game: record the absent seat (the table cannot play on without it)
CUT_OFF = "cut_off"  # the same, cut off from everyone: a timeout that blames nobody
SPENT = "spent"  # the seat played only through another seat: never blamed, away from now on
TIMEOUT = "timeout"  # a present seat was silent past its limit: fault it
STOPS = ("votes", "minority", "blocked", "end")  # the notes of a wait a vote to remove may end


@dataclass(frozen=True)
class Verdict:
    """What a wait that ran out calls for: ``act`` (one of :data:`NOTHING` ... :data:`TIMEOUT`),
    the ``seat`` it concerns (COSIGN, ABSENT, SPENT), and for HALT the ``reason`` (one line)
    and ``nobody`` (back from away, no seat answered)."""

    act: str
    seat: int | None = None
    reason: str = ""
    nobody: bool = False


def stalled(wait: Wait | None) -> bool:
    """Whether ``wait`` can end only by a return (its limit is the table's ``stall_limit``)."""
    return wait is not None and bool(wait.note or (wait.removing and not wait.mine))


def shown(wait: Wait | None, now: float, step_since: float) -> Wait | None:
    """The wait the status shows: a protocol step that moves along is not news; a decision,
    an absent seat, a stall, or a step stalled for :data:`SHOWN_AFTER` s since ``step_since``
    is (named within 5 s of going silent)."""
    if wait is not None and (wait.what in DECISIONS or wait.absent or wait.removing or wait.note
                             or now - step_since >= SHOWN_AFTER):
        return wait
    return None


def halt_reason(wait: Wait, stall_limit: float) -> str:
    """Why this node stops waiting (one line, English; the table signs nothing, the record
    resumes); ``stall_limit`` in seconds."""
    if wait.note == "nobody":
        return english("you_nobody")
    took = f"{stall_limit / 60:g} min" if stall_limit % 60 == 0 else f"{stall_limit:g} s"
    if wait.note in ("listening", "cutoff"):
        return f"no other seat could be reached for {took}: stopped waiting, signing nothing (resume to come back)"
    who = wait.removing or wait.name
    if wait.note == "minority":
        return (f"{who} and the other seats out of reach were a majority of the table for {took}: if they "
                "were together, they removed you and played on; stopped waiting, signing nothing "
                "(resume to come back)")
    if wait.note == "end":
        return (f"the game's end could not be signed without {who} for {took}: stopped waiting, "
                "signing nothing (resume to come back)")
    return (f"the table could not play on without {who} for {took} (no majority to remove them): "
            "stopped waiting, signing nothing (resume to come back)")


def listen_wait(now: float, presence: Presence, others: Sequence[int], seat: int, name: str,
                stall_left: Callable[[], float]) -> Wait:
    """The wait of a listening node (``presence.listening`` set) of ``seat`` called ``name``:
    back from away and no seat of ``others`` present, it stops :data:`NOBODY_ANSWERS` s after
    it last heard any (or began to listen), saying "nobody" once :data:`NOBODY_SHOWN` s
    passed: the others may have finished without it. While a seat is present, or cut off
    after being there, the table's ``stall_limit`` runs (``stall_left()``: the seconds left of
    it, called only then: it starts that clock on first need)."""
    assert presence.listening is not None, "a listening node"
    since = max([presence.listening, *presence.heard.values()])
    if presence.listen_note == "listening" and not any(presence.present(s, now) for s in others):
        note = "nobody" if now - since >= min(NOBODY_SHOWN, NOBODY_ANSWERS) else "listening"
        return Wait(seat, name, note, since + NOBODY_ANSWERS - now, note=note)
    return Wait(seat, name, presence.listen_note, stall_left(), note=presence.listen_note)


def caught_up(now: float, present: Sequence[int], asked_at: float, grew_at: float, buffered: bool,
              listening: float) -> bool:
    """Whether a listening node (since ``listening``) plays on: a seat is back (``present``)
    and nothing new came for :data:`SHOWN_AFTER` s after the last ask (``asked_at``) and the
    last growth of our chain (``grew_at``); with envelopes ``buffered`` ahead of our chain, not
    before :data:`LISTEN_FOR_GAPS` s of listening (what links them may be on its way; not for
    ever: a cheat's frame far ahead, on another history, would keep us listening)."""
    if not present or now - max(grew_at, asked_at) < SHOWN_AFTER:
        return False
    return not (buffered and now - listening < LISTEN_FOR_GAPS)


class Verdicts:
    """The verdicts of one node (module docstring). State: ``last_tick`` (when the last tick
    ran; None before the first) and ``declared`` ((chain length, seat) we voted to remove at
    that length: one vote each)."""

    def __init__(self) -> None:
        self.last_tick: float | None = None
        self.declared: set[tuple[int, int]] = set()

    def woke(self, now: float, listening: bool) -> bool:
        """A tick at ``now``: True when the last one is more than :data:`WAKE_AFTER` s ago and
        the node is not ``listening`` already (its clock jumped: it was asleep, it listens
        first)."""
        last, self.last_tick = self.last_tick, now
        return last is not None and now - last > WAKE_AFTER and not listening

    @staticmethod
    def cut_off(now: float, presence: Presence, others: Sequence[int], started: bool) -> bool:
        """Whether a playing node of a ``started`` game, that heard some seat once, now reaches
        none of ``others``: it listens first (maybe it is the one away)."""
        return (presence.listening is None and bool(others) and bool(presence.heard) and started
                and not any(presence.present(s, now) for s in others))

    @staticmethod
    def gone(now: float, presence: Presence, rejoin: float, started: bool) -> list[int]:
        """The seats to count gone (away ``rejoin`` s or more, the game ``started``, the node
        playing): not counted on to start a removal; we co-sign their own."""
        if presence.listening is not None or not started:
            return []
        return presence.past(now, rejoin)

    def vote(self, wait: Wait | None, step: tbl.Step | None, chain: int) -> int | None:
        """The seat to vote out now, or None: the ``rejoin_wait`` of the seat ``step`` awaits
        ran out (``wait`` is stalled on it, :data:`STOPS`); once per chain length ``chain``."""
        if wait is None or wait.note not in STOPS or step is None:
            return None
        mark = (chain, step.seat)
        if mark in self.declared:
            return None
        self.declared.add(mark)
        return step.seat

    @staticmethod
    def expired(wait: Wait | None, now: float, presence: Presence, others: Sequence[int],
                removing: int | None, stall_limit: float) -> Verdict:
        """What ``wait`` calls for at ``now`` (:class:`Verdict`): NOTHING while time is left
        (or it has no limit). ``others``: the other seats still in the game; ``removing``: the
        seat being removed (the table's ``removing_seat``); ``stall_limit`` in seconds."""
        if wait is None or wait.left is None or wait.left > 0:
            return Verdict(NOTHING)
        if stalled(wait):
            return Verdict(HALT, reason=halt_reason(wait, stall_limit), nobody=wait.note == "nobody")
        if wait.removing:
            return Verdict(NOTHING) if removing is None else Verdict(COSIGN, removing)
        if wait.mine:
            return Verdict(BOT)
        if wait.absent:
            if any(presence.present(s, now) for s in others):
                return Verdict(ABSENT, wait.seat)
            return Verdict(CUT_OFF)
        if not presence.present(wait.seat, now):
            return Verdict(SPENT, wait.seat)
        return Verdict(TIMEOUT)
