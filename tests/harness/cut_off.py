"""Seeded games in which a seat is cut off as it signs its envelope (snapshots cached per size)."""

from __future__ import annotations

import copy
from collections.abc import Sequence

from harness import Split
from p2p_chinchon import table as tbl, wire
from p2p_chinchon.table.common import Output


class CutAfterSigning(Split):
    """A :class:`Split` of ``n`` seats that, when the seat to speak at chain position ``at``
    signs its envelope there, cuts that seat off from the others before the envelope leaves
    it (its link broke as it sent): only its own record holds that envelope. Every driver is
    the most eager honest one (:meth:`Split.drive`)."""

    def __init__(self, n: int, seed: int, at: int | None = None) -> None:
        self.at = at
        # chain position -> (the net, the seat, what it was about to send)
        self.snapshots: dict[int, Snapshot] = {}
        self.want: set[int] = set()
        super().__init__(n, seed)

    def handle(self, i: int, outs: Sequence[Output]) -> None:
        for o in outs:
            if isinstance(o, tbl.Send) and len(set(self.sides)) == 1:
                e = wire.decode_envelope(o.frame)
                if e.seat == i and e.kind != "away" and e.seq in self.want and e.seq not in self.snapshots:
                    kept, self.snapshots = self.snapshots, {}  # (a snapshot holds no other)
                    kept[e.seq] = copy.deepcopy((self, i, outs))
                    self.snapshots = kept
                if e.seat == i and e.kind != "away" and e.seq == self.at:
                    self.cut([1 if s == i else 0 for s in range(self.n)])
        super().handle(i, outs)


Snapshot = tuple[CutAfterSigning, int, Sequence[Output]]
_CUT_CASES: dict[int, tuple[list[tuple[str, int]], dict[int, Snapshot]]] = {}


def cut_cases(n: int) -> tuple[list[tuple[str, int]], dict[int, Snapshot]]:
    """The seeded ``n``-seat game's chain (kinds and seats), and a snapshot at each position
    the property below cuts at: the first envelope of every kind once the seating is done,
    and every envelope from the last hand's close on, once the game has begun (shows, secrets, digests, each seat's
    ``game_end``). Built once per ``n``."""
    if n not in _CUT_CASES:
        plain = Split(n, seed=60 + n)
        assert plain.run() and plain.tables[0].flow.finished
        chain = [(e.kind, e.seat) for e in plain.tables[0].chain.envelopes]
        firsts: dict[str, int] = {}
        for p, (kind, _) in enumerate(chain):
            firsts.setdefault(kind, p)
        last_close = max(p for p, (kind, _) in enumerate(chain) if kind == "close")
        want = {p for kind, p in firsts.items() if kind not in ("offer", "seating")} | set(range(last_close, len(chain)))
        rec = CutAfterSigning(n, seed=60 + n)
        rec.want = want
        assert rec.run() and rec.tables[0].flow.finished
        # before the game (no engine yet) a table cannot play on without anyone: it stops
        snaps = {p: snap for p, snap in rec.snapshots.items() if snap[0].tables[0].flow.engine is not None}
        _CUT_CASES[n] = (chain, snaps)
    return _CUT_CASES[n]


def cut_off_at(n: int, at: int) -> tuple[CutAfterSigning, int]:
    """A copy of the seeded ``n``-seat game (:func:`cut_cases`) in which the seat to speak at
    chain position ``at`` signs its envelope and is cut off before it leaves, driven until
    nothing moves: the net and that seat."""
    _, snaps = cut_cases(n)
    net, seat, outs = copy.deepcopy(snaps[at])
    net.at, net.want = at, set()
    net.handle(seat, outs)
    net.drive()
    return net, seat
