"""Say at once when a seat cannot be reached, instead of a silent countdown.

Until the table's first hand begins, :func:`watch_reach` looks at this seat's mesh once a
second and tells the person (``Events.notice``, lasting) who cannot reach whom, at which
addresses, with what error, and what to do:

- a seat we dial whose every place failed once (:meth:`~.mesh.Mesh.dial_trouble`): "Cannot reach
  Bea at 203.0.113.5:41234 (Connection refused), ...: Bea is probably behind a home router";
- the lower seats that have not dialled us after :data:`ACCEPT_GRACE` seconds, in one message:
  "no connection from Ana, Bea at ... after 8 s: you are probably behind a home router".

Each message is said again only when the places that failed change, and "linked" follows
once the seat is reached. The table's own clocks still decide when it stops (``rejoin_wait``); the audit calls
such a record "never started", not an accusation.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import trio

from p2p_chinchon.net.status import english

if TYPE_CHECKING:
    from p2p_chinchon.table import Table

log = logging.getLogger(__name__)

ACCEPT_GRACE = 8.0  # seconds a seat waits for a lower seat's dial before saying it has not come
POLL = 1.0


def _started(table: Table) -> bool:
    return table.flow.engine is not None or table.flow.fault is not None or table.flow.finished


async def watch_reach(table: Table, mesh: Any, events: Any, *, grace: float = ACCEPT_GRACE) -> None:
    """Run until the first hand begins (or the table stops): see the module docstring."""
    me = table.lobby.me
    if me is None:  # an observer has no links to watch
        return
    players = table.lobby.players
    mine = ", ".join([players[me].addr, *players[me].addrs])
    start = trio.current_time()
    linked: set[int] = set()
    reported: set[int] = set()  # seats named in a message since, not yet said to be linked
    said: dict[int, str] = {}  # what was last said about a seat we dial (-1: the lower seats)

    def say(about: int, why: str, key: str, **fields: Any) -> None:
        """Tell the person, unless this trouble is the one told last (``why``: which places
        failed, or which seats did not dial; the errors alone may flicker, e.g. an ICMP
        reply or a timeout on one place)."""
        if said.get(about) != why:
            said[about] = why
            text = english(key, **fields)
            log.debug("%s", text)
            events.notice(text, key, fields, lasting=True)

    while not _started(table):
        linked |= mesh.connected
        trouble = mesh.dial_trouble()
        waited = trio.current_time() - start >= grace
        missing = []
        for seat in range(len(players)):
            if seat == me:
                continue
            name = players[seat].name
            if seat in linked:
                if seat in reported:
                    reported.discard(seat)
                    said.pop(seat, None)
                    text = english("reach_linked", name=name)
                    events.notice(text, "reach_linked", {"name": name}, lasting=True)
            elif seat > me and trouble.get(seat):
                places = ", ".join(f"{place} ({why})" for place, why in trouble[seat])
                say(seat, " ".join(p for p, _ in trouble[seat]), "reach_cannot_dial", name=name, places=places)
                reported.add(seat)
            elif seat < me and waited:
                missing.append(seat)
        if missing:
            names = ", ".join(players[s].name for s in missing)
            say(-1, names, "reach_not_dialled", names=names, places=mine, seconds=int(grace))
            reported.update(missing)
        await trio.sleep(POLL)
