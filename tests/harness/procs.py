"""The process games' harness: bot seats as separate processes in network namespaces
(``netns.NetnsLab``), each with its own log and transcript under ``tmp_path``, and what the
tests read back from them; :class:`Lab` runs seats' processes on loopback."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netns import NetnsLab

# after RULES (the last --option counts): for tests that kill, stop or cut off a seat once a card
# was drawn, the first hand cannot end the game first (a quick first-hand close at a low limit
# can put two of three seats out while the test still polls the transcript). No hand of the
# 40-card deck scores over 67 (six unmatched court cards and a 7), so nobody goes over 70 in it,
# and no chinchón wins it.
FIRST_HAND_GOES_ON = ["--option", "limit=70", "--option", "chinchon_wins=false"]

REPO = Path(__file__).resolve().parents[2]
# for games whose removed seats never come back: the finished seats stay 6 s, not 30, for a
# removed seat to wake and ask (what such a test shows is not that wait); 6 s still lets a
# live seat take the game's last envelopes on a loaded machine
SHORT_LINGER = {"LINGER_FINISHED": 6.0, "LINGER_REMOVED": 6.0}
GAME = ["--option", "limit=20", "--proof-rounds", "4"]


def _cli(*args: str, timings: dict[str, float] | None = None) -> list[str]:
    """The command line of ``p2p-chinchon args``; ``timings`` (see :func:`node_timings`) first."""
    return [*(node_timings(**timings) if timings else [sys.executable, "-m", "p2p_chinchon"]), *args]


TIMING_MODULES = ("node", "presence", "verdicts", "clocks")  # of p2p_chinchon.net


def _defined_in(module: str) -> set[str]:
    """The names a module of :data:`TIMING_MODULES` assigns at its top level (not those it imports)."""
    import ast
    import importlib

    source = Path(importlib.import_module(f"p2p_chinchon.net.{module}").__file__ or "").read_text()
    return {t.id for st in ast.parse(source).body if isinstance(st, (ast.Assign, ast.AnnAssign))
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]) if isinstance(t, ast.Name)}


def node_timings(**names: float) -> list[str]:
    """``python -m p2p_chinchon`` with node timings set for that process only (module constants
    of :data:`TIMING_MODULES`, e.g. ``LINGER_REMOVED=2``, ``NOBODY_ANSWERS=15``), each in the
    module that defines and reads it: a test shortens a wait it does not test. A name no such
    module defines fails here (a copy imported elsewhere would be patched to no effect)."""
    owners = {name: [m for m in TIMING_MODULES if name in _defined_in(m)] for name in names}
    missing = [name for name, found in owners.items() if len(found) != 1]
    assert not missing, f"no single module of p2p_chinchon.net defines {missing}"
    sets = "".join(f"{owners[name][0]}.{name} = {float(value)!r}; " for name, value in names.items())
    return [sys.executable, "-c", f"import runpy; from p2p_chinchon.net import {', '.join(TIMING_MODULES)}; {sets}"
            "runpy.run_module('p2p_chinchon', run_name='__main__', alter_sys=True)"]


def _env(tmp_path: Path) -> dict:
    return dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
                PYTHONUNBUFFERED="1", P2P_CHINCHON_LOG="info")


def _wait_for(path: Path, text: str, limit: float = 60.0) -> None:
    end = time.monotonic() + limit
    while text not in path.read_text(errors="replace"):
        if time.monotonic() > end:
            pytest.fail(f"{text!r} not in {path.name}:\n{path.read_text(errors='replace')}")
        time.sleep(0.1)


def _start(lab: NetnsLab, i: int, argv: list[str], log: Path, tmp_path: Path) -> subprocess.Popen:
    with open(log, "ab") as f:
        return lab.popen(i, argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                         env=_env(tmp_path), cwd=REPO)


def _three_seats(lab: NetnsLab, tmp_path: Path, port: str,
                 timings: dict[str, float] | None = None) -> tuple[list[subprocess.Popen], list[Path]]:
    """A bot host in namespace 0 and bot joiners J1, J2 in namespaces 1 and 2, ``rejoin_wait``
    5 s, ``stall_limit`` 20 s; returns once a card was drawn."""
    return _seats(lab, tmp_path, 3, port, ["--option", "stall_limit=20", *FIRST_HAND_GOES_ON], timings)


def _seats(lab: NetnsLab, tmp_path: Path, n: int, port: str, extra: list[str],
           timings: dict[str, float] | None = None) -> tuple[list, list[Path]]:
    """A bot host in namespace 0 and bot joiners J1 .. J(n-1) in the next ones, ``rejoin_wait``
    5 s and the ``extra`` host options, every seat with the node ``timings``; returns once a
    card was drawn."""
    logs = [tmp_path / f"s{i}.log" for i in range(n)]
    procs = [_start(lab, 0, _cli("host", "--bot", "--no-mdns", "--port", port, "--seats", str(n), *GAME,
                                 "--option", "rejoin_wait=5", *extra, "--transcript", str(tmp_path / "s0.chn"),
                                 timings=timings),
                    logs[0], tmp_path)]
    _wait_for(logs[0], "open on port")
    for i in range(1, n):
        procs.append(_start(lab, i, _cli("join", "--bot", "--connect", f"{lab.addr(0)}:{port}", "--name", f"J{i}",
                                         "--min-proof-rounds", "4", "--transcript", str(tmp_path / f"s{i}.chn"),
                                         timings=timings),
                            logs[i], tmp_path))
        _wait_for(logs[0], f"J{i} sat down", limit=120)  # seat i is J{i}, in namespace i
    _wait_for(logs[0], " draws ", limit=300)
    return procs, logs


def tails(logs: list[Path], chars: int = 3000) -> str:
    """The end of each log, for an assertion's message."""
    return "\n".join(f"----- {log.name}\n{log.read_text(errors='replace')[-chars:]}" for log in logs)


def finished_identical(tmp_path: Path, seats: int, codes: list, logs: list[Path]) -> None:
    """Every seat exited 0 with byte-identical transcripts ``s<i>.chn`` that audit ok."""
    from p2p_chinchon.audit import audit_file

    assert codes == [0] * seats, f"exit codes {codes}\n" + tails(logs, 4000)
    data = [(tmp_path / f"s{i}.chn").read_bytes() for i in range(seats)]
    assert all(d == data[0] for d in data), "every transcript is byte-identical"
    report = audit_file(tmp_path / "s0.chn")
    assert report.verdict == "ok", report.summary()


def _played_on_without(tmp_path: Path, gone: str) -> None:
    """s0 and s1 finished without ``gone``: identical transcripts, audit ok, "left"."""
    from p2p_chinchon.audit import audit_file
    from p2p_chinchon.transcript import load_transcript

    assert (tmp_path / "s0.chn").read_bytes() == (tmp_path / "s1.chn").read_bytes()
    seat = [p["name"] for p in load_transcript(tmp_path / "s0.chn").envelopes[1].body["players"]].index(gone)
    report = audit_file(tmp_path / "s0.chn")
    assert report.verdict == "ok" and report.winner != seat, report.summary()
    assert [(m["seat"], m["reason"]) for m in report.marks if m["event"] == "left"] == [(seat, "absent")]


# the loopback games' processes (no namespaces)
CLI = [sys.executable, "-m", "p2p_chinchon"]
FAST = ["--proof-rounds", "4"]
JOIN_FAST = ["--min-proof-rounds", "4"]


class Lab:
    """Processes of one test, each with its log file; all killed at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen] = []

    def start(self, label: str, args: list[str], prefix: list[str] | None = None,
              timings: dict[str, float] | None = None) -> subprocess.Popen:
        """``timings``: node timings of this process (harness.procs.node_timings)."""
        # debug: a failure's log holds the traceback and the links' story
        env = dict(os.environ, PYTHONUNBUFFERED="1", P2P_CHINCHON_LOG="debug")
        with open(self.folder / f"{label}.log", "ab") as log:  # the child keeps its own copy
            p = subprocess.Popen([*(prefix or []), *_cli(*args, timings=timings)], stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, cwd=self.folder, env=env)
        self.procs.append(p)
        return p

    def log(self, label: str) -> str:
        return (self.folder / f"{label}.log").read_text(errors="replace")

    def tails(self, labels, chars: int = 3000) -> str:
        """The end of each log, for an assertion's message (where a failure shows)."""
        parts = []
        for label in labels:
            path = self.folder / f"{label}.log"
            text = path.read_text(errors="replace") if path.exists() else "(no log)"
            parts.append(f"----- {label}.log (last {chars} chars)\n{text[-chars:]}")
        return "\n".join(parts)

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def kinds(path: Path) -> list[str]:
    from p2p_chinchon.transcript import load_transcript

    if not path.exists():
        return []
    return [e.kind for e in load_transcript(path).envelopes]


def wait_until(cond, limit: float = 300.0, what: str = "", lab: Lab | None = None) -> None:
    """Poll ``cond`` every 0.1 s up to ``limit`` seconds; a failure shows every log's end."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            logs = sorted(p.stem for p in lab.folder.glob("*.log")) if lab is not None else []
            raise AssertionError(f"gave up waiting for {what}\n" + (lab.tails(logs) if lab is not None and logs else ""))
        time.sleep(0.1)
