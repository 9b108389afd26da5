"""A hostile seat attacks a node's resync and linger (net/node.py ``S`` payloads): it must not
make the node send unbounded data, hold it at exit past its bound, or feed a finished table.
Nodes driven in process with a fake mesh (no sockets)."""

from __future__ import annotations

import trio
import trio.testing

from harness.seeded import seeded_net
from p2p_chinchon.net.mesh import Frame, PeerUp
from p2p_chinchon.net.node import ENVELOPE, SYNC, Node


class FakeMesh:
    """Records what the node sends; ``inbound`` yields the scripted events."""

    def __init__(self, events):
        self.sent: list[tuple[int | None, bytes]] = []  # None: a broadcast
        self._events = events

    async def send(self, seat, payload):
        self.sent.append((seat, payload))

    def send_nowait(self, seat, payload):
        self.sent.append((seat, payload))
        return True

    async def broadcast(self, payload):
        self.sent.append((None, payload))

    @property
    def inbound(self):
        async def gen():
            for ev in self._events:
                yield ev
                await trio.sleep(0)
        return gen()


def _finished_node(seed=31):
    net = seeded_net("game_end", seed=seed)
    assert net.tables[0].flow.finished
    node = Node(net.tables[0])
    node._stored = len(net.tables[0].chain.frames)  # every envelope on disk
    node._done.set()  # finished: lingering
    return node, node._stored


def _answered(mesh, seat):
    return [p for s, p in mesh.sent if s == seat and p[:1] == ENVELOPE]


def test_repeated_sync_requests_cost_at_most_linear_data():
    """A seat asks for our chain from every starting point, many times over (5 bytes each):
    the node's answers on one link stay within twice the chain, not quadratic."""
    node, n = _finished_node()
    events = [PeerUp(1)] + [Frame(1, SYNC + have.to_bytes(4, "big")) for _ in range(3) for have in range(n)]
    mesh = FakeMesh(events)
    trio.run(node._inbound_loop, mesh)
    sent = _answered(mesh, 1)
    assert n <= len(sent) <= 2 * n, (len(sent), n)


def test_a_reconnected_seat_still_gets_the_chain():
    """The budget is per link: after the link comes up again the seat is answered anew (a
    rejoin after a crash must still catch up)."""
    node, n = _finished_node()
    ask = [Frame(1, SYNC + (0).to_bytes(4, "big"))]
    events = [PeerUp(1)] + ask * 3 + [PeerUp(1)] + ask
    mesh = FakeMesh(events)
    trio.run(node._inbound_loop, mesh)
    assert len(_answered(mesh, 1)) == 2 * n


def test_a_finished_node_feeds_its_table_nothing_more():
    """While it lingers, an envelope a peer sends (even one that would fit its chain) does not
    reach the table: the chain and the frames stay as they were."""
    node, n = _finished_node()
    t = node.table
    before = list(t.chain.frames)
    junk = [Frame(2, ENVELOPE + f) for f in before[-3:]] + [Frame(2, ENVELOPE + b"\x93junk")]
    trio.run(node._inbound_loop, FakeMesh([PeerUp(2)] + junk))
    assert t.chain.frames == before


def test_linger_is_bounded_when_a_seat_never_catches_up():
    """A linked seat keeps saying it holds less than we do (or nothing at all): the node
    still stops lingering after its limit, and the screen says whom it waits for and how
    long (never a silent wait), then nothing."""
    node, n = _finished_node()
    node.presence.up = {1, 2}
    mesh = FakeMesh([])
    said: list[str] = []
    node.events.status = lambda status: said.append(status.text())

    async def main():
        async def lie():
            while True:
                node._note_has(mesh, 1, 0)
                await trio.sleep(0.01)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(lie)
            start = trio.current_time()
            await node._linger(mesh, 3.0)
            assert trio.current_time() - start < 3.5
            nursery.cancel_scope.cancel()

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    name = node.table.lobby.players[1].name
    assert said[0] == f"waiting for {name} to confirm it holds the whole record (0:01)", said
    assert said[-1] == ""
