"""Bot peers of ``play`` forked from one loaded parent.

Each bot peer of ``play`` is its own process running ``p2p-chinchon join --bot ...``. Started
with ``exec``, each spends ~0.4 s of CPU importing trio, the table, the crypto and the bots
before any protocol work: four peers on two cores pay 1.7 CPU-seconds before the first
envelope. Here the ``play`` process, once its lobby is bound, imports what a joining bot
runs (:data:`PRELOAD`), then ``fork()`` s one child per bot (about 2 ms each); the child
runs the very ``join`` command line through :func:`p2p_chinchon.cli.main` and exits with its
code. Each child is still its own process with its own keys (made after the fork, from the
operating system's generator, as a spawned peer makes them), its own transcript and log, and
its own sockets (the parent's lobby sockets are closed in it). Nothing that a peer's protocol
uses is made before the fork: the parent forks before it creates its own identity, its
table or any trio run; the ``random`` module (bots' tie-breaks) is reseeded in each child;
``secrets``, libsodium and OpenSSL draw from the operating system (OpenSSL reseeds after a
fork).
"""

from __future__ import annotations

import importlib
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

# What a joining bot runs, imported once in the parent (lazily imported modules included).
PRELOAD = (
    "trio", "p2p_chinchon.cli", "p2p_chinchon.commands.join", "p2p_chinchon.identity", "p2p_chinchon.local",
    "p2p_chinchon.net.lobby", "p2p_chinchon.net.session", "p2p_chinchon.net.node", "p2p_chinchon.net.mesh",
    "p2p_chinchon.net.tls", "p2p_chinchon.table", "p2p_chinchon.deck", "p2p_chinchon.autoplay",
    "p2p_chinchon.bots", "p2p_chinchon.i18n", "p2p_chinchon.ui.logtext", "platformdirs",
    "cryptography.x509", "cryptography.hazmat.primitives.serialization",  # a peer's TLS certificate
)


def available() -> bool:
    return hasattr(os, "fork")


def preload() -> None:
    """Import :data:`PRELOAD`."""
    for name in PRELOAD:
        importlib.import_module(name)


class ForkedPeer:
    """A forked bot peer, watched like a ``subprocess.Popen``: ``poll``, ``wait``, ``kill``,
    ``returncode`` (negative: the signal that ended it)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        while self.poll() is None:
            time.sleep(0.02)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def die_with_parent(parent: int) -> None:
    """In a bot peer just started by ``play`` (pid ``parent``): on Linux, have the kernel send
    it SIGTERM when ``play`` ends, however it ends (``prctl(PR_SET_PDEATHSIG)``; a ``play``
    terminated or killed would otherwise leave its bots waiting out their ``stall_limit``), and
    end now if ``play`` is already gone. Elsewhere nothing: ``play`` kills them as it exits."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG = 1 (linux/prctl.h)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:
        os._exit(1)


def fork_peer(argv: list[str], log: Path, close: list[Any]) -> ForkedPeer:
    """Fork a child that runs ``p2p-chinchon ARGV`` with stdin from /dev/null and its output
    appended to ``log``; ``close``: the parent's sockets the child must not hold."""
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid:
        return ForkedPeer(pid)
    code = 1
    try:  # the child: never returns into the parent's code
        die_with_parent(parent)
        for sock in close:
            sock.close()
        out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.close(null)
        # the streams on those descriptors, whatever the parent had made of its own
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="replace", closefd=False, buffering=1)
        random.seed()  # fresh, not the parent's state
        from p2p_chinchon.cli import main

        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - report it in the log, never unwind into the parent
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if isinstance(code, int) else 1)
