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
from typing import Any, Self

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
            self._wire()
        except BaseException:
            self.teardown()
            raise

    def _wire(self) -> None:
        """Everything after the hub's bridge ``br0``: here, every host on it."""
        for i in range(self.k):
            self._plug(i, self.hub, "br0")

    def _plug(self, i: int, where: str, bridge: str) -> None:
        """Make host ``i``'s namespace, ``lo`` up, one veth with its address, the other end
        enslaved to ``bridge`` in namespace ``where``."""
        ns = self.hosts[i]
        _ip("netns", "add", ns)
        self._made.append(ns)
        veth, port = f"e{self.tag}h{i}", f"b{self.tag}h{i}"
        _ip("link", "add", veth, "netns", ns, "type", "veth", "peer", "name", port, "netns", where)
        _ip("-n", where, "link", "set", port, "master", bridge, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "addr", "add", f"{self.addr(i)}/24", "dev", veth)
        _ip("-n", ns, "link", "set", veth, "up")

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

    def __enter__(self) -> Self:
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


def internet_unavailable_reason(wireguard: bool = False) -> str | None:
    """Why an :class:`InternetLab` cannot be built here (or, with ``wireguard``, a userspace
    WireGuard tunnel laid over it), or None if it can."""
    reason = netns_unavailable_reason()
    if reason is None and shutil.which("iptables") is None:
        reason = "needs iptables for the NAT routers (apt-get install iptables)"
    if reason is None and wireguard:
        missing = [t for t in ("wireguard-go", "wg") if shutil.which(t) is None]
        if missing or not os.path.exists("/dev/net/tun"):
            reason = (f"needs {' and '.join(missing)} (apt-get install --no-install-recommends wireguard-go "
                      "wireguard-tools)" if missing else "needs /dev/net/tun for wireguard-go")
    return reason


def _in(ns: str, *argv: str) -> None:
    proc = subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, timeout=20)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} in {ns} failed: {proc.stderr.strip()}")


class InternetLab(NetnsLab):
    """Sites joined by an "internet" (a bridge in the hub namespace, 10.60.0.0/24), each behind
    its own router namespace: site ``k``'s router has WAN address ``10.60.0.(k+1)`` and LAN
    ``10.(61+k).0.0/24`` (router ``.1``, hosts ``.2``, ``.3``, ...; their default route is the
    router). A ``"routed"`` site's LAN is routed from every other router (a subnet joined by
    routers, no NAT); a ``"nat"`` site is a home router: MASQUERADE on its WAN and no route to
    its LAN from outside, so it is reached only at ports :meth:`forward` opens.

    Use::

        with InternetLab([("routed", 1), ("nat", 2)]) as lab:
            lab.forward(1, 50001, 0, 41001)       # site 1's WAN :50001 -> its host 0 :41001
            lab.popen(lab.host(1, 0), argv, ...)   # host indices as for NetnsLab
            lab.addr(lab.host(1, 0)), lab.wan(1)
    """

    def __init__(self, sites: Sequence[tuple[str, int]]) -> None:
        self.sites = [(kind, n) for kind, n in sites]
        if not self.sites or any(kind not in ("routed", "nat") or n < 1 for kind, n in self.sites):
            raise ValueError("sites are ('routed' | 'nat', hosts >= 1)")
        self._index = [(k, i) for k, (_kind, n) in enumerate(self.sites) for i in range(n)]
        super().__init__(len(self._index))
        self.routers = [f"ccr{k}n{self.tag}" for k in range(len(self.sites))]

    def host(self, site: int, i: int) -> int:
        """The lab index (for popen, run, addr) of host ``i`` of ``site``."""
        return self._index.index((site, i))

    def addr(self, i: int) -> str:
        k, j = self._index[i]
        return f"10.{61 + k}.0.{j + 2}"

    def wan(self, site: int) -> str:
        """The public (internet) address of ``site``'s router."""
        return f"10.60.0.{site + 1}"

    def _wire(self) -> None:
        """The routers on the internet (``br0``), their LANs, the hosts, the routes."""
        for k, (kind, _n) in enumerate(self.sites):
            r = self.routers[k]
            _ip("netns", "add", r)
            self._made.append(r)
            wan, port = f"w{self.tag}r{k}", f"u{self.tag}r{k}"
            _ip("link", "add", wan, "netns", r, "type", "veth", "peer", "name", port, "netns", self.hub)
            _ip("-n", self.hub, "link", "set", port, "master", "br0", "up")
            _ip("-n", r, "link", "set", "lo", "up")
            _ip("-n", r, "addr", "add", f"{self.wan(k)}/24", "dev", wan)
            _ip("-n", r, "link", "set", wan, "up")
            _ip("-n", r, "link", "add", "lan", "type", "bridge")
            _ip("-n", r, "addr", "add", f"10.{61 + k}.0.1/24", "dev", "lan")
            _ip("-n", r, "link", "set", "lan", "up")
            _in(r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            if kind == "nat":
                _in(r, "iptables", "-t", "nat", "-A", "POSTROUTING", "-o", wan, "-j", "MASQUERADE")
        for i, ns in enumerate(self.hosts):
            k, _j = self._index[i]
            self._plug(i, self.routers[k], "lan")
            _ip("-n", ns, "route", "add", "default", "via", f"10.{61 + k}.0.1")
        for k, (kind, _n) in enumerate(self.sites):
            if kind == "routed":
                for other in range(len(self.sites)):
                    if other != k:
                        _ip("-n", self.routers[other], "route", "add", f"10.{61 + k}.0.0/24", "via", self.wan(k))

    def forward(self, site: int, port: int, i: int, to_port: int | None = None) -> None:
        """Forward TCP ``port`` on ``site``'s WAN address to its host ``i`` (``to_port``,
        default the same port): what a player does on a home router."""
        wan = f"w{self.tag}r{site}"
        _in(self.routers[site], "iptables", "-t", "nat", "-A", "PREROUTING", "-i", wan, "-p", "tcp", "--dport",
            str(port), "-j", "DNAT", "--to-destination", f"{self.addr(self.host(site, i))}:{to_port or port}")

    def overlay(self, members: Sequence[int], subnet: str = "10.99.0") -> list[str]:
        """A routed stand-in for a mesh VPN: one more interface in each of ``members`` (lab
        host indices) on a private segment of its own, ``subnet.1``, ``.2``, ... Returns the
        overlay addresses in ``members`` order."""
        _ip("-n", self.hub, "link", "add", "ovl", "type", "bridge")
        _ip("-n", self.hub, "link", "set", "ovl", "up")
        out = []
        for n, i in enumerate(members):
            veth, port = f"o{self.tag}h{i}", f"p{self.tag}h{i}"
            _ip("link", "add", veth, "netns", self.hosts[i], "type", "veth", "peer", "name", port, "netns", self.hub)
            _ip("-n", self.hub, "link", "set", port, "master", "ovl", "up")
            _ip("-n", self.hosts[i], "addr", "add", f"{subnet}.{n + 1}/24", "dev", veth)
            _ip("-n", self.hosts[i], "link", "set", veth, "up")
            out.append(f"{subnet}.{n + 1}")
        return out

    def wireguard(self, hub: int, spokes: Sequence[int], subnet: str = "10.99.0", port: int = 51820) -> list[str]:
        """A real WireGuard tunnel (userspace ``wireguard-go``): lab host ``hub`` listens on UDP
        ``port`` at its address (reachable: a routed site, or forward it), every spoke (behind
        its NAT) keeps a session to it; spokes reach each other through the hub, which
        forwards (as a relay of a mesh VPN does). Returns the tunnel addresses, hub first."""
        members = [hub, *spokes]
        keys = []
        for _ in members:
            private = subprocess.run(["wg", "genkey"], capture_output=True, text=True, check=True).stdout.strip()
            public = subprocess.run(["wg", "pubkey"], input=private, capture_output=True, text=True,
                                    check=True).stdout.strip()
            keys.append((private, public))
        out = []
        for n, i in enumerate(members):
            dev = f"wg{self.tag}{n}"[:15]
            self.popen(i, ["wireguard-go", "-f", dev], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, LOG_LEVEL="error"))
            for _ in range(100):  # its device appears once the daemon is up
                shown = subprocess.run(["ip", "-n", self.hosts[i], "link", "show", dev], capture_output=True)
                if shown.returncode == 0:
                    break
                subprocess.run(["sleep", "0.1"])
            key_file = f"/tmp/{dev}.key"
            with open(key_file, "w") as f:
                f.write(keys[n][0])
            wg = ["wg", "set", dev, "private-key", key_file]
            if n == 0:
                wg += ["listen-port", str(port)]
                for m in range(1, len(members)):
                    wg += ["peer", keys[m][1], "allowed-ips", f"{subnet}.{m + 1}/32"]
                _in(self.hosts[i], "sysctl", "-qw", "net.ipv4.ip_forward=1")
            else:
                wg += ["peer", keys[0][1], "allowed-ips", f"{subnet}.0/24", "endpoint", f"{self.addr(hub)}:{port}",
                       "persistent-keepalive", "1"]
            _in(self.hosts[i], *wg)
            os.unlink(key_file)
            _ip("-n", self.hosts[i], "addr", "add", f"{subnet}.{n + 1}/24", "dev", dev)
            _ip("-n", self.hosts[i], "link", "set", dev, "up")
            out.append(f"{subnet}.{n + 1}")
        return out
