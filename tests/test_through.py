"""A seat playing through another seat is present (docs/reliability.md "Presence"): its own link
to this node is down, but a present seat says in its heartbeats that it hears it, and hands its
envelopes on. Nobody votes it away and no screen says it is gone; it is never blamed on that
word, and once awaited past its limit it is away as any seat. Nodes on in-process tables
(harness.Net), explicit times (trio's MockClock)."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from harness import Net
from p2p_chinchon import table as tbl
from p2p_chinchon.net import node as nd
from p2p_chinchon.net.presence import HEARTBEAT, SILENT_AFTER, heard_by, heartbeat


class FakeMesh:
    relayed: frozenset[int] = frozenset()

    def __init__(self) -> None:
        self.sent: list[tuple[int, bytes]] = []

    def send_nowait(self, seat: int, payload: bytes) -> bool:
        self.sent.append((seat, payload))
        return True

    async def send(self, seat: int, payload: bytes) -> bool:
        return self.send_nowait(seat, payload)

    async def broadcast(self, payload: bytes) -> frozenset[int]:
        return frozenset()


def test_a_heartbeat_says_whom_its_sender_hears():
    beat = heartbeat([2, 0, 2])
    assert beat[:1] == HEARTBEAT
    assert heard_by(beat[1:], 3, 1) == frozenset({0, 2})
    assert heard_by(heartbeat([])[1:], 3, 1) == frozenset()
    assert heard_by(b"", 3, 1) is None, "an older node's empty heartbeat says nothing"
    assert heard_by(heartbeat([1])[1:], 3, 1) is None, "a seat does not hear itself"
    assert heard_by(heartbeat([5])[1:], 3, 1) is None, "no such seat"
    assert heard_by(b"\x01\x00\x00", 3, 1) is None, "a seat twice"
    assert heard_by(b"\x07\x00", 3, 1) is None, "an unknown tag"


def _at_draw_of(seat: int) -> tuple[Net, tbl.Table]:
    net = Net(3, seed=2)
    assert net.run(lambda n: n.expects("draw", seat)(n) and not n.q)
    return net, net.tables[0]


def test_a_seat_heard_through_another_is_not_away():
    """Bruno's link to Ana is down, Carla hears him: not away, so no rejoin_wait, no vote, no
    "gone" line. When Carla stops saying so (or is not present herself), he is away."""
    _, t = _at_draw_of(1)
    node = nd.Node(t, timeouts=nd.Timeouts(protocol=90.0, rejoin=5.0))
    now = 1000.0
    node.presence.up = {2}
    node.presence.heard = {1: now - 60.0, 2: now}
    node.presence.hears = {2: (now, frozenset({0, 1}))}

    def through(at: float) -> int | None:
        return node.presence.through(1, at, t.flow.left, len(t.chain.frames))

    assert through(now) == 2
    w = node._deadline(tbl.Step("draw", 1), now)
    assert through(now + SILENT_AFTER) is None, "Carla's word is old"
    node.presence.hears = {2: (now, frozenset({0}))}
    assert through(now) is None, "Carla does not hear him either"
    node.presence.hears = {2: (now, frozenset({0, 1}))}
    node.presence.up = set()
    assert through(now) is None, "Carla is not present herself"
    node.presence.up = {2}
    t.flow.left.add(2)
    try:
        assert through(now) is None, "Carla is out of the game: her word counts for nothing"
    finally:
        t.flow.left.discard(2)
    assert not w.absent and not w.note, w


def test_a_seat_playing_through_another_is_never_voted_away_nor_blamed():
    """Over minutes of explicit time: Bruno, awaited, reachable only through Carla, is never
    marked away while Carla says she hears him, and no vote is cast; past his protocol limit
    no ``timeout`` is signed against him (he was not linked to us): he is away from then on,
    and only his rejoin_wait later does this node vote."""
    _, t = _at_draw_of(1)
    node = nd.Node(t, timeouts=nd.Timeouts(protocol=20.0, decision=20.0, rejoin=30.0))
    node._mesh = FakeMesh()  # type: ignore[assignment]  # a stand-in: records what is sent
    clock = trio.testing.MockClock()

    async def main() -> None:
        start = trio.current_time()
        node.presence.up = {2}
        node.presence.heard = {1: start, 2: start}
        node.verdicts.last_tick = start
        async def second() -> None:  # Carla is present and says she hears Ana and Bruno
            clock.jump(1.0)
            now = trio.current_time()
            node.presence.heard[2] = now
            node.presence.hears[2] = (now, frozenset({0, 1}))
            await node._tick()

        for _ in range(19):
            await second()
            assert 1 not in node.presence.away_since and not t.removal.votes_for(1)
            assert "Bruno disconnected" not in node.status.text() and "gone" not in node.status.text()
        for _ in range(5):  # the limit runs out: no fault; away from then on
            await second()
        assert t.flow.fault is None and not [e for e in t.chain.envelopes if e.kind == "fault"]
        assert 1 in node.presence.away_since
        for _ in range(35):
            await second()
        assert t.flow.fault is None and 1 in node.presence.away_since

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            node._nursery = nursery
            await main()

    trio.run(run, clock=clock)
    assert [e for e in t.removal.my_votes()], "after his rejoin_wait, this node votes him away"


@pytest.mark.parametrize("hears", [frozenset({0}), frozenset({0, 1})])
def test_envelopes_are_handed_on_to_a_seat_that_does_not_hear_their_signer(hears):
    """Ana accepts Bruno's draw from Bruno's link; Carla said she does not hear Bruno: Ana
    hands it on to her (and only then)."""
    net, t = _at_draw_of(1)
    bruno = net.tables[1]
    outs = bruno.intent(net.bots[1](bruno.view(), "draw"))
    frames = [o.frame for o in outs if isinstance(o, tbl.Send)]
    assert frames
    node = nd.Node(t)
    mesh = FakeMesh()
    node._mesh = mesh  # type: ignore[assignment]  # a stand-in: records what is sent
    node.presence.up = {1, 2}

    async def main() -> None:
        node.presence.hears = {2: (trio.current_time(), hears)}
        async with trio.open_nursery() as nursery:
            node._nursery = nursery
            for frame in frames:
                await node._call(t.receive, frame, 1, link=1)

    trio.run(main)
    handed = [(s, p[1:]) for s, p in mesh.sent if p[:1] == nd.ENVELOPE]
    if 1 in hears:
        assert handed == []
    else:
        assert handed and all(s == 2 for s, _ in handed) and frames[0] in [f for _, f in handed]
