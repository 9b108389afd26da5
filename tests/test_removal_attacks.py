"""A cheating peer attacks the removal protocol (docs/protocol.md "Removal"):
forged ``remove`` envelopes signed with a seat's real key, driven through tables in process.
Each test fails if the defence breaks."""

from __future__ import annotations

from harness import Gone, stall, step_of
from p2p_chinchon import table as tbl, wire
from p2p_chinchon.audit import audit_frames


def _removes(x, hand, reason="absent", proof=()):
    return {"seat": x, "hand": hand, "reason": reason, "proof": list(proof)}


def _misplaced():
    """A table waiting for a discard, and a remove signed by a seat (the cheater) of another
    seat (the victim) at the place of the last envelope, which a third seat signed:
    (net, forged frame, that seat, victim, cheater)."""
    net = Gone(3, seed=21)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    t0 = net.tables[0]
    seq = len(t0.chain.envelopes) - 1
    spoke = t0.chain.envelopes[seq].seat
    victim = next(s for s in range(3) if s != spoke)
    cheater = 3 - spoke - victim
    forged = net.craft(cheater, "remove", _removes(victim, t0.hand.hand_no), seq=seq, prev=t0.chain.envelopes[seq].prev)
    return net, forged, spoke, victim, cheater


def test_a_remove_of_an_honest_seat_at_a_taken_place_does_not_make_it_quit():
    """Seat C signs a remove of honest seat V at a place where the chain holds another seat's
    move (V was not awaited there): V must not stop as "removed", and C is blamed
    (``bad_removal``), since the chain proves the table did not wait for V there."""
    net, forged, spoke, victim, cheater = _misplaced()
    net.inject(cheater, forged)
    for i in (spoke, victim):
        t = net.tables[i]
        assert t.flow.fault is not None and t.flow.fault.rule == "bad_removal" and t.flow.fault.seat == cheater, t.flow.fault
        assert not t.removal.removed
    r = audit_frames(net.tables[victim].chain.frames)
    assert r.verdict == "accused" and r.seat == cheater, r.summary()


def _awaited(seed, kind="draw"):
    """A 3-seat table waiting for ``kind``: (net, awaited seat X, X's first signer, the other)."""
    net = Gone(3, seed=seed)
    assert net.run(lambda n: n.expects(kind)(n) and not n.q)
    x = step_of(net.tables[0]).seat
    first, second = [s for s in range(3) if s != x]
    return net, x, first, second


def _assert_blamed(net, signer, words=""):
    for t in net.tables:
        if t.lobby.me != signer:
            assert t.flow.fault is not None and t.flow.fault.seat == signer and t.flow.fault.rule == "bad_removal", t.flow.fault
            assert words in t.flow.fault.reason, t.flow.fault
            assert not t.removal.removed


def test_a_seat_cannot_remove_itself():
    """A seat signing its own removal (to get a losing hand voided without a leave) breaks
    rule 1: ``bad_removal`` naming it."""
    net, x, first, second = _awaited(22)
    net.inject(x, net.craft(x, "remove", _removes(x, net.tables[0].hand.hand_no)))
    _assert_blamed(net, x, "cannot be removed")


def test_a_left_proof_must_be_the_seats_own_leave_of_this_game():
    """The first signer proves 'left' with a leave of X signed for another game (replayed
    from an earlier game with the same keys), with X's leave frame re-signed by itself, or
    with another kind of X's envelope of this game: each is ``bad_removal``."""
    net, x, first, second = _awaited(23)
    t0 = net.tables[0]
    hand = t0.hand.hand_no
    key = net.ids[x].private_key
    other_game = wire.make_envelope(key, game=bytes(16), seq=5, seat=x, prev=bytes(32), kind="leave",
                                    body={"reason": "bye"}).encode()
    mine_signed = wire.make_envelope(net.ids[first].private_key, game=t0.lobby.game, seq=len(t0.chain.envelopes), seat=x,
                                     prev=t0.chain.head, kind="leave", body={"reason": "bye"}).encode()
    own_move = next(f for f, e in zip(t0.chain.frames, t0.chain.envelopes, strict=True) if e.seat == x and e.kind != "leave")
    for proof in (other_game, mine_signed, own_move, b"\x00" * 40):
        net2, *_ = _awaited(23)
        net2.inject(first, net2.craft(first, "remove", _removes(x, hand, "left", [proof])))
        _assert_blamed(net2, first, "signed leave")


def test_equivocating_removes_are_the_signers_fault():
    """The first signer sends one remove to one seat and a different one (other reason) to
    the other: the two meet, equivocation blames the signer, never the removed seat."""
    net, x, first, second = _awaited(24)
    hand = net.tables[0].hand.hand_no
    a = net.craft(first, "remove", _removes(x, hand))
    b = net.craft(first, "remove", _removes(second, hand))  # same place, another seat removed
    net.inject(first, a, to=[x])
    net.inject(first, b, to=[second])
    net.inject(first, a, to=[second])
    t = net.tables[second]
    assert t.flow.fault is not None and t.flow.fault.seat == first, t.flow.fault
    assert t.flow.fault.rule in ("equivocation", "bad_removal"), t.flow.fault
    assert not t.removal.removed


def test_a_remove_racing_the_removed_seats_real_move_blames_nobody():
    """Both others vote X away and the first signer removes it (a majority's votes) while X's
    real move is on its way to the second signer: whichever arrives first, nobody is blamed
    (a partition, not a cheat), X least of all. Move first: the removal is another branch to
    the second signer, which waits; remove first: X's late move is dropped."""
    for remove_first in (True, False):
        net, x, first, second = Gone(3, seed=25, classes={2: stall("draw_share")}), 2, 0, 1
        assert net.run(lambda n: n.expects("draw_share", 2)(n) and not n.q)
        tx = net.tables[x]
        move = net.craft(x, "draw_share", tx.turns.auto_draw_share())
        t2 = net.tables[second]
        vote = [o.frame for o in t2.absent(x) if isinstance(o, tbl.Send)]
        t2.removal.present(x)  # ... and then the second signer hears X again
        net.tables[first].receive(vote[0], second)
        net.handle(first, net.tables[first].absent(x))
        remove = next(f for f in net.tables[first].chain.frames if f not in t2.chain.frames)
        for f, frm in ((remove, first), (move, x)) if remove_first else ((move, x), (remove, first)):
            t2.receive(f, frm)
        assert t2.flow.fault is None, t2.flow.fault
        assert audit_frames(t2.chain.frames).verdict != "cheat"
        assert not t2.removal.removed


def test_two_seats_gone_at_once_from_three_leave_the_last_waiting_blaming_nobody():
    """Seats X and Y of three are both gone: the one left is no majority; it signs no remove,
    never declares itself the winner, and waits (its driver stops after ``stall_limit``,
    signing nothing)."""
    net, x, first, second = _awaited(26)
    net.kill(x)
    net.kill(second)
    net.declare_absent(x, by=[first])
    t = net.tables[first]
    assert t.flow.fault is None and t.expected() == tbl.Step(net.tables[first].expected().kind, x)
    assert not [e for e in t.chain.envelopes if e.kind == "remove"]
    net.handle(first, t.absent(second))
    assert t.flow.fault is None and not t.removal.removed and not t.flow.finished
    assert audit_frames(t.chain.frames).verdict == "incomplete"


def test_a_voided_hand_releases_no_share_of_a_remaining_seat():
    """X goes for good while the hand is played; after its removal no remaining seat signs
    anything more for the void hand (no share, no show, no secret), and a forged request
    for one (a seat's draw share of the void hand) is refused, naming its signer."""
    net, x, first, second = _awaited(27)
    hand = net.tables[0].hand.hand_no
    net.kill(x)
    net.declare_absent(x)
    assert net.run(lambda n: not n.q and n.tables[first].removal.removed)
    t = net.tables[first]
    last_remove = max(i for i, e in enumerate(t.chain.envelopes) if e.kind == "remove")
    after = [e for e in t.chain.envelopes[last_remove + 1:] if e.body.get("hand") == hand]
    assert not after, [(e.seat, e.kind) for e in after]
    assert t.hand.hand_no != hand or t.flow.finished
    # a forged draw share for the void hand, signed by a remaining seat
    forged = net.craft(second, "draw_share", {"hand": hand, "slot": 0, "share": bytes(wire.SHARE_BYTES)})
    n = len(t.chain.frames)
    net.inject(second, forged, to=[first])
    assert t.flow.fault is not None and t.flow.fault.seat == second, t.flow.fault
    assert len([e for e in t.chain.envelopes[n:] if e.kind != "fault"]) == 0


def test_a_misplaced_remove_sent_to_its_victim_only_is_confirmed_by_the_others():
    """The forged remove reaches only the seat it removes: that seat's fault quotes it, and
    the others (and audit) confirm it against their own chain: the signer is the cheat,
    never the victim, and not "unverifiable"."""
    net, forged, spoke, victim, cheater = _misplaced()
    net.inject(cheater, forged, to=[victim])
    net.run(lambda n: not n.q)
    t = net.tables[spoke]
    assert t.flow.fault is not None and t.flow.fault.seat == cheater and t.flow.fault.rule == "bad_removal", t.flow.fault
    assert "unverifiable" not in t.flow.fault.reason, t.flow.fault
    r = audit_frames(t.chain.frames)
    assert r.verdict == "accused" and r.seat == cheater and "confirmed" in r.summary(), r.summary()


def test_a_lone_seat_cannot_get_an_opponents_hand_voided():
    """The first signer of X (say, losing this hand) wants X out while X is awaited but
    present: its vote alone removes nobody (nothing is signed, the second signer still hears
    X), and a remove it signs anyway, with its own vote only, is its ``bad_removal``: no seat
    is removed and no hand is voided."""
    net, x, first, second = _awaited(28)
    scores = list(net.tables[second].turns.score_history)
    net.declare_absent(x, by=[first])
    assert net.run(lambda n: not n.q)
    for tt in net.tables:
        assert tt.flow.fault is None and tt.expected().seat == x and not tt.removal.removed
    t0 = net.tables[first]
    vote = t0.removal.votes[(len(t0.chain.envelopes), t0.chain.head, x)][first]
    net.inject(first, net.craft(first, "remove", _removes(x, t0.hand.hand_no, proof=[vote])))
    for tt in net.tables:
        assert not tt.removal.removed and tt.flow.engine.active == (0, 1, 2)
        assert list(tt.turns.score_history) == scores, "no hand voided"
        if tt.lobby.me != first:
            assert tt.flow.fault is not None and tt.flow.fault.seat == first and tt.flow.fault.rule == "bad_removal", tt.flow.fault
    r = audit_frames(net.tables[second].chain.frames)
    assert r.verdict == "accused" and r.seat == first, r.summary()


def test_two_seats_gone_from_four_leave_two_that_cannot_remove_them():
    """Rule 4 with a majority: while X's removal waits for Y's signature, Y is gone too. Of
    four seats, the two left are no majority: they vote, sign no remove and wait. Of five,
    the three left remove Y (nested), then X, and finish; their transcripts audit ok with
    both seats "left"."""
    net = Gone(4, seed=29)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    x = step_of(net.tables[0]).seat
    y = [s for s in range(4) if s != x][1]
    net.kill(x)
    net.kill(y)
    for t in net.alive():
        t.removal.mark_gone(y)
    net.declare_absent(x)
    assert net.run(lambda n: not n.q)
    for t in net.alive():
        assert t.flow.fault is None and not t.removal.removed and not [e for e in t.chain.envelopes if e.kind == "remove"]

    net = Gone(5, seed=29)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    x = step_of(net.tables[0]).seat
    others = [s for s in range(5) if s != x]
    y = others[1]  # X's second signer: X's removal will wait for it
    net.kill(x)
    net.kill(y)
    net.declare_absent(x)
    assert net.run(lambda n: not n.q)
    alive = net.alive()
    assert all(t.expected() == tbl.Step("remove", y) for t in alive)
    net.declare_absent(y)
    assert net.run()
    for t in alive:
        assert t.flow.finished and t.flow.fault is None and t.removal.removed == {x: "absent", y: "absent"}, (t.flow.fault, t.removal.removed)
    assert alive[0].chain.frames == alive[1].chain.frames == alive[2].chain.frames
    r = audit_frames(alive[0].chain.frames)
    assert r.verdict == "ok" and r.winner not in (x, y), r.summary()
