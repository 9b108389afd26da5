"""The command line: one line instead of a traceback, Ctrl-C leaves,
`join --list [--json]`, `join` without a terminal, `--name` in every command, `--no-bell`.

Every process runs offline on loopback; waits poll the output with a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

GAME = ["--bots", "1", "--proof-rounds", "4", "--seed", "1", "--option", "limit=20"]


def env_for(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
                XDG_CONFIG_HOME=str(tmp_path / "config"), LANG="C.UTF-8", LC_ALL="C.UTF-8")


def cli(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p2p_chinchon", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, env=env_for(tmp_path))


@pytest.mark.parametrize("addr, said", [
    ("nohost", "is not host:port"),
    ("127.0.0.1:99999", "port must be 1..65535"),
    ("::1:5000", "write IPv6 hosts as [host]:port"),
])
def test_bad_connect_address_is_one_line(tmp_path, addr, said):
    out = cli(tmp_path, "join", "--connect", addr, "--lines")
    assert out.returncode == 2
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("p2p-chinchon join: --connect: address ")
    assert said in out.stderr and "Traceback" not in out.stderr


def test_unknown_host_is_one_line(tmp_path):
    out = cli(tmp_path, "join", "--connect", "nohost.invalid:5000", "--lines")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("p2p-chinchon join: host not found")


def test_join_list_json_and_join_without_a_terminal(tmp_path):
    """Nothing is advertised in the test's network: the list is empty and says so."""
    out = cli(tmp_path, "join", "--list", "--json", "--browse", "0.5")
    assert json.loads(out.stdout) == [] and out.returncode == 1
    out = cli(tmp_path, "join", "--browse", "0.5")  # stdin is a pipe: list and exit
    assert out.returncode == 1 and "no table heard on the LAN" in out.stderr
    assert "Traceback" not in out.stderr


class Proc:
    """A command whose output is read as it comes (to act on what it printed)."""

    def __init__(self, tmp_path: Path, *args: str):
        self.p = subprocess.Popen([sys.executable, "-m", "p2p_chinchon", *args],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env_for(tmp_path))
        self.out: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.out.append(line)

    def wait_for(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.out):
            if time.monotonic() > deadline or self.p.poll() is not None:
                raise AssertionError(f"no {text!r} in:\n{''.join(self.out)}")
            time.sleep(0.05)

    def finish(self) -> tuple[int, str, str]:
        try:
            _, err = self.p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise
        time.sleep(0.1)
        return self.p.returncode, "".join(self.out), err


def test_ctrl_c_in_line_mode_leaves_the_table(tmp_path):
    proc = Proc(tmp_path, "play", "--lines", *GAME)
    proc.wait_for("Your turn: draw stock or draw discard.")
    proc.p.send_signal(signal.SIGINT)
    proc.wait_for("Leaving the table")  # before finish() closes standard input
    code, out, err = proc.finish()
    assert "Traceback" not in err and "Traceback" not in out
    assert "you left the table" in out
    assert code == 0, out + err  # leaving on purpose is a clean exit
    assert "Refused" not in out  # leaving once, not once per way of leaving


def test_ctrl_c_without_ui_is_one_line(tmp_path):
    proc = Proc(tmp_path, "play", "--no-ui", "--bots", "1", "--proof-rounds", "64")
    proc.wait_for("opened")
    proc.p.send_signal(signal.SIGINT)
    code, out, err = proc.finish()
    assert code == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == "p2p-chinchon play: interrupted (Ctrl-C): left"


def test_name_is_the_players_name_in_every_command(tmp_path):
    for command in ("play", "host", "join"):
        out = cli(tmp_path, command, "--help")
        assert "--name" in out.stdout and "--no-bell" in out.stdout, command
    assert "--table-name" in cli(tmp_path, "host", "--help").stdout
    out = cli(tmp_path, "host", "--table-name", "x" * 65, "--no-mdns")
    assert out.returncode == 2 and "--table-name" in out.stderr


def test_audit_summary_marks_outs_and_reentries_and_tracks_them():
    """`audit` says who went out and who re-entered at what total."""
    from types import SimpleNamespace
    from typing import cast

    from p2p_chinchon.audit import AuditReport, Mark, _track
    from p2p_chinchon.table import Table

    marks: list[Mark] = []
    seen: dict = {}
    engine = SimpleNamespace(totals=[12, 104, 49], eliminated=frozenset(), reentries_used=[0, 0, 0])
    t = cast(Table, SimpleNamespace(flow=SimpleNamespace(engine=engine), turns=SimpleNamespace(score_history=[(3, 77, 46), (9, 27, 3)]),
                                    removal=SimpleNamespace(removed={})))  # what _track reads
    _track(t, marks, seen)
    engine.eliminated = frozenset({1})
    _track(t, marks, seen)
    engine.eliminated, engine.reentries_used, engine.totals = frozenset(), [0, 1, 0], [12, 49, 49]
    _track(t, marks, seen)
    assert marks == [{"after_hand": 2, "seat": 1, "event": "out", "total": 104},
                     {"after_hand": 2, "seat": 1, "event": "reentered", "total": 49}]
    r = AuditReport("ok", players=[{"name": n, "fingerprint": "F"} for n in ("Ana", "Ben", "Carla")],
                    scores=[[3, 77, 46], [9, 27, 3]], totals=[12, 49, 49], winner=0, marks=marks)
    text = r.summary()
    assert "  hand 2: Ana +9  Ben +27  Carla +3\n    Ben out at 104\n    Ben re-entered at 49" in text


def test_audit_progress_bar_only_on_a_terminal():
    import io

    from p2p_chinchon.commands.audit import _ProgressBar

    out = io.StringIO()
    bar = _ProgressBar(out)
    for i in range(301):
        bar(i, 300)
    drawn = out.getvalue()
    assert drawn.count("\r[") <= 31 and drawn.endswith("] 300/300 envelopes")
    bar.clear()
    assert out.getvalue().endswith("\r")


def test_piped_audit_prints_no_progress(tmp_path):
    game = cli(tmp_path, "play", "--no-ui", "--bots", "1", "--proof-rounds", "2", "--seed", "2",
               "--option", "limit=20", "--quiet", "--transcript", str(tmp_path / "g.chn"))
    assert game.returncode == 0, game.stderr
    out = cli(tmp_path, "audit", str(tmp_path / "g.chn"))
    assert out.returncode == 0 and "winner: " in out.stdout and " out at " in out.stdout
    assert "\r" not in out.stdout + out.stderr and "envelopes:" in out.stdout


def test_port_in_use_is_named(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = cli(tmp_path, "host", "--bot", "--no-mdns", "--port", str(port))
    [line] = out.stderr.strip().splitlines()
    assert out.returncode == 1 and line.startswith(f"p2p-chinchon host: port {port} is already in use")


def test_play_says_why_its_own_node_left(tmp_path, monkeypatch, capsys):
    """A bug inside your own node during `play`: one line on stderr says why your node left
    (`play` printed only the summary, `host` and `join` already said it); exit 1."""
    from p2p_chinchon import table as tbl
    from p2p_chinchon.cli import main

    real = tbl.TableView._close_view

    def buggy(self):
        if self.lobby.me == 0:
            raise RuntimeError("boom")
        return real(self)

    monkeypatch.setattr(tbl.TableView, "_close_view", buggy)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    code = main(["play", "--no-ui", "--in-process", "--bots", "2", "--seed", "1", "--proof-rounds", "3",
                 "--option", "limit=20"])
    out, err = capsys.readouterr()
    assert code == 1 and "totals:" in out
    assert "p2p-chinchon: internal error: boom" in err, err[-2000:]
