"""Evidence of rejected frames is bounded, and a link that keeps sending junk is dropped and
counted against its seat."""

from __future__ import annotations

import io
from typing import Any

import msgpack

from p2p_chinchon import table as tbl
from p2p_chinchon.engine import make_rules
from p2p_chinchon.local import SeatSpec, play_local
from p2p_chinchon.net.evidence import PREFIX, EvidenceLimits, EvidenceLog
from p2p_chinchon.net.node import Timeouts

MIB = 1 << 20


def records(path):
    return list(msgpack.Unpacker(io.BytesIO(path.read_bytes()), raw=False))


def test_junk_is_kept_as_hash_and_prefix_and_bounded(tmp_path):
    path = tmp_path / "t.chn.evidence"
    log = EvidenceLog(path)
    drops = [log.keep(1, "malformed", "junk", (bytes([i]) * MIB,), link=1) for i in range(40)]
    assert path.stat().st_size < 40 * (PREFIX + 200)  # not 40 MiB
    kept = records(path)
    assert len(kept) == EvidenceLimits().per_link == 32 and log.skipped == 8
    first = kept[0]["frames"][0]
    assert first["size"] == MIB and len(first["prefix"]) == PREFIX and len(first["sha256"]) == 32
    assert kept[0]["link"] == 1 and kept[0]["seat"] == 1
    assert [i for i, d in enumerate(drops) if d] == [7, 15, 23, 31, 39]  # every 8 junk frames
    assert log.junk == {1: 40}
    # another link still gets its own share of the per-game budget
    assert log.keep(None, "bad_signature", "x", (b"y" * 10,), link=2) is None
    assert len(records(path)) == 33


def test_frames_that_prove_something_are_kept_whole_within_the_game_budget(tmp_path):
    path = tmp_path / "t.chn.evidence"
    log = EvidenceLog(path, EvidenceLimits(per_link_bytes=8 * MIB, per_game_bytes=3 * MIB))
    for _ in range(5):
        assert log.keep(2, "equivocation", "two frames", (b"a" * MIB,), link=2) is None
    kept = records(path)
    assert len(kept) == 2 and kept[0]["frames"][0] == b"a" * MIB  # whole; the third would pass 3 MiB
    assert log.skipped == 3 and log.junk == {}


class JunkTable(tbl.Table):
    """Seat 1's machine floods every peer with 1 MiB frames that are not envelopes."""

    flooded = False

    def receive(self, frame, link_seat=None):
        outs = super().receive(frame, link_seat)
        if not self.flooded and self.lobby.me is not None and len(self.chain.envelopes) >= 4:  # the mesh is up
            self.flooded = True
            outs += [tbl.Send(bytes([0xC1]) * (MIB - 16)) for _ in range(20)]
        return outs


async def test_a_flooding_link_is_dropped_and_evidence_stays_small(tmp_path):
    rules = make_rules("classic", {"limit": 20})
    nodes: list[Any] = []
    specs = [SeatSpec("Ana", node_ready=nodes.append), SeatSpec("Junk", table_cls=JunkTable),
             SeatSpec("Carla", node_ready=nodes.append)]
    results = await play_local(rules, specs, seed=7, proof_rounds=4, transcript_dir=tmp_path,
                               timeouts=Timeouts(protocol=20.0, decision=20.0))
    assert all(r.winner is not None and r.fault is None for r in results)
    for node in nodes:
        assert node.evidence.junk.get(1, 0) >= 8, node.evidence.junk  # counted against seat 1's link
        path = node.transcript_path.with_name(node.transcript_path.name + ".evidence")
        assert path.stat().st_size < 64 * 1024  # not 20 MiB
        assert all(r["link"] == 1 for r in records(path))
