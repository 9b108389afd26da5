"""The benchmark scripts run and report their figures (tiny settings: this
checks the scripts, not the speed; performance is never asserted in tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every benchmark runs as its own process

ROOT = Path(__file__).resolve().parent.parent


def bench(tmp_path: Path, *args: str) -> dict:
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin",
           "TMPDIR": str(scratch), "P2P_CHINCHON_SODIUM_CACHE": os.environ.get("P2P_CHINCHON_SODIUM_CACHE", "")}
    out = subprocess.run([sys.executable, "-m", "p2p_chinchon", "bench", *args, "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert not list(scratch.iterdir()), "the benchmark left files in the temporary folder"
    return json.loads(out.stdout[out.stdout.index("{"):])


@pytest.mark.slow
def test_bench_game_reports_latencies_and_cpu(tmp_path):
    r = bench(tmp_path, "game", "--seats", "2", "--proof-rounds", "4", "--seed", "1", "--no-deck")
    assert r["seats"] == 2 and r["k"] == 4 and r["hands"] >= 1
    assert r["first_turn_s"] > 0 and r["game_s"] >= r["first_turn_s"]
    assert r["draw_to_card_ms"] and len(r["cpu_s_each_peer"]) == 2
    bh = r["between_hands_ms"]  # hands after the first: the gap is its parts and more
    assert bh["n"] == r["hands"] - 1
    if bh["n"]:
        assert bh["gap"] >= bh["keys"] > 0 and bh["shuffles"] > 0 and bh["deal"] > 0
    assert all(x > 0 for x in r["cpu_over_game_floor"]) and r["draw_to_card_ms"]["n"] > 0


def test_bench_audit_reports_throughput_and_floor(tmp_path):
    r = bench(tmp_path, "audit", "--seed", "1", "--in-process", "--proof-rounds", "4", "--limit", "25")
    assert r["verdict"] == "ok" and r["envelopes"] > 0 and r["hands"] >= 1
    assert r["envelopes_per_s"] > 0 and r["floor_s"] > 0 and r["ratio"] > 0
    assert 0 < r["proof_share"] <= 1


def test_bench_play_start_compares_exec_and_fork(tmp_path):
    r = bench(tmp_path, "play_start", "--runs", "1", "--bots", "1")
    for key in ("to_seating", "seating_to_first_turn", "to_first_turn"):
        assert r[key]["exec_s"] > 0 and r[key]["fork_s"] > 0 and r[key]["ratio"] > 0


def test_bench_wire_runs_on_this_protocol_version(tmp_path):
    """``bench wire`` signs envelopes of the current schema (it crashed on the seating's new
    ``addrs`` field, found by a newcomer trying the README's benchmarks)."""
    r = bench(tmp_path, "wire", "--n", "40")
    assert r["transcript"]["envelopes"] == 40 and r["draw_share"]["verify_us"] > 0
