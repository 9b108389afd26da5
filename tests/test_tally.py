"""Issue 24, item 6: an evening's running tally among the same fingerprints, kept locally:
each game recorded once (whichever seat process reports it), summed per evening and set of
players, printed with the exit summary from the second game on."""

from __future__ import annotations

import io
from types import SimpleNamespace

from p2p_chinchon.commands import _common as C
from p2p_chinchon.commands import tally as T

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
