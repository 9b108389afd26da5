"""``bench soak``: its pieces, one faulted game through the command, and a game
whose links to one seat go through a slow relay that cuts them now and then.

No timed assertions: the relay's delays and the games' times are measured by the benchmark
(docs/reliability.md), never checked here.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

ROOT = Path(__file__).resolve().parent.parent


def _load_soak():
    spec = importlib.util.spec_from_file_location("bench_soak", ROOT / "benchmarks" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


soak = _load_soak()


def test_fault_plan_is_seeded_and_spread():
    plan = soak.plan_faults("7", 40, 3)
    assert plan == soak.plan_faults("7", 40, 3)  # the same seed, the same victims and points
    assert plan != soak.plan_faults("8", 40, 3)
    assert {f.victim for f in plan} == {0, 1, 2}  # the host is a victim too
    assert all((f.kind, f.count) in soak.FAULT_POINTS and 0.5 <= f.pause_s <= 3.0 for f in plan)
    assert len({(f.kind, f.count) for f in plan}) > 5


def test_longest_stall_counts_only_after_the_fault():
    growth = [0.0, 1.0, 2.0, 10.0, 10.5, 11.0]
    assert soak.longest_stall(growth, since=2.5, end=12.0) == pytest.approx(7.5)  # 2.5 -> 10.0
    assert soak.longest_stall(growth, since=0.5, end=11.5) == pytest.approx(8.0)  # 2.0 -> 10.0
    assert soak.longest_stall([0.0, 1.0], since=1.5, end=4.0) == pytest.approx(2.5)  # silent to the end


def test_summary_flags_desyncs_and_growing_memory():
    def game(rss, desync=False, stall=None):
        g = {"finished": True, "desync": desync, "game_s": 10.0, "envelopes": 100, "max_rss_mib": rss}
        if stall is not None:
            g["fault"] = {"stall_s": stall, "pause_s": 1.0}
        return g

    s = soak.summarize([game({"ana": 50.0}, stall=4.0), game({"ana": 51.0}, desync=True, stall=3.0)])
    assert s["desyncs"] == 1 and s["faults"] == 2 and s["time_lost_s"] == 7.0 and s["memory_flat"]
    assert s["ms_per_envelope_median"] == 100.0
    s = soak.summarize([game({"ana": 50.0}), game({"ana": 50.0}), game({"ana": 70.0})])
    assert not s["memory_flat"] and s["max_rss_growth"] == 1.4


def test_listening_ports_finds_this_process_listener():
    with socket.socket() as s:
        s.bind(("127.0.0.2", 0))
        s.listen()
        port = s.getsockname()[1]
        import os

        assert port in soak.listening_ports(os.getpid(), "127.0.0.2")
        assert port not in soak.listening_ports(os.getpid(), "127.0.0.1")


async def _echo_server(task_status=trio.TASK_STATUS_IGNORED):
    async def echo(stream):
        async with stream:
            try:
                async for chunk in stream:
                    await stream.send_all(chunk)
            except trio.BrokenResourceError:
                pass

    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    await trio.serve_listeners(echo, listeners)


async def _pipelined(port: int, messages: list[bytes]) -> bytes:
    """Send every message (one chunk each, jittered delays could reorder them), then read
    all that comes back."""
    want = b"".join(messages)
    got = b""
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        for m in messages:
            await stream.send_all(m)
            await trio.sleep(0.005)
        while len(got) < len(want) and (chunk := await stream.receive_some(65536)):
            got += chunk
    return got


async def _ping_pong(port: int, messages: list[bytes]) -> bytes:
    """Send each message and wait for its echo, until the relay cuts the connection."""
    got = b""
    async with await trio.open_tcp_stream("127.0.0.1", port) as stream:
        try:
            for m in messages:
                await stream.send_all(m)
                echo = b""
                while len(echo) < len(m):
                    chunk = await stream.receive_some(65536)
                    if not chunk:
                        return got + echo
                    echo += chunk
                got += echo
        except trio.BrokenResourceError:  # the relay cut the connection
            pass
    return got


async def test_relay_keeps_order_and_cuts_after_its_chunk_budget():
    async with trio.open_nursery() as nursery:
        target = await nursery.start(_echo_server)
        front = soak.free_port()
        messages = [f"message {i:03d};".encode() * (i + 1) for i in range(12)]
        relay = soak.Relay(("127.0.0.1", front), ("127.0.0.1", target), delay_s=0.02, jitter_s=0.015,
                           cut_after=None, seed=1).start()
        try:
            assert await _pipelined(front, messages) == b"".join(messages)  # in order, intact
            assert relay.connections == 1 and relay.cuts == 0
        finally:
            relay.stop()
        # a budget of 5 chunks, both ways: message, echo, message, echo, message: cut
        relay = soak.Relay(("127.0.0.1", front), ("127.0.0.1", target), delay_s=0.02, jitter_s=0.015,
                           cut_after=(5, 5), seed=1).start()
        try:
            assert await _ping_pong(front, messages) == b"".join(messages[:2])
            assert relay.cuts == 1
            assert await _pipelined(front, messages[:2]) == b"".join(messages[:2])  # a new connection works
            assert relay.connections == 2
        finally:
            relay.stop()
        nursery.cancel_scope.cancel()


def test_relay_schedule_never_reorders():
    relay = soak.Relay(("127.0.0.1", 0), ("127.0.0.1", 1), delay_s=0.08, jitter_s=0.02, seed=3)
    due = 0.0
    for now in [0.0, 0.001, 0.002, 0.5, 0.501]:
        nxt = relay._schedule(now, due)
        assert nxt >= due and now + 0.06 <= nxt <= max(now + 0.1, due)
        due = nxt


@pytest.mark.slow  # one whole game at 80 ms a hop: 25-100 s on the shared 2-core machine
def test_a_game_through_a_slow_link_that_cuts_ends_as_one_game(tmp_path):
    """Carla (the last seat) listens behind the relay: both her links carry every chunk 40 +- 10
    ms late (the bench's 80 ms doubles this test's time and tests nothing more) and are cut now
    and then (every 10-25 chunks, so that the first cut comes early: a seat now gets a cut
    link's envelopes through the others, and a short game could end before the redial);
    the game finishes, transcripts identical (or, when Carla's last ``game_end`` missed the
    others for their whole ``rejoin_wait``, theirs a prefix of hers, each ending the game:
    docs/protocol.md "Removal", the game's end; found by this test once as a fork), audit ok."""
    r = soak.play_one(tmp_path, 3, None, lossy=True, seed="test", limit=600, cut_after=(10, 25), delay_s=0.04)
    logs = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}" for p in tmp_path.glob("*.log"))
    assert r["finished"], f"{r}\n{logs}"
    assert not r["desync"] and set(r["verdicts"].values()) == {"ok"}, r
    assert r["relay"]["cuts"] >= 1 and r["relay"]["connections"] >= 3, r["relay"]  # relinked after a cut


def test_bench_soak_one_faulted_game(tmp_path):
    """``bench soak --games 1 --faults``: a seat killed and restarted; no desync."""
    out = subprocess.run([sys.executable, "-m", "p2p_chinchon", "bench", "soak", "--games", "1", "--faults",
                          "--seed", "3", "--json", "--folder", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    r = json.loads(out.stdout)
    assert r["games"] == r["finished"] == 1 and r["desyncs"] == 0 and r["faults"] == 1, r
    [game] = r["per_game"]
    assert game["fault"]["stall_s"] > 0 and len(game["exit_codes"][game["fault"]["victim"]]) == 2  # killed, rerun
    assert all(v > 0 for v in r["max_rss_mib_first"].values())
