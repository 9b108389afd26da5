"""Presence: which other seats this node hears, and the heartbeat that tells it.

Every second the node sends ``H`` (:data:`HEARTBEAT`, an empty mesh payload) on every link that
is up. A seat heard from neither by frames nor heartbeats for :data:`SILENT_AFTER` seconds, or
whose link is down, is *absent*; when it is heard again it is *back* (shown for
:data:`BACK_SHOWN` s). Heartbeats are link-level (never chain envelopes): they prove nothing and
are never blamed on anyone. What an absence costs (a ``rejoin_wait``, then a removal) is the
node's clocks' business (:mod:`.node`, :mod:`.status`).

A heartbeat's body says which seats its sender hears directly (:func:`heartbeat`; an empty
body, an older node's, says nothing). A seat whose own link to this node is down but that a
present seat hears is *present through* that seat (``Node._through``): it is playing, its
envelopes forwarded, so it is not away; nobody votes it out for a link the pair lacks. The
claim is unsigned: it never blames anyone, and it holds only while the seat keeps up with the
table (a seat awaited past its limit is away again, whatever anyone says).

The node keeps who it heard, and when, itself (``Node._hear``, ``Node._update_presence`` in
:mod:`.node`: its clocks read and reset the same state); this module holds what one seat's
presence is, as the status line shows it, and its timings. The node reads these constants
through its own module (``node.SILENT_AFTER`` ...), where a test may patch them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

HEARTBEAT = b"H"  # mesh payload type: a heartbeat (body: :func:`heartbeat`)
HEARS = b"\x01"  # a heartbeat body's tag: the seats its sender hears directly follow, a byte each
HEARTBEAT_EVERY = 1.0  # seconds between heartbeats on each link
SILENT_AFTER = 3.5  # seconds without a frame before a seat counts as absent (shown within 5 s)
BACK_SHOWN = 5.0  # seconds "Carla is back" stays in the status


@dataclass(frozen=True)
class Presence:
    """One other seat as this node hears it: ``connected`` (link up and heard from within
    :data:`SILENT_AFTER` s); ``away`` seconds since it was last heard while absent, else 0;
    ``back`` true for :data:`BACK_SHOWN` s after it returned."""

    seat: int
    name: str
    connected: bool
    away: float = 0.0
    back: bool = False
    relayed: bool = False  # its link runs through the transit relay


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
