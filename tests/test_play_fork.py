"""``play``'s bot peers forked from one loaded parent: each is still its
own process with its own keys, randomness, transcript and log, holding none of the parent's
lobby sockets; ``--bot-start exec`` still starts each as a new interpreter."""

from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from p2p_chinchon import cli
from p2p_chinchon.audit import audit_file
from p2p_chinchon.commands import _fork

# bot peers forked or started as processes
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not _fork.available(), reason="no fork() on this system")]


def test_forked_peers_are_separate_processes_with_fresh_randomness(tmp_path, monkeypatch):
    lobby = socket.socket()
    lobby.bind(("127.0.0.1", 0))
    lobby.listen()
    random.seed(1234)  # the parent's state: a child must not replay it

    def fake_main(argv):
        held = sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else []
        lobby_held = any(os.readlink(f"/proc/self/fd/{fd}") == f"socket:[{os.fstat(lobby.fileno()).st_ino}]"
                         for fd in held if fd.isdigit() and os.path.exists(f"/proc/self/fd/{fd}")
                         ) if lobby.fileno() >= 0 else False
        print(argv[0], os.getpid(), random.getrandbits(64), os.urandom(8).hex(), lobby_held, sys.stdin.read() == "")
        return 7

    monkeypatch.setattr(cli, "main", fake_main)
    peers = [_fork.fork_peer([f"peer{i}"], tmp_path / f"p{i}.log", [lobby]) for i in range(2)]
    assert [p.wait() for p in peers] == [7, 7]
    lines = [(tmp_path / f"p{i}.log").read_text().split() for i in range(2)]
    assert [line[0] for line in lines] == ["peer0", "peer1"]
    assert len({line[1] for line in lines} | {str(os.getpid())}) == 3  # three processes
    assert lines[0][2] != lines[1][2] and lines[0][3] != lines[1][3]  # random and os randomness differ
    assert [line[4:] for line in lines] == [["False", "True"]] * 2  # no lobby socket; stdin empty
    lobby.close()


def test_a_killed_forked_peer_reports_its_signal(tmp_path, monkeypatch):
    import signal
    import time

    monkeypatch.setattr(cli, "main", lambda argv: time.sleep(60))
    peer = _fork.fork_peer(["x"], tmp_path / "x.log", [])
    assert peer.poll() is None
    peer.kill()
    assert peer.wait() == -signal.SIGKILL


@pytest.mark.parametrize("start", ["fork", "exec"])
def test_play_starts_its_bot_peers_either_way(tmp_path, start):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    proc = subprocess.run(
        [sys.executable, "-m", "p2p_chinchon", "play", "--no-ui", "--bots", "2", "--seed", "4", "--proof-rounds", "4",
         "--option", "limit=12", "--bot-start", start],
        capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = re.search(r"all transcripts: (.+)", proc.stdout)
    assert found is not None, proc.stdout[-3000:]
    folder = Path(found.group(1).strip())
    files = sorted(folder.glob("*.chn"))
    assert len(files) == 3 and len({f.read_bytes() for f in files}) == 1
    report = audit_file(files[0], jobs=1)
    assert report.verdict == "ok", report.summary()
    assert len({p["fingerprint"] for p in report.players}) == 3  # each peer made its own key
