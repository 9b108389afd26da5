"""Network-namespace lab for tests: K hosts on one private Ethernet segment.

Layout (recipe from shared/DESIGN.md "Net"): a hub namespace holding a bridge, and K host
namespaces, each with ``lo`` up and one veth whose peer is enslaved to the bridge. Host ``i``
has address ``10.77.0.(i+1)/24`` and no default route, so nothing can leave the lab. Names
carry the pid and a counter, so parallel runs and leftovers from a crashed run do not clash.

Use::

    require_netns()                      # pytest.skip with a reason unless root + iproute2
    with NetnsLab(3) as lab:
        proc = lab.popen(0, [sys.executable, "-m", "..."], stdout=subprocess.PIPE)
        lab.addr(0)                      # "10.77.0.1"

Everything is torn down on exit (also after an exception): processes started through the lab
are killed, then every namespace the lab created is deleted (deleting a namespace deletes its
veth ends and the bridge).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from collections.abc import Sequence
from typing import Any

import pytest

_counter = itertools.count()


def netns_unavailable_reason() -> str | None:
    """Why a lab cannot be built here, or None if it can."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root for network namespaces"
    if shutil.which("ip") is None:
        return "needs the iproute2 `ip` command for network namespaces"
    return None


def require_netns() -> None:
    """``pytest.skip`` with a clear reason when namespaces cannot be built."""
    reason = netns_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)


def _ip(*args: str) -> None:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    if proc.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {proc.stderr.strip()}")


class NetnsLab:
    """K host namespaces joined by a bridge in a hub namespace (see module docstring)."""

    def __init__(self, hosts: int, subnet: str = "10.77.0") -> None:
        if not 1 <= hosts <= 200:
            raise ValueError("hosts must be in 1..200")
        self.k = hosts
        self.subnet = subnet
        tag = f"{os.getpid() % 0xFFFFF:x}{next(_counter):x}"  # short: interface names <= 15
        self.tag = tag
        self.hub = f"cchub{tag}"
        self.hosts = [f"cch{i}n{tag}" for i in range(hosts)]
        self._made: list[str] = []
        self._procs: list[subprocess.Popen[Any]] = []

    def addr(self, i: int) -> str:
        """IPv4 address of host ``i``."""
        return getattr(self, "_moved", {}).get(i, f"{self.subnet}.{i + 1}")

    def move(self, i: int, last_octet: int) -> str:
        """Give host ``i`` another address on the subnet and take the old one away (a new DHCP
        lease after a sleep). Returns the new address."""
        veth, old, new = f"e{self.tag}h{i}", self.addr(i), f"{self.subnet}.{last_octet}"
        # delete first: deleting a primary address also deletes the secondaries of its subnet
        _ip("-n", self.hosts[i], "addr", "del", f"{old}/24", "dev", veth)
        _ip("-n", self.hosts[i], "addr", "add", f"{new}/24", "dev", veth)
        self._moved = {**getattr(self, "_moved", {}), i: new}
        return new

    # ------------------------------------------------------------ build / tear down

    def build(self) -> None:
        try:
            _ip("netns", "add", self.hub)
            self._made.append(self.hub)
            _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.hub, "link", "set", "br0", "up")
            for i, ns in enumerate(self.hosts):
                _ip("netns", "add", ns)
                self._made.append(ns)
                veth, port = f"e{self.tag}h{i}", f"b{self.tag}h{i}"
                _ip("link", "add", veth, "netns", ns, "type", "veth", "peer", "name", port, "netns", self.hub)
                _ip("-n", self.hub, "link", "set", port, "master", "br0", "up")
                _ip("-n", ns, "link", "set", "lo", "up")
                _ip("-n", ns, "addr", "add", f"{self.addr(i)}/24", "dev", veth)
                _ip("-n", ns, "link", "set", veth, "up")
        except BaseException:
            self.teardown()
            raise

    def teardown(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        self._procs.clear()
        errors = []
        for ns in reversed(self._made):
            try:
                _ip("netns", "del", ns)
            except RuntimeError as exc:  # keep deleting the others
                errors.append(str(exc))
        self._made.clear()
        if errors:
            raise RuntimeError("; ".join(errors))

    def __enter__(self) -> NetnsLab:
        self.build()
        return self

    def __exit__(self, *exc: object) -> None:
        self.teardown()

    # ------------------------------------------------------------ run things inside

    def command(self, i: int, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", self.hosts[i], *argv]

    def popen(self, i: int, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
        """Start ``argv`` in host ``i``; the lab kills it on teardown if still running."""
        proc = subprocess.Popen(self.command(i, argv), **kwargs)
        self._procs.append(proc)
        return proc

    def run(self, i: int, argv: Sequence[str], timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
        """Run ``argv`` in host ``i`` to completion (``subprocess.run`` semantics)."""
        return subprocess.run(self.command(i, argv), timeout=timeout, **kwargs)
