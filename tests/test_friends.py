"""Friends on other networks, on loopback: candidate addresses in the signed join request and the
seating, a dialler that reaches a seat at any of them, what it says when it reaches none, and a
table that never formed audited as never started (not as an accusation). The namespace games are
in ``test_friends_netns.py``."""

from __future__ import annotations

import secrets

import msgpack
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness import free_port
from harness.mesh import FAST, HOST, raw
from p2p_chinchon import table as tbl
from p2p_chinchon.audit import audit_frames
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.net.addresses import candidate_addresses, parse_advertise
from p2p_chinchon.net.lobby import BadJoinRequest, JoinRequest
from p2p_chinchon.net.mesh import Mesh, PeerAddr
from p2p_chinchon.net.reach import watch_reach
from p2p_chinchon.rng import SeededRng

CHALLENGE, CERT = bytes(range(32)), bytes(32)


def test_a_join_request_signs_its_candidates() -> None:
    key = Ed25519PrivateKey.generate()
    req = JoinRequest.create("Bea", raw(key), "0.0.0.0:4100", key.sign, challenge=CHALLENGE, cert=CERT,
                             candidates=["203.0.113.9:50000", "192.168.1.7:4100"])
    back = JoinRequest.decode(req.encode(), challenge=CHALLENGE, cert=CERT)
    assert back.candidates == ("203.0.113.9:50000", "192.168.1.7:4100")
    body = msgpack.unpackb(req.encode())
    body["addrs"] = ["198.51.100.66:4100", *body["addrs"]]  # a relay slips its own address in
    with pytest.raises(BadJoinRequest, match="signature"):
        JoinRequest.decode(msgpack.packb(body), challenge=CHALLENGE, cert=CERT)
    for bad in (["x"] * 9, ["no-port"], ["a:1", "a:1"], ["h" * 70 + ":1"]):
        body["addrs"] = bad
        with pytest.raises(BadJoinRequest):
            JoinRequest.decode(msgpack.packb(body), challenge=CHALLENGE, cert=CERT)


def test_candidates_put_advertised_addresses_before_the_interfaces() -> None:
    got = candidate_addresses(4100, ["203.0.113.9:50000", "vpn.example", "[2001:db8::1]"],
                              interfaces=["192.168.1.7", "10.8.0.2"])
    assert got == ["203.0.113.9:50000", "vpn.example:4100", "[2001:db8::1]:4100", "192.168.1.7:4100",
                   "10.8.0.2:4100"]
    assert parse_advertise("100.64.0.2") == ("100.64.0.2", None)
    for bad in ("host:0", "host:x", "[::1", "a b"):
        with pytest.raises(ValueError):
            parse_advertise(bad)


def test_the_seating_carries_each_seats_candidates_observed_first() -> None:
    host_id, joiner = Identity.generate(), Identity.generate()
    t = tbl.Table.create(host_id, SeededRng("friends"), name="Mesa", rules=make_rules("classic"), max_seats=2,
                         addr="10.0.0.1:4000")
    t.lobby.seat_host("Bea", joiner.public_bytes, "198.51.100.7:4100",
                ("203.0.113.9:50000", "198.51.100.7:4100", "192.168.1.7:4100"))
    t.start()
    seating = t.lobby.players
    assert seating[1].addr == "198.51.100.7:4100"
    assert seating[1].addrs == ("203.0.113.9:50000", "192.168.1.7:4100")  # the observed one is not repeated
    assert seating[0].addrs == ()
    replayed = tbl.Table.observer()
    for f in t.chain.frames:
        replayed.receive(f, 0)
    assert replayed.lobby.players[1].addrs == seating[1].addrs


async def test_a_seat_is_reached_at_its_second_candidate_and_a_dead_one_is_named() -> None:
    """Seat 1's seating address (the host's observed one) is dead, its advertised candidate is
    where it listens: seat 0 links to it. Seat 2 listens nowhere: seat 0's ``dial_trouble``
    names each of its addresses with the error."""
    gid = secrets.token_bytes(16)
    k0, k1, k2 = (Ed25519PrivateKey.generate() for _ in range(3))
    dead, dead2, dead3 = free_port(), free_port(), free_port()
    lst = (await trio.open_tcp_listeners(0, host=HOST))[0]
    live = lst.socket.getsockname()[1]
    peers = {0: PeerAddr(HOST, 1, raw(k0)), 1: PeerAddr(HOST, dead, raw(k1), ((HOST, live),)),
             2: PeerAddr(HOST, dead2, raw(k2), ((HOST, dead3),))}
    async with trio.open_nursery() as nursery:
        m1 = Mesh(1, gid, k1.sign, {0: peers[0], 1: peers[1]}, listener=lst, config=FAST)
        m0 = Mesh(0, gid, k0.sign, peers, config=FAST)
        await nursery.start(m1.run)
        await nursery.start(m0.run)
        with trio.fail_after(30):
            while 1 not in m0.connected or 2 not in m0.dial_trouble():
                await trio.sleep(0.05)
        trouble = m0.dial_trouble()
        assert 1 not in trouble
        assert [p for p, _ in trouble[2]] == [f"{HOST}:{dead2}", f"{HOST}:{dead3}"]
        assert all(why == "Connection refused" for _, why in trouble[2]), trouble
        await m0.aclose()
        await m1.aclose()
        nursery.cancel_scope.cancel()


class _Mesh:
    def __init__(self, trouble: dict) -> None:
        self.connected: frozenset[int] = frozenset()
        self.trouble = trouble

    def dial_trouble(self) -> dict:
        return self.trouble


class _Events:
    def __init__(self) -> None:
        self.said: list[tuple[str, str, dict]] = []

    def notice(self, text: str, key: str = "", fields: dict | None = None, lasting: bool = False) -> None:
        assert lasting
        self.said.append((text, key, fields or {}))


def _three_seated(me: int) -> tbl.Table:
    ids = [Identity.generate() for _ in range(3)]
    host = tbl.Table.create(ids[0], SeededRng("h"), name="Mesa", rules=make_rules("classic"), max_seats=3,
                            addr="10.0.0.1:4000", auto_agree=True)
    host.lobby.set_host_name("Ana")
    host.lobby.seat_host("Bea", ids[1].public_bytes, "198.51.100.7:4101", ("192.168.1.7:4101",))
    host.lobby.seat_host("Cai", ids[2].public_bytes, "198.51.100.7:4102", ("192.168.1.8:4102",))
    host.start()
    if me == 0:
        return host
    t = tbl.Table.joining(ids[me], SeededRng("j"), host.chain.frames[0])
    t.receive(host.chain.frames[1], 0)
    return t


async def test_every_screen_says_who_cannot_reach_whom_and_what_to_do(autojump_clock: object) -> None:
    """The dialler names the seat, its addresses and errors, and the fix; the seat nobody
    reaches hears it about itself with its own addresses; "linked" follows a late link."""
    host = _three_seated(0)
    mesh, events = _Mesh({1: [("198.51.100.7:4101", "Connection refused"),
                              ("192.168.1.7:4101", "no answer in 5 s")]}), _Events()
    cai = _three_seated(2)
    cmesh, cevents = _Mesh({}), _Events()
    cmesh.connected = frozenset({1})
    async with trio.open_nursery() as nursery:
        nursery.start_soon(watch_reach, host, mesh, events)
        nursery.start_soon(watch_reach, cai, cmesh, cevents)
        await trio.sleep(3)
        mesh.trouble, mesh.connected = {}, frozenset({1, 2})
        await trio.sleep(10)
        nursery.cancel_scope.cancel()
    text, key, fields = events.said[0]
    assert key == "reach_cannot_dial" and fields["name"] == "Bea"
    assert ("cannot reach Bea at 198.51.100.7:4101 (Connection refused), 192.168.1.7:4101 (no answer in 5 s). "
            "Bea is probably behind a home router: play over a VPN, or start Bea with --advertise / a "
            "forwarded --port; see docs/friends.md") == text
    assert [k for _, k, _ in events.said] == ["reach_cannot_dial", "reach_linked"]
    [(text, key, fields)] = cevents.said  # Ana (seat 0) never dialled Cai; Bea did
    assert key == "reach_not_dialled" and fields["names"] == "Ana"
    assert text.startswith("no connection from Ana at 198.51.100.7:4102, 192.168.1.8:4102 after 8 s: ")
    assert "behind a home router" in text


def test_a_table_that_never_formed_audits_as_never_started() -> None:
    """Nobody reached the host: it stops before the first hand with ``absent``, accusing
    nobody. The audit says incomplete, never started (exit 3), not an accusation (exit 1)."""
    host = _three_seated(0)
    assert [o for o in host.timeout("absent", False) if isinstance(o, tbl.Stopped)]
    assert host.flow.fault is not None and host.flow.fault.rule == "absent" and host.chain.frames[-1]
    r = audit_frames(host.chain.frames)
    assert (r.verdict, r.exit_code) == ("incomplete", 3), r.summary()
    assert "never started" in r.summary()


def test_a_hosts_advertised_addresses_ride_in_its_mdns_ad() -> None:
    """``host --advertise``: TXT ``addrs``, read back for ``join --list``; what does not fit in
    one TXT entry is left out, a malformed entry heard is dropped."""
    from p2p_chinchon.net.discovery import TableAd, _parse_txt
    from p2p_chinchon.net.session import lobby_reach

    reach = lobby_reach(["100.101.102.103", "203.0.113.5:50000"], 40123)
    assert reach == ("100.101.102.103:40123", "203.0.113.5:50000")
    ad = TableAd(name="Mesa", preset="classic", seats_taken=1, max_seats=4, fingerprint="ABCD-EFGH", reach=reach)
    assert _parse_txt(ad.txt()).reach == reach
    many = tuple(f"host-{i}.example.org:40123" for i in range(20))
    txt = TableAd(name="Mesa", preset="classic", seats_taken=1, max_seats=4, fingerprint="ABCD-EFGH", reach=many).txt()
    assert len(b"addrs=" + txt[b"addrs"]) <= 255 and 0 < len(_parse_txt(txt).reach) < 20
    assert _parse_txt({**ad.txt(), b"addrs": b"nonsense,10.0.0.1:7"}).reach == ("10.0.0.1:7",)


def test_long_notices_are_wrapped_on_the_table_screen_and_stand_together() -> None:
    """The full screen shows what to do to its end (wrapped, never cut at the width) and
    two seats' notices together; the next message replaces them."""
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.screen import TableScreen
    from p2p_chinchon.ui.text import plain

    screen = TableScreen(Translator("en"))
    screen.set_view(_three_seated(0).view())
    tr = Translator("en")
    for name in ("Bea", "Cai"):
        screen.noticed(tr("reach_cannot_dial", name=name, places="198.51.100.7:4101 (Connection refused)"))
    shown = " ".join(plain(line) for line in screen.render(60, 40)).split()
    text = " ".join(shown)
    assert "start Bea with --advertise" in text
    assert "start Cai with --advertise / a forwarded --port; see docs/friends.md" in text
    screen.rejected("not your turn")
    assert [plain(line) for line in screen.message_lines(60)] == ["Refused: not your turn"]


def test_a_seat_of_a_table_that_never_formed_is_told_so_and_nobody_is_blamed(capsys) -> None:
    """The exit summary and the table screen say the table never formed, not "table stopped:
    seat 0 (Ana): absent", which reads as blaming the seat nobody could reach."""
    from p2p_chinchon.commands._common import print_result
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.net.node import NodeResult
    from p2p_chinchon.ui.screen import TableScreen

    host = _three_seated(0)
    host.timeout("absent", False)
    result = NodeResult(winner=None, fault=host.flow.fault, transcript=None, head=b"", seat=0,
                        names=[p.name for p in host.lobby.players])
    print_result(result, lang="en")
    out = capsys.readouterr().out
    assert out.startswith("the table never formed: the seats could not all reach each other (")
    assert "nobody is blamed" in out
    screen = TableScreen(Translator("es"))
    screen.set_view(host.view())
    assert screen.stopped_text().startswith("la mesa nunca llegó a formarse")
