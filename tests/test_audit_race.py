"""A ``timeout`` accusation that races the accused seat's move. The seat
that chains the fault judges it at its position; a seat whose chain already holds the move
there gets the fault off its chain and stops quoting it. Both honest transcripts must get one
verdict from ``audit``: the fault is judged against the state at its ``prev`` in both."""

from __future__ import annotations

import pytest

from harness import Net
from p2p_chinchon.audit import audit_frames

ACCUSER = 1


def _race(accused: int):
    """Seat 0 is to draw. Seat 1 signs a ``timeout`` fault against ``accused`` at that
    position; seat 2 gets it first and chains it; seat 0 has drawn meanwhile, then gets it."""
    net = Net(3, seed=7)
    assert net.run(net.expects("draw", 0))
    t0, t2 = net.tables[0], net.tables[2]
    n = len(t0.chain.envelopes)
    fault = net.craft(ACCUSER, "fault", {"accused": accused, "rule": "timeout", "reason": "did not send draw in time",
                                         "evidence": []})
    net.inject(ACCUSER, fault, to=[2])
    assert len(t2.chain.envelopes) == n + 1 and t2.chain.envelopes[n].kind == "fault"
    intent = net.bots[0](t0.view(), t0.needs_decision())
    net.handle(0, t0.intent(intent))  # seat 0's draw: sent, still in flight
    assert t0.chain.envelopes[n].kind == "draw"
    net.inject(ACCUSER, fault, to=[0])  # arrives after the draw: off seat 0's chain
    assert t0.flow.fault is not None and t2.flow.fault is not None
    return n, t0, t2


@pytest.mark.parametrize("accused, verdict", [(2, ("cheat", ACCUSER, "false_accusation")), (0, ("accused", 0, "timeout"))])
def test_both_honest_transcripts_of_a_racing_timeout_audit_alike(accused, verdict):
    n, t0, t2 = _race(accused)
    reports = [audit_frames(list(t.chain.frames)) for t in (t2, t0)]
    got = [(r.verdict, r.seat, r.rule, r.index) for r in reports]
    assert got == [(*verdict, n)] * 2, [r.summary() for r in reports]
    assert reports[0].detail == reports[1].detail
    # what seat 0 showed live agrees with what seat 2 showed
    assert (t0.flow.fault.seat, t0.flow.fault.rule) == (t2.flow.fault.seat, t2.flow.fault.rule) == verdict[1:]
