"""In a real 80x24 terminal (tmux): a TLS handshake that fails during play
(a stranger's TLS client dials the joiner's mesh port and is refused) leaves the screen
intact: no raw log line, the layout unshifted, a short notice on the message line, the line
itself in the log file. Same harness as tests/test_tmux.py."""

from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from harness import free_port
from harness.tmux import Tmux, game_env, head, leave

# the command in tmux, as its own process
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return out


def listening_ports(pid: int) -> set[int]:
    """TCP ports (IPv4) on which ``pid`` itself listens, from /proc."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").glob("*"):
        try:
            m = re.match(r"socket:\[(\d+)\]", os.readlink(fd))
        except OSError:
            continue
        if m:
            inodes.add(m.group(1))
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:
            ports.add(int(f[1].split(":")[1], 16))
    return ports


def _stranger(port: int) -> None:
    """A TLS client that is no seat of the game: the seat refuses the link."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        try:
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"hello")
                tls.recv(10)
        except OSError:
            pass


def test_a_failed_tls_handshake_during_play_leaves_the_screen_intact(tmp_path):
    env = game_env(tmp_path)
    port = free_port()
    host = subprocess.Popen(
        [sys.executable, "-m", "p2p_chinchon", "host", "--bot", "--seats", "2", "--port", str(port),
         "--bind", "127.0.0.1", "--no-mdns", "--seed", "1", "--proof-rounds", "4", "--option", "limit=20",
         "--quiet", "--transcript", str(tmp_path / "host.chn")],
        env=dict(env, XDG_CONFIG_HOME=str(tmp_path / "host-config")), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cmd = [sys.executable, "-m", "p2p_chinchon", "join", "--connect", f"127.0.0.1:{port}", "--name", "Bruno",
           "--bind", "127.0.0.1", "--min-proof-rounds", "4", "--no-bell", "--transcript", str(tmp_path / "me.chn")]
    t = Tmux(tmp_path, 80, 24, cmd, env)
    try:
        t.wait(lambda s: "Press a to agree" in s, "the proposed table", timeout=60)
        t.keys("a")
        before = t.wait(lambda s: re.search(r"your turn: draw a card|to play", head(s))
                        and "Your hand:" in s, "the table", timeout=60)
        pane = int(t.run("display-message", "-p", "-t", "t", "#{pane_pid}").strip())
        me = [p for p in _descendants(pane) if listening_ports(p)]
        assert me, "the join process and its mesh port"
        for port in listening_ports(me[0]):
            _stranger(port)
        text = t.wait(lambda s: "A connection was refused" in s, "the notice on the message line")
        rows, rows_before = text.splitlines(), before.splitlines()
        assert "refused connection" not in text and "TLS" not in text and "seat 1:" not in text, text
        assert len(rows) == len(rows_before) and "p2p-chinchón" in rows[0]
        for label in (r"[ ▶] bot ", r"[ ▶] Bruno ", "Discard pile:", "Your hand:"):  # nothing moved a row
            assert [i for i, r in enumerate(rows) if re.match(label, r)] == \
                   [i for i, r in enumerate(rows_before) if re.match(label, r)], (label, before, text)
        log = (tmp_path / "data" / "p2p-chinchon" / "p2p-chinchon.log").read_text()
        assert "refused connection from" in log, log
        leave(t)
    finally:
        t.close()
        host.kill()
        host.wait()
