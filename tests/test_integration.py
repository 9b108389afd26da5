"""Whole games over loopback: every seat a separate peer (own key, table, mesh, transcript).

Checks that every node ends with the same chain head, the same totals and winner, and that
`audit` accepts every node's transcript. Proof rounds are small (k=6) to keep CI fast: the
protocol is the same, only the soundness parameter differs (see benchmarks/ for k=64).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from p2p_chinchon.audit import audit_file
from p2p_chinchon.engine import make_rules
from p2p_chinchon.local import SeatSpec, play_local

pytestmark = pytest.mark.slow  # whole games in one process and as separate processes

K = 6


def check_game(results, folder: Path, n: int) -> None:
    assert len(results) == n
    heads = {r.head for r in results}
    assert len(heads) == 1, "every node ends on the same chain head"
    assert all(r.fault is None for r in results)
    winners = {r.winner for r in results}
    assert len(winners) == 1 and None not in winners
    totals = {tuple(r.totals) for r in results}
    assert len(totals) == 1
    # every record is the same bytes, so one audit speaks for all (8 audits took ~20 s)
    data = [(folder / f"seat{i}.chn").read_bytes() for i in range(n)]
    assert all(d == data[0] for d in data), "every transcript is byte-identical"
    report = audit_file(folder / "seat0.chn")
    assert report.verdict == "ok", report.summary()
    assert report.winner == results[0].winner
    assert report.totals == list(results[0].totals)
    assert report.head == results[0].head.hex()
    assert report.hands >= 1


@pytest.mark.parametrize(
    "n, preset, options, seed",
    [
        (2, "classic", {"limit": 40}, 11),
        (4, "online", {"limit": 30}, 12),
        (4, "cardgames", {"limit": 30}, 13),
        (3, "fournier", {"limit": 30, "reentries": 1}, 14),
    ],
)
async def test_local_game_in_process(tmp_path, n, preset, options, seed):
    rules = make_rules(preset, options)
    specs = [SeatSpec(f"P{i}") for i in range(n)]
    results = await play_local(rules, specs, seed=seed, proof_rounds=K, transcript_dir=tmp_path)
    check_game(results, tmp_path, n)


@pytest.mark.slow
async def test_eight_seats_two_packs(tmp_path):
    rules = make_rules("classic", {"limit": 15})
    assert len(rules.deck(8)) == 80, "5-8 players use two packs"
    specs = [SeatSpec(f"P{i}") for i in range(8)]
    results = await play_local(rules, specs, seed=21, proof_rounds=3, transcript_dir=tmp_path)
    check_game(results, tmp_path, 8)


async def test_seeded_game_is_reproducible(tmp_path):
    rules = make_rules("classic", {"limit": 20})
    a = await play_local(rules, [SeatSpec("A"), SeatSpec("B")], seed=5, proof_rounds=3, transcript_dir=tmp_path / "a")
    b = await play_local(rules, [SeatSpec("A"), SeatSpec("B")], seed=5, proof_rounds=3, transcript_dir=tmp_path / "b")
    # same seed: same keys, decks and decisions, so the same scores and the same number of
    # envelopes (the heads differ: the seating records each seat's random listening port)
    assert [r.totals for r in a] == [r.totals for r in b]
    assert len(audit_file(tmp_path / "a" / "seat0.chn").scores) == len(audit_file(tmp_path / "b" / "seat0.chn").scores)


@pytest.mark.parametrize("bots, k, limit", [(1, K, 30), (3, K, 30), pytest.param(7, 3, 12, marks=pytest.mark.slow)])
def test_play_command_separate_processes(tmp_path, bots, k, limit):
    """`p2p-chinchon play --no-ui`: the host in one process, each bot a separate OS process
    (2, 4 and 8 seats; 8 seats play with two packs)."""
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    proc = subprocess.run(
        [sys.executable, "-m", "p2p_chinchon", "play", "--no-ui", "--bots", str(bots), "--seed", "3",
         "--proof-rounds", str(k), "--option", f"limit={limit}"],
        capture_output=True, text=True, timeout=600, env=env,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    m = re.search(r"all transcripts: (.+)", proc.stdout)
    assert m, proc.stdout[-2000:]
    folder = Path(m.group(1).strip())
    files = sorted(folder.glob("*.chn"))
    assert len(files) == bots + 1
    assert len({f.read_bytes() for f in files}) == 1, "every transcript is byte-identical"
    report = audit_file(files[0])  # so one audit speaks for all
    assert report.verdict == "ok", report.summary()
    assert "winner:" in proc.stdout
    # the audit command agrees, exit 0
    out = subprocess.run([sys.executable, "-m", "p2p_chinchon", "audit", str(files[0])], capture_output=True, text=True)
    assert out.returncode == 0 and "winner:" in out.stdout


@pytest.mark.parametrize("start", ["fork", "exec"])
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_play_ended_by_a_signal_takes_its_bot_peers_with_it(tmp_path, start, how):
    """`play` terminated or killed mid-game (a closed window, `kill`): its bot peers end with
    it, however they were started, instead of waiting out their ``stall_limit`` as orphans."""
    import time

    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    proc = subprocess.Popen([sys.executable, "-m", "p2p_chinchon", "play", "--no-ui", "--bots", "2", "--seed", "3",
                             "--proof-rounds", "4", "--bot-start", start], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    try:
        deadline = time.monotonic() + 60
        bots: list[int] = []
        while len(bots) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, "play never started its bots"
            bots = [int(x) for x in children.read_text().split()]
            time.sleep(0.1)
        time.sleep(1.0)  # into the game
        proc.send_signal(how)
        proc.wait(30)
        def running(pid: int) -> bool:  # not gone, not a zombie (it may go between the two reads)
            try:
                return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
            except FileNotFoundError:
                return False

        deadline = time.monotonic() + 15
        alive = bots
        while alive and time.monotonic() < deadline:
            alive = [b for b in alive if running(b)]
            time.sleep(0.1)
        assert alive == [], f"bot peers {alive} outlived play"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_game_survives_dropped_links(tmp_path):
    """Links dropped mid-game are redialled and each side re-sends what the other lacks (the
    mesh's SYNC); the game still ends with one chain head everywhere."""
    import trio

    rules = make_rules("classic", {"limit": 25})
    nodes: list[Any] = []
    specs = [SeatSpec(f"P{i}", node_ready=nodes.append) for i in range(3)]
    dropped = 0

    async def saboteur():
        nonlocal dropped
        while len(nodes) < 3:
            await trio.sleep(0.01)
        for _round in range(6):
            await trio.sleep(0.4)
            for node in nodes:
                mesh = node._mesh
                if mesh is not None and not node._done.is_set():
                    for seat in sorted(mesh.connected):
                        mesh.drop(seat, "test: pulled the cable")
                        dropped += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(saboteur)
        results = await play_local(rules, specs, seed=41, proof_rounds=K, transcript_dir=tmp_path)
        nursery.cancel_scope.cancel()
    assert dropped > 0
    check_game(results, tmp_path, 3)


async def test_leaving_mid_game_the_others_play_on(tmp_path):
    """A person leaves mid-hand (a signed ``leave``): the two others remove the seat ("left",
    its leave as proof), the hand is void, and they finish the game without it: identical
    transcripts, audit ok with the seat "left". The leaver's own record stops at its leave
    (incomplete, not a cheat)."""
    from p2p_chinchon import view as v
    from p2p_chinchon.autoplay import bot_decider
    from p2p_chinchon.local import make_bot, seat_rng

    rules = make_rules("classic", {"limit": 50})
    bot = bot_decider(make_bot(rules, seat_rng(1, "x")))
    turns = {"n": 0}

    def leaver(view, need):
        if need == "draw":
            turns["n"] += 1
            if turns["n"] == 3:
                return v.Leave("dinner is ready")
        return bot(view, need)

    specs = [SeatSpec("P0"), SeatSpec("Leaver", decide=leaver), SeatSpec("P2")]
    results = await play_local(rules, specs, seed=43, proof_rounds=K, transcript_dir=tmp_path)
    by_seat = {r.seat: r for r in results}
    gone = by_seat[1]
    assert gone.fault is not None and gone.fault.seat == 1 and gone.fault.rule == "left", gone.fault
    for s in (0, 2):
        r = by_seat[s]
        assert r.fault is None and r.winner is not None and r.winner != 1, r.fault
    assert (tmp_path / "seat0.chn").read_bytes() == (tmp_path / "seat2.chn").read_bytes()
    report = audit_file(tmp_path / "seat0.chn")
    assert report.verdict == "ok", report.summary()
    assert [(m["seat"], m["reason"]) for m in report.marks if m["event"] == "left"] == [(1, "left")]
    assert "left (left) at" in report.summary()
    mine = audit_file(tmp_path / "seat1.chn")
    assert mine.verdict == "incomplete" and mine.exit_code == 3 and "left" in mine.detail, mine.summary()


async def test_audit_exit_codes_complete_incomplete_corrupt(tmp_path):
    """`audit` exits 0 only for a complete game; a truncated copy exits 3 (valid but
    incomplete, `complete: false` in --json); five bytes inserted exit 1 (corrupt)."""
    import json

    rules = make_rules("classic", {"limit": 15})
    await play_local(rules, [SeatSpec("A"), SeatSpec("B")], seed=8, proof_rounds=K, transcript_dir=tmp_path)
    whole = (tmp_path / "seat0.chn").read_bytes()
    cut = tmp_path / "cut.chn"
    cut.write_bytes(whole[: len(whole) // 2])
    spliced = tmp_path / "spliced.chn"
    spliced.write_bytes(whole[: len(whole) // 2] + b"\x00" * 5 + whole[len(whole) // 2 :])

    def audit(path):
        out = subprocess.run([sys.executable, "-m", "p2p_chinchon", "audit", "--json", str(path)],
                             capture_output=True, text=True, timeout=300)
        return out.returncode, json.loads(out.stdout)

    code, report = audit(tmp_path / "seat0.chn")
    assert code == 0 and report["complete"] is True and report["verdict"] == "ok"
    code, report = audit(cut)
    assert code == 3 and report["complete"] is False and report["verdict"] == "incomplete"
    code, report = audit(spliced)
    assert code == 1 and report["complete"] is False and report["verdict"] == "corrupt"
