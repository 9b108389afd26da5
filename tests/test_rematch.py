"""A rematch at game over (same seats, same rules, a new game id; everyone
agrees; a no ends it cleanly with a message), and the evening's tally counts it."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any, cast

import trio
import trio.testing

from harness import free_port
from p2p_chinchon.commands import _common as C
from p2p_chinchon.table import Table
from p2p_chinchon.transcript import load_transcript


def test_host_and_joiner_play_a_rematch_then_one_says_no(tmp_path):
    """Two real nodes (``host`` and ``join`` processes, bot seats): the host's bot says yes to one
    rematch then no, the joiner's to any. Game 2 is a new game (new id, new shuffles) among the
    same keys under the same rules; after game 2 the host's no ends the evening on both sides,
    each exiting 0 with the message."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               PYTHONUNBUFFERED="1")
    port = free_port()
    common = ["--bot", "--lang", "en"]
    # each seat's output to a file: a pipe nobody reads while the other seat is waited for
    # fills (64 KiB, two games of moves) and blocks its writer, and with it the whole table
    logs = {who: (tmp_path / f"{who}.log").open("wb") for who in ("ana", "bruno")}
    host = subprocess.Popen(
        [sys.executable, "-m", "p2p_chinchon", "host", *common, "--seats", "2", "--no-mdns", "--port", str(port),
         "--bind", "127.0.0.1", "--proof-rounds", "4", "--name", "Ana", "--seed", "3", "--rematch", "1",
         "--transcript", str(tmp_path / "ana.chn")],
        stdout=logs["ana"], stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    join = subprocess.Popen(
        [sys.executable, "-m", "p2p_chinchon", "join", *common, "--connect", f"127.0.0.1:{port}", "--bind",
         "127.0.0.1", "--min-proof-rounds", "4", "--name", "Bruno", "--seed", "4", "--rematch",
         "--transcript", str(tmp_path / "bruno.chn")],
        stdout=logs["bruno"], stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    try:
        host.wait(timeout=150)
        join.wait(timeout=30)
    finally:
        for p in (host, join):
            if p.poll() is None:
                p.kill()
                p.wait()
        for f in logs.values():
            f.close()
    out_h, out_j = ((tmp_path / f"{who}.log").read_text(errors="replace") for who in ("ana", "bruno"))
    assert host.returncode == 0 and join.returncode == 0, (out_h[-2000:], out_j[-2000:])
    assert out_h.count("everyone agreed: a rematch") == 1 and out_j.count("everyone agreed: a rematch") == 1
    assert "you declined the rematch" in out_h, out_h[-2000:]
    assert "Ana declined the rematch" in out_j, out_j[-2000:]
    assert not (tmp_path / "ana-3.chn").exists()
    games = {}
    for who in ("ana", "bruno"):
        for name in (f"{who}.chn", f"{who}-2.chn"):
            t = load_transcript(tmp_path / name)
            assert not t.errors and t.envelopes[-1].kind == "game_end", name
            games[name] = t.envelopes
    g1, g2 = games["ana.chn"], games["ana-2.chn"]
    assert [e.game for e in g1] == [e.game for e in games["bruno.chn"]]
    assert g2[0].game == games["bruno-2.chn"][0].game != g1[0].game  # both seats played the one new game
    assert g1[0].body["rules"] == g2[0].body["rules"]  # the same rules
    seated = [next(e for e in g if e.kind == "seating").body["players"] for g in (g1, g2)]
    assert sorted(p["key"] for p in seated[0]) == sorted(p["key"] for p in seated[1])  # the same players
    shuffles = [[e.body for e in g if e.kind == "shuffle"] for g in (g1, g2)]
    assert shuffles[0] and shuffles[1] and shuffles[0][0] != shuffles[1][0]  # nothing replayed
    from p2p_chinchon.audit import audit_file

    assert audit_file(tmp_path / "bruno-2.chn").verdict == "ok"


def test_the_evening_records_each_game_of_a_rematch(monkeypatch):
    """play_evening records every finished game of a person's seat in the tally as it ends
    (the exit summary records the last), and stops at the first game without a rematch."""
    recorded = []

    def after_game(r):
        recorded.append(r.n)
        return []

    monkeypatch.setattr("p2p_chinchon.commands.tally.after_game", after_game)
    glue = C.SeatGlue(None, bot=True, rematch=2)
    results = [SimpleNamespace(n=1, rematch=True), SimpleNamespace(n=2, rematch=True),
               SimpleNamespace(n=3, rematch=False), SimpleNamespace(n=4, rematch=False)]
    seen = []

    async def game(n, last):
        seen.append((n, last))
        glue.on_table(f"table{n}")
        return results[n - 1]

    async def main():
        return await C.play_evening(game, True, glue)

    last = trio.run(main)
    assert last.n == 3 and recorded == [1, 2]
    assert seen == [(1, None), (2, "table1"), (3, "table2")]

    async def answers():
        return [await glue.ask_rematch() for _ in range(3)]

    assert glue.offers_rematch() and trio.run(answers) == [True, True, False]  # a bot: yes N times, then no
    assert not C.SeatGlue(None, bot=True).offers_rematch()  # no rematch offered: no vote at all


def test_a_rematch_offer_must_be_the_same_table():
    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.net.session import same_table

    def stand_in(**fields: Any) -> Table:
        return cast(Table, SimpleNamespace(lobby=SimpleNamespace(**fields)))  # only what same_table reads

    key = b"k" * 32
    old = stand_in(players=[SimpleNamespace(key=key), SimpleNamespace(key=b"j" * 32)],
                   rules=make_rules("classic", {"limit": 5}), proof_rounds=4, game=b"1")
    new = dict(offer_key=key, rules=make_rules("classic", {"limit": 5}), max_seats=2, proof_rounds=4, game=b"2")
    assert same_table(old, stand_in(**new)) is None

    def why(**change: Any) -> str:
        reason = same_table(old, stand_in(**{**new, **change}))
        assert reason is not None
        return reason

    assert "host key" in why(offer_key=b"x" * 32)
    assert "other rules" in why(rules=make_rules("classic", {}))
    assert "other rules" in why(max_seats=3)
    assert "id" in why(game=b"1")


def test_a_rematch_that_cannot_start_leaves_the_last_game_standing(capsys):
    glue = C.SeatGlue(None, bot=True, rematch=1)
    first = SimpleNamespace(n=1, rematch=True)

    async def game(n, last):
        glue.on_table("table")
        if n == 2:
            raise OSError("Connection refused")
        return first

    assert trio.run(C.play_evening, game, False, glue) is first
    assert "the rematch could not start: Connection refused" in capsys.readouterr().err


class _Mesh:
    def __init__(self):
        self.sent = []

    async def send(self, seat, payload):
        self.sent.append((seat, payload))
        return True


def _voting_node(answer, votes=None, up=(1, 2)):
    """A finished three-seat node (seat 0) whose player answers ``answer``."""
    from p2p_chinchon.net.node import Events, Node

    said = []

    class Ev(Events):
        def offers_rematch(self):
            return True

        async def rematch(self, view):
            if answer == "never":
                await trio.sleep_forever()
            return answer

        def rematch_said(self, text, key, fields):
            said.append(key)

    table = SimpleNamespace(lobby=SimpleNamespace(me=0, players=[SimpleNamespace(name=n) for n in ("Ana", "Bruno", "Carla")]),
                            flow=SimpleNamespace(left=set()), view=lambda: None)
    node = Node(cast(Table, table), Ev())  # a stand-in: what the rematch vote reads
    node.presence.up = set(up)
    node._votes = dict(votes or {})
    return node, said


def test_the_rematch_vote_needs_every_seat_and_says_why_not():
    """The node's vote (MockClock): all yes is a rematch; a no, a seat whose link closed, or the
    time running out ends it with the reason; the player's own answer goes to every seat."""
    from p2p_chinchon.net.node import REMATCH, REMATCH_WAIT

    async def vote(answer, votes=None, up=(1, 2), late=None):
        node, said = _voting_node(answer, votes, up)
        mesh = _Mesh()
        async with trio.open_nursery() as n:
            if late is not None:
                async def arrive():
                    await trio.sleep(5)
                    late(node)
                n.start_soon(arrive)
            got = await node._rematch(mesh)
        return got, said, mesh.sent

    async def main():
        got, said, sent = await vote(True, {1: True}, late=lambda node: node._votes.update({2: True}))
        assert got is True and said == ["rematch_on"] and sent == [(1, REMATCH + b"\x01"), (2, REMATCH + b"\x01")]
        got, said, _ = await vote("never", {1: True}, late=lambda node: node._votes.update({2: False}))
        assert got is False and said == ["rematch_declined"]  # the open question is withdrawn
        got, said, _ = await vote("never", {1: True}, late=lambda node: node.presence.up.discard(2))
        assert got is False and said == ["rematch_gone"]
        got, said, sent = await vote(False, {1: True, 2: True})
        assert got is False and said == ["rematch_you_no"] and sent[0] == (1, REMATCH + b"\x00")
        from p2p_chinchon.net.node import Events

        for why, byte, key in (("resumed", b"\x02", "rematch_none"), ("code", b"\x03", "rematch_none_code"),
                               ("one_game", b"\x04", "rematch_none_one")):
            quiet, quiet_said = _voting_node(True)
            quiet.events.offers_rematch = lambda: False  # a seat whose command cannot play one says so, and why
            quiet.events.no_rematch = lambda why=why: why
            mesh = _Mesh()
            assert await quiet._rematch(mesh) is False and quiet_said == []
            assert mesh.sent == [(1, REMATCH + byte), (2, REMATCH + byte)]
            # ... and the others name that reason, not "left" (a seat back after kill -9 was called
            # gone), nor another (a bot seat was said to have come back after a crash)
            got, said, _ = await vote(True, {1: True}, late=lambda node, byte=byte: node.take_vote(2, byte))
            assert got is False and said == [key], (why, said)
        got, said, _ = await vote(True, {1: True}, late=lambda node: node.take_vote(2, b"\x09"))
        assert got is False and said == ["rematch_declined"]  # an unknown byte is a no
        assert Events().no_rematch() == "one_game"
        assert Events().offers_rematch() is False
        start = trio.current_time()
        got, said, _ = await vote("never", {1: True})
        assert got is False and said == ["rematch_timeout"] and trio.current_time() - start >= REMATCH_WAIT

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


def test_a_rematch_starts_a_clean_screen():
    """The full screen and line mode keep nothing of the last game into the rematch: who went
    out when, the last showdown, the pile's history (the line mode printed no log of game 2,
    its count started again below game 1's, and the sheet listed game 1's busts)."""
    from harness.ui_fakes import draw_view, lobby, seats, showdown_view
    from p2p_chinchon import view as V
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    s = TableScreen(Translator("en"), Faces())
    s.set_view(draw_view(hand_no=1))
    s.set_view(showdown_view(phase=V.OVER, winner=2))
    assert s.marks and s.shown is not None
    s.set_view(lobby())
    assert s.marks == [] and s.shown is None and s.pile == []
    s.set_view(draw_view(hand_no=0, seats=seats((0, 0, 0)), score_history=()))
    assert "out at" not in s.render_text(80, 24)


def test_the_final_screen_keeps_how_the_rematch_vote_ended():
    from harness.ui_fakes import showdown_view
    from p2p_chinchon import view as V
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    tr = Translator("fr")
    s = TableScreen(tr, Faces())
    s.set_view(showdown_view(phase=V.OVER, winner=2))
    s.noticed(tr("rematch_declined", name="Carla"))
    s.node_done(tr("game_finished"))
    text = s.render_text(80, 24)
    assert "Carla refuse la revanche" in text and "La session est terminée." in text


def test_the_rematch_question_waits_for_the_held_showdown_and_l_recalls_it():
    """The game's last showdown is held on screen: the rematch question comes once it is put
    away (never hiding it), and l at the question shows it again, then the question."""
    from harness.ui_fakes import draw_view, showdown_view
    from p2p_chinchon import view as V
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    tr = Translator("en")
    s = TableScreen(tr, Faces())
    s.set_view(draw_view())
    s.set_view(showdown_view(phase=V.HAND_OVER))  # held (showdown_time)
    s.set_view(showdown_view(phase=V.OVER, winner=2))
    answers: list[Any] = []
    s.start_ask(tr("rematch_ask"), answers.append)
    assert s.holding() and "as shown:" in s.render_text(80, 24) and "Rematch" not in s.render_text(80, 24)
    s.key("x")  # puts the showdown away: now the question
    assert "Rematch: same players" in s.render_text(80, 24) and answers == []
    s.key("l")
    assert "as shown:" in s.render_text(80, 24)
    s.key("x")
    assert "Rematch: same players" in s.render_text(80, 24)
    s.key("y")
    assert answers == [True]


def test_after_answering_the_rematch_the_screen_says_whom_it_waits_for():
    """Never a silent wait: once this seat answered, the status names who has not answered
    and how long is left; it is cleared when the vote ends."""
    from p2p_chinchon.net.node import REMATCH_WAIT

    async def main():
        node, said = _voting_node(True, {1: True})
        statuses = []
        node.events.status = lambda status: statuses.append(status.text())
        async with trio.open_nursery() as n:
            async def arrive():
                await trio.sleep(5)
                node._votes[2] = True
            n.start_soon(arrive)
            assert await node._rematch(_Mesh()) is True
        assert statuses[0] == f"rematch: waiting for Carla to answer ({int(REMATCH_WAIT // 60)}:00)", statuses
        assert statuses[-1] == ""

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
