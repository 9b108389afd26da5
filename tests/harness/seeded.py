"""A session cache of seeded tables at named points of their game: each seeded :class:`Net`
(its class, size, seed and options) is played once per test process up to a point, and every
caller gets its own deep copy of that state.

A copy is independent of the cached net and of every other copy: tables, frames in flight,
keys and random streams are copied, and so are the bots (:class:`harness.BotSeat`); a copy
played on is the game a cold run of the same seeds plays (``test_seeded.py``). The key is the
class, size, seed and options only: a test that patches the code a game runs builds its net
itself, not from the cache (it would get a net played before, or under another test's patch).

Points, on seat 0's table, each the first moment it holds (checked after every delivery and
every decision; "quiet": nothing in flight):

``seated``      the seating agreed and the toss done: the first hand's keys are next
``dealt``       the first hand dealt, its first draw awaited, quiet
``first_draw``  the first card drawn, the drawer's discard awaited, quiet
``showdown``    the first hand closed: its showdown begins
``game_end``    the game over, quiet (every ``game_end`` signed, or those held back awaited)
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, TypeVar, overload

from harness import Net
from p2p_chinchon import view as v

N = TypeVar("N", bound=Net)


def _drawn(net: Net) -> int:
    """Cards drawn so far on seat 0's table."""
    return sum(1 for e in net.tables[0].chain.envelopes if e.kind == "draw")


def _playing(net: Net, drawn: int) -> bool:
    return not net.q and net.tables[0].flow.phase == v.PLAYING and _drawn(net) == drawn


POINTS: dict[str, Callable[[Net], bool]] = {
    "seated": lambda net: net.tables[0].flow.phase != v.LOBBY,
    "dealt": lambda net: _playing(net, 0),
    "first_draw": lambda net: _playing(net, 1),
    "showdown": lambda net: net.tables[0].flow.phase == v.SHOWDOWN,
    "game_end": lambda net: not net.q and net.tables[0].flow.phase == v.OVER,
}


def reach(net: Net, point: str, max_steps: int = 200_000) -> Net:
    """Play ``net`` on, one delivery or decision at a time, to ``point``."""
    holds = POINTS[point]
    for _ in range(max_steps):
        if holds(net):
            return net
        if not net.advance():
            raise AssertionError(f"the game stopped before {point}")
    raise AssertionError(f"no {point} in {max_steps} steps")  # pragma: no cover


def _key(value: Any) -> Any:
    """A hashable stand-in for an option (``classes`` is a dict of seat to class)."""
    return tuple(sorted(value.items())) if isinstance(value, dict) else value


_BUILT: dict[tuple[Any, ...], Net] = {}  # (point, class, n, seed, options) -> the net played there


@overload
def seeded_net(point: str, n: int = ..., *, seed: int = ..., cls: type[N], **options: Any) -> N: ...
@overload
def seeded_net(point: str, n: int = ..., *, seed: int = ..., **options: Any) -> Net: ...
def seeded_net(point: str, n: int = 3, *, seed: int = 1, cls: type[Net] = Net, **options: Any) -> Net:
    """A fresh copy of the seeded ``cls(n, seed=seed, **options)`` at ``point`` (played once
    per process, then copied)."""
    key = (point, cls, n, seed, tuple(sorted((k, _key(o)) for k, o in options.items())))
    if key not in _BUILT:
        _BUILT[key] = reach(cls(n, seed=seed, **options), point)
    return copy.deepcopy(_BUILT[key])
