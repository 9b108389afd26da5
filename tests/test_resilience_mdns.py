"""Seats found through mDNS, in network namespaces (``tests/netns.py``; needs root, skipped
otherwise): two tables of one name are both listed, never one taken silently; a joiner started
before its host keeps looking; a host interrupted in the lobby vanishes from the lists at once.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.procs import (
    FIRST_HAND_GOES_ON,
    GAME,
    REPO,
    SHORT_LINGER,
    _cli,
    _env,
    _played_on_without,
    _seats,
    _start,
    _three_seats,
    _wait_for,
    tails,
)
from harness.tmux import grab
from netns import NetnsLab, require_netns

pytestmark = pytest.mark.slow  # network namespaces and peer processes

@pytest.mark.netns
def test_two_tables_of_one_name_are_both_listed(tmp_path: Path) -> None:
    require_netns()
    with NetnsLab(3) as lab:
        logs = [tmp_path / f"h{i}.log" for i in range(2)]
        for i in range(2):
            _start(lab, i, _cli("host", "--bot", "--table-name", "Mesa", "--name", f"H{i}", *GAME,
                                "--transcript", str(tmp_path / f"h{i}.chn")), logs[i], tmp_path)
        for log in logs:
            _wait_for(log, "open on port")
        fps = [grab(r"fingerprint ([A-Z0-9]{4}(?:-[A-Z0-9]{4})+)", log.read_text()) for log in logs]
        join = lab.run(2, _cli("join", "Mesa", "--bot", "--browse", "4", "--min-proof-rounds", "4",
                               "--transcript", str(tmp_path / "j.chn")),
                       timeout=120, capture_output=True, text=True, env=_env(tmp_path), cwd=REPO)
    assert join.returncode == 1, join.stderr
    assert "several tables share that name" in join.stderr
    for fp in fps:
        assert fp in join.stderr, join.stderr
    assert not (tmp_path / "j.chn").exists(), "the joiner sat nowhere"


@pytest.mark.netns
def test_joiner_started_before_the_host_finds_it_by_name(tmp_path: Path) -> None:
    require_netns()
    with NetnsLab(2) as lab:
        jlog, hlog = tmp_path / "j.log", tmp_path / "h.log"
        joiner = _start(lab, 1, _cli("join", "Tarde", "--bot", "--browse", "2", "--wait", "90", "--name", "Ana",
                                     "--min-proof-rounds", "4", "--transcript", str(tmp_path / "j.chn")),
                        jlog, tmp_path)
        _wait_for(jlog, "still looking")
        host = _start(lab, 0, _cli("host", "--bot", "--table-name", "Tarde", *GAME, "--transcript", str(tmp_path / "h.chn")),
                      hlog, tmp_path)
        assert host.wait(timeout=300) == 0, hlog.read_text()
        assert joiner.wait(timeout=60) == 0, jlog.read_text()
    assert (tmp_path / "h.chn").read_bytes() == (tmp_path / "j.chn").read_bytes()


WATCH = textwrap.dedent(
    """
    import sys, time, trio
    from p2p_chinchon.net.discovery import browse_tables

    async def main():
        async with browse_tables() as browser:
            with trio.fail_after(60):
                async for tables in browser:
                    if any(t.name == "Adios" for t in tables):
                        print("seen", flush=True)
                        break
            with trio.fail_after(60):
                async for tables in browser:
                    if not any(t.name == "Adios" for t in tables):
                        print("gone", flush=True)
                        return

    trio.run(main)
    """
)


@pytest.mark.netns
def test_host_leaving_the_lobby_vanishes_from_the_lists(tmp_path: Path) -> None:
    """Ctrl-C on a host in the lobby: its mDNS goodbye removes the table from a browser's list
    (no waiting for the record's time to live)."""
    require_netns()
    with NetnsLab(2) as lab:
        hlog, wlog = tmp_path / "h.log", tmp_path / "w.log"
        host = _start(lab, 0, _cli("host", "--bot", "--table-name", "Adios", "--seats", "3", *GAME,
                                   "--transcript", str(tmp_path / "h.chn")), hlog, tmp_path)
        watcher = _start(lab, 1, [sys.executable, "-c", WATCH], wlog, tmp_path)
        _wait_for(wlog, "seen")
        host.send_signal(signal.SIGINT)
        host.wait(timeout=60)  # leaves at once
        assert watcher.wait(timeout=60) == 0, wlog.read_text()
    assert "gone" in wlog.read_text()
    out = hlog.read_text()
    assert "interrupted (Ctrl-C): left" in out and "Traceback" not in out, out


@pytest.mark.netns
def test_seat_killed_for_good_is_removed_and_the_others_finish(tmp_path: Path) -> None:
    """kill -9 of a joiner for good mid-hand: after ``rejoin_wait`` the two others remove it and
    finish the game (the peer gone for good)."""
    require_netns()
    with NetnsLab(3) as lab:
        procs, logs = _three_seats(lab, tmp_path, "47410", SHORT_LINGER)
        procs[2].send_signal(signal.SIGKILL)
        procs[2].wait()
        codes = [p.wait(timeout=300) for p in procs[:2]]
    assert codes == [0, 0], f"exit codes {codes}\n" + tails(logs)
    _played_on_without(tmp_path, "J2")


@pytest.mark.netns
def test_partition_blames_no_innocent_seat(tmp_path: Path) -> None:
    """One namespace is cut off for good (its bridge port goes down mid-hand). The two seats
    that still hear each other (a majority) remove the cut-off seat after ``rejoin_wait`` and
    finish the game without it; the cut-off seat hears nobody: it signs nothing, waits
    ``stall_limit`` and stops, exit 5, its record resumable. No transcript calls anyone a cheat."""
    from p2p_chinchon.audit import audit_file
    from p2p_chinchon.transcript import load_transcript

    require_netns()
    with NetnsLab(3) as lab:
        procs, logs = _three_seats(lab, tmp_path, "47400", SHORT_LINGER)
        subprocess.run(["ip", "-n", lab.hub, "link", "set", f"b{lab.tag}h2", "down"], check=True, timeout=20)
        codes = [p.wait(timeout=300) for p in procs]
    assert codes == [0, 0, 5], f"exit codes {codes}\n" + tails(logs)
    _played_on_without(tmp_path, "J2")
    report = audit_file(tmp_path / "s2.chn")
    assert report.verdict == "incomplete", report.summary()
    assert not [e for e in load_transcript(tmp_path / "s2.chn").envelopes if e.kind in ("fault", "remove")]
    assert (tmp_path / "s2.chn.secrets").exists(), "resumable"
    said = logs[2].read_text()  # what it said while it waited, and the line it stopped with
    assert "no other player can be reached" in said and "stopped waiting, signing nothing" in said, tails(logs)


@pytest.mark.netns
@pytest.mark.parametrize("moved", [False, True], ids=["same-address", "new-address"])
def test_seat_killed_and_restarted_by_name_finishes_identical(tmp_path: Path, moved: bool) -> None:
    """A seat killed and restarted, in namespaces through mDNS: three peers (the joiners find the
    table by name), a joiner killed with kill -9 mid-hand runs its same command again, rejoins
    and the game finishes with byte-identical transcripts that audit ok. ``new-address``: its
    machine got another address meanwhile (DHCP): the seats that dial it find it by its mDNS
    seat record (the signed seating still names the old address)."""
    from p2p_chinchon.audit import audit_file
    from p2p_chinchon.transcript import load_transcript

    require_netns()
    with NetnsLab(3) as lab:
        logs = [tmp_path / f"s{i}.log" for i in range(3)]
        procs = [_start(lab, 0, _cli("host", "--bot", "--table-name", "Noche", "--seats", "3", *GAME,
                                     *FIRST_HAND_GOES_ON, "--option", "rejoin_wait=120",
                                     "--transcript", str(tmp_path / "s0.chn")),
                        logs[0], tmp_path)]
        _wait_for(logs[0], "open on port")
        joins = {i: _cli("join", "Noche", "--bot", "--browse", "4", "--name", f"J{i}", "--min-proof-rounds", "4",
                         "--transcript", str(tmp_path / f"s{i}.chn")) for i in (1, 2)}
        for i in (1, 2):
            procs.append(_start(lab, i, joins[i], logs[i], tmp_path))
            time.sleep(0.5)
        end = time.monotonic() + 240
        while not (tmp_path / "s2.chn").exists() or "draw" not in [
                e.kind for e in load_transcript(tmp_path / "s2.chn").envelopes]:
            assert time.monotonic() < end, tails(logs)
            time.sleep(0.1)
        procs[2].send_signal(signal.SIGKILL)
        procs[2].wait()
        if moved:
            lab.move(2, 42)
        time.sleep(1.0)
        procs[2] = _start(lab, 2, joins[2], logs[2], tmp_path)  # the same command, again
        codes = [p.wait(timeout=300) for p in procs]
    assert codes == [0, 0, 0], f"exit codes {codes}\n" + tails(logs)
    data = [(tmp_path / f"s{i}.chn").read_bytes() for i in range(3)]
    assert data[0] == data[1] == data[2], "every transcript is byte-identical"
    report = audit_file(tmp_path / "s0.chn")
    assert report.verdict == "ok", report.summary()
    assert "J2 is back" in logs[0].read_text()


@pytest.mark.slow
@pytest.mark.netns
@pytest.mark.parametrize(("n", "mover"), [(2, 1), (3, 1), (2, 0)])
def test_a_seat_whose_address_changes_mid_game_is_linked_again_and_never_gone(tmp_path: Path, n: int,
                                                                             mover: int) -> None:
    """A seat's machine gets another address mid-game (a new Wi-Fi, a DHCP renewal), its process
    running, with --connect and no mDNS. J1 moved: the host's dials go to the address J1 left,
    so J1 dials the host the other way (at the address it joined at, where the host now
    listens); at three seats J1 plays through J2 meanwhile. The host moved: its own link to J1
    falls silent and it dials again from its new address without waiting for the link's idle
    timeout. The direct link is back within seconds, the game finishes identical and ok, and no
    screen ever says the seat is gone."""
    from p2p_chinchon.audit import audit_file

    require_netns()
    with NetnsLab(n) as lab:
        procs, logs = _seats(lab, tmp_path, n, f"474{mover}{n}", ["--option", "rejoin_wait=60", *FIRST_HAND_GOES_ON])
        other = 1 if mover == 0 else 0
        before = len(logs[other].read_text(errors="replace"))
        lab.move(mover, 42)
        moved_at = time.monotonic()
        end = moved_at + 120
        while f"link to seat {mover} up" not in logs[other].read_text(errors="replace")[before:]:
            assert time.monotonic() < end and all(p.poll() is None for p in procs), tails(logs)
            time.sleep(0.2)
        relinked_s = time.monotonic() - moved_at
        codes = [p.wait(timeout=300) for p in procs]
    assert codes == [0] * n, f"exit codes {codes}\n" + tails(logs)
    # a silent link counts as down after stale_after and is dialled again redial_after later:
    # the new link replaces it; no link is left to run out its idle timeout
    idled = [log.name for log in logs if "nothing received for" in log.read_text(errors="replace")]
    assert not idled, f"{idled}: a link idled out; back {relinked_s:.1f} s after the move\n" + tails(logs)
    data = [(tmp_path / f"s{i}.chn").read_bytes() for i in range(n)]
    assert all(d == data[0] for d in data), "every transcript is byte-identical"
    assert audit_file(tmp_path / "s0.chn").verdict == "ok"
    said = "".join(log.read_text(errors="replace") for log in logs)
    assert "is gone" not in said and "removing them" not in said, tails(logs)
