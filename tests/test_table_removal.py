"""Playing on without a seat that is gone, at the table level: tables driven
in process (harness.Gone, harness.Split); one seat goes silent for good or leaves; the others each sign
its removal and finish the game without it; ``audit`` replays the removal and says "left".
A ``remove`` the chain does not allow is a violation naming its signer."""

from __future__ import annotations

from typing import cast

import pytest

from harness import Gone, Split, game_of, stall, step_of
from harness.cut_off import cut_cases, cut_off_at
from harness.seeded import seeded_net
from p2p_chinchon import table as tbl, view as v, wire
from p2p_chinchon.audit import audit_frames


def fault_of(t: tbl.Table) -> v.Fault | None:
    """t's fault, read through a call: mypy keeps `t.flow.fault` narrowed by an earlier assert
    across the calls that change it"""
    return t.flow.fault


def waits_for(seat):
    def cond(net):
        s = net.alive()[0].expected()
        return s is not None and s.seat == seat and not net.q
    return cond


def assert_played_on(net: Gone, gone: int, reason: str) -> None:
    alive = net.alive()
    for t in alive:
        assert t.flow.finished and t.flow.fault is None, t.flow.fault
        assert t.removal.removed == {gone: reason}
        assert t.view().seats[gone].left
    assert all(t.chain.frames == alive[0].chain.frames for t in alive), "every remaining transcript is identical"
    r = audit_frames(alive[0].chain.frames)
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
        assert net.run(lambda n: n.tables[0].flow.phase == v.SHOWDOWN and n.expects("show", 2)(n) and not n.q)
    else:
        assert net.run(lambda n: n.expects(kind, 2)(n) and not n.q)
    hand = net.tables[0].hand.hand_no
    net.kill(2)
    net.declare_absent(2, by=[1])  # seat 1 votes first: it waits for seat 0 to start
    assert net.run(lambda n: not n.q)
    assert net.tables[1].expected() == tbl.Step(kind, 2)
    assert net.tables[0].removal.votes_for(2) == [1] and not net.tables[0].removal.removed
    assert net.tables[1].removal.removal_step() == tbl.Step("remove", 0)
    net.declare_absent(2, by=[0])
    assert net.run()
    assert_played_on(net, 2, "absent")
    t = net.tables[0]
    removes = [e for e in t.chain.envelopes if e.kind == "remove"]
    assert [(e.seat, e.body["seat"], e.body["reason"]) for e in removes] == [(0, 2, "absent"), (1, 2, "absent")]
    assert t.turns.score_history[hand] == (0, 0, 0), "the hand in progress is void: nobody scores"
    voided = [e for e in t.events.entries if e.kind == "voided"]
    assert voided and voided[0].numbers == (hand + 1,) and f"hand {hand + 1} voided" in voided[0].text
    # nothing of the voided hand opens: no secret of it was sent
    assert not [e for e in t.chain.envelopes if e.kind == "secret" and e.body["hand"] == hand]


def test_a_single_seat_cannot_remove_another():
    """Seat 0's clock says seat 2 is gone, seat 1 still hears it and does not vote: one vote
    of three is no majority, so nothing is signed; the table still waits for seat 2's move."""
    net = Gone(3, seed=6)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.kill(2)
    net.declare_absent(2, by=[0])
    assert net.run(lambda n: not n.q)
    for t in net.alive():
        assert t.removal.removed == {} and t.expected() == tbl.Step("draw", 2) and t.flow.fault is None
        assert game_of(t).active == (0, 1, 2)
        assert not [e for e in t.chain.envelopes if e.kind == "remove"]
    assert net.tables[1].removal.votes_for(2) == [0] and net.tables[1].removal.votes_needed() == 2


def test_forged_and_early_removals_are_violations():
    """A remove while the table waits for another seat, or started by the wrong seat, or for
    'left' without a leave: a violation naming its signer (audit: cheat)."""
    net = Gone(3, seed=7)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = step_of(net.tables[0]).seat
    other = next(s for s in range(3) if s != mover)
    third = 3 - mover - other
    hand = net.tables[0].hand.hand_no
    bad = [
        # the table waits for ``mover``, not for ``third``
        (other, {"seat": third, "hand": hand, "reason": "absent", "proof": []}, "does not wait"),
        # for 'left', the seat must have signed its own leave
        (min(other, third), {"seat": mover, "hand": hand, "reason": "left", "proof": []}, "signed leave"),
        # ... its own, not another seat's
        (min(other, third), {"seat": mover, "hand": hand, "reason": "left",
                             "proof": [net.craft(max(other, third), "leave", {"reason": "x"})]}, "signed leave"),
        # for 'absent', a majority's signed votes that the seat was away
        (max(other, third), {"seat": mover, "hand": hand, "reason": "absent", "proof": []}, "majority"),
        (min(other, third), {"seat": mover, "hand": hand + 1, "reason": "absent", "proof": []}, "hand"),
    ]
    for signer, body, words in bad:
        net2 = Gone(3, seed=7)
        assert net2.run(lambda n: n.expects("draw")(n) and not n.q)
        frame = net2.craft(signer, "remove", body)
        net2.inject(signer, frame)
        for t in net2.tables:
            if t.lobby.me != signer:
                assert t.flow.fault is not None and t.flow.fault.seat == signer and t.flow.fault.rule == "bad_removal", t.flow.fault
                assert words in t.flow.fault.reason, t.flow.fault
        r = audit_frames(net2.tables[mover if mover != signer else 3 - signer - mover].chain.frames)
        assert r.verdict == "accused" and r.seat == signer and r.rule == "bad_removal", r.summary()


def test_remove_in_a_chain_is_checked_by_audit():
    """A transcript whose remove the chain does not allow: audit names its signer (cheat)."""
    net = Gone(3, seed=7)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = step_of(net.tables[0]).seat
    signer = next(s for s in range(3) if s != mover)
    target = 3 - mover - signer
    frames = list(net.tables[0].chain.frames) + [net.craft(signer, "remove", {"seat": target, "hand": 0, "reason": "absent", "proof": []})]
    r = audit_frames(frames)
    assert r.verdict == "cheat" and r.seat == signer and r.rule == "bad_removal", r.summary()


def test_a_seat_that_leaves_mid_game_is_removed_as_left():
    """A player leaves for good mid-hand (signed leave): the others each sign its removal
    without waiting, the hand is void, the game goes on; audit: ok, the seat "left"."""
    net = Gone(3, seed=8)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    leaver = step_of(net.tables[0]).seat
    net.handle(leaver, net.tables[leaver].intent(v.Leave("going home")))
    t = net.tables[leaver]
    assert t.flow.fault is not None and t.flow.fault.rule == "left" and t.flow.fault.seat == leaver
    net.kill(leaver)
    assert net.run()
    assert_played_on(net, leaver, "left")


def test_a_seat_that_leaves_out_of_turn_is_removed_when_the_table_waits_for_it():
    """A leave signed while another seat is to move is not chained (it would race that seat's
    move): the game goes on until the table waits for the leaver, whose removal then proves
    "left" with its signed leave."""
    net = Gone(3, seed=12)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = step_of(net.tables[0]).seat
    leaver = (mover + 2) % 3
    net.handle(leaver, net.tables[leaver].intent(v.Leave("dinner")))
    net.kill(leaver)
    assert net.run()
    assert_played_on(net, leaver, "left")
    first = next(e for e in net.alive()[0].chain.envelopes if e.kind == "remove")
    assert first.body["proof"] and not [e for e in net.alive()[0].chain.envelopes if e.kind == "leave"]


def _at_game_end(seed, silent, n=3):
    """A table of ``n`` whose seat ``silent`` holds back its ``game_end`` (the game is over),
    waiting for it; the seat then dies."""
    net = Gone(n, seed=seed, classes={silent: stall("game_end")})
    assert net.run(lambda nn: nn.tables[0].flow.phase == v.OVER and nn.expects("game_end", silent)(nn) and not nn.q)
    net.tables[silent].out.items = []
    late = net.craft(silent, "game_end", {"winner": net.tables[0].flow.winner if net.tables[0].flow.winner is not None
                                          else 255, "digest": net.tables[0].chain.head})
    net.kill(silent)
    return net, late


def test_the_game_end_signed_by_a_majority_ends_without_the_last_seat():
    """The last seat to sign ``game_end`` goes silent: a majority (seats 0 and 1) signed the
    game's end, so nobody is removed (its own record may hold its ``game_end``: a removal
    there would be a second end of one game); once its ``rejoin_wait`` ran out the others end
    the game here, signing nothing, naming it; audit says ``ok``, naming it too. Its late
    ``game_end`` changes nothing."""
    net, late = _at_game_end(9, 2)
    net.declare_absent(2)
    assert net.run()
    for t in net.alive():
        assert t.flow.finished and t.flow.fault is None and t.removal.removed == {} and t.turns.unsigned_end == (2,)
        assert not [e for e in t.chain.envelopes if e.kind in ("remove", "away")]
        assert [e for e in t.events.entries if e.kind == "unsigned_end"][0].seats == (2,)
    n = len(net.tables[0].chain.frames)
    outs = net.tables[0].receive(late, 2)
    assert net.tables[0].flow.fault is None and len(net.tables[0].chain.frames) == n
    assert not [o for o in outs if isinstance(o, tbl.Send)]
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "ok" and r.winner == net.tables[0].flow.winner, r.summary()
    assert "not by seat 2" in r.summary()
    assert r.unsigned_end == [2] and r.to_json()["unsigned_end"] == [2]  # `audit --json` says so too
    # seat 2's own record, with its game_end, is complete; the two records agree (a prefix)
    full = audit_frames(list(net.tables[0].chain.frames) + [late])
    assert full.verdict == "ok" and full.winner == r.winner and full.unsigned_end == []
    # seat 2's leave chained after the majority's ends changes nothing: still ok, still unsigned by it
    ref = net.tables[0]
    leave = wire.make_envelope(net.ids[2].private_key, game=ref.lobby.game, seq=len(ref.chain.envelopes), seat=2, prev=ref.chain.head,
                               kind="leave", body={"reason": "home"}).encode()
    after = audit_frames(list(ref.chain.frames) + [leave])
    assert after.verdict == "ok" and after.winner == r.winner and after.unsigned_end == [2], after.summary()


def test_the_first_seat_silent_at_the_game_end_is_removed():
    """Seat 0, the first to sign ``game_end``, goes silent before anyone signed it: no seat's
    end is chained, so a majority's votes remove it as anywhere in the game, and the others
    sign the end."""
    net, _ = _at_game_end(9, 0)
    net.declare_absent(0)
    assert net.run()
    for t in net.alive():
        assert t.flow.finished and t.flow.fault is None and t.removal.removed == {0: "absent"} and t.turns.unsigned_end == ()
    assert audit_frames(net.tables[1].chain.frames).verdict == "ok"


def test_a_middle_seat_silent_at_the_game_end_is_waited_for():
    """Seat 1 of 3 goes silent at its ``game_end`` after seat 0 signed its own: removing it
    could let its record (seat 0's end, then its own) hold a majority's end; one end is no
    majority to end the game without it. So the table waits, signing nothing (its driver
    stops after ``stall_limit``: the record resumes); a remove of it is its signer's
    violation, and audit names that signer."""
    net, late = _at_game_end(9, 1)
    net.declare_absent(1)
    assert net.run(lambda nn: not nn.q)
    for t in net.alive():
        assert not t.flow.finished and t.flow.fault is None and not t.removal.removed and t.expected() == tbl.Step("game_end", 1)
        assert not t.removal.can_remove(1) and not t.removal.votes_for(1)
    t0 = net.tables[0]
    votes = [net.craft(s, "away", {"seat": 1, "hand": t0.hand.hand_no}) for s in (0, 2)]
    remove = net.craft(0, "remove", {"seat": 1, "hand": t0.hand.hand_no, "reason": "absent", "proof": votes})
    frames = list(t0.chain.frames) + [remove]
    net.inject(0, remove)
    t2 = net.tables[2]
    assert t2.flow.fault is not None and t2.flow.fault.seat == 0 and t2.flow.fault.rule == "bad_removal", t2.flow.fault
    assert "signed the game's end" in t2.flow.fault.reason
    r = audit_frames(frames)
    assert r.verdict == "cheat" and r.seat == 0 and r.rule == "bad_removal", r.summary()
    # the silent seat's own record holds seat 0's end and its own, a majority: it ends there
    # (after its wait for seat 2); the others' record is a prefix of it
    assert audit_frames(frames[:-1] + [late]).verdict == "ok"


def test_the_removed_seat_catching_up_stops_saying_so():
    """The removed seat comes back and receives the removal: it stops with one line, not a
    fault (it signs nothing)."""
    net = Gone(3, seed=10)
    assert net.run(lambda n: n.expects("draw", 2)(n) and not n.q)
    net.kill(2)
    net.declare_absent(2)
    assert net.run(lambda n: not n.q and bool(n.tables[0].removal.removed))
    back = net.tables[2]
    n = len(back.chain.frames)
    for frame in net.tables[0].chain.frames[n:]:
        outs = back.receive(frame, 0)
        if back.flow.fault:
            break
    assert back.flow.fault is not None and back.flow.fault.rule == "removed" and back.flow.fault.seat == 2
    assert "you were removed from the game" in back.flow.fault.reason
    assert not [o for o in outs if isinstance(o, tbl.Send)]
    assert back.chain.envelopes[-1].kind == "remove"


def test_two_seats_cannot_remove_each_other():
    """Two seats: the one left is no majority; it signs nothing (no vote, no fault) and the
    table waits (its driver stops after ``stall_limit``, signing nothing: :meth:`halt`)."""
    net = Gone(2, seed=11)
    assert net.run(lambda n: n.expects("draw")(n) and not n.q)
    mover = step_of(net.tables[0]).seat
    other = 1 - mover
    net.kill(mover)
    n = len(net.tables[other].chain.frames)
    net.declare_absent(mover, by=[other])
    t = net.tables[other]
    assert t.flow.fault is None and not t.removal.removed and not net.q and len(t.chain.frames) == n
    outs = t.halt("no majority")
    fault = fault_of(t)
    assert fault is not None and fault.rule == "stalled" and fault.seat is None and len(t.chain.frames) == n
    assert [type(o).__name__ for o in outs] == ["Stopped"]
    assert audit_frames(t.chain.frames).verdict == "incomplete"




# ---------------------------------------------------------------- a majority

def _splits(n):
    """Every two-way cut of ``n`` seats (each once: the side of seat 0 is side 0)."""
    for mask in range(1, 2 ** (n - 1)):
        yield [0] + [(mask >> (s - 1)) & 1 for s in range(1, n)]


def _split_at_draw(n: int) -> Split:
    """A fresh copy of the seeded ``n``-seat table waiting for its first draw (every cut of
    ``n`` seats starts from this very state; 5 seats take seconds to get there)."""
    return seeded_net("dealt", n, seed=40 + n, cls=Split)


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
    removing = {sides[i] for i, t in enumerate(net.tables) if t.removal.removed}
    assert len(removing) <= 1 and removing <= ({major} if major is not None else set()), removing
    for i, t in enumerate(net.tables):
        assert t.flow.fault is None, (i, t.flow.fault)
        assert not any(sides[x] == major for x in t.removal.removed), (i, t.removal.removed)
        if sides[i] != major:
            assert not t.removal.removed and not t.flow.finished
            assert not [e for e in t.chain.envelopes if e.kind == "remove"]
    if major is not None:
        mine = [t for i, t in enumerate(net.tables) if sides[i] == major]
        assert all(t.flow.finished for t in mine)
        assert all(t.chain.frames == mine[0].chain.frames for t in mine)
        assert set(mine[0].removal.removed) == {s for s in range(n) if sides[s] != major}
        assert audit_frames(mine[0].chain.frames).verdict == "ok"
    net.heal()
    if major is not None:
        for i, t in enumerate(net.tables):
            if sides[i] != major:
                assert t.flow.fault is not None and t.flow.fault.rule == "removed" and t.flow.fault.seat == i, (i, t.flow.fault)
                assert not [e for e in t.chain.envelopes if e.kind == "fault"], "it signs nothing"
    else:
        assert all(t.flow.finished and t.flow.fault is None and not t.removal.removed for t in net.tables)
        assert all(t.chain.frames == net.tables[0].chain.frames for t in net.tables)
        assert audit_frames(net.tables[0].chain.frames).verdict == "ok"


def test_a_remove_without_a_majority_is_its_signers_violation():
    """A seat removes the seat to move while it is present, with no votes,
    with its own vote only, with the votes of two colluders of four, with a vote it forged
    for another seat (signed with its own key), or with votes for another place: each is
    ``bad_removal`` naming the signer, on every other seat and in audit; the victim is never
    told it was removed."""
    def crafted(net, signer, voters, *, seq=None):
        t = net.tables[0]
        x = t.expected().seat
        hand = t.hand.hand_no
        votes = [net.craft(v, "away", {"seat": x, "hand": hand}, seq=seq) for v in voters]
        return x, net.craft(signer, "remove", {"seat": x, "hand": hand, "reason": "absent", "proof": votes})

    for n, pick in ((3, lambda x, o: []), (3, lambda x, o: [o[0]]), (4, lambda x, o: o[:2]),
                    (3, lambda x, o: [o[0], o[0]]), (3, lambda x, o: o), (3, lambda x, o: "forged")):
        net = Gone(n, seed=50)
        assert net.run(lambda nn: nn.expects("draw")(nn) and not nn.q)
        x = step_of(net.tables[0]).seat
        others = [s for s in range(n) if s != x]
        voters = pick(x, others)
        signer = others[0]
        if voters == "forged":  # the second vote claims seat others[1] but is signed by the signer
            t = net.tables[0]
            forged = wire.make_envelope(net.ids[signer].private_key, game=t.lobby.game, seq=len(t.chain.envelopes),
                                        seat=others[1], prev=t.chain.head, kind="away", body={"seat": x, "hand": t.hand.hand_no})
            own = net.craft(signer, "away", {"seat": x, "hand": t.hand.hand_no})
            frame = net.craft(signer, "remove", {"seat": x, "hand": t.hand.hand_no, "reason": "absent",
                                                 "proof": [own, forged.encode()]})
        elif voters == others:  # a majority, but votes for the place before this one
            _, frame = crafted(net, signer, voters, seq=len(net.tables[0].chain.envelopes) - 1)
        else:
            _, frame = crafted(net, signer, voters)
        net.inject(signer, frame)
        for t in net.tables:
            if t.lobby.me != signer:
                assert t.flow.fault is not None and t.flow.fault.seat == signer and t.flow.fault.rule == "bad_removal", t.flow.fault
                assert not t.removal.removed
        victim = net.tables[x]
        assert victim.flow.fault is not None and victim.flow.fault.rule != "removed"
        r = audit_frames(victim.chain.frames)
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
    n2 = len(t2.chain.frames)
    net.declare_absent(2)
    assert net.run(lambda nn: not nn.q and bool(nn.tables[0].removal.removed))
    removes = [f for f, e in zip(net.tables[0].chain.frames, net.tables[0].chain.envelopes, strict=True) if e.kind == "remove"]
    assert len(removes) == 2
    t2.receive(removes[0], 0)
    assert t2.flow.fault is None and len(t2.chain.frames) == n2
    outs = t2.receive(removes[1], 1)
    assert t2.flow.fault is not None and t2.flow.fault.rule == "removed" and t2.flow.fault.seat == 2, t2.flow.fault
    assert not [o for o in outs if isinstance(o, tbl.Send)] and len(t2.chain.frames) == n2


def test_a_remove_the_record_refutes_is_its_signers_violation_live_and_in_audit():
    """The seat to move draws; the signer then sends a remove of it at the same place (same
    ``prev``), with its own vote only: every other seat holds the mover's draw there, so the
    record refutes the removal. Each names the signer ("tried to remove ... while ... was
    present"), and ``audit`` of a transcript confirms it from the fault's evidence."""
    net = Gone(3, seed=52)
    assert net.run(lambda nn: nn.expects("draw")(nn) and not nn.q)
    t0 = net.tables[0]
    x = step_of(t0).seat
    signer = next(s for s in range(3) if s != x)
    seq, prev, hand = len(t0.chain.envelopes), t0.chain.head, t0.hand.hand_no
    vote = net.craft(signer, "away", {"seat": x, "hand": hand})
    remove = net.craft(signer, "remove", {"seat": x, "hand": hand, "reason": "absent", "proof": [vote]})
    net.handle(x, net.tables[x].intent(v.Draw("stock")))
    assert net.run(lambda nn: not nn.q and len(nn.tables[0].chain.envelopes) > seq)
    assert all(t.chain.envelopes[seq].seat == x and t.chain.envelopes[seq].prev == prev for t in net.tables)
    net.inject(signer, remove)
    for t in net.tables:
        if t.lobby.me != signer:
            assert t.flow.fault is not None and t.flow.fault.seat == signer and t.flow.fault.rule == "bad_removal", t.flow.fault
            assert "while" in t.flow.fault.reason and "present" in t.flow.fault.reason, t.flow.fault
            assert not t.removal.removed
            r = audit_frames(t.chain.frames)
            assert r.verdict == "accused" and r.seat == signer and "confirmed" in r.summary(), r.summary()


# ------------------------------------------------- a seat cut off right after it signs

def _records_agree(a: list[bytes], b: list[bytes]) -> str:
    from types import SimpleNamespace

    from p2p_chinchon.audit import compare_loaded
    from p2p_chinchon.transcript import LoadResult

    return compare_loaded(cast(LoadResult, SimpleNamespace(frames=a)), cast(LoadResult, SimpleNamespace(frames=b))).verdict


def _ended(t) -> bool:
    return t.flow.finished or (t.flow.fault is None and t.turns.end_signed_by_majority())


@pytest.mark.parametrize("n,case", [(3, i) for i in range(20)] + [(4, i) for i in range(23)],
                         ids=lambda x: str(x))
def test_a_seat_cut_off_as_it_signs_any_step_never_ends_a_second_game(n, case):
    """Property, over every kind of step of a seeded game and every step of its last hand
    and end (3 and 4 seats): the seat to speak signs its envelope and is cut off before it
    leaves. The others (a majority) play on without it, removing it where the chain allows,
    ending the game without its ``game_end`` where a majority signed the end, else waiting;
    the seat alone never removes anyone. Then: at most one side ends the game, never both;
    compared, the two records are never a fork (``cut_off``: its own last envelope where the
    others removed it, or one a prefix of the other); and once the cut heals, either the
    game goes on to one end for all, or the cut-off seat hears it was removed, signing
    nothing."""
    chain, snaps = cut_cases(n)
    cases = sorted(snaps)
    assert len(cases) == {3: 20, 4: 23}[n], "the seeded game changed: update the parametrization"
    at = cases[case]
    net, seat = cut_off_at(n, at)
    assert net.sides[seat] == 1 and sum(net.sides) == 1
    lone = net.tables[seat]
    others = [t for i, t in enumerate(net.tables) if i != seat]
    assert lone.chain.envelopes[at].seat == seat and lone.chain.envelopes[at].kind == chain[at][0]
    assert not lone.removal.removed and not [e for e in lone.chain.envelopes[at:] if e.kind == "remove"], "alone, it removes nobody"
    assert all(t.chain.frames == others[0].chain.frames for t in others)
    verdict = _records_agree(lone.chain.frames, others[0].chain.frames)
    assert verdict in ("same", "shorter", "cut_off"), (at, chain[at], verdict)
    if _ended(lone) and _ended(others[0]):  # one end of one game: a record and its prefix
        assert verdict in ("same", "shorter") and not others[0].removal.removed, (at, chain[at], verdict)
    if others[0].removal.removed:
        assert verdict == "cut_off" and set(others[0].removal.removed) == {seat} and not _ended(lone)
    net.heal()
    if others[0].removal.removed:
        assert lone.flow.fault is not None and lone.flow.fault.rule == "removed", lone.flow.fault
        assert all(e.seat == seat for e in lone.chain.envelopes[at:]), "its record holds its own steps only"
    else:
        assert all(t.flow.finished and t.flow.fault is None for t in net.tables), [(t.lobby.me, t.flow.fault) for t in net.tables]
        longest = max((t.chain.frames for t in net.tables), key=len)
        assert all(longest[:len(t.chain.frames)] == t.chain.frames for t in net.tables)
        assert audit_frames(longest).verdict == "ok"


def test_the_end_majority_counts_the_seats_in_the_game_when_it_was_over():
    """N_end is fixed when the game is over and every chained ``game_end`` counts
    (docs/protocol.md "The game's end"): two ``game_end``s of four, then the signers' own
    chained ``leave``s (eliminated seats going home), still do not end the game (were the
    leavers taken out of N only, 2 of 2 would, on a branch whose leaves the other side never
    saw). A seat that leaves without signing is out of the count: 2 of the 3 others end it.
    A ``leave`` after a majority's ``game_end``s changes nothing: still ``ok``."""
    plain = Split(4, seed=64)
    assert plain.run() and plain.tables[0].flow.finished
    t = plain.tables[0]
    frames = list(t.chain.frames)
    envs = [wire.decode_envelope(f) for f in frames]
    ends = [i for i, e in enumerate(envs) if e.kind == "game_end"]
    assert [envs[i].seat for i in ends] == [0, 1, 2, 3]

    def leave_after(prefix, seat):
        last = wire.decode_envelope(prefix[-1])
        return prefix + [wire.make_envelope(plain.ids[seat].private_key, game=last.game, seq=last.seq + 1, seat=seat,
                                            prev=last.hash(), kind="leave", body={"reason": "home"}).encode()]

    two = frames[:ends[1] + 1]
    assert audit_frames(two).verdict == "incomplete"
    signers_out = [s for s in (0, 1) if s != t.flow.winner]  # eliminated signers may go home
    gone = two
    for s in signers_out:
        gone = leave_after(gone, s)
    assert audit_frames(gone).verdict == "incomplete", "a signer's leave must not lower N_end"
    unsigned = next(s for s in (2, 3) if s != t.flow.winner)
    r = audit_frames(leave_after(two, unsigned))
    assert r.verdict == "ok", r.summary()
    three = frames[:ends[2] + 1]
    r = audit_frames(three)
    assert r.verdict == "ok" and "not by seat 3" in r.summary(), r.summary()
    assert audit_frames(leave_after(three, 3)).verdict == "ok", "a leave after the end changes nothing"
