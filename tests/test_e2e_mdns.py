"""End to end through mDNS: three machines on one LAN play a whole game, found by discovery.

Three network namespaces on a bridge (``tests/netns.py``): ``p2p-chinchon host --bot`` in the
first, ``p2p-chinchon join TABLE --bot`` in the other two. The joiners get the host's address
only by browsing ``_chinchon._tcp.local.`` (no ``--connect``), then the three build the full
mesh across the bridge and play to the end. Checks: every process exits 0, each joiner found
the table at the host's namespace address, and ``p2p-chinchon audit`` accepts all three
transcripts and names the same winner and totals. Needs root (skipped otherwise).

Small soundness parameter (``--proof-rounds 4``) and a short game (``limit=20``) keep it fast;
the protocol is the same as with the defaults.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from netns import NetnsLab, require_netns

pytestmark = pytest.mark.slow  # network namespaces and peer processes

REPO = Path(__file__).resolve().parents[1]
TABLE = "Mesa del puente"
GAME = ["--rules", "classic", "--option", "limit=20", "--proof-rounds", "4"]
DEADLINE = 150.0  # seconds for the whole game; a normal run takes well under a minute


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "p2p_chinchon", *args]


def _wait_for(path: Path, text: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait until ``text`` shows up in the log file ``path`` (or fail if ``proc`` dies)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if text in path.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"{text!r} not in {path.name} (exit {proc.poll()}):\n{path.read_text(errors='replace')}")


def _line(output: str, prefix: str) -> str:
    found = [ln for ln in output.splitlines() if ln.startswith(prefix)]
    assert len(found) == 1, f"expected one {prefix!r} line in:\n{output}"
    return found[0]


@pytest.mark.netns
def test_three_namespaces_play_a_game_found_by_mdns(tmp_path: Path) -> None:
    require_netns()
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    seats = ["host", "ana", "beto"]
    chn = {s: tmp_path / f"{s}.chn" for s in seats}
    out = {s: tmp_path / f"{s}.out" for s in seats}
    err = {s: tmp_path / f"{s}.err" for s in seats}
    step = ["--timeout", "30"]  # a stuck peer fails the game in 30 s, not 90
    weak = ["--min-proof-rounds", "4"]  # joiners accept the test's k = 4 (they refuse < 64 cut-and-choose rounds by default)
    argv = {
        "host": _cli("host", "--bot", "--seats", "3", "--table-name", TABLE, "--name", "Host", "--seed", "e2e-host",
                     *GAME, *step, "--transcript", str(chn["host"])),
        "ana": _cli("join", TABLE, "--bot", "--name", "Ana", "--seed", "e2e-ana", "--browse", "4",
                    *step, *weak, "--transcript", str(chn["ana"])),
        "beto": _cli("join", TABLE, "--bot", "--name", "Beto", "--seed", "e2e-beto", "--browse", "4",
                     *step, *weak, "--transcript", str(chn["beto"])),
    }
    files = []
    try:
        with NetnsLab(3) as lab:
            procs = {}
            for i, s in enumerate(seats):
                files += [open(out[s], "wb"), open(err[s], "wb")]
                procs[s] = lab.popen(i, argv[s], stdin=subprocess.DEVNULL, stdout=files[-2], stderr=files[-1],
                                     env=env, cwd=REPO)
                if s == "host":  # advertised once it says it is open (mDNS probing takes ~2 s)
                    _wait_for(err["host"], "open on port", procs["host"], timeout=30)
            end = time.monotonic() + DEADLINE
            codes: dict[str, int | None] = {}  # None: still running at the deadline
            for s in seats:
                try:
                    codes[s] = procs[s].wait(timeout=max(1.0, end - time.monotonic()))
                except subprocess.TimeoutExpired:
                    codes[s] = None
    finally:
        for f in files:
            f.close()

    logs = {s: f"--- stdout\n{out[s].read_text(errors='replace')}--- stderr\n{err[s].read_text(errors='replace')}"
            for s in seats}
    for s in seats:
        assert codes[s] == 0, f"{s} exited {codes[s]}\n{logs[s]}"

    # each joiner found the table by browsing, at the host's address on the bridge
    port = re.search(r"open on port (\d+)", logs["host"])
    assert port is not None, logs["host"]
    for s in ("ana", "beto"):
        assert f"joining '{TABLE}' at {lab.addr(0)}:{port.group(1)}" in logs[s], logs[s]

    # each command printed the result and where its transcript is; all name the same winner
    results = set()
    for s in seats:
        stdout = out[s].read_text(errors="replace")
        assert f"transcript: {chn[s]}" in stdout, logs[s]
        results.add((_line(stdout, "winner:"), _line(stdout, "totals:")))
    assert len(results) == 1, results

    verdicts = {}
    for s in seats:
        assert chn[s].is_file(), f"{s} wrote no transcript\n{logs[s]}"
        audit = subprocess.run(_cli("audit", str(chn[s])), capture_output=True, text=True, env=env, cwd=REPO,
                               timeout=60)
        assert audit.returncode == 0, f"audit of {s}: exit {audit.returncode}\n{audit.stdout}{audit.stderr}"
        assert "winner:" in audit.stdout, audit.stdout
        verdicts[s] = (_line(audit.stdout, "players:"), _line(audit.stdout, "winner:"), _line(audit.stdout, "totals:"))
    assert verdicts["host"] == verdicts["ana"] == verdicts["beto"], verdicts
    players = verdicts["host"][0]
    assert all(name in players for name in ("Host", "Ana", "Beto")), players
