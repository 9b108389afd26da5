"""``audit A B ...``: several seats' transcripts of one game checked
together: their common prefix, where they part, and whether that is a fork (two different
continuations signed under one game id, naming the seats that signed both) or one record
being shorter."""

from __future__ import annotations

import json

import pytest

from harness import Net, step_of
from harness.cut_off import cut_cases, cut_off_at
from p2p_chinchon import cli, table as tbl, wire
from p2p_chinchon.audit import audit_files


@pytest.fixture(scope="module")
def split():
    """A three-seat game's first 70 envelopes, and a second record that parts from it at a
    move: the mover signed another version of it, and the next seat signed an answer to that
    version too."""
    net = Net(3, seed=5)
    assert net.run(lambda n: len(n.tables[0].chain.envelopes) >= 70)
    frames = list(net.tables[0].chain.frames)[:70]
    envs = [wire.decode_envelope(f) for f in frames]
    i = next(j for j in range(40, 70) if envs[j].kind == "draw" and envs[j + 1].seat != envs[j].seat)
    a, b = envs[i], envs[i + 1]
    other = {"source": "discard" if a.body["source"] == "stock" else "stock"}
    alt = wire.make_envelope(net.ids[a.seat].private_key, game=a.game, seq=a.seq, seat=a.seat, prev=a.prev,
                             kind=a.kind, body={**a.body, **other})
    answer = wire.make_envelope(net.ids[b.seat].private_key, game=b.game, seq=b.seq, seat=b.seat, prev=alt.hash(),
                                kind=b.kind, body=b.body)
    return frames, frames[:i] + [alt.encode(), answer.encode()], i, sorted({a.seat, b.seat})


def _write(tmp_path, name, frames):
    path = tmp_path / name
    path.write_bytes(b"".join(frames))
    return path


def test_a_fork_across_two_files_is_named(split, tmp_path, capsys):
    frames, forked, i, seats = split
    a, b = _write(tmp_path, "a.chn", frames), _write(tmp_path, "b.chn", forked)
    m = audit_files([a, b])
    assert [p.verdict for p in m.partings] == ["fork"] and m.verdict == "fork" and m.exit_code == 1
    part = m.partings[0]
    assert (part.common, part.at, part.seats) == (i, i, seats), part
    assert cli.main(["audit", "--json", str(a), str(b)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "fork" and out["partings"][0]["seats"] == seats and not out["complete"]
    assert [f["path"] for f in out["files"]] == [str(a), str(b)]
    assert cli.main(["audit", str(b), str(a)]) == 1
    assert "FORK" in capsys.readouterr().out


def test_a_shorter_record_is_not_a_fork(split, tmp_path):
    frames, _, i, _ = split
    a, b = _write(tmp_path, "a.chn", frames), _write(tmp_path, "b.chn", frames[:i])
    m = audit_files([a, b, a])
    assert [(p.files, p.verdict, p.common) for p in m.partings] == [
        ([0, 1], "shorter", i), ([0, 2], "same", len(frames)), ([1, 2], "shorter", i)]
    assert m.verdict == "agree" and m.exit_code == 3  # valid, and neither record is a whole game


def test_a_damaged_envelope_where_they_part_blames_nobody(split, tmp_path):
    frames, forked, i, _ = split
    bad = bytearray(forked[i])
    bad[-2] ^= 1  # the signature no longer verifies
    m = audit_files([_write(tmp_path, "a.chn", frames), _write(tmp_path, "b.chn", forked[:i] + [bytes(bad)])])
    assert [(p.verdict, p.at, p.seats) for p in m.partings] == [("damaged", i, [])]


def test_a_leavers_own_record_is_not_a_fork(tmp_path):
    """A seat leaves mid-game: its own record ends with its ``leave``, the others' remove it
    for 'left' with that leave as proof and play on. Compared, the records are one game (the
    leaver's stops earlier), not a fork: a newcomer's `play` then `q` audited as FORK, exit 1."""
    from harness import Gone
    from p2p_chinchon import view as v

    net = Gone(3, seed=8)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    leaver = step_of(net.tables[0]).seat
    net.handle(leaver, net.tables[leaver].intent(v.Leave("going home")))
    net.kill(leaver)
    assert net.run()
    other = next(t for t in net.alive())
    a = _write(tmp_path, "leaver.chn", net.tables[leaver].chain.frames)
    b = _write(tmp_path, "other.chn", other.chain.frames)
    m = audit_files([a, b])
    assert [p.verdict for p in m.partings] == ["shorter"], m.partings
    assert "own leave" in m.partings[0].detail and m.verdict != "fork"


def test_a_whole_game_with_a_shorter_record_beside_it_is_complete(tmp_path, capsys):
    """One complete, valid record and a seat's shorter one (a crash or a removal stopped it
    earlier) that agrees with it: the game is proven, exit 0 (it was 3, "stops before the
    end", because one of the files did); two shorter records alone stay exit 3."""
    net = Net(3, seed=6)
    assert net.run() and all(t.flow.finished for t in net.tables)
    frames = list(net.tables[0].chain.frames)
    whole, part = _write(tmp_path, "whole.chn", frames), _write(tmp_path, "part.chn", frames[:len(frames) // 2])
    m = audit_files([part, whole])
    assert m.verdict == "agree" and [r.exit_code for r in m.reports] == [3, 0] and m.exit_code == 0
    assert cli.main(["audit", "--json", str(part), str(whole)]) == 0
    assert json.loads(capsys.readouterr().out)["complete"] is True
    assert audit_files([part, _write(tmp_path, "less.chn", frames[:10])]).exit_code == 3


def _leave_together(net, seats, reason="going home"):
    """``seats`` each sign a leave before any of them hears another's (pressed q about at
    once): each record ends with its own leave at the same index. What they sent still
    reaches the seats that stay."""
    from p2p_chinchon import view as v

    outs = {s: net.tables[s].intent(v.Leave(reason)) for s in seats}
    for s in seats:
        net.kill(s)
    for s, out in outs.items():  # their leaves still reach the seats that stay
        net.q.extend((s, j, o.frame) for o in out if isinstance(o, tbl.Send)
                     for j in range(net.n) if j not in net.dead)


def test_seats_that_leave_one_after_another_are_not_a_fork(tmp_path, split):
    """Three seats press q a few seconds apart, each before hearing the others: each record
    ends with its own leave at one index and none holds another's. That is no fork (nobody
    signed two continuations): it was FORK, "seats that signed both continuations: none",
    exit 1. A real fork beside them is still one."""
    from harness import Gone

    net = Gone(3, seed=9)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    _leave_together(net, [0, 1, 2])
    ends = {len(t.chain.frames) for t in net.tables}
    assert len(ends) == 1 and all(wire.decode_envelope(t.chain.frames[-1]).kind == "leave" for t in net.tables)
    paths = [_write(tmp_path, f"{i}.chn", t.chain.frames) for i, t in enumerate(net.tables)]
    m = audit_files(paths)
    assert [p.verdict for p in m.partings] == ["shorter"] * 3, m.summary()
    assert all("own leave" in p.detail and p.seats == [] for p in m.partings), m.summary()
    assert m.verdict == "agree" and m.exit_code == 3, m.summary()  # valid records, no whole game
    assert cli.main(["audit", *map(str, paths)]) == 3
    frames, forked, _, _ = split  # (another game: its pair is still a fork, the rest is not one game)
    m = audit_files([*paths, _write(tmp_path, "a.chn", frames), _write(tmp_path, "b.chn", forked)])
    assert m.verdict == "fork" and m.exit_code == 1
    assert [p.verdict for p in m.partings if p.files == [3, 4]] == ["fork"]


def test_two_seats_that_leave_at_once_beside_the_seats_that_remove_them(tmp_path):
    """Five seats: two leave at once, the other three remove both for 'left' and play on.
    Every pair of the five records is one game: the leavers' by concurrent leaves, a leaver's
    and a stayer's by the removal with its leave as proof."""
    from harness import Gone

    net = Gone(5, seed=10)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    _leave_together(net, [1, 3])
    assert net.run(lambda n: step_of(n.alive()[0]).kind == "draw" and not n.q)
    assert all(t.flow.fault is None and t.removal.removed == {1: "left", 3: "left"} for t in net.alive())
    paths = [_write(tmp_path, f"{i}.chn", t.chain.frames) for i, t in enumerate(net.tables)]
    m = audit_files(paths)
    verdicts = {tuple(p.files): p.verdict for p in m.partings}
    assert verdicts == {(i, j): "same" if {i, j} <= {0, 2, 4} else "shorter"
                        for i in range(5) for j in range(i + 1, 5)}, m.summary()
    assert "concurrently" in next(p.detail for p in m.partings if p.files == [1, 3])
    assert m.verdict == "agree" and m.exit_code == 3, m.summary()


def test_one_seat_leaving_twice_at_one_index_is_a_fork(tmp_path):
    """Two different leaves of one seat at one index: that seat signed two continuations."""
    from harness import Gone
    from p2p_chinchon import view as v

    net = Gone(3, seed=9)
    assert net.run(lambda n: n.expects("discard")(n) and not n.q)
    t = net.tables[2]
    one = list(t.chain.frames)
    sent = t.intent(v.Leave("a"))[0]
    assert isinstance(sent, tbl.Accepted)  # our own leave, chained
    env = wire.decode_envelope(sent.frame)
    other = wire.make_envelope(net.ids[2].private_key, game=env.game, seq=env.seq, seat=2, prev=env.prev,
                               kind="leave", body={"reason": "b"})
    m = audit_files([_write(tmp_path, "a.chn", t.chain.frames), _write(tmp_path, "b.chn", one + [other.encode()])])
    assert [(p.verdict, p.seats) for p in m.partings] == [("fork", [2])], m.summary()


def test_an_evenings_games_audited_together_are_grouped_by_game(tmp_path, capsys):
    """``audit`` over an evening's files (two games, a rematch): each game's records are
    compared among themselves, not with the other game's ("NOT ONE GAME", exit 1, twelve
    times); the summary and --json name which files are which game."""
    games = []
    for seed in (6, 7):
        net = Net(3, seed=seed)
        assert net.run() and all(t.flow.finished for t in net.tables)
        games.append(list(net.tables[0].chain.frames))
    files = [_write(tmp_path, "g1-a.chn", games[0]), _write(tmp_path, "g2-a.chn", games[1]),
             _write(tmp_path, "g1-b.chn", games[0][:30]), _write(tmp_path, "g2-b.chn", games[1])]
    m = audit_files(files)
    assert [(p.files, p.verdict) for p in m.partings] == [([0, 2], "shorter"), ([1, 3], "same")]
    assert [f for _, f in m.games] == [[0, 2], [1, 3]] and m.verdict == "agree" and m.exit_code == 0
    assert cli.main(["audit", *map(str, files)]) == 0
    out = capsys.readouterr().out
    assert "NOT ONE GAME" not in out and "files 0, 2" in out and "files 1, 3" in out
    # a game of which no file is complete keeps the whole verdict incomplete
    assert audit_files([files[0], files[2], _write(tmp_path, "g2-c.chn", games[1][:20])]).exit_code == 3


def _cut_off_at_a_draw():
    """The seeded three-seat game whose seat to draw first is cut off as it signs its draw
    (harness.cut_off.cut_off_at): the net, that seat, the draw's index."""
    chain, snaps = cut_cases(3)
    at = next(p for p in sorted(snaps) if chain[p][0] == "draw")
    return (*cut_off_at(3, at), at)


def test_a_seat_cut_off_as_it_signed_is_not_a_fork(tmp_path, capsys):
    """Seat 2 signs its move and is cut off before it leaves; seats 0 and 1 remove it there
    with a majority's votes and finish. Compared, the records part at that index, no seat on
    both sides, the lone record holding only seat 2's own envelopes: ``cut_off``, agreeing;
    the game's complete record makes ``audit`` exit 0. If a seat that is not removed had signed
    on the lone side too, it would be a fork."""
    net, seat, at = _cut_off_at_a_draw()
    lone, major = net.tables[seat], net.tables[(seat + 1) % 3]
    assert major.flow.finished and major.removal.removed == {seat: "absent"} and not lone.flow.finished
    a, b = _write(tmp_path, "major.chn", major.chain.frames), _write(tmp_path, "lone.chn", lone.chain.frames)
    m = audit_files([a, b])
    assert [p.verdict for p in m.partings] == ["cut_off"] and m.verdict == "agree" and m.exit_code == 0, m.summary()
    assert m.partings[0].at == at and m.partings[0].seats == []
    assert cli.main(["audit", str(b), str(a)]) == 0
    assert "cut off" in capsys.readouterr().out
    # the same lone record with a further envelope signed by a seat that is not removed: a fork
    other = next(s for s in range(3) if s != seat)
    e = wire.decode_envelope(lone.chain.frames[-1])
    extra = wire.make_envelope(net.ids[other].private_key, game=e.game, seq=e.seq + 1, seat=other, prev=e.hash(),
                               kind="leave", body={"reason": "x"})
    c = _write(tmp_path, "lone2.chn", list(lone.chain.frames) + [extra.encode()])
    m = audit_files([a, c])
    assert [p.verdict for p in m.partings] == ["fork"] and m.exit_code == 1, m.summary()


def test_a_seat_cut_off_before_the_game_is_not_a_fork(tmp_path):
    """Before the first hand: seat 2 signs its step and is cut off; seat 0 stops the table
    with a ``fault`` ``absent`` naming it, and seat 2's record holds its own envelope there.
    Compared: ``cut_off`` (neither goes on: each stopped)."""
    net = Net(3, seed=8)
    assert net.run(lambda n: n.tables[0].flow.engine is not None and not n.q)
    envs = [wire.decode_envelope(f) for f in net.tables[0].chain.frames]
    i = next(j for j, e in enumerate(envs) if e.kind == "toss")
    x, prev = envs[i].seat, envs[i].prev
    fault = net.craft((x + 1) % 3, "fault", {"accused": x, "rule": "absent", "reason": "away", "evidence": []},
                      seq=i, prev=prev)
    frames = list(net.tables[0].chain.frames[:i])
    a = _write(tmp_path, "a.chn", frames + [fault])
    b = _write(tmp_path, "b.chn", frames + [net.tables[0].chain.frames[i]])
    m = audit_files([a, b])
    assert [p.verdict for p in m.partings] == ["cut_off"] and "before the game" in m.partings[0].detail, m.summary()


def test_two_records_that_both_end_the_game_never_agree(tmp_path, monkeypatch):
    """Defence in depth: were two records parting as ``cut_off`` both to end the game (which
    "The game's end" rules out), the comparison says fork, exit 1, not agree."""
    import p2p_chinchon.audit as audit_mod

    net, seat, _ = _cut_off_at_a_draw()
    a = _write(tmp_path, "major.chn", net.tables[(seat + 1) % 3].chain.frames)
    b = _write(tmp_path, "lone.chn", net.tables[seat].chain.frames)
    assert audit_files([a, b]).verdict == "agree"
    monkeypatch.setattr(audit_mod, "audit_file", lambda *args, **kw: audit_mod.AuditReport("ok"))
    m = audit_files([a, b])
    assert m.verdict == "fork" and m.exit_code == 1 and "two ends" in m.partings[0].detail, m.summary()
