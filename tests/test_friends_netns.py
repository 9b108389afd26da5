"""Friends on different networks, in network namespaces (``tests/netns.py`` ``InternetLab``;
root and iptables, else skipped with the reason). Bot seats, each its own home folder,
``--no-mdns`` and ``join --connect``:

- routed subnets and home routers with a forwarded port (``join --port`` and ``--advertise``),
  then every seat behind its own home router with only forwarded ports: the game finishes;
- ``host --advertise``: ``join --list`` on the host's LAN shows the addresses;
- joiners behind a home router with nothing forwarded: every screen names the seat nobody
  reaches and its address, every seat stops by itself, every audit says "never started";
- a mesh VPN (a real WireGuard tunnel with ``wireguard-go``, else a routed stand-in): one
  joiner ``--connect``s to the host's VPN address, the other to its public one (the seating
  then holds its router's address: its VPN address among its candidates saves the game).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from harness.procs import _cli, _env, _wait_for, finished_identical, tails
from netns import InternetLab, internet_unavailable_reason

pytestmark = pytest.mark.slow  # network namespaces and peer processes

REPO = Path(__file__).resolve().parents[1]  # the seats run from this checkout
GAME = ["--option", "limit=20", "--proof-rounds", "4"]
LOBBY = 47600


def _require(wireguard: bool = False) -> None:
    reason = internet_unavailable_reason(wireguard)
    if reason is not None:
        pytest.skip(reason)


def _table(lab: InternetLab, tmp_path: Path, host: int, joiners: list[tuple[int, str, list[str]]],
           host_args: tuple[str, ...] = (), limit: float = 300) -> tuple[list[int | None], list[Path]]:
    """A bot host (lab host ``host``, lobby port :data:`LOBBY`) and bot joiners
    ``(lab host, name, join arguments)``, each with its own home folder; returns their exit
    codes and logs once all have stopped."""
    logs = [tmp_path / f"s{i}.log" for i in range(len(joiners) + 1)]
    procs = []

    def start(i: int, where: int, argv: list[str]) -> None:
        home = tmp_path / f"home{i}"
        with open(logs[i], "ab") as f:
            procs.append(lab.popen(where, argv, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                                   env=_env(home), cwd=REPO))

    start(0, host, _cli("host", "--bot", "--name", "H", "--no-mdns", "--port", str(LOBBY), "--seats",
                        str(len(joiners) + 1), *GAME, *host_args, "--transcript", str(tmp_path / "s0.chn")))
    _wait_for(logs[0], "open on port")
    for n, (where, name, args) in enumerate(joiners, 1):
        start(n, where, _cli("join", "--bot", "--name", name, "--min-proof-rounds", "4", *args,
                             "--transcript", str(tmp_path / f"s{n}.chn")))
        time.sleep(0.5)
    codes: list[int | None] = []  # None: still running at the limit
    for p in procs:
        try:
            codes.append(p.wait(timeout=limit))
        except subprocess.TimeoutExpired:
            codes.append(None)
    return codes, logs


@pytest.mark.netns
@pytest.mark.parametrize("host_site", ["routed", "nat"])
def test_routers_and_forwarded_ports(tmp_path: Path, host_site: str) -> None:
    """``routed``: the host in one routed subnet, J1 in another, J2 behind a home router that
    forwards its WAN port 50002 to J2's fixed mesh port 41002 (``join --port 41002 --advertise
    WAN:50002``). ``nat``: every seat behind its own home router: the host forwards only its
    lobby port (seat 0 only dials), each joiner its mesh port. Both games finish."""
    _require()
    with InternetLab([(host_site, 1), ("routed" if host_site == "routed" else "nat", 1), ("nat", 1)]) as lab:
        host, j1, j2 = lab.host(0, 0), lab.host(1, 0), lab.host(2, 0)
        lobby = f"{lab.addr(host)}:{LOBBY}"
        if host_site == "nat":
            lab.forward(0, LOBBY, 0)
            lobby = f"{lab.wan(0)}:{LOBBY}"
            lab.forward(1, 50001, 0, 41001)
            j1_args = ["--port", "41001", "--advertise", f"{lab.wan(1)}:50001"]
        else:
            j1_args = []
        lab.forward(2, 50002, 0, 41002)
        j2_args = ["--port", "41002", "--advertise", f"{lab.wan(2)}:50002"]
        codes, logs = _table(lab, tmp_path, host, [(j1, "J1", ["--connect", lobby, *j1_args]),
                                                   (j2, "J2", ["--connect", lobby, *j2_args])])
    finished_identical(tmp_path, 3, codes, logs)


@pytest.mark.netns
def test_joiners_the_host_cannot_reach_dial_it_and_the_game_finishes(tmp_path: Path) -> None:
    """J1 and J2 share a home router that forwards nothing: the lobby works (outbound), the
    host's dials to them fail. The host's screen says it cannot reach J1 and J2 at their
    router's address, with what to do; but seat 0 listens on its lobby port while it plays and
    every pair re-dials the other way, so J1 and J2 dial the host themselves (and each other on
    their own network): the table forms and the game finishes, the records identical."""
    _require()
    with InternetLab([("routed", 1), ("nat", 2)]) as lab:
        host, j1, j2 = lab.host(0, 0), lab.host(1, 0), lab.host(1, 1)
        lobby = f"{lab.addr(host)}:{LOBBY}"
        codes, logs = _table(lab, tmp_path, host, [(j1, "J1", ["--connect", lobby]), (j2, "J2", ["--connect", lobby])],
                             host_args=("--option", "rejoin_wait=20"))
        wan = lab.wan(1)
    texts = [log.read_text(errors="replace") for log in logs]
    assert all("Traceback" not in t for t in texts), f"exit codes {codes}\n" + tails(logs, 4000)
    for name in ("J1", "J2"):  # the host's own dials failed, and it said so with what to do
        assert f"cannot reach {name} at {wan}:" in texts[0], tails(logs, 4000)
    assert "behind a home router" in texts[0] and "--advertise / a forwarded --port" in texts[0], tails(logs, 4000)
    finished_identical(tmp_path, 3, codes, logs)


@pytest.mark.netns
def test_a_mesh_vpn(tmp_path: Path) -> None:
    """The host in a routed subnet, J1 and J2 each behind their own home router, nothing
    forwarded, all three in a mesh VPN: a real WireGuard tunnel when ``wireguard-go`` is
    installed (the host its relay), else a routed stand-in. ``host --no-mdns``; J1
    ``--connect``s to the host's VPN address; J2 to its public one, so the seating holds J2's
    router's address, and J2's VPN address (among the candidates of its join request) is where
    the others reach it. The game finishes."""
    wireguard = internet_unavailable_reason(wireguard=True) is None
    _require()
    with InternetLab([("routed", 1), ("nat", 1), ("nat", 1)]) as lab:
        host, j1, j2 = lab.host(0, 0), lab.host(1, 0), lab.host(2, 0)
        vpn = lab.wireguard(host, [j1, j2]) if wireguard else lab.overlay([host, j1, j2])
        codes, logs = _table(lab, tmp_path, host, [(j1, "J1", ["--connect", f"{vpn[0]}:{LOBBY}"]),
                                                   (j2, "J2", ["--connect", f"{lab.addr(host)}:{LOBBY}"])])
    finished_identical(tmp_path, 3, codes, logs)
    from p2p_chinchon.transcript import load_transcript

    [j2_seat] = [p for p in load_transcript(tmp_path / "s0.chn").envelopes[1].body["players"] if p["name"] == "J2"]
    assert j2_seat["addr"].startswith(lab.wan(2) + ":"), j2_seat
    assert any(a.startswith(vpn[2] + ":") for a in j2_seat["addrs"]), j2_seat


@pytest.mark.netns
def test_join_list_shows_the_hosts_advertised_addresses(tmp_path: Path) -> None:
    """``host --advertise`` (a VPN address; a router's forwarded port): ``join --list`` on the
    host's LAN shows them after its own address, ``--json`` under ``reach``."""
    import json

    from netns import NetnsLab, require_netns

    require_netns()
    with NetnsLab(2) as lab:
        log = tmp_path / "h.log"
        with open(log, "ab") as f:
            lab.popen(0, _cli("host", "--bot", "--table-name", "Lejos", "--port", str(LOBBY), "--advertise",
                              "100.101.102.103", "--advertise", "203.0.113.5:50000", *GAME,
                              "--transcript", str(tmp_path / "h.chn")),
                      stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=_env(tmp_path), cwd=REPO)
        _wait_for(log, "open on port")
        listed = lab.run(1, _cli("join", "--list", "--browse", "4"), capture_output=True, text=True,
                         env=_env(tmp_path / "j"), cwd=REPO)
        as_json = lab.run(1, _cli("join", "--list", "--json", "--browse", "4"), capture_output=True, text=True,
                          env=_env(tmp_path / "j"), cwd=REPO)
    reach = [f"100.101.102.103:{LOBBY}", "203.0.113.5:50000"]
    assert f"{lab.addr(0)}:{LOBBY}, {reach[0]}, {reach[1]}" in listed.stdout, listed.stdout + listed.stderr
    [table] = json.loads(as_json.stdout)
    assert table["reach"] == reach
