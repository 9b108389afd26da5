"""Playing on without a seat that is gone (issue 11 part 3), at the table level: tables driven
in process (test_attacks.Net); one seat goes silent for good or leaves; the others each sign
its removal and finish the game without it; ``audit`` replays the removal and says "left".
A ``remove`` the chain does not allow is a violation naming its signer."""

from __future__ import annotations

import copy

import pytest

from p2p_chinchon import table as tbl, view as v, wire
from p2p_chinchon.audit import audit_frames
from p2p_chinchon.engine import make_rules

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
    net.declare_absent(2, by=[1])  # seat 1 votes first: it waits for seat 0 to start
    assert net.run(lambda n: not n.q)
    assert net.tables[1].expected() == tbl.Step(kind, 2)
    assert net.tables[0].votes_for(2) == [1] and not net.tables[0].removed
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
    """Seat 0's clock says seat 2 is gone, seat 1 still hears it and does not vote: one vote
    of three is no majority, so nothing is signed; the table still waits for seat 2's move."""
    net = Gone(3, seed=6)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.kill(2)
    net.declare_absent(2, by=[0])
    assert net.run(lambda n: not n.q)
    for t in net.alive():
        assert t.removed == {} and t.expected() == tbl.Step("draw", 2) and t.fault is None
        assert t.engine.active == (0, 1, 2)
        assert not [e for e in t.chain if e.kind == "remove"]
    assert net.tables[1].votes_for(2) == [0] and net.tables[1].votes_needed() == 2


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
        (other, {"seat": third, "hand": hand, "reason": "absent", "proof": []}, "does not wait"),
        # for 'left', the seat must have signed its own leave
        (min(other, third), {"seat": mover, "hand": hand, "reason": "left", "proof": []}, "signed leave"),
        # ... its own, not another seat's
        (min(other, third), {"seat": mover, "hand": hand, "reason": "left",
                             "proof": [net.craft(max(other, third), "leave", {"reason": "x"})]}, "signed leave"),
        # for 'absent', a majority's signed votes that the seat was away (issue 20)
        (max(other, third), {"seat": mover, "hand": hand, "reason": "absent", "proof": []}, "majority"),
        (min(other, third), {"seat": mover, "hand": hand + 1, "reason": "absent", "proof": []}, "hand"),
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
    frames = list(net.tables[0].frames) + [net.craft(signer, "remove", {"seat": target, "hand": 0, "reason": "absent", "proof": []})]
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
    """Two seats: the one left is no majority; it signs nothing (no vote, no fault) and the
    table waits (its driver stops after ``stall_limit``, signing nothing: :meth:`halt`)."""
    net = Gone(2, seed=11)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = net.tables[0].expected().seat
    other = 1 - mover
    net.kill(mover)
    n = len(net.tables[other].frames)
    net.declare_absent(mover, by=[other])
    t = net.tables[other]
    assert t.fault is None and not t.removed and not net.q and len(t.frames) == n
    outs = t.halt("no majority")
    assert t.fault.rule == "stalled" and t.fault.seat is None and len(t.frames) == n
    assert [type(o).__name__ for o in outs] == ["Stopped"]
    assert audit_frames(t.frames).verdict == "incomplete"




# ---------------------------------------------------------------- a majority (issue 20)

class Split(Gone):
    """A :class:`Gone` whose seats are cut into sides (``sides[seat]``): nothing crosses from
    one side to another, as in a network partition or with colluders that ignore the others
    (on the wire the two look the same). Every seat's driver declares absent every seat of
    another side that its table waits for, as soon as it waits for it (the most eager honest
    driver: its ``rejoin_wait`` ran out)."""

    def __init__(self, n, seed):
        self.sides = [0] * n
        super().__init__(n, seed=seed, rules=make_rules("classic", {"limit": 8, "reentries": 0}))

    def handle(self, i, outs):
        for o in outs:
            if isinstance(o, tbl.Send):
                self.q.extend((i, j, o.frame) for j in range(self.n) if j != i and self.sides[j] == self.sides[i])
            elif isinstance(o, tbl.Job):
                self.handle(i, self.tables[i].job_done(o.id, tbl.run_job(o)))

    def cut(self, sides):
        self.sides = list(sides)
        for i, t in enumerate(self.tables):  # each driver's clock for the seats across the cut ran out
            for x in range(self.n):
                if sides[x] != sides[i]:
                    t.mark_gone(x)
        self.q = type(self.q)(m for m in self.q if self.sides[m[0]] == self.sides[m[1]])

    def drive(self):
        """Play, and declare absent whoever of another side is awaited, until nothing moves."""
        seen: set = set()
        for _ in range(500):
            self.run()
            acted = False
            for i, t in enumerate(self.tables):
                step = t.expected()
                if t.fault or t.finished or step is None:
                    continue
                x = t.removing_seat if step.kind == "remove" and step.seat == t.me else step.seat
                if x is not None and self.sides[x] != self.sides[i] and (i, len(t.frames), x) not in seen:
                    seen.add((i, len(t.frames), x))
                    self.handle(i, t.absent(x))
                    acted = True
            if not acted and not self.q:
                return
        raise AssertionError("no end")  # pragma: no cover

    def heal(self):
        """The cut is over: every seat hears the others again and each gets what the others
        hold (the mesh's ``S`` exchange)."""
        self.cut([0] * self.n)
        for t in self.tables:
            for x in range(self.n):
                if x != t.me:
                    t.present(x)
        for i, t in enumerate(self.tables):
            for j in range(self.n):
                if j != i:
                    self.q.extend((i, j, f) for f in t.frames)
        self.drive()


def _splits(n):
    """Every two-way cut of ``n`` seats (each once: the side of seat 0 is side 0)."""
    for mask in range(1, 2 ** (n - 1)):
        yield [0] + [(mask >> (s - 1)) & 1 for s in range(1, n)]


_AT_DRAW: dict[int, Split] = {}


def _split_at_draw(n: int) -> Split:
    """A fresh copy of the seeded ``n``-seat table waiting for its first draw: built once per
    ``n`` (every cut of ``n`` seats starts from this very state; 5 seats take seconds to get there)."""
    if n not in _AT_DRAW:
        net = Split(n, seed=40 + n)
        assert net.run(lambda nn: nn.expects("draw")(nn) and not nn.q)
        _AT_DRAW[n] = net
    return copy.deepcopy(_AT_DRAW[n])


@pytest.mark.parametrize("sides", [s for n in (3, 4, 5) for s in _splits(n)], ids=lambda s: "".join(map(str, s)))
def test_under_any_cut_at_most_one_side_removes_anyone(sides):
    """Property, over every two-way cut of 3, 4 and 5 seats (the same on the wire as every
    group of colluders ignoring the others): at most one side removes anyone; a seat on a
    side with a strict majority is never removed; that side removes the others and finishes
    the game, every transcript identical and ``ok``; a side without a majority signs no
    ``remove`` and waits, blaming nobody. Once the cut heals, a minority seat hears that it
    was removed (every signature in), and where no side had a majority nobody was removed
    and the game goes on to one end."""
    n = len(sides)
    net = _split_at_draw(n)
    net.cut(sides)
    net.drive()
    size = {side: sides.count(side) for side in (0, 1)}
    major = next((side for side in (0, 1) if 2 * size[side] > n), None)
    removing = {sides[i] for i, t in enumerate(net.tables) if t.removed}
    assert len(removing) <= 1 and removing <= ({major} if major is not None else set()), removing
    for i, t in enumerate(net.tables):
        assert t.fault is None, (i, t.fault)
        assert not any(sides[x] == major for x in t.removed), (i, t.removed)
        if sides[i] != major:
            assert not t.removed and not t.finished
            assert not [e for e in t.chain if e.kind == "remove"]
    if major is not None:
        mine = [t for i, t in enumerate(net.tables) if sides[i] == major]
        assert all(t.finished for t in mine)
        assert all(t.frames == mine[0].frames for t in mine)
        assert set(mine[0].removed) == {s for s in range(n) if sides[s] != major}
        assert audit_frames(mine[0].frames).verdict == "ok"
    net.heal()
    if major is not None:
        for i, t in enumerate(net.tables):
            if sides[i] != major:
                assert t.fault is not None and t.fault.rule == "removed" and t.fault.seat == i, (i, t.fault)
                assert not [e for e in t.chain if e.kind == "fault"], "it signs nothing"
    else:
        assert all(t.finished and t.fault is None and not t.removed for t in net.tables)
        assert all(t.frames == net.tables[0].frames for t in net.tables)
        assert audit_frames(net.tables[0].frames).verdict == "ok"


def test_a_remove_without_a_majority_is_its_signers_violation():
    """Item 6 of issue 20: a seat removes the seat to move while it is present, with no votes,
    with its own vote only, with the votes of two colluders of four, with a vote it forged
    for another seat (signed with its own key), or with votes for another place: each is
    ``bad_removal`` naming the signer, on every other seat and in audit; the victim is never
    told it was removed."""
    def crafted(net, signer, voters, *, seq=None):
        t = net.tables[0]
        x = t.expected().seat
        hand = t.hand_no
        votes = [net.craft(v, "away", {"seat": x, "hand": hand}, seq=seq) for v in voters]
        return x, net.craft(signer, "remove", {"seat": x, "hand": hand, "reason": "absent", "proof": votes})

    for n, pick in ((3, lambda x, o: []), (3, lambda x, o: [o[0]]), (4, lambda x, o: o[:2]),
                    (3, lambda x, o: [o[0], o[0]]), (3, lambda x, o: o), (3, lambda x, o: "forged")):
        net = Gone(n, seed=50)
        assert net.run(lambda nn: nn.expects("draw")(nn) and not nn.q)
        x = net.tables[0].expected().seat
        others = [s for s in range(n) if s != x]
        voters = pick(x, others)
        signer = others[0]
        if voters == "forged":  # the second vote claims seat others[1] but is signed by the signer
            t = net.tables[0]
            forged = wire.make_envelope(net.ids[signer].private_key, game=t.game, seq=len(t.chain),
                                        seat=others[1], prev=t.head, kind="away", body={"seat": x, "hand": t.hand_no})
            own = net.craft(signer, "away", {"seat": x, "hand": t.hand_no})
            frame = net.craft(signer, "remove", {"seat": x, "hand": t.hand_no, "reason": "absent",
                                                 "proof": [own, forged.encode()]})
        elif voters == others:  # a majority, but votes for the place before this one
            _, frame = crafted(net, signer, voters, seq=len(net.tables[0].chain) - 1)
        else:
            _, frame = crafted(net, signer, voters)
        net.inject(signer, frame)
        for t in net.tables:
            if t.me != signer:
                assert t.fault is not None and t.fault.seat == signer and t.fault.rule == "bad_removal", t.fault
                assert not t.removed
        victim = net.tables[x]
        assert victim.fault.rule != "removed"
        r = audit_frames(victim.frames)
        assert r.verdict == "accused" and r.seat == signer and r.rule == "bad_removal", r.summary()


def test_a_seat_hears_it_was_removed_only_with_every_signature():
    """Seat 2 signed its draw, which nobody got; seats 0 and 1 vote it away and remove it.
    Seat 2, catching up, meets the first ``remove`` where its chain holds its draw: one
    signature of two tells it nothing (it waits); the second makes it stop, "removed",
    signing nothing."""
    net = Gone(3, seed=51)
    assert net.run(lambda nn: nn.expects("draw", 2)(nn) and not nn.q)
    t2 = net.tables[2]
    net.kill(2)
    t2.intent(v.Draw("stock"))  # its draw reaches nobody
    n2 = len(t2.frames)
    net.declare_absent(2)
    assert net.run(lambda nn: not nn.q and nn.tables[0].removed)
    removes = [f for f, e in zip(net.tables[0].frames, net.tables[0].chain) if e.kind == "remove"]
    assert len(removes) == 2
    t2.receive(removes[0], 0)
    assert t2.fault is None and len(t2.frames) == n2
    outs = t2.receive(removes[1], 1)
    assert t2.fault is not None and t2.fault.rule == "removed" and t2.fault.seat == 2, t2.fault
    assert not [o for o in outs if isinstance(o, tbl.Send)] and len(t2.frames) == n2


def test_a_remove_the_record_refutes_is_its_signers_violation_live_and_in_audit():
    """The seat to move draws; the signer then sends a remove of it at the same place (same
    ``prev``), with its own vote only: every other seat holds the mover's draw there, so the
    record refutes the removal. Each names the signer ("tried to remove ... while ... was
    present"), and ``audit`` of a transcript confirms it from the fault's evidence."""
    net = Gone(3, seed=52)
    assert net.run(lambda nn: nn.expects("draw")(nn) and not nn.q)
    t0 = net.tables[0]
    x = t0.expected().seat
    signer = next(s for s in range(3) if s != x)
    seq, prev, hand = len(t0.chain), t0.head, t0.hand_no
    vote = net.craft(signer, "away", {"seat": x, "hand": hand})
    remove = net.craft(signer, "remove", {"seat": x, "hand": hand, "reason": "absent", "proof": [vote]})
    net.handle(x, net.tables[x].intent(v.Draw("stock")))
    assert net.run(lambda nn: not nn.q and len(nn.tables[0].chain) > seq)
    assert all(t.chain[seq].seat == x and t.chain[seq].prev == prev for t in net.tables)
    net.inject(signer, remove)
    for t in net.tables:
        if t.me != signer:
            assert t.fault is not None and t.fault.seat == signer and t.fault.rule == "bad_removal", t.fault
            assert "while" in t.fault.reason and "present" in t.fault.reason, t.fault
            assert not t.removed
            r = audit_frames(t.frames)
            assert r.verdict == "accused" and r.seat == signer and "confirmed" in r.summary(), r.summary()
