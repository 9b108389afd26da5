"""Bounded evidence of rejected frames, and the count of junk each link sends.

A node keeps every frame the table rejected in ``<transcript>.evidence``, a msgpack stream of
maps ``{seat, link, rule, reason, frames}`` (``seat`` the claimed seat or -1, ``link`` the seat
of the link it came on or -1). Without bounds a peer could fill the disk of every honest
node, so:

* a frame that proves nothing (not validly signed by the seat it names: the rules in
  :data:`p2p_chinchon.audit.NOT_ATTRIBUTABLE`) is kept as ``{"sha256": ..., "size": n,
  "prefix": first PREFIX bytes}`` instead of whole;
* at most ``per_link`` records and ``per_link_bytes`` bytes per link, ``per_game`` records and
  ``per_game_bytes`` bytes in all; past that, records are counted (:attr:`EvidenceLog.skipped`)
  but not written;
* a link that sends ``drop_after`` junk frames (evidence that proves nothing, or an unknown
  payload type) is to be dropped: :meth:`EvidenceLog.keep` returns the reason, and the count
  stays against that link's seat in :attr:`EvidenceLog.junk` (a link is authenticated by TLS
  and the seat's key, so its junk comes from that seat's machine).

No I/O but the append to the evidence file.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack

from p2p_chinchon.audit import NOT_ATTRIBUTABLE

__all__ = ["EvidenceLimits", "EvidenceLog", "PREFIX"]

PREFIX = 256  # bytes kept of a frame that proves nothing


@dataclass(frozen=True)
class EvidenceLimits:
    """Bounds (counts and bytes) of the evidence kept, and the junk that drops a link."""

    per_link: int = 32
    per_link_bytes: int = 2 << 20
    per_game: int = 256
    per_game_bytes: int = 16 << 20
    drop_after: int = 8


# validly signed by a seat of the table, on another history: the link is what brings the resync
# answer that settles it (a removed seat learns its removal from that branch), so it stays up
KEEPS_LINK = {"diverged"}


def _proves_nothing(rule: str) -> bool:
    return rule in NOT_ATTRIBUTABLE


@dataclass
class EvidenceLog:
    """Evidence of one node for one game. ``path`` None keeps counts only (no transcript)."""

    path: Path | None
    limits: EvidenceLimits = field(default_factory=EvidenceLimits)
    junk: dict[int, int] = field(default_factory=dict)  # link seat -> junk frames received
    skipped: int = 0  # records over the bounds, not written
    _count: dict[int, int] = field(default_factory=dict)
    _bytes: dict[int, int] = field(default_factory=dict)
    _total: int = 0
    _total_bytes: int = 0

    def keep(self, seat: int | None, rule: str, reason: str, frames: tuple[bytes, ...],
             link: int | None = None) -> str | None:
        """Record one rejected frame set; returns why ``link`` should be dropped, or None."""
        junk = _proves_nothing(rule)
        kept: list[Any] = [
            {"sha256": hashlib.sha256(f).digest(), "size": len(f), "prefix": f[:PREFIX]}
            if junk and len(f) > PREFIX else f
            for f in frames
        ]
        record = msgpack.packb({"seat": -1 if seat is None else seat, "link": -1 if link is None else link,
                                "rule": rule, "reason": reason[:1000], "frames": kept}, use_bin_type=True)
        self._write(record, -1 if link is None else link)
        return self._count_junk(link, rule) if junk and rule not in KEEPS_LINK else None

    def unknown_payload(self, link: int, payload: bytes) -> str | None:
        """A mesh payload of no known type from ``link``: junk (see :meth:`keep`)."""
        return self.keep(None, "malformed", f"unknown payload type {payload[:1]!r}", (payload,), link)

    def _count_junk(self, link: int | None, rule: str) -> str | None:
        if link is None:
            return None
        n = self.junk[link] = self.junk.get(link, 0) + 1
        if n % self.limits.drop_after == 0:
            return f"seat {link}'s link sent {n} frames that prove nothing (last: {rule}): dropped"
        return None

    def _write(self, record: bytes, link: int) -> None:
        lim = self.limits
        if (self._count.get(link, 0) >= lim.per_link or self._bytes.get(link, 0) + len(record) > lim.per_link_bytes
                or self._total >= lim.per_game or self._total_bytes + len(record) > lim.per_game_bytes):
            self.skipped += 1
            return
        self._count[link] = self._count.get(link, 0) + 1
        self._bytes[link] = self._bytes.get(link, 0) + len(record)
        self._total += 1
        self._total_bytes += len(record)
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "ab") as f:
            f.write(record)
            f.flush()
            os.fsync(f.fileno())
