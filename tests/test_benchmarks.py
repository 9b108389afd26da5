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


def test_bench_web_times_a_draw_on_the_page_and_its_first_load(tmp_path):
    """``bench web``: the page in Chromium on a ``play --web`` seat, two stock draws timed from
    the click to the card's image, the first load and every asset it loads."""
    if not os.path.exists("/usr/bin/chromium"):
        pytest.skip("no browser: /usr/bin/chromium is missing")
    pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")
    r = bench(tmp_path, "web", "--turns", "2", "--bots", "1", "--proof-rounds", "4", "--loads", "1", "--no-terminal")
    assert r["seats"] == 2 and r["turns"] == 2 and r["terminal_draw_to_card_ms"] is None
    for part in ("to_image", "to_dom"):
        d = r["draw_to_image_ms"][part]
        assert d["n"] == 2 and 0 < d["median"] <= d["p95"]
    assert r["draw_to_image_ms"]["to_dom"]["median"] <= r["draw_to_image_ms"]["to_image"]["median"]
    split = r["split_ms"]
    assert split["n_matched"] == 2 and split["node_draw_to_card"] > 0 and split["message_to_dom"] >= 0
    assert r["node_draw_to_card_ms"]["n"] >= 2
    first = r["first_load_ms"]
    assert first["n"] == 1 and 0 < first["state_in_dom"]["median"] <= first["state_drawn"]["median"]
    paths = {a["path"] for a in r["assets"] if a["status"] == 200}
    assert {"/", "/static/table.js", "/static/cards.js", "/static/table.css"} <= paths
    assert r["assets_bytes"] == sum(a["bytes"] for a in r["assets"]) > 0 and r["state_message_bytes"] > 0
    assert r["page_errors"] == []
