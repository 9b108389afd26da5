"""Partitions in network namespaces: one namespace per seat on one bridge; a cut is
iptables DROP rules in each seat's namespace for the addresses across it (links open but
silent), a heal flushes them. Bot seats as separate processes.

No timed assertions: the waits are generous upper bounds for a loaded 2-core machine.
"""
from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.procs import SHORT_LINGER, _played_on_without, _seats, tails
from netns import NetnsLab, require_netns
from p2p_chinchon import wire

# network namespaces and peer processes
pytestmark = [pytest.mark.slow, pytest.mark.netns]


def _iptables(lab: NetnsLab, i: int, *args: str) -> None:
    subprocess.run(["ip", "netns", "exec", lab.hosts[i], "iptables", *args], check=True, timeout=20)


def _cut(lab: NetnsLab, sides: list[int]) -> None:
    for i, side in enumerate(sides):
        for j, other in enumerate(sides):
            if other != side:
                _iptables(lab, i, "-A", "INPUT", "-s", lab.addr(j), "-j", "DROP")
                _iptables(lab, i, "-A", "OUTPUT", "-d", lab.addr(j), "-j", "DROP")


def _heal(lab: NetnsLab, n: int) -> None:
    for i in range(n):
        _iptables(lab, i, "-F")


def _kinds(path: Path) -> list[str]:
    from p2p_chinchon.transcript import load_transcript

    return [e.kind for e in load_transcript(path).envelopes] if path.exists() else []


def _need_iptables() -> None:
    require_netns()
    if shutil.which("iptables") is None or subprocess.run(["iptables", "--version"], capture_output=True).returncode != 0:
        pytest.skip("iptables is not installed")


def test_a_two_two_split_removes_nobody_and_heals_into_one_game(tmp_path: Path) -> None:
    """Four seats cut into {host, J2} and {J1, J3} for three times ``rejoin_wait``: neither
    half is a majority, so neither removes anyone (never two games, each
    finished by one half and audited ``ok``); both say they cannot play on without the
    others. Healed, the four finish one game: exit 0, byte-identical transcripts, ``ok``."""
    from p2p_chinchon.audit import audit_file

    _need_iptables()
    with NetnsLab(4) as lab:
        procs, logs = _seats(lab, tmp_path, 4, "47420", [])
        _cut(lab, [0, 1, 0, 1])
        time.sleep(15.0)
        assert all(p.poll() is None for p in procs), tails(logs)
        assert not any("remove" in _kinds(tmp_path / f"s{i}.chn") for i in range(4))
        _heal(lab, 4)
        codes = [p.wait(timeout=400) for p in procs]
    assert codes == [0, 0, 0, 0], f"exit codes {codes}\n" + tails(logs)
    data = [(tmp_path / f"s{i}.chn").read_bytes() for i in range(4)]
    assert all(d == data[0] for d in data), "one game, every transcript byte-identical"
    assert "remove" not in _kinds(tmp_path / "s0.chn")
    report = audit_file(tmp_path / "s0.chn")
    assert report.verdict == "ok", report.summary()
    said = "".join(log.read_text(errors="replace") for log in logs)
    assert "players' votes" in said or "cannot play on without" in said, tails(logs)


def test_a_three_two_split_lets_the_three_play_on_and_the_two_wait(tmp_path: Path) -> None:
    """Five seats cut into {host, J1, J2} and {J3, J4}: the three (a majority) vote the two
    away, remove them and finish (exit 0, identical, ``ok`` with J3 and J4 "left"); the two
    cannot remove anyone: they sign nothing, wait ``stall_limit`` and stop (exit 5), their
    records resumable and accusing nobody."""
    from p2p_chinchon.audit import audit_file

    _need_iptables()
    with NetnsLab(5) as lab:
        procs, logs = _seats(lab, tmp_path, 5, "47430", ["--option", "stall_limit=15"], SHORT_LINGER)
        _cut(lab, [0, 0, 0, 1, 1])
        codes = [p.wait(timeout=500) for p in procs]
    assert codes == [0, 0, 0, 5, 5], f"exit codes {codes}\n" + tails(logs)
    data = [(tmp_path / f"s{i}.chn").read_bytes() for i in range(3)]
    assert data[0] == data[1] == data[2]
    report = audit_file(tmp_path / "s0.chn")
    assert report.verdict == "ok", report.summary()
    assert sorted(m["seat"] for m in report.marks if m["event"] == "left") == [3, 4], report.marks
    for i in (3, 4):
        kinds = _kinds(tmp_path / f"s{i}.chn")
        assert "fault" not in kinds and "remove" not in kinds, kinds
        assert (tmp_path / f"s{i}.chn.secrets").exists()
        assert audit_file(tmp_path / f"s{i}.chn").verdict == "incomplete"


@pytest.mark.slow
def test_a_seat_cut_off_until_the_others_are_far_ahead_learns_its_removal_and_accuses_nobody(tmp_path: Path) -> None:
    """Three seats; J2 on its own island (links open but silent) until the other two removed
    it and played on more envelopes than a seat buffers ahead of its chain, then healed: the
    first live envelope J2 meets is far ahead of it. It asks instead of accusing (before, it
    signed a ``flood`` fault against the innocent host and every seat stopped, every audit
    ``accused``), learns its removal and exits 4, its record incomplete and free of faults;
    the others finish ``ok``, byte-identical."""
    from p2p_chinchon.audit import audit_file
    from p2p_chinchon.net.mesh import MeshConfig
    from p2p_chinchon.table import MAX_BUFFERED

    _need_iptables()
    with NetnsLab(3) as lab:
        # a long game that no chinchón ends (one did, once, before the others were far ahead):
        # "far" is about 2,600 envelopes, when the leader has some 320 points; a game to 800 is
        # about 6,500 envelopes (to 1,500 it was 12,500, the rest played on for nothing)
        procs, logs = _seats(lab, tmp_path, 3, "47440", ["--option", "limit=800", "--option", "chinchon_wins=false",
                                                        "--option", "stall_limit=120"], SHORT_LINGER)
        _cut(lab, [0, 0, 1])
        end = time.monotonic() + 400
        # more than a link's send queue ahead too: the host closes its stuck link to J2, and
        # after the heal its live envelopes may reach J2 before the answer to J2's S
        far = max(MAX_BUFFERED, MeshConfig().send_queue) * 2 + 500
        while True:
            ahead = len(_kinds(tmp_path / "s0.chn")) - len(_kinds(tmp_path / "s2.chn"))
            if "remove" in _kinds(tmp_path / "s0.chn") and ahead > far:
                break
            assert procs[0].poll() is None and time.monotonic() < end, tails(logs)
            time.sleep(0.5)
        _heal(lab, 3)
        codes = [p.wait(timeout=600) for p in procs]
    assert codes == [0, 0, 4], f"exit codes {codes}\n" + tails(logs)
    assert (tmp_path / "s0.chn").read_bytes() == (tmp_path / "s1.chn").read_bytes()
    report = audit_file(tmp_path / "s0.chn")
    assert report.verdict == "ok", report.summary()
    assert [(m["seat"], m["reason"]) for m in report.marks if m["event"] == "left"] == [(2, "absent")]
    assert "fault" not in _kinds(tmp_path / "s2.chn")
    mine = audit_file(tmp_path / "s2.chn")
    assert mine.verdict == "incomplete" and mine.exit_code == 3, mine.summary()


def test_a_removed_seats_late_fault_is_dropped_as_evidence_and_the_others_finish(tmp_path: Path) -> None:
    """J2 is killed mid-hand and removed by the two others, who play on; then a modified client
    of J2's (tests/late_fault.py, a process in J2's namespace with J2's key) dials the host's
    mesh port as J2 and sends a ``fault`` signed at J2's last position, accusing J1. The host
    drops it and keeps it as evidence naming J2 (rule ``removed``); the others finish ``ok``,
    byte-identical, J2 ``absent`` (before, such a fault stopped both others with no winner)."""
    import msgpack

    from harness.procs import REPO, _env

    require_netns()
    with NetnsLab(3) as lab:
        # long enough to go on after the removal and the late fault; no chinchón ends it first
        procs, logs = _seats(lab, tmp_path, 3, "47450", ["--option", "stall_limit=120", "--option", "limit=150",
                                                       "--option", "chinchon_wins=false"], SHORT_LINGER)
        procs[2].send_signal(signal.SIGKILL)
        procs[2].wait()
        end = time.monotonic() + 300
        while not ("remove" in _kinds(tmp_path / "s0.chn")
                   and len(_kinds(tmp_path / "s0.chn")) > len(_kinds(tmp_path / "s2.chn")) + 40):
            assert procs[0].poll() is None and time.monotonic() < end, tails(logs)
            time.sleep(0.5)
        key_dir = tmp_path / "config" / "p2p-chinchon" / "bot-seats" / "J2"
        sent = lab.run(2, [sys.executable, str(REPO / "tests" / "late_fault.py"), str(tmp_path / "s2.chn"),
                           str(key_dir), lab.addr(0), "47450"],
                       capture_output=True, text=True, env=_env(tmp_path), cwd=REPO, timeout=60)
        assert sent.returncode == 0 and "sent" in sent.stdout, sent.stdout + sent.stderr
        codes = [p.wait(timeout=300) for p in procs[:2]]
    assert codes == [0, 0], f"exit codes {codes}\n" + tails(logs)
    _played_on_without(tmp_path, "J2")
    with open(tmp_path / "s0.chn.evidence", "rb") as f:
        records = list(msgpack.Unpacker(f, raw=False))
    kept = [r for r in records if r["seat"] == 2 and r["rule"] == "removed"]
    assert kept and any(wire.decode_envelope(f).kind == "fault" for r in kept for f in r["frames"]), records
