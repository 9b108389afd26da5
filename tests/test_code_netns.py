"""Code words in network namespaces (``tests/netns.py`` ``InternetLab``; root and iptables, else
skipped with the reason): code words through home routers, nothing forwarded.

A "public" site runs the magic-wormhole mailbox and transit relay (``twist wormhole-mailbox``,
``twist transitrelay`` from the installed packages) and records every packet on its interface;
the host and two joiners each sit behind their own home router (MASQUERADE, no port forwarded).
``host --code`` / ``join --code`` play a whole three-seat bot game, every link through the relay:
transcripts identical, audit ok (Jimena, killed mid-hand, runs her same command again and comes back
through the relay); a wrong code word on the way is one line and exit 2 for its
typist and a new code on the host's screen, and so is a code nobody holds; the relay's and mailbox's packets hold no name, card
or message kind in clear.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import msgpack
import pytest

from harness.procs import _cli, _env, _wait_for, finished_identical, tails
from netns import InternetLab, internet_unavailable_reason

pytestmark = pytest.mark.slow  # network namespaces and peer processes

REPO = Path(__file__).resolve().parents[1]
# limit 60: a first-hand close must not end the game before the kill
GAME = ["--option", "limit=60", "--proof-rounds", "4"]
MAILBOX_PORT, RELAY_PORT = 4000, 4001
NAMES = ["Hortensia", "Jacinto", "Jimena"]  # long enough that no ciphertext holds one by chance

# Every frame on the public host's interfaces, appended to a file as it comes (the lab kills it).
CAPTURE = textwrap.dedent(
    """
    import socket, sys
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
    with open(sys.argv[1], "ab", buffering=0) as out:
        print("capturing", flush=True)
        while True:
            out.write(sock.recv(1 << 18))
    """
)


def _codes(log: Path) -> list[str]:
    return re.findall(r"code word: ([0-9a-z-]+) \(", log.read_text(errors="replace"))


def _wait_code(log: Path, n: int, limit: float = 60.0) -> str:
    end = time.monotonic() + limit
    while len(codes := _codes(log)) < n:
        if time.monotonic() > end:
            pytest.fail(f"no code word #{n} in {log.name}:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)
    return codes[n - 1]


@pytest.mark.netns
def test_code_words_through_home_routers(tmp_path: Path) -> None:
    from p2p_chinchon import wire
    from p2p_chinchon.transcript import load_transcript

    reason = internet_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with InternetLab([("routed", 1), ("nat", 1), ("nat", 1), ("nat", 1)]) as lab:
        pub, host, j1, j2 = (lab.host(k, 0) for k in range(4))
        logs = {name: tmp_path / f"{name}.log"
                for name in ("capture", "mailbox", "relay", "s0", "s1", "s2", "wrong", "expired")}

        def start(where: int, name: str, argv: list[str], home: str | None = None) -> subprocess.Popen:
            with open(logs[name], "ab") as f:
                return lab.popen(where, argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                 env=_env(tmp_path / (home or name)), cwd=tmp_path)

        start(pub, "capture", [sys.executable, "-c", CAPTURE, str(tmp_path / "capture.bin")])
        _wait_for(logs["capture"], "capturing")
        start(pub, "mailbox", [sys.executable, "-m", "twisted", "wormhole-mailbox", "--port", f"tcp:{MAILBOX_PORT}",
                               "--channel-db", str(tmp_path / "mailbox.sqlite")])
        start(pub, "relay", [sys.executable, "-m", "twisted", "transitrelay", "--port", f"tcp:{RELAY_PORT}"])
        _wait_for(logs["mailbox"], f"starting on {MAILBOX_PORT}")
        _wait_for(logs["relay"], f"starting on {RELAY_PORT}")
        mailbox = ["--mailbox", f"ws://{lab.addr(pub)}:{MAILBOX_PORT}/v1"]
        seats = [start(host, "s0", _cli("host", "--bot", "--name", NAMES[0], "--no-mdns", "--seats", "3", "--code", *GAME,
                                         *mailbox, "--relay", f"{lab.addr(pub)}:{RELAY_PORT}",
                                         "--transcript", str(tmp_path / "s0.chn")))]

        def join(where: int, n: int, code: str) -> list[str]:
            argv = _cli("join", "--bot", "--name", NAMES[n], "--min-proof-rounds", "4", "--code", code, *mailbox,
                        "--transcript", str(tmp_path / f"s{n}.chn"))
            seats.append(start(where, f"s{n}", argv, home=f"s{n}"))
            return argv

        join(j1, 1, _wait_code(logs["s0"], 1))
        # a code nobody holds (the mailbox hands out small numbers): told once its wait is over
        expired = start(j1, "expired", _cli("join", "--bot", "--code", "99-nobody-here", "--code-wait", "2", *mailbox),
                        home="e")
        # the next code, mistyped (its number, words not in magic-wormhole's list): its typist is told, the host gets a new code
        nameplate = _wait_code(logs["s0"], 2).split("-")[0]
        wrong = start(j2, "wrong", _cli("join", "--bot", "--name", "W", "--code", f"{nameplate}-mistyped-words",
                                        *mailbox), home="w")
        assert wrong.wait(timeout=60) == 2, logs["wrong"].read_text(errors="replace")
        again = join(j2, 2, _wait_code(logs["s0"], 3))
        # kill -9 of Jimena once she drew, then her same command again: back through the relay
        end = time.monotonic() + 120
        while not (tmp_path / "s2.chn").exists() or "draw" not in [
                e.kind for e in load_transcript(tmp_path / "s2.chn").envelopes]:
            assert time.monotonic() < end, tails([logs["s0"], logs["s1"], logs["s2"]], 4000)
            time.sleep(0.1)
        seats[2].send_signal(signal.SIGKILL)
        seats[2].wait()
        seats[2] = start(j2, "s2", again, home="s2")
        assert expired.wait(timeout=60) == 2, logs["expired"].read_text(errors="replace")
        codes: list[int | None] = []  # None: still running at the limit
        for p in seats:
            try:
                codes.append(p.wait(timeout=240))
            except subprocess.TimeoutExpired:
                codes.append(None)
    seat_logs = [logs["s0"], logs["s1"], logs["s2"]]
    finished_identical(tmp_path, 3, codes, seat_logs)
    said = logs["wrong"].read_text(errors="replace").strip().splitlines()
    assert said == ["p2p-chinchon join: wrong code word: it does not match the host's (check it and try again)"], said
    said = logs["expired"].read_text(errors="replace").strip().splitlines()
    assert said == ["p2p-chinchon join: nobody holds the code word 99-nobody-here (waited 2 s): it is mistyped, "
                    "or it expired (the host shows a new one after each join)"], said
    host_text = logs["s0"].read_text(errors="replace")
    assert "someone typed a wrong code word" in host_text, tails(seat_logs, 4000)
    # every link met at the relay: nobody can dial anybody through the home routers
    assert host_text.count("met through the transit relay") >= 2, tails(seat_logs, 4000)
    assert f"{NAMES[2]} is back" in host_text, tails(seat_logs, 4000)
    assert host_text.count("seat 2 met through the transit relay") >= 2, tails(seat_logs, 4000)  # before and after
    assert "met through the transit relay" in logs["s1"].read_text(errors="replace"), tails(seat_logs, 4000)
    captured = (tmp_path / "capture.bin").read_bytes()
    frames = load_transcript(tmp_path / "s0.chn").frames
    assert len(captured) > sum(len(f) for f in frames) > 0  # the whole game crossed the relay
    assert b"\x17\x03\x03" in captured  # TLS application-data records
    for name in [*NAMES, f"{NAMES[0]}'s table"]:
        assert msgpack.packb(name) not in captured and name.encode() not in captured, name
    for kind in wire.KINDS:
        assert msgpack.packb(kind) not in captured, kind
    for frame in frames:  # any 32 bytes of any envelope (signatures, decryption shares, ...)
        mid = len(frame) // 2
        assert frame[mid : mid + 32] not in captured
