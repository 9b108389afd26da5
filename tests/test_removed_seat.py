"""A removed seat changes nothing, and a seat far behind asks instead of accusing.

Tables driven in process (harness.Net, harness.Gone). A seat cut off past
``rejoin_wait`` is removed by a majority, who play on; when its link heals it is far behind
(more than ``MAX_BUFFERED`` envelopes): it must ask for what it lacks (``Resync``), learn its
removal and stop, never sign an accusation about envelopes ahead of it. Whatever the removed
seat signs afterwards (any kind, at any position, a ``fault`` included) is dropped by the
others and kept as evidence naming it; ``audit`` judges the same way (docs/protocol.md
"Removal")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from harness import Gone, game_of
from p2p_chinchon import table as tbl, wire
from p2p_chinchon.audit import audit_frames, compare_loaded
from p2p_chinchon.engine import make_rules
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.transcript import LoadResult

GONE = 2


class Cut(Gone):
    """A :class:`Gone` whose cut seats can come back (:meth:`heal`); a ``Resync`` a table asks
    is answered by the asked seat with its envelopes from that position on, as a node does.
    ``gone``: the seat that will be cut off."""

    def __init__(self, *args, gone: int = GONE, **kwargs):
        self.gone = gone
        super().__init__(*args, **kwargs)

    def handle(self, i, outs):
        super().handle(i, outs)
        if i in self.dead:
            return
        for o in outs:
            if isinstance(o, tbl.Resync) and o.seat not in self.dead:
                self.q.extend((o.seat, i, f) for f in self.tables[o.seat].chain.frames[o.from_seq:])

    def heal(self, seat):
        self.dead.discard(seat)


def _sends(outs) -> list[bytes]:
    return [o.frame for o in outs if isinstance(o, tbl.Send)]


def _removed_and_played_on(seed: int, ahead: int, limit: int = 60) -> tuple[Cut, int]:
    """Seat GONE is cut off when it is to draw, removed by both others' votes, who then play
    ``ahead`` envelopes past its last position (not finishing). Returns the net and that
    position (the length of the cut seat's chain)."""
    net = Cut(3, seed=seed, rules=make_rules("classic", {"limit": limit}))
    assert net.run(lambda n: n.expects("draw", GONE)(n) and not n.q)
    net.kill(GONE)
    at = len(net.tables[GONE].chain.frames)
    net.declare_absent(GONE)
    assert net.run(lambda n: len(n.tables[0].chain.frames) > at + ahead or n.tables[0].flow.finished)
    assert not net.tables[0].flow.finished and net.tables[0].removal.removed == {GONE: "absent"}
    return net, at


def _parting(a: list[bytes], b: list[bytes]) -> str:
    # stand-ins: compare_loaded reads the frames
    return compare_loaded(cast(LoadResult, SimpleNamespace(frames=a)), cast(LoadResult, SimpleNamespace(frames=b))).verdict


def test_a_seat_healed_far_behind_learns_its_removal_and_accuses_nobody():
    """The cut heals when the others are more than MAX_BUFFERED envelopes further: the first
    live envelope the removed seat meets is far ahead of its chain. It asks for what it lacks,
    learns that it was removed and stops (exit 4 class), signing nothing; the others finish
    ``ok`` with identical records; its own record audits as incomplete; no two records are a
    fork."""
    net, at = _removed_and_played_on(31, tbl.MAX_BUFFERED + 8)
    back = net.tables[GONE]
    live = net.tables[0].chain.frames[-1]
    assert wire.decode_envelope(live).seq > at + tbl.MAX_BUFFERED
    outs = back.receive(live, 0)
    assert back.flow.fault is None and not _sends(outs), "a seat far behind never accuses"
    assert [o for o in outs if isinstance(o, tbl.Resync)] == [tbl.Resync(0, at)]
    assert not [o for o in outs if isinstance(o, tbl.Evidence)], "a frame ahead proves nothing against anyone"
    said: list[bytes] = []
    real = back.receive

    def spy(frame, link_seat=None):
        got = real(frame, link_seat)
        said.extend(_sends(got))
        return got

    back.receive = spy  # type: ignore[method-assign]  # a spy on the seat's input
    net.heal(GONE)
    net.handle(GONE, outs)  # its resync question reaches seat 0
    assert net.run()
    assert not said, "the removed seat signed nothing while catching up"
    assert back.flow.fault is not None and back.flow.fault.rule == "removed" and back.flow.fault.seat == GONE
    assert back.chain.envelopes[-1].kind == "remove" and back.removal.removed == {GONE: "absent"}
    alive = [net.tables[0], net.tables[1]]
    assert all(t.flow.finished and t.flow.fault is None for t in alive), [t.flow.fault for t in alive]
    assert alive[0].chain.frames == alive[1].chain.frames
    assert audit_frames(alive[0].chain.frames).verdict == "ok"
    mine = audit_frames(back.chain.frames)
    assert mine.verdict == "incomplete" and mine.exit_code == 3 and mine.rule == "removed", mine.summary()
    assert _parting(alive[0].chain.frames, alive[1].chain.frames) == "same"
    assert _parting(back.chain.frames, alive[0].chain.frames) == "shorter"


def test_a_removed_seats_late_fault_is_dropped_as_evidence():
    """A seat removed for ``absent`` waits until the others are far on, then signs a ``fault``
    (a ``timeout`` against seat 1) at its own last position: both others drop it, keep it as
    evidence naming it, log it, and finish the game; their records audit ``ok``."""
    net, at = _removed_and_played_on(32, 240)
    gone = net.tables[GONE]
    fault = wire.make_envelope(net.ids[GONE].private_key, game=gone.lobby.game, seq=at, seat=GONE, prev=gone.chain.head,
                               kind="fault", body={"accused": 1, "rule": "timeout", "reason": "did not draw",
                                                   "evidence": []}).encode()
    for i in (0, 1):
        t = net.tables[i]
        before = (len(t.chain.frames), t.expected())
        outs = t.receive(fault, GONE)
        assert t.flow.fault is None and not _sends(outs) and (len(t.chain.frames), t.expected()) == before
        ev = [o for o in outs if isinstance(o, tbl.Evidence)]
        assert [(e.seat, e.rule) for e in ev] == [(GONE, "removed")] and fault in ev[0].frames
        assert t.events.entries[-1].kind == "dropped" and t.events.entries[-1].seats == (GONE,)
    assert net.run()
    alive = [net.tables[0], net.tables[1]]
    assert all(t.flow.finished and t.flow.fault is None for t in alive)
    assert alive[0].chain.frames == alive[1].chain.frames and audit_frames(alive[0].chain.frames).verdict == "ok"


def test_audit_never_judges_a_removed_seats_fault():
    """A record that holds a fault of a seat signed after its removal, or stops with a seat's
    fault quoting one (an older node's ``stopped_by_peer``), judges nobody by it: incomplete
    (exit 3), rule ``removed``, no seat named."""
    net, at = _removed_and_played_on(33, 40, limit=30)
    t0 = net.tables[0]
    n = len(t0.chain.frames)
    late = wire.make_envelope(net.ids[GONE].private_key, game=t0.lobby.game, seq=at, seat=GONE,
                              prev=net.tables[GONE].chain.head, kind="fault",
                              body={"accused": 0, "rule": "flood", "reason": "signed seq 900", "evidence": []}).encode()
    chained = net.craft(GONE, "fault", {"accused": 1, "rule": "timeout", "reason": "x", "evidence": []})
    quoting = net.craft(0, "fault", {"accused": 255, "rule": "stopped_by_peer",
                                     "reason": "seat 2 stopped the table off our chain", "evidence": [late]})
    for last in (chained, quoting):
        r = audit_frames(t0.chain.frames + [last])
        assert r.verdict == "incomplete" and r.exit_code == 3, r.summary()
        assert r.rule == "removed" and r.seat is None and r.index == n, r.summary()
        assert f"seat {GONE}" in r.detail


def test_audit_names_nobody_for_an_unverifiable_claim(at_draw):
    """A fault whose evidence proves nothing either way: the verdict's ``seat`` is None (the
    accused is named in the detail only), whoever the claim accuses."""
    net = at_draw
    t = net.tables[0]
    mover = t.expected().seat
    liar = (mover + 1) % 3
    frame = net.craft(liar, "fault", {"accused": mover, "rule": "share", "reason": "bad", "evidence": []})
    r = audit_frames(t.chain.frames + [frame])
    assert r.verdict == "accused" and r.seat is None and r.exit_code == 1, r.summary()
    assert f"against seat {mover}" in r.detail and "unverifiable" in r.detail


@pytest.fixture
def at_draw():
    from harness.seeded import seeded_net

    return seeded_net("dealt", seed=2)


# ----------------------------------------------------------------------------- every kind, every place

# where the removed seat's envelope claims to stand, relative to the receiver's chain
PLACES = ("own_last", "earlier", "behind", "head", "next", "far")


def _bodies(frames: list[bytes], hand: int) -> list[tuple[str, dict]]:
    """One body of every kind of the wire (taken from a finished game where it holds one),
    and a few accusations a removed seat could make."""
    seen: dict[str, dict] = {}
    for f in frames:
        e = wire.decode_envelope(f)
        seen.setdefault(e.kind, e.body)
    seen.setdefault("leave", {"reason": "bye"})
    seen.setdefault("away", {"seat": 0, "hand": hand})
    seen.setdefault("reenter", {"hand": hand, "accept": True})
    seen.setdefault("fault", {"accused": 1, "rule": "timeout", "reason": "did not draw", "evidence": []})
    assert set(seen) == set(wire.KINDS), set(wire.KINDS) - set(seen)
    out = sorted(seen.items())
    out += [("fault", {"accused": 0, "rule": "flood", "reason": "signed seq 900 while our chain has 26",
                       "evidence": [frames[-1]]}),
            ("fault", {"accused": 255, "rule": "absent", "reason": "cut off", "evidence": []}),
            ("remove", {"seat": 0, "hand": hand, "reason": "absent", "proof": []})]
    return out


class Meddled(Cut):
    """A :class:`Cut` where, after every envelope delivered to an honest seat, the removed
    seat's next envelope of ``todo`` (kind, body, place) reaches that seat, once the seat's
    removal is complete there: each must leave its
    table exactly as it was (no send, no stop), dropped and kept as evidence naming the seat."""

    def __init__(self, *args, **kwargs):
        self.todo: list[tuple[str, dict, str]] = []
        self.per_step = 1  # injected after each delivery
        self.at = 0
        self.busy = False
        self.met: set[tuple[str, str, str]] = set()  # (kind, place, phase) injected
        super().__init__(*args, **kwargs)

    def handle(self, i, outs):
        super().handle(i, outs)
        if self.todo and not self.busy and i != self.gone and i not in self.dead and self.gone in self.tables[i].removal.removed:
            self.busy = True
            try:
                for _ in range(min(self.per_step, len(self.todo))):
                    self.meddle(self.tables[i])
            finally:
                self.busy = False

    def meddle(self, t):
        kind, body, place = self.todo.pop()
        n = len(t.chain.frames)
        seq = {"own_last": self.at, "earlier": self.at - 1, "behind": n - 1, "head": n, "next": n + 1,
               "far": n + tbl.MAX_BUFFERED + 5}[place]
        prev = t.chain.envelopes[seq].prev if seq < n else t.chain.head if seq == n else bytes(32)
        frame = wire.make_envelope(self.ids[self.gone].private_key, game=t.lobby.game, seq=seq, seat=self.gone, prev=prev,
                                   kind=kind, body=body).encode()
        before = _state(t)
        outs = t.receive(frame, self.gone)
        if t.flow.fault is None and not t.flow.finished:
            self.met.add((kind, place, t.flow.phase))
        assert not _sends(outs) and not [o for o in outs if isinstance(o, (tbl.Stopped, tbl.Finished))], (kind, place)
        assert _state(t) == before, (kind, place)
        if before[4] or before[3]:
            return  # a table that finished or stopped takes nothing in at all
        ev = [o for o in outs if isinstance(o, tbl.Evidence)]
        assert [(e.seat, e.rule) for e in ev] == [(self.gone, "removed")] and frame in ev[0].frames, (kind, place)


def _state(t):
    return (tuple(t.chain.frames), t.chain.head, t.expected(), t.flow.fault, t.flow.finished, repr(sorted(t.chain.buffer.items())),
            repr(sorted(t.removal.votes.items())), dict(t.removal.removed), dict(t.removal.leaves))


def _cut_at(cls, phase: str, seed: int) -> tuple:
    """A net of ``cls`` whose removed seat is cut off mid-hand (seat GONE, when it is to draw)
    or at the game's end (seat 0, the first to sign ``game_end``: nobody has signed it, so a
    majority may remove it); returns the net, that seat and an honest seat."""
    from harness import stall

    rules = make_rules("classic", {"limit": 30})
    gone = GONE if phase == "hand" else 0
    if phase == "hand":
        net = cls(3, seed=seed, rules=rules, gone=gone)
        assert net.run(lambda n: n.expects("draw", gone)(n) and not n.q)
    else:
        net = cls(3, seed=9, rules=rules, classes={gone: stall("game_end")}, gone=gone)
        assert net.run(lambda n: n.expects("game_end", gone)(n) and not n.q)
    net.kill(gone)
    return net, gone, 1 if gone == 0 else 0


@pytest.mark.parametrize("phase", ["hand", "end"])
def test_nothing_a_removed_seat_signs_changes_the_majoritys_game(phase):
    """Exhaustive over the wire's kinds (several accusations among them) x the places it may
    claim (its own last position, an earlier place of its own, behind the head, the head, just
    ahead, far ahead), injected into the honest seats between every step of the rest of the
    game, for a seat removed mid-hand and one removed at the game's end: each is dropped and
    kept as evidence, and the others' records are byte for byte those of the game without it."""
    ref, gone, h = _cut_at(Meddled, phase, 34)
    at = len(ref.tables[gone].chain.frames)
    ref.declare_absent(gone)
    assert ref.run() and ref.tables[h].flow.finished and ref.tables[h].removal.removed == {gone: "absent"}
    net, _, _ = _cut_at(Meddled, phase, 34)
    net.at = at
    bodies = _bodies(ref.tables[h].chain.frames, ref.tables[h].hand.hand_no)
    net.todo = [(k, b, p) for k, b in bodies for p in PLACES]
    if phase == "hand":  # again and again, through the rest of the game
        net.todo *= 1 + 400 // len(net.todo)
    else:  # all at once: the game's end is a few envelopes after the removal
        net.per_step = len(net.todo)
    net.todo.reverse()
    net.declare_absent(gone)
    assert net.run()
    for t in net.alive():
        assert t.flow.finished and t.flow.fault is None
        assert t.chain.frames == ref.tables[h].chain.frames, "the removed seat changed the majority's game"
    assert {k for k, _p, _ph in net.met} == set(wire.KINDS) and {p for _k, p, _ph in net.met} == set(PLACES)


@pytest.mark.parametrize("phase", ["hand", "end"])
def test_a_seat_far_behind_never_accuses_whatever_order_it_hears_in(phase):
    """The removed seat, cut off mid-hand or at the game's end, hears the rest of the game
    farthest envelope first (the worst order: everything ahead of it, most beyond what it
    buffers): it signs nothing, accuses nobody, and stops once it holds its removal."""
    net, gone, h = _cut_at(Cut, phase, 35)
    net.declare_absent(gone)
    assert net.run() and net.tables[h].flow.finished
    back = net.tables[gone]
    at = len(back.chain.frames)
    asked = []
    for frame in reversed(net.tables[h].chain.frames[at:]):
        outs = back.receive(frame, h)
        assert not _sends(outs), "a seat behind signed something about envelopes ahead of it"
        asked += [o for o in outs if isinstance(o, tbl.Resync)]
        if back.flow.fault is not None:
            break
    assert back.flow.fault is not None and back.flow.fault.rule == "removed", back.flow.fault
    assert all(a == tbl.Resync(h, at) for a in asked)


def test_a_joiner_in_the_lobby_never_accuses_envelopes_far_ahead():
    """In the lobby (before the seating is known, nothing verifiable), envelopes far ahead and
    a buffer filled to its bound are asked for, never a fault."""
    from harness import Net

    net = Net(3, seed=36)
    host = net.tables[0]
    joiner = tbl.Table.joining(net.ids[1], SeededRng("late"), host.chain.frames[0], auto_agree=True, min_proof_rounds=1)
    outs = []
    for i in range(tbl.MAX_BUFFERED + 20):
        frame = wire.make_envelope(net.ids[0].private_key, game=host.lobby.game, seq=2 + i + (tbl.MAX_BUFFERED if i % 2 else 0),
                                   seat=0, prev=bytes(32), kind="leave", body={"reason": "x"}).encode()
        outs += joiner.receive(frame, 0)
    assert joiner.flow.fault is None and not _sends(outs)
    assert sum(len(x) for x in joiner.chain.buffer.values()) <= tbl.MAX_BUFFERED


def test_a_seat_gone_home_cannot_stop_the_others_either():
    """Four seats, no re-entry: a seat out of the game signs ``leave`` (it goes home; the
    others keep the leave for its removal at the game's end) and later a ``fault``, at its
    leave's position, at or after the head: the others drop it (rule ``left``) and play on."""
    from p2p_chinchon import view as v

    def one_out(nn):
        return len(nn.tables[0].flow.engine.active) == 3 and nn.tables[0].flow.phase != v.OVER and nn.expects("draw")(nn) \
            and not nn.q

    net = Gone(4, seed=81, rules=make_rules("classic", {"limit": 8, "reentries": 0}))
    assert net.run(one_out)
    e = next(s for s in range(4) if s not in game_of(net.tables[0]).active)
    net.handle(e, net.tables[e].intent(v.Leave("home")))
    net.kill(e)
    assert net.run(lambda nn: not nn.q)
    t = net.tables[(e + 1) % 4]
    assert e in t.removal.leaves and not t.removal.removed
    n, at = len(t.chain.envelopes), wire.decode_envelope(t.removal.leaves[e]).seq
    for seq in sorted({at, n, n + 1}):
        prev = t.chain.envelopes[seq].prev if seq < n else t.chain.head
        f = net.craft(e, "fault", {"accused": 255, "rule": "absent", "reason": "x", "evidence": []}, seq=seq, prev=prev)
        for other in net.alive():
            outs = other.receive(f, e)
            assert other.flow.fault is None and not _sends(outs)
            assert [(o.seat, o.rule) for o in outs if isinstance(o, tbl.Evidence)] == [(e, "left")]
    # the leaver's own record chains its leave: a fault of it after that judges nobody
    own = net.tables[e]
    assert own.chain.envelopes[-1].kind == "leave" and e in own.flow.left
    late = wire.make_envelope(net.ids[e].private_key, game=own.lobby.game, seq=len(own.chain.frames), seat=e, prev=own.chain.head,
                              kind="fault", body={"accused": 255, "rule": "absent", "reason": "x", "evidence": []})
    r = audit_frames(own.chain.frames + [late.encode()])
    assert r.verdict == "incomplete" and r.rule == "left" and r.seat is None, r.summary()
    assert net.run()
    assert all(x.flow.finished and x.flow.fault is None for x in net.alive())
