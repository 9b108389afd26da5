"""An independent seat, written from docs/ and protocol/ alone
(protocol/conformance/, which imports nothing of p2p_chinchon), plays a whole game against
`p2p-chinchon host --bot` on loopback; both transcripts must be byte-identical and audit ok,
by `p2p-chinchon audit` and by the independent verifier.

No timed assertions: the timeouts below are only there so a hung game fails instead of hanging.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import free_port
from harness.procs import SHORT_LINGER, node_timings

ROOT = Path(__file__).resolve().parent.parent
SEAT = ROOT / "protocol" / "conformance" / "seat.py"
RULES = ["--rules", "fournier", "--option", "reentries=0", "--option", "limit=30"]
# our seats stay 6 s, not 30, after the game for the independent seat to say it holds the whole
# chain: it says its length (``S``) only as a link comes up and leaves at the game's end, so
# that wait always ran out
OURS = node_timings(**SHORT_LINGER)


def _cli() -> list[str]:
    exe = Path(sys.executable).parent / "p2p-chinchon"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("p2p-chinchon")
    if found:
        return [found]
    return [sys.executable, "-m", "p2p_chinchon"]


def _wait_for_lobby(host: subprocess.Popen, err: Path, deadline: float) -> None:
    while time.monotonic() < deadline:
        if "open on port" in err.read_text(errors="replace"):
            return
        if host.poll() is not None:
            raise AssertionError(f"host exited early:\n{err.read_text(errors='replace')}")
        time.sleep(0.2)
    raise AssertionError("host never opened its lobby")


def _play(tmp_path: Path, seats: int, extra_joiners: int, seat_args=(), expect_fault=False) -> list[Path]:
    port = free_port()
    host_t, seat_t = tmp_path / "host.chn", tmp_path / "seat.chn"
    err = tmp_path / "host.err"
    procs = []
    with open(err, "w") as ef:
        host = subprocess.Popen(OURS + ["host", "--bot", "--no-mdns", "--port", str(port),
                                          "--bind", "127.0.0.1", "--seats", str(seats), *RULES,
                                          "--transcript", str(host_t), "--quiet"],
                                stdout=subprocess.DEVNULL, stderr=ef, cwd=tmp_path)
    procs.append(host)
    try:
        _wait_for_lobby(host, err, time.monotonic() + 60)
        seat_log = tmp_path / "seat.log"
        with open(seat_log, "w") as sl:
            seat = subprocess.Popen([sys.executable, str(SEAT), "play", "--connect", f"127.0.0.1:{port}",
                                     "--transcript", str(seat_t), "--timeout", "240", *seat_args],
                                    stdout=sl, stderr=subprocess.STDOUT, cwd=tmp_path)
        procs.append(seat)
        others = []
        for i in range(extra_joiners):
            time.sleep(1.0)   # the independent seat sits first (seat 1), so it dials and accepts
            t = tmp_path / f"join{i}.chn"
            others.append(t)
            procs.append(subprocess.Popen(OURS + ["join", "--connect", f"127.0.0.1:{port}", "--bot",
                                                    "--name", f"Joiner{i}", "--transcript", str(t),
                                                    "--quiet"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          cwd=tmp_path))
        rc = seat.wait(timeout=300)
        if expect_fault:
            assert rc == 1, seat_log.read_text(errors="replace")[-4000:]
            host.wait(timeout=120)
            return [host_t, seat_t]
        assert rc == 0, seat_log.read_text(errors="replace")[-4000:]
        assert host.wait(timeout=120) == 0, err.read_text(errors="replace")[-4000:]
        for p in procs[2:]:
            assert p.wait(timeout=120) == 0
        return [host_t, seat_t, *others]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _check(paths: list[Path]) -> None:
    data = [p.read_bytes() for p in paths]
    assert data[0], "empty transcript"
    for p, d in zip(paths[1:], data[1:], strict=True):
        assert d == data[0], f"{p.name} differs from {paths[0].name}"
    for p in paths:
        r = subprocess.run(_cli() + ["audit", str(p)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        ours = subprocess.run([sys.executable, str(SEAT), "audit", str(p)], capture_output=True,
                              text=True, timeout=300)
        assert ours.returncode == 0 and ours.stdout.startswith("ok"), ours.stdout + ours.stderr


@pytest.mark.slow
def test_independent_seat_plays_a_whole_game(tmp_path):
    _check(_play(tmp_path, seats=2, extra_joiners=0))


@pytest.mark.slow
def test_independent_seat_at_a_three_seat_table(tmp_path):
    """beside a p2p-chinchon joiner: the seat dials seat 2 and accepts the host; it also aborts
    every mesh link twice during the game, so both sides resume from the transcript (`S`)"""
    _check(_play(tmp_path, seats=3, extra_joiners=1,
                 seat_args=("--drop-links-at", "20", "--drop-links-at", "60")))


@pytest.mark.slow
def test_a_rule_broken_by_the_independent_seat_is_faulted(tmp_path):
    """the seat discards a slot it does not hold: the host signs a not_in_hand fault quoting it;
    both transcripts end with that fault, and both verifiers confirm the accusation"""
    host_t, seat_t = _play(tmp_path, seats=2, extra_joiners=0, seat_args=("--cheat", "discard-not-held"),
                           expect_fault=True)
    assert host_t.read_bytes() == seat_t.read_bytes()
    for p in (host_t, seat_t):
        r = subprocess.run(_cli() + ["audit", str(p)], capture_output=True, text=True, timeout=300)
        assert r.returncode == 1 and "not_in_hand" in r.stdout and "confirmed" in r.stdout, r.stdout + r.stderr
        ours = subprocess.run([sys.executable, str(SEAT), "audit", str(p)], capture_output=True,
                              text=True, timeout=300)
        assert ours.returncode == 1 and "accused: seat 1: not_in_hand: confirmed" in ours.stdout, ours.stdout


def test_independent_verifier_passes_the_vectors():
    r = subprocess.run([sys.executable, str(SEAT), "vectors"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_independent_code_imports_nothing_of_the_package():
    import re
    for f in (ROOT / "protocol" / "conformance").glob("*.py"):
        bad = re.findall(r"^\s*(?:import|from)\s+p2p_chinchon\b.*$|import_module\(.p2p_chinchon", f.read_text(), re.M)
        assert not bad, (f.name, bad)
