"""What a node tells its person while it plays: the status line and its words.

:class:`NodeStatus` is published to :meth:`.node.Events.status` about once a second while a
wait lasts (docs/reliability.md "Every wait is named"): the :class:`~.presence.SeatPresence` of
every other seat and the current :class:`Wait`, whose :meth:`NodeStatus.text` is one line in
the person's language (:mod:`p2p_chinchon.i18n`'s ``st_*`` messages; English for logs and
printouts). :func:`error_text` says an exception in one line, the same way wherever a node, a
lobby runner or a session stops on one.

The clocks that fill a :class:`Wait` (whose turn, what limit) are :mod:`.clocks`; what the node
does when one runs out, :mod:`.verdicts`; this module only describes and phrases them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache
from typing import Any

from p2p_chinchon.net.presence import SeatPresence

DECISIONS = ("agree", "draw", "discard", "reenter")
RECORD = "record"  # the wait of a finished node for a seat to hold its whole chain
TOLD = "told"  # the wait of a finished or stopped node for a seat removed while away to hear it


@dataclass(frozen=True)
class Wait:
    """Who this node waits for, for what (a step kind: "draw", "shuffle", ...), and how long
    is left (``left``, seconds; None = no limit). ``mine``: this seat's own decision (the turn
    clock); ``absent``: the awaited seat is disconnected and the limit is its ``rejoin_wait``.
    ``shown``: the countdown a screen shows when it differs from ``left`` (another seat's move:
    until its own turn clock plays for it, not this node's later limit)."""

    seat: int
    name: str
    what: str
    left: float | None
    mine: bool = False
    absent: bool = False
    connecting: bool = False  # absent, but never heard from yet (the mesh is forming)
    removing: str = ""  # the name of the seat gone for good whose removal ``seat`` must sign
    shown: float | None = None
    # why a wait can only end when someone comes back (its limit is the table's stall_limit):
    # "votes" (a majority's votes to remove the seat are being gathered: ``have`` of ``need``),
    # "minority" (as "votes", but the seats out of this node's reach are a majority: they may
    # be the ones that remove this seat and go on),
    # "blocked" (no majority can remove it), "end" (it owes the game's end: it cannot be removed
    # and no majority signed the end without it), "hears" (the others remove a seat this node still
    # hears), "listening" (this node was asleep: it catches up first), "cutoff" (it reaches nobody),
    # "nobody" (back from away, it has heard no seat since: the table may have finished without it)
    note: str = ""
    have: int = 0
    need: int = 0


@cache
def _english_translator() -> Callable[..., str]:  # a p2p_chinchon.i18n.Translator
    from p2p_chinchon.i18n import Translator

    return Translator("en")


def english(key: str, **fields: Any) -> str:
    """A message of :mod:`p2p_chinchon.i18n` (by key) in English (logs, printouts)."""
    return _english_translator()(key, **fields)


def clock(seconds: float) -> str:
    """``m:ss`` for a countdown (rounded up, never negative)."""
    s = max(0, int(seconds + 0.999))
    return f"{s // 60}:{s % 60:02d}"


@dataclass(frozen=True)
class NodeStatus:
    """Presence of every other seat and the current wait: what the status line shows."""

    seats: tuple[SeatPresence, ...] = ()
    wait: Wait | None = None

    def key(self) -> tuple[object, ...]:
        """What the status says without its clocks: a line-mode printer prints on a new key."""
        w = self.wait
        return ((w.seat, w.what, w.mine, w.absent, w.connecting, w.removing, w.left is None, w.note, w.have)
                if w else None,
                tuple((p.seat, p.connected, p.back, p.relayed) for p in self.seats))

    def relayed(self) -> tuple[str, ...]:
        """The names of the seats whose link runs through the transit relay."""
        return tuple(p.name for p in self.seats if p.connected and p.relayed)

    def text(self, tr: Callable[..., str] | None = None, relayed: bool = True,
             back: Collection[int] | None = None) -> str:
        """One line, e.g. ``Carla disconnected: waiting for them (1:55)``, or ``Carla is gone:
        removing them from the game (waiting for Bruno's signature)``; "" when idle.

        ``tr(key, **fields)`` phrases it (a :class:`p2p_chinchon.i18n.Translator`, whose
        ``st_*`` messages these are); None: English (logs, ``--no-ui`` printouts). ``relayed``:
        end with the seats whose link runs through the relay (``through the relay: Ana``).
        ``back``: the seats whose return to mention (None: every seat back within
        :data:`~.presence.BACK_SHOWN` s; a console that printed a return once passes the new ones)."""
        tr = tr or english
        parts = []
        w = self.wait
        if w is not None:
            n = w.shown if w.shown is not None else w.left
            left = f" ({clock(n)})" if n is not None else ""
            what = w.what.replace("_", " ")
            if w.note in ("listening", "cutoff", "nobody"):
                parts.append(tr(f"st_{w.note}", left=left))
            elif w.note == "hears":
                parts.append(tr("st_hears", gone=w.removing, left=left))
            elif w.note == "minority":
                parts.append(tr("st_minority", name=w.name, left=left))
            elif w.note == "votes":
                parts.append(tr("st_votes", name=w.name, need=w.need, have=w.have, left=left))
            elif w.note in ("blocked", "end"):
                parts.append(tr(f"st_{w.note}", name=w.name, left=left))
            elif w.removing:
                key = "st_removing_mine" if w.mine else "st_removing"
                parts.append(tr(key, gone=w.removing, name=w.name, left=left))
            elif w.mine:
                parts.append(tr(f"st_mine_{w.what}", left=left) if w.what in DECISIONS
                             else tr("st_mine_step", what=what))
            elif w.connecting:
                parts.append(tr("st_connecting", name=w.name, left=left))
            elif w.absent:
                parts.append(tr("st_absent", name=w.name, left=left))
            elif w.what == "rematch":
                parts.append(tr("st_wait_rematch", name=w.name, left=left))
            elif w.what in DECISIONS or w.what in (RECORD, TOLD):
                parts.append(tr(f"st_wait_{w.what}", name=w.name, left=left))
            else:
                parts.append(tr("st_wait_step", name=w.name, what=what, left=left))
        for p in self.seats:
            if not p.connected and (w is None or p.seat != w.seat or not w.absent):
                parts.append(tr("st_disconnected", name=p.name))
            elif p.back and (back is None or p.seat in back):
                parts.append(tr("st_back", name=p.name))
        if relayed and self.relayed():
            parts.append(tr("st_relayed", names=", ".join(self.relayed())))
        return "; ".join(parts)


def error_text(exc: BaseException) -> str:
    """An OS error in words ("No space left on device"), else the exception's text (of the
    one exception inside trio's groups)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": {exc.filename}" if exc.filename else "")
    return str(exc) or type(exc).__name__
