"""The protocol's schedule as data: every message kind's facts, and which steps may follow which.

Two tables, read by the table's parts, the node, the screens and the generated diagram
(``docs/schedule.md``, written by ``protocol/make_schedule.py``), in the way h11 keeps its
connection's transitions as data in ``_state.py``:

- :data:`KINDS`: one :class:`Kind` per kind of :mod:`p2p_chinchon.wire`'s schema: the table part
  that checks it (``on_<kind>``) and makes this seat's (``auto_<kind>``), whether a player decides
  it or the node sends it by itself, whether it carries decryption shares, whether it is terminal,
  and the catalogue key a player reads while the table waits for it.
- :data:`PHASE_STEPS` and :data:`PHASE_EDGES`: in each phase, the kinds the table queues and
  expects, in the order their blocks come; and from each phase, the phases that may follow.
  :class:`p2p_chinchon.table.state.Flow` applies them: a step or a phase change that is not in
  these tables raises :class:`ScheduleError`, a programming error (no peer's input reaches it:
  a peer's envelope is checked against the expected step first).

Source: docs/protocol.md "Seats, order and phases", "Deck", "Removal". Knows nothing of
envelopes, keys or cards."""

from __future__ import annotations

from dataclasses import dataclass

from p2p_chinchon import view as v

__all__ = [
    "ANYWHERE", "HANDLERS", "KINDS", "PHASE_EDGES", "PHASE_STEPS", "PROGRESS_KEYS",
    "SHARE_KINDS", "STEP_KINDS", "TERMINAL_KINDS", "Kind", "ScheduleError", "check_order", "check_phase",
]


class ScheduleError(RuntimeError):
    """A step or a phase change the schedule's tables do not allow: a bug of this node's code."""


@dataclass(frozen=True)
class Kind:
    """The facts of one message kind.

    ``part``: the table part (an attribute of :class:`~p2p_chinchon.table.Table`) whose
    ``on_<kind>`` checks a peer's envelope and whose ``auto_<kind>``, if any, makes this seat's;
    None for a kind checked by name (the ``offer``, the terminal kinds, the unchained ``away``
    vote). ``step``: the kind is queued as an expected step or given by the engine's turn (it is
    chained at the position the schedule names). ``decided``: a player chooses it (an intent);
    otherwise the node signs it by itself when it is expected. ``shares``: its body carries
    decryption shares, so it waits while a peer's shuffle proof of this hand is being verified.
    ``terminal``: it ends the table at its position (a fault, a leave). ``progress``: the
    catalogue key (:mod:`p2p_chinchon.i18n`) a waiting player reads, or None."""

    part: str | None
    step: bool = True
    decided: bool = False
    shares: bool = False
    terminal: bool = False
    progress: str | None = None


# one row per kind of wire._KINDS (a test keeps the two key sets equal)
KINDS: dict[str, Kind] = {
    "offer": Kind(None, step=False),
    "seating": Kind("lobby", decided=True),  # the host seats the table when it chooses
    "agree": Kind("lobby", decided=True),  # or signed by itself at a table that agrees in advance
    "toss": Kind("lobby", progress="progress_toss"),
    "key_commit": Kind("hand", progress="progress_key"),
    "key_share": Kind("hand", progress="progress_key"),
    "shuffle": Kind("hand", progress="progress_shuffle"),
    "deal_shares": Kind("hand", shares=True, progress="progress_deal"),
    "draw": Kind("turns", decided=True),
    "draw_share": Kind("turns", shares=True, progress="progress_deal"),
    "discard": Kind("turns", decided=True),
    "close": Kind("turns", decided=True),
    "show": Kind("turns", shares=True, progress="progress_check"),
    "secret": Kind("hand", progress="progress_check"),
    "hand_digest": Kind("hand", progress="progress_check"),
    "reenter": Kind("turns", decided=True),
    "game_end": Kind("turns"),
    "remove": Kind("removal"),
    "away": Kind(None, step=False),
    "fault": Kind(None, step=False, terminal=True),
    "leave": Kind(None, step=False, terminal=True),
}

# kind -> the part whose on_<kind> checks it and auto_<kind> makes ours
HANDLERS: dict[str, str] = {k: d.part for k, d in KINDS.items() if d.part is not None}
STEP_KINDS = frozenset(k for k, d in KINDS.items() if d.step)
SHARE_KINDS = tuple(k for k, d in KINDS.items() if d.shares)
TERMINAL_KINDS = tuple(k for k, d in KINDS.items() if d.terminal)
PROGRESS_KEYS: dict[str, str] = {k: d.progress for k, d in KINDS.items() if d.progress is not None}

# Queued steps per phase, their blocks in this order (one step per seat in a block). The engine's
# turn (draw, then discard or close) is expected while a PLAYING hand's queue is empty.
PHASE_STEPS: dict[str, tuple[str, ...]] = {
    v.LOBBY: ("seating", "agree", "toss"),
    v.SHUFFLING: ("key_commit", "key_share", "shuffle", "deal_shares"),
    v.PLAYING: ("draw_share", "secret", "hand_digest"),  # secrets: a void hand (stock dead)
    v.RESTOCKING: ("shuffle",),
    v.SHOWDOWN: ("show", "secret", "hand_digest"),
    v.HAND_OVER: (),
    v.REENTRY: ("reenter",),
    v.OVER: ("game_end",),
    v.STOPPED: (),
}
# queued in any phase once the game has begun, ahead of every other step: a removal's signers
ANYWHERE = ("remove",)

# phase -> {a phase that may follow it: what moves the table there}
_VOID = "a removal voids the hand"
PHASE_EDGES: dict[str, dict[str, str]] = {
    v.LOBBY: {v.SHUFFLING: "the last toss (the first dealer is known)"},
    v.SHUFFLING: {v.PLAYING: "the last deal_shares", v.HAND_OVER: _VOID},
    v.PLAYING: {v.RESTOCKING: "a draw empties the stock", v.SHOWDOWN: "a close, or a dead stock",
                v.HAND_OVER: "a void hand's last hand_digest, or " + _VOID},
    v.RESTOCKING: {v.PLAYING: "the restock's last shuffle", v.HAND_OVER: _VOID},
    v.SHOWDOWN: {v.HAND_OVER: "the last hand_digest"},
    v.HAND_OVER: {v.REENTRY: "a bust seat may buy back in", v.SHUFFLING: "the next hand",
                  v.OVER: "the game is won"},
    v.REENTRY: {v.SHUFFLING: "the last reenter", v.OVER: "the last reenter, the game won",
                v.HAND_OVER: "a removal of the last seat awaited"},
    v.OVER: {},
    v.STOPPED: {},
}
for _phase, _next in PHASE_EDGES.items():
    if _phase != v.STOPPED:
        _next[v.STOPPED] = "a fault, a needed seat's leave, or a halt"


def check_phase(old: str, new: str) -> None:
    """Raises :class:`ScheduleError` unless :data:`PHASE_EDGES` lets ``new`` follow ``old``."""
    if new not in PHASE_EDGES.get(old, {}):
        raise ScheduleError(f"the schedule has no phase change {old} -> {new}")


def check_order(phase: str, last: str | None, kind: str) -> None:
    """Raises :class:`ScheduleError` unless a ``kind`` step may be queued in ``phase`` after a
    queue whose last step is of kind ``last`` (None: an empty queue): ``kind`` is one of the
    phase's :data:`PHASE_STEPS` and its block does not come before ``last``'s."""
    steps = PHASE_STEPS.get(phase, ())
    if kind not in steps:
        raise ScheduleError(f"the schedule queues no {kind} step in phase {phase}")
    if last in steps and steps.index(kind) < steps.index(last):
        raise ScheduleError(f"in phase {phase}, a {kind} step cannot follow a {last} step")
