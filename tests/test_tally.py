"""An evening's running tally among the same fingerprints, kept locally:
each game recorded once (whichever seat process reports it), summed per evening and set of
players, printed with the exit summary from the second game on."""

from __future__ import annotations

import io
import time
from types import SimpleNamespace

from p2p_chinchon.commands import _common as C, tally as T

FPS = ["AAAA-1111", "BBBB-2222"]


def test_games_are_counted_once_per_evening_and_players(tmp_path):
    path = tmp_path / "evening.json"
    assert T.record(path, "g1", 1000.0, FPS, ["Ana", "Bruno"], [40, 101], 0)
    assert not T.record(path, "g1", 1001.0, FPS, ["Ana", "Bruno"], [40, 101], 0)  # the same game
    T.record(path, "g2", 2000.0, FPS[::-1], ["Bruno", "Ana"], [20, 105], 0)  # seats swapped
    T.record(path, "g3", 2500.0, FPS + ["CCCC-3333"], ["Ana", "Bruno", "Carla"], [1, 2, 3], 2)
    T.record(path, "old", 1000.0 - T.EVENING - 1, FPS, ["Ana", "Bruno"], [0, 200], 0)
    got = T.evening(path, FPS, now=3000.0)
    assert [(s.name, s.games, s.wins, s.points) for s in got] == [("Bruno", 2, 1, 121), ("Ana", 2, 1, 145)]  # fewer points first
    assert T.evening(path, ["ZZZZ-0000", "AAAA-1111"], now=3000.0) == []


def test_the_exit_summary_prints_the_evening_from_the_second_game(tmp_path, monkeypatch):
    monkeypatch.setattr(T, "tally_path", lambda: tmp_path / "evening.json")
    results = iter([("g1", 0), ("g2", 1)])

    def fake_after_game(result):
        game, winner = next(results)
        T.record(T.tally_path(), game, 100.0, FPS, ["Ana", "Bruno"], [10, 20], winner)
        return T.evening(T.tally_path(), FPS, now=200.0)

    monkeypatch.setattr(T, "after_game", fake_after_game)
    out = io.StringIO()
    C.print_tally(SimpleNamespace(), out=out, lang="en")
    assert out.getvalue() == ""  # one game is no evening yet
    C.print_tally(SimpleNamespace(), out=out, lang="en")
    assert out.getvalue().strip() == "tonight, 2 games: Ana 1 won (20 points), Bruno 1 won (40 points)"


def test_the_score_sheet_shows_tonight_among_these_players(tmp_path, monkeypatch):
    """The running tally on the score sheet (l): wins / games of this
    evening's earlier games among the seats' keys."""
    from harness.ui_fakes import showdown_view
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    view = showdown_view()
    fps = [s.fingerprint for s in view.seats]
    monkeypatch.setattr(T, "tally_path", lambda: tmp_path / "evening.json")
    T.record(T.tally_path(), "g1", 100.0, fps, ["Ana", "Ben", "Carla"], [10, 20, 101], 0)
    T.record(T.tally_path(), "g2", 150.0, fps, ["Ana", "Ben", "Carla"], [10, 20, 101], 1)
    monkeypatch.setattr(time, "time", lambda: 200.0)
    s = TableScreen(Translator("en"), Faces())
    s.evening = T.wins_tonight
    rows = [r.rstrip() for r in map(lambda line: "".join(t for _, t in line), s.score_lines(80, view=view))]
    tonight = next(r for r in rows if r.startswith("tonight "))
    assert tonight.split()[1:] == ["1/2", "1/2", "0/2"], rows
    assert any("games won / played this evening" in r for r in rows)
    s2 = TableScreen(Translator("en"), Faces())  # no tally given: no row
    assert not any(r.startswith("tonight") for r in
                   ("".join(t for _, t in line) for line in s2.score_lines(80, view=view)))


def test_the_score_sheet_says_who_is_near_the_limit_and_may_buy_back_in():
    """Who is near the limit or may buy back in."""
    import dataclasses

    from harness.ui_fakes import draw_view, seats
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    view = dataclasses.replace(draw_view(), seats=seats((12, 85, 95)), score_history=((12, 85, 95),))
    s = TableScreen(Translator("en"), Faces())
    text = "\n".join("".join(t for _, t in line) for line in s.score_lines(100, view=view))
    assert "Ben is 15 points from the limit (100): going over, they may buy back in." in text, text
    assert "Carla is 5 points from the limit (100): going over, they may buy back in." in text
    assert "Ana is" not in text
    used = tuple(dataclasses.replace(x, reentries_used=1) if x.seat == 2 else x for x in view.seats)
    text = "\n".join("".join(t for _, t in line)
                     for line in s.score_lines(100, view=dataclasses.replace(view, seats=used)))
    assert "Carla is 5 points from the limit (100): a bust is out for good." in text


def test_two_play_games_in_an_evening_add_up(tmp_path):
    """As a person runs it: `play` twice (line mode; the turn clock plays for
    the person); play's bot peers keep their keys between games, so the second game's exit
    summary gives the evening among the same players."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "p2p_chinchon", "play", "--lines", "--bots", "1", "--proof-rounds", "4",
           "--option", "limit=5", "--option", "turn_time=1", "--option", "showdown_time=0", "--name", "Ana",
           # any hand may close from its second round: each of Ana's moves waits out her 1 s clock
           "--option", "close_max_points=1000", "--option", "close_max_unmatched=7"]
    import threading

    outs = []
    for seed in ("1", "2"):
        # stdin stays open until the game ends (EOF would mean leave); the rematch question at
        # game over is answered no (each game here is its own `play`)
        p = subprocess.Popen([*cmd, "--seed", seed, "--lang", "en"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        lines: list[str] = []

        def read(p=p, lines=lines) -> None:
            for raw in p.stdout:
                lines.append(raw.decode(errors="replace"))
                if "Rematch: same players" in lines[-1]:
                    p.stdin.write(b"n\n")
                    p.stdin.flush()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            p.wait(timeout=300)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            reader.join(5)
            assert p.stdin is not None and p.stdout is not None
            p.stdin.close()
            p.stdout.close()
        outs.append("".join(lines))
        assert "you declined the rematch" in outs[-1], outs[-1][-2000:]
        assert p.returncode == 0 and "winner:" in outs[-1], outs[-1][-3000:]
    assert "tonight" not in outs[0]
    assert "tonight, 2 games: " in outs[1], outs[1][-2000:]
