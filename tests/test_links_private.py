"""Private links: a packet capture of a whole `p2p-chinchon play --no-ui` game holds
no player name, message kind or envelope (so no card share) in clear.

The game runs in a network namespace of its own (``unshare -n``), so the capture on its
loopback holds this game's packets and nothing else; an AF_PACKET socket records every frame.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import msgpack
import pytest

from netns import require_netns
from p2p_chinchon import wire
from p2p_chinchon.transcript import load_transcript

pytestmark = pytest.mark.slow  # network namespaces and peer processes

CAPTURE = textwrap.dedent(
    """
    import socket, subprocess, sys, threading
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    sock.bind(("lo", 0))
    sock.settimeout(0.2)
    packets, stop = [], threading.Event()
    def record():
        while not stop.is_set():
            try:
                packets.append(sock.recv(1 << 18))
            except socket.timeout:
                pass
    reader = threading.Thread(target=record)
    reader.start()
    proc = subprocess.run(sys.argv[2:], capture_output=True, text=True, timeout=500)
    stop.set()
    reader.join()
    with open(sys.argv[1], "wb") as f:
        f.write(b"".join(packets))
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    sys.exit(proc.returncode)
    """
)


def test_capture_of_a_whole_game_shows_nothing_in_clear(tmp_path: Path) -> None:
    require_netns()
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux unshare for a private network namespace")
    pcap = tmp_path / "capture.bin"
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    game = [sys.executable, "-m", "p2p_chinchon", "play", "--no-ui", "--bots", "2", "--seed", "5",
            "--proof-rounds", "4", "--option", "limit=20"]
    proc = subprocess.run(["unshare", "-n", sys.executable, "-c", CAPTURE, str(pcap), *game],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    folder = Path(re.search(r"all transcripts: (.+)", proc.stdout).group(1).strip())  # type: ignore[union-attr]
    frames = load_transcript(folder / "seat-host.chn").frames
    captured = pcap.read_bytes()
    # the capture saw the whole game: at least as many bytes as the envelopes themselves
    assert len(captured) > sum(len(f) for f in frames) > 0
    assert b"\x17\x03\x03" in captured  # TLS application-data records
    names = ["Ana", "Bruno", "Carla"]
    assert all(n in proc.stdout for n in names)  # the game did show them, on screen
    for name in names:
        assert msgpack.packb(name) not in captured, name
    for kind in wire.KINDS:
        assert msgpack.packb(kind) not in captured, kind
    for frame in frames:  # any 32 bytes of any envelope (signatures, decryption shares, ...)
        mid = len(frame) // 2
        assert frame[mid : mid + 32] not in captured
