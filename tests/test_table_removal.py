"""Playing on without a seat that is gone (issue 11 part 3), at the table level: tables driven
in process (test_attacks.Net); one seat goes silent for good or leaves; the others each sign
its removal and finish the game without it; ``audit`` replays the removal and says "left".
A ``remove`` the chain does not allow is a violation naming its signer."""

from __future__ import annotations

import pytest

from p2p_chinchon import table as tbl, view as v
from p2p_chinchon.audit import audit_frames

from test_attacks import Net, stall


class Gone(Net):
    """A :class:`Net` where the seats in ``dead`` are gone: nothing reaches them or leaves
    them, and nobody decides for them."""

    def __init__(self, *args, **kwargs):
        self.dead: set[int] = set()
        super().__init__(*args, **kwargs)

    def handle(self, i, outs):
        if i in self.dead:
            return
        for o in outs:
            if isinstance(o, tbl.Send):
                self.q.extend((i, j, o.frame) for j in range(self.n) if j != i and j not in self.dead)
            elif isinstance(o, tbl.Job):
                self.handle(i, self.tables[i].job_done(o.id, tbl.run_job(o)))

    def run(self, until=None, max_steps=200_000) -> bool:
        bots = self.bots
        self.bots = [(lambda view, need: None) if i in self.dead else b for i, b in enumerate(bots)]
        try:
            return super().run(until, max_steps)
        finally:
            self.bots = bots

    def kill(self, seat):
        self.dead.add(seat)
        self.q = type(self.q)(m for m in self.q if m[1] != seat)  # what it sent is on its way

    def alive(self):
        return [t for i, t in enumerate(self.tables) if i not in self.dead]

    def declare_absent(self, seat, by=None):
        for i in by if by is not None else range(self.n):
            if i not in self.dead and i != seat:
                self.handle(i, self.tables[i].absent(seat))


def waits_for(seat):
    def cond(net):
        s = net.alive()[0].expected()
        return s is not None and s.seat == seat and not net.q
    return cond


def assert_played_on(net: Gone, gone: int, reason: str) -> None:
    alive = net.alive()
    for t in alive:
        assert t.finished and t.fault is None, t.fault
        assert t.removed == {gone: reason}
        assert t.view().seats[gone].left
    assert all(t.frames == alive[0].frames for t in alive), "every remaining transcript is identical"
    r = audit_frames(alive[0].frames)
    assert r.verdict == "ok", r.summary()
    assert r.winner != gone
    assert {"seat": gone, "event": "left", "reason": reason} in [
        {k: m[k] for k in ("seat", "event", "reason") if k in m} for m in r.marks], r.marks
    assert "left" in r.summary()


@pytest.mark.parametrize("kind", ["draw", "shuffle", "key_share", "show"])
def test_silent_seat_is_removed_by_the_others_who_play_on(kind):
    """Seat 2 goes silent when it is to send ``kind``; after both others' clocks ran out, each
    signs its removal; the hand in progress is void; the game finishes without seat 2."""
    net = Gone(3, seed=5, classes={2: stall(kind)})  # seat 2 holds back its ``kind``, then dies
    if kind == "show":
        assert net.run(lambda n: n.tables[0].phase == v.SHOWDOWN and n.expects("show", 2)(n) and not n.q)
    else:
        assert net.run(lambda n: n.expects(kind, 2)(n) and not n.q)
    hand = net.tables[0].hand_no
    net.kill(2)
    net.declare_absent(2, by=[1])  # seat 1 agrees first: it waits for seat 0 to start
    assert net.tables[1].expected() == tbl.Step(kind, 2) and not net.q
    assert net.tables[1].removal_step() == tbl.Step("remove", 0)
    net.declare_absent(2, by=[0])
    assert net.run()
    assert_played_on(net, 2, "absent")
    t = net.tables[0]
    removes = [e for e in t.chain if e.kind == "remove"]
    assert [(e.seat, e.body["seat"], e.body["reason"]) for e in removes] == [(0, 2, "absent"), (1, 2, "absent")]
    assert t.score_history[hand] == (0, 0, 0), "the hand in progress is void: nobody scores"
    voided = [e for e in t.log if e.kind == "voided"]
    assert voided and voided[0].numbers == (hand + 1,) and "hand %d voided" % (hand + 1) in voided[0].text
    # nothing of the voided hand opens: no secret of it was sent
    assert not [e for e in t.chain if e.kind == "secret" and e.body["hand"] == hand]


def test_a_single_seat_cannot_remove_another():
    """Seat 0 signs the first remove; seat 1 still hears seat 2 and does not sign: seat 2
    stays in the game, the table waits for seat 1's signature."""
    net = Gone(3, seed=6)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.kill(2)
    net.declare_absent(2, by=[0])
    assert net.run(lambda n: not n.q)
    for t in net.alive():
        assert t.removed == {} and t.expected() == tbl.Step("remove", 1)
        assert t.engine.active == (0, 1, 2)


def test_forged_and_early_removals_are_violations():
    """A remove while the table waits for another seat, or started by the wrong seat, or for
    'left' without a leave: a violation naming its signer (audit: cheat)."""
    net = Gone(3, seed=7)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = net.tables[0].expected().seat
    other = next(s for s in range(3) if s != mover)
    third = 3 - mover - other
    hand = net.tables[0].hand_no
    bad = [
        # the table waits for ``mover``, not for ``third``
        (other, {"seat": third, "hand": hand, "reason": "absent", "proof": b""}, "does not wait"),
        # for 'left', the seat must have signed its own leave
        (min(other, third), {"seat": mover, "hand": hand, "reason": "left", "proof": b""}, "signed leave"),
        # ... its own, not another seat's
        (min(other, third), {"seat": mover, "hand": hand, "reason": "left",
                             "proof": net.craft(max(other, third), "leave", {"reason": "x"})}, "signed leave"),
        # the first remaining seat starts the removal
        (max(other, third), {"seat": mover, "hand": hand, "reason": "absent", "proof": b""}, "starts the removal"),
        (min(other, third), {"seat": mover, "hand": hand + 1, "reason": "absent", "proof": b""}, "hand"),
    ]
    for signer, body, words in bad:
        net2 = Gone(3, seed=7)
        assert net2.run(lambda n: n.expects("draw")(n) and not n.q)
        frame = net2.craft(signer, "remove", body)
        net2.inject(signer, frame)
        for t in net2.tables:
            if t.me != signer:
                assert t.fault is not None and t.fault.seat == signer and t.fault.rule == "bad_removal", t.fault
                assert words in t.fault.reason, t.fault
        r = audit_frames(net2.tables[mover if mover != signer else 3 - signer - mover].frames)
        assert r.verdict == "accused" and r.seat == signer and r.rule == "bad_removal", r.summary()


def test_remove_in_a_chain_is_checked_by_audit():
    """A transcript whose remove the chain does not allow: audit names its signer (cheat)."""
    net = Gone(3, seed=7)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = net.tables[0].expected().seat
    signer = next(s for s in range(3) if s != mover)
    target = 3 - mover - signer
    frames = list(net.tables[0].frames) + [net.craft(signer, "remove", {"seat": target, "hand": 0, "reason": "absent", "proof": b""})]
    r = audit_frames(frames)
    assert r.verdict == "cheat" and r.seat == signer and r.rule == "bad_removal", r.summary()


def test_a_seat_that_leaves_mid_game_is_removed_as_left():
    """A player leaves for good mid-hand (signed leave): the others each sign its removal
    without waiting, the hand is void, the game goes on; audit: ok, the seat "left"."""
    net = Gone(3, seed=8)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    leaver = net.tables[0].expected().seat
    net.handle(leaver, net.tables[leaver].intent(v.Leave("going home")))
    t = net.tables[leaver]
    assert t.fault is not None and t.fault.rule == "left" and t.fault.seat == leaver
    net.kill(leaver)
    assert net.run()
    assert_played_on(net, leaver, "left")


def test_a_seat_that_leaves_out_of_turn_is_removed_when_the_table_waits_for_it():
    """A leave signed while another seat is to move is not chained (it would race that seat's
    move): the game goes on until the table waits for the leaver, whose removal then proves
    "left" with its signed leave."""
    net = Gone(3, seed=12)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = net.tables[0].expected().seat
    leaver = (mover + 2) % 3
    net.handle(leaver, net.tables[leaver].intent(v.Leave("dinner")))
    net.kill(leaver)
    assert net.run()
    assert_played_on(net, leaver, "left")
    first = next(e for e in net.alive()[0].chain if e.kind == "remove")
    assert first.body["proof"] and not [e for e in net.alive()[0].chain if e.kind == "leave"]


def test_removal_at_the_game_end_and_a_late_frame_of_the_removed_seat():
    """A seat that goes silent when the game is over (its game_end) is removed; the table
    finishes. A frame the removed seat signed for a position already taken is dropped."""
    net = Gone(3, seed=9, classes={2: stall("game_end")})
    assert net.run(lambda n: n.tables[0].phase == v.OVER and n.expects("game_end", 2)(n) and not n.q)
    net.tables[2]._out = []
    late = net.craft(2, "game_end", {"winner": net.tables[0].winner if net.tables[0].winner is not None else 255,
                                     "digest": net.tables[0].head})
    net.kill(2)
    net.declare_absent(2)
    assert net.run()
    for t in net.alive():
        assert t.finished and t.removed == {2: "absent"}
    n = len(net.tables[0].frames)
    outs = net.tables[0].receive(late, 2)
    assert net.tables[0].fault is None and len(net.tables[0].frames) == n
    assert not [o for o in outs if isinstance(o, tbl.Send)]
    assert audit_frames(net.tables[0].frames).verdict == "ok"


def test_the_removed_seat_catching_up_stops_saying_so():
    """The removed seat comes back and receives the removal: it stops with one line, not a
    fault (it signs nothing)."""
    net = Gone(3, seed=10)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.kill(2)
    net.declare_absent(2)
    assert net.run(lambda n: not n.q and n.tables[0].removed)
    back = net.tables[2]
    n = len(back.frames)
    for frame in net.tables[0].frames[n:]:
        outs = back.receive(frame, 0)
        if back.fault:
            break
    assert back.fault is not None and back.fault.rule == "removed" and back.fault.seat == 2
    assert "you were removed from the game" in back.fault.reason
    assert not [o for o in outs if isinstance(o, tbl.Send)]
    assert back.chain[-1].kind == "remove"


def test_two_seats_cannot_remove_each_other():
    """Two seats: the one left cannot remove the other alone; the table stops as before
    (absent)."""
    net = Gone(2, seed=11)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = net.tables[0].expected().seat
    other = 1 - mover
    net.kill(mover)
    net.declare_absent(mover, by=[other])
    t = net.tables[other]
    assert t.fault is not None and t.fault.rule == "absent" and t.fault.seat == mover
    assert not t.removed


def test_a_partition_stops_the_table_blaming_nobody():
    """Seat 0 removes seat 2, but seat 1 got seat 2's move at that place: nobody is blamed;
    seat 1 stops with ``absent`` accusing nobody, and audit of its record says no cheat."""
    net = Gone(3, seed=13, classes={2: stall("draw_share")})
    assert net.run(lambda n: n.expects("draw_share", 2)(n) and not n.q)
    t0, t1, t2 = net.tables
    # seat 2's draw share reaches seat 1 only; seat 0 removes seat 2 at the same place
    body = t2._auto_draw_share()
    share = net.craft(2, "draw_share", body)
    t1.receive(share, 2)
    net.declare_absent(2, by=[0])
    remove = next(f for f in t0.frames if f not in t1.frames)
    outs = t1.receive(remove, 0)
    assert t1.fault is not None and t1.fault.seat is None and t1.fault.rule == "absent", t1.fault
    assert t1.chain[-1].kind == "fault" and t1.chain[-1].body["accused"] == 255
    assert any(isinstance(o, tbl.Send) for o in outs)
    r = audit_frames(t1.frames)
    assert r.verdict != "cheat", r.summary()
    # seat 0: the fault follows another history (dropped, resync asked); seat 1's answer
    # brings seat 2's share at the place of seat 0's remove: seat 0 stops blaming nobody too
    fault = [o.frame for o in outs if isinstance(o, tbl.Send)][0]
    asked = [o for o in t0.receive(fault, 1) if isinstance(o, tbl.Resync)]
    assert asked and asked[0].seat == 1
    for f in t1.frames[asked[0].from_seq:]:
        t0.receive(f, 1)
    assert t0.fault is not None and t0.fault.seat is None and t0.fault.rule == "absent", t0.fault
