"""A seat removed while away learns the outcome (docs/reliability.md "Learn the outcome"): the
others stay a little longer for it when they finish or stop; a node back from away that hears
nobody of its table stops within a minute saying so, not after the 15-minute ``stall_limit``.
Nodes on in-process tables (harness.Net), trio's MockClock: every time here is explicit."""

from __future__ import annotations

from typing import cast

import trio
import trio.testing

from harness import Gone, Net
from p2p_chinchon import view as v
from p2p_chinchon.commands._common import EXIT_STALLED, exit_code
from p2p_chinchon.i18n import NOBODY, Translator, own_stop_text
from p2p_chinchon.net import node as nd, verdicts as vd
from p2p_chinchon.net.mesh import Mesh
from p2p_chinchon.net.status import TOLD, NodeStatus, Wait


class FakeMesh:
    def __init__(self) -> None:
        self.sent: list[tuple[int, bytes]] = []

    def send_nowait(self, seat: int, payload: bytes) -> bool:
        self.sent.append((seat, payload))
        return True


class Said(nd.Events):
    def __init__(self) -> None:
        self.said: list[NodeStatus] = []

    def status(self, status: NodeStatus) -> None:
        self.said.append(status)


def _removed_and_finished() -> tuple[Gone, int]:
    """Seat 2 removed while away (``absent``), the two others finish; the chain length that
    holds its whole removal."""
    net = Gone(3, seed=10)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.kill(2)
    net.declare_absent(2)
    assert net.run()
    t = net.tables[0]
    assert t.flow.finished and t.removal.removed == {2: "absent"}
    end = max(i for i, e in enumerate(t.chain.envelopes) if e.kind == "remove") + 1
    return net, end


def test_a_removed_seat_is_untold_until_it_holds_its_removal():
    net, end = _removed_and_finished()
    node = nd.Node(net.tables[0])
    assert node._removals_untold() == {2: end}
    now = 100.0
    assert not node._told(2, end, now)
    node._has[2] = end - 1  # it holds the chain up to just before the last signature
    assert node._removals_untold() == {2: end}
    node._sent_upto[2] = (end, now - nd.TOLD_AFTER / 2)
    node.presence.up = {2}
    assert not node._told(2, end, now), "sent a moment ago: may still be in the link"
    assert node._told(2, end, now + nd.TOLD_AFTER)
    assert node._removals_untold() == {}
    node.presence.up = set()
    assert not node._told(2, end, now + nd.TOLD_AFTER), "sent on a link that broke"
    assert node._removals_untold() == {}, "told once, for good: its link closing after does not undo it"


def test_a_removed_seat_that_said_it_holds_its_removal_is_told():
    net, end = _removed_and_finished()
    node = nd.Node(net.tables[0])
    node._has[2] = end
    assert node._removals_untold() == {}


def test_a_seat_that_left_is_not_waited_for():
    """A seat removed for ``left`` signed its own leave: nobody stays for it."""
    net = Gone(3, seed=10)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.handle(2, net.tables[2].intent(v.Leave("bye")))
    net.kill(2)
    assert net.run()
    t = net.tables[0]
    assert t.removal.removed == {2: "left"}
    assert nd.Node(t)._removals_untold() == {}


def test_a_finished_node_stays_for_a_removed_seat_a_little_longer_and_says_so():
    """Stopped or finished, a node lingers up to LINGER_REMOVED for an untold removed seat (its
    screen names it), and leaves as soon as that seat holds its removal."""
    net, end = _removed_and_finished()
    t = net.tables[0]
    n = len(t.chain.frames)

    async def linger(told_at: float | None) -> tuple[float, list[NodeStatus]]:
        said = Said()
        node = nd.Node(t, said)
        node._mesh = cast(Mesh, FakeMesh())  # a stand-in: records what is sent
        node._stored = n
        node._has = {1: n}  # the other seat in the game holds everything
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            if told_at is not None:
                async def tell() -> None:
                    await trio.sleep(told_at)
                    node._has[2] = end
                nursery.start_soon(tell)
            await node._linger(node._mesh, nd.LINGER_STOPPED)
        return trio.current_time() - start, said.said

    async def main() -> None:
        took, said = await linger(None)
        assert took >= nd.LINGER_REMOVED > nd.LINGER_STOPPED
        waits = [s.wait for s in said if s.wait is not None]
        assert waits and {(w.seat, w.what) for w in waits} == {(2, TOLD)}
        assert "removed while away, to learn how the game went" in said[-2].text()
        took, _ = await linger(5.0)
        assert 5.0 <= took < 6.0

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_node_back_from_away_that_hears_nobody_stops_within_a_minute():
    """Back from away (a clock jump, a resume), no seat of its table answers: the screen says
    so after NOBODY_SHOWN and the node stops NOBODY_ANSWERS s after it began listening, signing
    nothing (stalled, resumable), with the line "nobody of this table answers"."""
    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    t = net.tables[0]
    said = Said()
    node = nd.Node(t, said)
    clock = trio.testing.MockClock()

    async def main() -> None:
        start = trio.current_time()
        node._listen(start, "listening")
        node.verdicts.last_tick = start
        for at in range(1, int(vd.NOBODY_ANSWERS)):
            clock.jump(1.0)
            await node._tick()
            assert t.flow.fault is None, at
        assert node.status.wait is not None and node.status.wait.note == "nobody"
        assert "nobody of this table answers yet" in node.status.text()
        clock.jump(1.0)
        await node._tick()

    trio.run(main, clock=clock)
    assert t.flow.fault is not None and t.flow.fault.rule == nd.STALLED and node._nobody
    assert not [e for e in t.chain.envelopes if e.kind == "fault"], "it signs nothing"
    fault = v.Fault(None, nd.STALLED, t.flow.fault.reason, detail=NOBODY)
    line = own_stop_text(fault, 0, Translator("en"))
    assert line is not None and line.startswith("nobody of this table answers: they may have finished without you")
    assert exit_code(nd.NodeResult(None, fault, None, b"", seat=0)) == EXIT_STALLED


def test_a_seat_heard_while_listening_or_a_cut_off_node_keeps_the_stall_limit():
    """Only a node back from away that hears nobody is told "nobody answers": while a seat
    answers, or when this node reaches nobody after being there (the others may be the
    ones away), the table's stall_limit runs as before."""
    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    node = nd.Node(net.tables[0])
    start = 1000.0
    node._listen(start, "listening")
    w = node._listen_wait(start + 5)
    assert (w.note, w.left) == ("listening", vd.NOBODY_ANSWERS - 5)
    w = node._listen_wait(start + vd.NOBODY_SHOWN)
    assert w.note == "nobody" and w.left == vd.NOBODY_ANSWERS - vd.NOBODY_SHOWN
    node.presence.heard[1] = start + 20  # a frame came (one sent before we slept), then nothing
    w = node._listen_wait(start + 30)
    assert (w.note, w.left) == ("nobody", vd.NOBODY_ANSWERS - 10), "counted from the last sign of life"
    node.presence.up = {1}
    w = node._listen_wait(start + 21)
    assert w.note == "listening" and w.left is not None and w.left > vd.NOBODY_ANSWERS, "a seat answers"
    cut = nd.Node(net.tables[1])
    cut._listen(start, "cutoff")
    w = cut._listen_wait(start + 2 * vd.NOBODY_ANSWERS)
    assert w.note == "cutoff" and w.left is not None and w.left > 0
    assert "nobody" not in NodeStatus((), Wait(0, "Ana", "cutoff", 100.0, note="cutoff")).text()


def test_a_seat_resumed_mid_game_that_reaches_nobody_stops_the_same_way():
    """``resume`` (or the same command) mid-game starts listening at once: reaching nobody of
    its table, the node stops NOBODY_ANSWERS s later, not after the stall_limit."""
    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    t = net.tables[1]
    node = nd.Node(t)

    async def main() -> float:
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            node._nursery = nursery
            await node._clock_loop()
        return trio.current_time() - start

    took = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert t.flow.fault is not None and t.flow.fault.rule == nd.STALLED and node._nobody
    assert vd.NOBODY_ANSWERS <= took < vd.NOBODY_ANSWERS + 2


class SendMesh(FakeMesh):
    async def send(self, seat: int, payload: bytes) -> bool:
        return self.send_nowait(seat, payload)


def test_a_removed_seat_whose_last_envelope_never_arrived_is_answered_from_its_first_remove():
    """Seat 2 signs its draw, which never reaches the others, and is cut off; they remove it
    (their removes stand where its draw stands in its chain) and finish. When it comes back it
    asks from its own head, one past the first remove: the answer starts at that remove, so it
    holds the whole run and learns its removal; its claimed length counts only up to that
    remove (so nobody takes it as told before it is). The links' stream of envelopes that
    follow the other history never closes the link that brings that answer."""
    from p2p_chinchon.net.evidence import EvidenceLog

    net = Gone(3, seed=10)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    t2 = net.tables[2]
    t2.intent(v.Draw("stock"))  # signed, and lost with the cut
    net.kill(2)
    net.declare_absent(2)
    assert net.run()
    t0 = net.tables[0]
    first = min(i for i, e in enumerate(t0.chain.envelopes) if e.kind == "remove")
    assert len(t2.chain.frames) == first + 1 and t2.chain.envelopes[first].kind == "draw" and t0.removal.removed == {2: "absent"}
    for frame in t0.chain.frames[first + 1:first + 9]:  # live envelopes of the other history first
        t2.receive(frame, 0)
    assert not t2.flow.over, "they prove nothing yet"
    node = nd.Node(t0)
    node._stored = len(t0.chain.frames)
    mesh = SendMesh()
    trio.run(node._answer_sync, cast(Mesh, mesh), 2, len(t2.chain.frames))  # a stand-in: records what is sent
    sent = [p for _, p in mesh.sent if p[:1] == nd.ENVELOPE]
    assert sent[0][1:] == t0.chain.frames[first] and node._has[2] == first
    for p in sent:
        t2.receive(p[1:], 0)
        if t2.flow.over:
            break
    assert t2.flow.fault is not None and t2.flow.fault.rule == "removed", t2.flow.fault
    diverged = EvidenceLog(None)
    assert all(diverged.keep(1, "diverged", "another history", (b"x",), link=1) is None for _ in range(64))
    assert EvidenceLog(None).keep(None, "malformed", "bytes", (b"x",), link=1) is None  # one is not a flood
