"""A cheating peer attacks the removal protocol (issue 11 part 3, docs/protocol.md "Removal"):
forged ``remove`` envelopes signed with a seat's real key, driven through tables in process.
Each test fails if the defence breaks."""

from __future__ import annotations

from p2p_chinchon import table as tbl, wire
from p2p_chinchon.audit import audit_frames

from test_table_removal import Gone


def _removes(x, hand, reason="absent", proof=b""):
    return {"seat": x, "hand": hand, "reason": reason, "proof": proof}


def test_a_remove_of_an_honest_seat_at_a_taken_place_does_not_make_it_quit():
    """Seat C signs a remove of honest seat V at a place where the chain holds another seat's
    move (V was not awaited there): V must not stop as "removed", and C is blamed
    (``bad_removal``), since the chain proves the table did not wait for V there."""
    net = Gone(3, seed=21)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    t0 = net.tables[0]
    seq = len(t0.chain) - 1
    spoke = t0.chain[seq].seat
    victim = next(s for s in range(3) if s != spoke)
    cheater = 3 - spoke - victim
    forged = net.craft(cheater, "remove", _removes(victim, t0.hand_no), seq=seq, prev=t0.chain[seq].prev)
    net.inject(cheater, forged)
    for i in (spoke, victim):
        t = net.tables[i]
        assert t.fault is not None and t.fault.rule == "bad_removal" and t.fault.seat == cheater, t.fault
        assert not t.removed
    r = audit_frames(net.tables[victim].frames)
    assert r.verdict == "accused" and r.seat == cheater, r.summary()
