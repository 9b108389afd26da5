"""Red-team attacks on the game's end (docs/protocol.md "Removal", rule 5 and "The game's end"):
a cheating seat, or two, at the ``game_end`` steps, in process with the removal harness
(harness.Gone). Each test says what it shows; an attack that works and is not fixed
is a strict xfail naming the weakness.

The games are seeded and copied from the session cache of seeded tables (harness.seeded), one
game per size (a 4-seat game costs about 12 s to play to its end, a 5-seat one 20 s)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from harness import Gone, Stall, game_of, stall
from harness.seeded import seeded_net
from p2p_chinchon import table as tbl, view as v, wire
from p2p_chinchon.audit import audit_files, audit_frames, compare_loaded
from p2p_chinchon.transcript import LoadResult

pytestmark = pytest.mark.slow  # whole in-process games to their end, and the independent seat's audit as a process

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE_SEAT = ROOT / "protocol" / "conformance" / "seat.py"

def loaded(frames: list[bytes]) -> LoadResult:
    return cast(LoadResult, SimpleNamespace(frames=frames))  # a stand-in: compare_loaded reads the frames


def _at_end(n: int) -> Gone:
    """A seeded ``n``-seat game over: seat 0 signed ``game_end``, the table waits for seat 1's
    (seats 1 and 2 hold theirs back: a modified client). A copy per test."""
    net = seeded_net("game_end", n, seed=9, cls=Gone, classes={1: stall("game_end"), 2: stall("game_end")})
    assert net.expects("game_end", 1)(net)
    return net


def _game_end(net: Gone, seat: int, after: bytes | None = None) -> bytes:
    """Seat ``seat``'s ``game_end`` at the head of seat 0's chain, or after frame ``after``."""
    t = net.tables[0]
    winner = t.flow.winner if t.flow.winner is not None else 255
    if after is None:
        return net.craft(seat, "game_end", {"winner": winner, "digest": t.chain.head})
    e = wire.decode_envelope(after)
    return net.craft(seat, "game_end", {"winner": winner, "digest": e.hash()}, seq=e.seq + 1, prev=e.hash())


def _after(net: Gone, seat: int, kind: str, body: dict, after: bytes) -> bytes:
    e = wire.decode_envelope(after)
    return net.craft(seat, kind, body, seq=e.seq + 1, prev=e.hash())


def _conformance(tmp_path: Path, frames: list[bytes]) -> tuple[int, str]:
    """The independent verifier's ``audit`` of ``frames`` (exit code, summary)."""
    p = tmp_path / "conf.chn"
    p.write_bytes(b"".join(frames))
    r = subprocess.run([sys.executable, str(CONFORMANCE_SEAT), "audit", str(p)], capture_output=True, text=True,
                       timeout=300)
    return r.returncode, r.stdout.strip()


def _write(tmp_path: Path, name: str, frames: list[bytes]) -> Path:
    p = tmp_path / name
    p.write_bytes(b"".join(frames))
    return p


def _remove_seat_1(net: Gone) -> list[bytes]:
    """Seat 1 is cut off for good: the others (a majority of 4) vote it away and remove it,
    then sign the end (seat 2 too, its hold lifted). Seat 0's record."""
    held = net.tables[2]
    assert isinstance(held, Stall)
    held.hold = frozenset()
    net.kill(1)
    net.declare_absent(1)
    assert net.run()
    t = net.tables[0]
    assert t.flow.finished and t.flow.fault is None and t.removal.removed == {1: "absent"}
    return list(t.chain.frames)


# ------------------------------------------------------------------ counting the end's majority


def test_a_seat_that_signs_the_end_and_leaves_is_no_majority(tmp_path):
    """FIXED. Four seats, seat 0 signed ``game_end``; seat 1 (eliminated) signs its own and is
    cut off, then chains its ``leave`` (an eliminated seat may go home: its own record holds
    the leave). Before the fix ``end_signed_by_majority`` counted the leaver's ``game_end``
    but not the leaver among the seats in the game: 2 ends of 3 seats, "a majority", so its
    record said ``ok`` (the conformance verifier the same) while the three others removed it
    there and ended the game on their own record: two complete records of one game, and
    ``audit A B`` said ``cut_off``, exit 0. Only the ends of seats still in the game count:
    one of three is no majority; its record is ``incomplete`` (both verifiers), and the two
    files agree with one complete record, the others'."""
    net = _at_end(4)
    t0 = net.tables[0]
    assert 1 not in game_of(t0).active and t0.flow.winner != 1, "seat 1 is an eliminated seat"
    prefix = list(t0.chain.frames)
    g1 = _game_end(net, 1)
    leave = _after(net, 1, "leave", {"reason": "going home"}, g1)
    lone = prefix + [g1, leave]
    replay = tbl.Table.observer()
    for f in lone:
        replay.replay(f)
    assert replay.flow.fault is None and replay.flow.left == {1} and replay.turns.game_end_sigs == {0, 1}
    assert not replay.turns.end_signed_by_majority() and not replay.flow.finished
    r = audit_frames(lone)
    assert r.verdict == "incomplete", r.summary()
    code, text = _conformance(tmp_path, lone)
    assert code == 1 and text.startswith("incomplete"), text
    others = _remove_seat_1(net)
    assert audit_frames(others).verdict == "ok"
    part = compare_loaded(loaded(lone), loaded(others))
    assert part.verdict == "cut_off", part
    m = audit_files([_write(tmp_path, "lone.chn", lone), _write(tmp_path, "others.chn", others)])
    assert [x.verdict for x in m.reports] == ["incomplete", "ok"] and m.exit_code == 0, m.summary()


def test_two_ends_of_four_are_no_majority_and_three_are():
    """The count itself: of four seats, seat 0's and seat 1's ``game_end`` are no majority
    (audit ``incomplete``); three are: audit ``ok`` naming seat 3, a table
    waiting for seat 3 ends the game without it once its ``rejoin_wait`` ran out, and only
    then (not for a seat it does not wait for)."""
    net = _at_end(4)
    prefix = list(net.tables[0].chain.frames)
    g1 = _game_end(net, 1)
    g2 = _game_end(net, 2, after=g1)
    assert audit_frames(prefix + [g1]).verdict == "incomplete"
    r = audit_frames(prefix + [g1, g2])
    assert r.verdict == "ok" and "not by seat 3" in r.summary(), r.summary()
    t0 = net.tables[0]
    for f in (g1, g2):
        t0.receive(f, 1)
    assert t0.expected() == tbl.Step("game_end", 3) and t0.turns.end_signed_by_majority()
    assert not t0.turns.end_without(2) and not t0.flow.finished, "seat 2 is not the awaited seat"
    assert t0.absent(1) == [] and not t0.flow.finished
    outs = t0.absent(3)
    assert t0.flow.finished and t0.turns.unsigned_end == (3,) and t0.flow.fault is None
    assert not [o for o in outs if isinstance(o, tbl.Send)], "it signs nothing"


# ------------------------------------------------------------------ blocking the end


def test_the_median_seat_withholding_its_game_end_stalls_the_end_blaming_nobody():
    """HELD (as documented: "The game's end", the seat at the median). Four seats: seats 0 and
    1 signed ``game_end``; seat 2, a sore loser, withholds its own. Two ends of four are no
    majority, and removing seat 2 would make the signers and it a majority (rule 5): so the
    others can neither end the game nor remove it. They wait (the node's note "end"), sign
    nothing, and after ``stall_limit`` stop blaming nobody; the record is ``incomplete``,
    naming the seat it waits for. One seat can thus keep a game from ending: the price of a
    game's end that is settled once."""
    net = _at_end(4)
    g1 = _game_end(net, 1)
    for j in (0, 2, 3):
        net.handle(j, net.tables[j].receive(g1, 1))
    net.kill(1)  # (seat 1 is done; the cheat is seat 2)
    assert net.run(lambda nn: not nn.q)
    net.kill(2)
    for s in (0, 3):
        t = net.tables[s]
        assert t.expected() == tbl.Step("game_end", 2) and t.turns.game_end_sigs == {0, 1}
        assert not t.removal.can_remove(2) and not t.turns.end_signed_by_majority()
        problem = t.removal.end_problem(2)
        assert problem is not None and "signed the game's end" in problem
        assert t.absent(2) == [] and not t.flow.finished and not t.removal.votes_for(2)
        outs = t.halt("no majority")
        assert t.flow.fault is not None and t.flow.fault.seat is None and t.flow.fault.rule == "stalled"
        assert not [o for o in outs if isinstance(o, tbl.Send)]
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "incomplete" and "seat 2 was to send game_end" in r.summary(), r.summary()


# ------------------------------------------------------------------ audit A B: cut_off


def test_a_forged_remove_beside_a_cut_off_record_is_not_agreement(tmp_path):
    """HELD. ``_removed_parting`` checks structure only: seat 0 removes seat 1 at the index
    where seat 1's own record holds its ``game_end``, with its own vote alone as proof (no
    majority: a forged removal). The pair is classified ``cut_off``, but seat 0's file is its
    own audit's ``cheat`` (bad_removal, seat 0), so ``audit A B`` exits 1: the classification
    relies on each file's own audit, and ``MultiReport.exit_code`` is 1 for a bad file."""
    net = _at_end(4)
    t0 = net.tables[0]
    prefix = list(t0.chain.frames)
    lone = prefix + [_game_end(net, 1)]
    vote = net.craft(0, "away", {"seat": 1, "hand": t0.hand.hand_no})
    forged = prefix + [net.craft(0, "remove", {"seat": 1, "hand": t0.hand.hand_no, "reason": "absent", "proof": [vote]})]
    part = compare_loaded(loaded(lone), loaded(forged))
    assert part.verdict == "cut_off", part
    m = audit_files([_write(tmp_path, "lone.chn", lone), _write(tmp_path, "forged.chn", forged)])
    bad = m.reports[1]
    assert bad.verdict == "cheat" and bad.seat == 0 and bad.rule == "bad_removal", bad.summary()
    assert m.exit_code == 1


def test_a_seat_that_cosigns_the_removal_and_signs_on_the_cut_off_side_is_named(tmp_path):
    """HELD. Seat 1 is cut off after signing its ``game_end``; seat 2, a cheat, co-signs
    seat 1's removal with the others and also signs its own ``game_end`` after seat 1's on
    seat 1's branch (three ends of four there: that record says ``ok``). Compared, the pair is
    no ``cut_off`` (seat 2 is not removed, and signed both continuations): a ``fork`` naming
    seat 2, exit 1."""
    net = _at_end(4)
    prefix = list(net.tables[0].chain.frames)
    g1 = _game_end(net, 1)
    lone = prefix + [g1, _game_end(net, 2, after=g1)]
    assert audit_frames(lone).verdict == "ok"
    others = _remove_seat_1(net)
    assert 2 in {e.seat for e in wire_envs(others[len(prefix):]) if e.kind == "remove"}
    part = compare_loaded(loaded(lone), loaded(others))
    assert part.verdict == "fork" and part.seats == [2], part
    m = audit_files([_write(tmp_path, "lone.chn", lone), _write(tmp_path, "others.chn", others)])
    assert m.verdict == "fork" and m.exit_code == 1


def wire_envs(frames: list[bytes]) -> list:
    return [wire.decode_envelope(f) for f in frames]


def test_two_honest_seats_cut_off_at_the_end_of_five_are_no_fork(tmp_path):
    """FIXED (the classification; the liveness cost stays, documented). Five seats; seat 0
    signed ``game_end``; seats 1 and 2 are cut off
    together, each signing its ``game_end`` (their record: three ends of five, a majority:
    ``ok``). The other three (a majority) remove seat 1 (rule 5: seat 0's end, seat 1: two of
    five), then wait for seat 2's ``remove`` of it: seat 2 is gone too, but its removal would
    make three of five (rule 5), so it never comes; after the cut heals seat 2 has finished
    and never signs it either: the majority's table is stuck for good (``stall_limit``), its
    record ``incomplete``. Only one record ends the game (safety holds), but the docs'
    argument ("the other record's envelopes after i are signed only by seats the first
    removes") failed here: seat 2 signs on the cut-off side without being removed, and
    ``audit A B`` of two honest records said ``fork`` with nobody named, exit 1. Now: the
    majority's continuation is only its unfinished removes for 'absent', no seat signed both:
    ``cut_off``, and the pair agrees, the cut-off pair's record complete (exit 0). A cheat
    seat 2 that co-signed there would be named (see the co-signer test)."""
    net = _at_end(5)
    prefix = list(net.tables[0].chain.frames)
    g1 = _game_end(net, 1)
    lone = prefix + [g1, _game_end(net, 2, after=g1)]
    r = audit_frames(lone)
    assert r.verdict == "ok" and "not by seat 3, 4" in r.summary(), r.summary()
    net.kill(1)
    net.kill(2)
    net.declare_absent(1)
    assert net.run(lambda nn: not nn.q)
    net.declare_absent(2)
    assert net.run(lambda nn: not nn.q)
    t0 = net.tables[0]
    assert t0.expected() == tbl.Step("remove", 2) and t0.removal.removing_seat == 1
    assert not t0.removal.can_remove(2) and not t0.flow.finished, "the majority is stuck"
    others = list(t0.chain.frames)
    assert audit_frames(others).verdict == "incomplete"
    part = compare_loaded(loaded(lone), loaded(others))
    assert part.verdict == "cut_off" and part.seats == [] and "unfinished" in part.detail, part
    m = audit_files([_write(tmp_path, "lone.chn", lone), _write(tmp_path, "others.chn", others)])
    assert m.verdict == "agree" and [x.verdict for x in m.reports] == ["ok", "incomplete"] and m.exit_code == 0
    # a continuation that goes on past the unfinished removal is no such parting: a fork
    forged = others + [_after(net, 3, "game_end", {"winner": t0.flow.winner, "digest": wire.decode_envelope(
        others[-1]).hash()}, others[-1])]
    assert compare_loaded(loaded(lone), loaded(forged)).verdict == "fork"


# ------------------------------------------------------------------ the two verifiers


def test_both_verifiers_agree_on_crafted_ends(tmp_path):
    """HELD. Crafted four-seat transcripts around the game's end, judged by ``audit`` and by the
    independent conformance verifier: the same verdict each time. An eliminated seat's chained
    ``leave`` (unsigned: its ``game_end`` is not owed; signed: its end no longer counts, and it
    still counts in rule 5's E); rule 5 against a remove after a majority's ends, at the
    median, and after a signer left; a legitimate early removal; a fault after a majority's
    ends (the table stopped: not ``ok``)."""
    net = _at_end(4)
    t0 = net.tables[0]
    hand, winner, prefix = t0.hand.hand_no, t0.flow.winner, list(t0.chain.frames)
    g1 = _game_end(net, 1)
    g2 = _game_end(net, 2, after=g1)

    def votes(after: bytes, x: int, voters) -> list[bytes]:
        e = wire.decode_envelope(after)
        return [net.craft(s, "away", {"seat": x, "hand": hand}, seq=e.seq + 1, prev=e.hash()) for s in voters]

    def remove(signer: int, x: int, proof: list[bytes], after: bytes) -> bytes:
        return _after(net, signer, "remove", {"seat": x, "hand": hand, "reason": "absent", "proof": proof}, after)

    leave2 = _after(net, 2, "leave", {"reason": "home"}, prefix[-1])
    leave0 = _after(net, 0, "leave", {"reason": "home"}, prefix[-1])
    leave1 = _after(net, 1, "leave", {"reason": "home"}, g1)
    cases = {
        "unsigned leaver, then a majority": ([leave2, _after(net, 1, "game_end", {
            "winner": winner, "digest": wire.decode_envelope(leave2).hash()}, leave2)], "ok"),
        "a signer left, then a majority of those in": ([g1, leave1, _after(net, 2, "game_end", {
            "winner": winner, "digest": wire.decode_envelope(leave1).hash()}, leave1)], "ok"),
        "a signer left: no majority of those in": ([g1, leave1], "incomplete"),
        "remove after a majority": ([g1, g2, remove(0, 3, votes(g2, 3, [0, 1, 2]), g2)], "cheat"),
        "remove at the median": ([g1, remove(0, 2, votes(g1, 2, [0, 1, 3]), g1)], "cheat"),
        "remove once a signer left": ([leave0, remove(2, 1, votes(leave0, 1, [2, 3]) + [leave0], leave0)], "cheat"),
        "an early removal": ([remove(0, 1, votes(prefix[-1], 1, [0, 2, 3]), prefix[-1])], "incomplete"),
    }
    for name, (tail, want) in cases.items():
        frames = prefix + tail
        r = audit_frames(frames)
        code, text = _conformance(tmp_path, frames)
        assert r.verdict == want, (name, r.summary())
        assert text.split(":")[0] == want and code == (0 if want == "ok" else 1), (name, text)
        if want == "cheat":
            assert r.rule == "bad_removal" and "signed the game's end" in r.detail, (name, r.detail)
            assert "signed the game's end" in text, (name, text)


def test_an_eliminated_seat_that_goes_home_at_the_median_stalls_the_others(tmp_path):
    """HELD as documented, a liveness cost of rule 5 (not only a cheat's: a person who closes
    the game). Four seats: seats 0 and 1 signed ``game_end``; seat 2, eliminated, leaves before
    signing its own. Its ``leave`` is not chained by the others (a seat the game can go on
    without), and its removal for 'left' is forbidden like any (rule 5: a leave's place is not
    bound to the remove's, so it does not prove that no record holds its ``game_end``): they
    wait, signing nothing, and stop after ``stall_limit``. The leaver's own record (its
    ``leave`` chained: two ends of the three seats still in the game) ends the game; the
    others' is a prefix of it, so ``audit A B`` agrees with one complete record."""
    net = _at_end(4)
    g1 = _game_end(net, 1)
    for j in (0, 2, 3):
        net.handle(j, net.tables[j].receive(g1, 1))
    net.kill(1)
    assert net.run(lambda nn: not nn.q)
    assert 2 not in game_of(net.tables[0]).active
    net.handle(2, net.tables[2].intent(v.Leave("going home")))
    leaver = list(net.tables[2].chain.frames)
    assert net.run(lambda nn: not nn.q)
    net.kill(2)
    for s in (0, 3):
        t = net.tables[s]
        assert 2 in t.removal.leaves and 2 in t.removal.gone and not t.removal.removed
        assert t.expected() == tbl.Step("game_end", 2) and not t.removal.can_remove(2)
        assert t.absent(2) == [] and not t.flow.finished and t.flow.fault is None
    others = list(net.tables[0].chain.frames)
    assert leaver[:-1] == others and wire.decode_envelope(leaver[-1]).kind == "leave"
    assert audit_frames(leaver).verdict == "ok" and audit_frames(others).verdict == "incomplete"
    m = audit_files([_write(tmp_path, "leaver.chn", leaver), _write(tmp_path, "others.chn", others)])
    assert m.partings[0].verdict == "shorter" and m.exit_code == 0, m.summary()
