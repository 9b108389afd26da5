"""A hostile LAN neighbour forges mDNS seat records (net/discovery.py ``advertise_seat``, mesh
``_places``): on loopback, a dialler whose locator names an impostor's listener must never
bind a link to the impostor's key, and a forged record must not stop it dialling the seating's
address for good."""

from __future__ import annotations

import secrets

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness import free_port
from harness.mesh import FAST, HOST, no_event, raw
from p2p_chinchon.net.mesh import Mesh, PeerAddr, PeerUp


async def test_a_forged_seat_record_cannot_bind_a_link_to_another_key() -> None:
    """Seat 1's seating address is dead; the only record for seat 1 names an impostor that
    runs a mesh as seat 1 of the same game with its own key: seat 0 dials it again and again
    and never brings a link up."""
    gid = secrets.token_bytes(16)
    k0, k1, evil = (Ed25519PrivateKey.generate() for _ in range(3))
    dead = free_port()
    impostor_lst = (await trio.open_tcp_listeners(0, host=HOST))[0]
    impostor_port = impostor_lst.socket.getsockname()[1]
    dialled = []

    def locate(seat):
        dialled.append(seat)
        return [(HOST, impostor_port)]

    async with trio.open_nursery() as nursery:
        # the impostor believes seat 0 is k0 (it knows the seating) but holds evil's key as seat 1
        imp = Mesh(1, gid, evil.sign, {0: PeerAddr(HOST, dead, raw(k0)), 1: PeerAddr(HOST, impostor_port, raw(evil))},
                   listener=impostor_lst, config=FAST)
        m0 = Mesh(0, gid, k0.sign, {1: PeerAddr(HOST, dead, raw(k1))}, config=FAST, locate=locate)
        await nursery.start(imp.run)
        await nursery.start(m0.run)
        with trio.move_on_after(30):
            while len(dialled) < 3:  # the impostor's address is tried several times over
                await trio.sleep(0.05)
        assert len(dialled) >= 3
        assert m0.connected == frozenset()
        assert not [e for e in no_event(m0) if isinstance(e, PeerUp)]
        await m0.aclose()
        await imp.aclose()
        nursery.cancel_scope.cancel()


async def test_a_forged_seat_record_does_not_stop_the_dialler_trying_the_seating_address() -> None:
    """Seat 1 is down; a forged record sends seat 0's dialler to a dead address. When seat 1
    comes back at its seating address (a restart on the same host), seat 0 reaches it: the
    seating's address stays among the ones it tries."""
    gid = secrets.token_bytes(16)
    k0, k1 = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    home, forged = free_port(), free_port()
    asked = []

    def locate(seat):
        asked.append(seat)
        return [(HOST, forged)]

    peers = {0: PeerAddr(HOST, 1, raw(k0)), 1: PeerAddr(HOST, home, raw(k1))}
    async with trio.open_nursery() as nursery:
        m0 = Mesh(0, gid, k0.sign, {1: peers[1]}, config=FAST, locate=locate)
        await nursery.start(m0.run)
        with trio.move_on_after(30):
            while len(asked) < 2:  # moved to the forged address, and failed there too
                await trio.sleep(0.05)
        assert len(asked) >= 2
        lst = (await trio.open_tcp_listeners(home, host=HOST))[0]
        m1 = Mesh(1, gid, k1.sign, peers, listener=lst, config=FAST)
        await nursery.start(m1.run)
        await m0.wait_connected(30)
        assert m0.connected == frozenset({1})
        await m0.aclose()
        await m1.aclose()
        nursery.cancel_scope.cancel()


def test_a_locator_with_the_seating_keys_keeps_only_the_seats_own_records():
    """A neighbour forges seat 1's record (unsigned, signed by another key, or a genuine
    signature over another address or port): the locator ignores it. A genuine record is kept,
    and a forged one heard later does not replace it; a seat outside the seating is ignored."""
    from p2p_chinchon.net.discovery import SEAT_RECORDS_KEPT, SeatLocator, seat_service_info

    game = bytes(range(16))
    k1, evil = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    loc = SeatLocator(game, {1: raw(k1)})
    good = seat_service_info(game, 1, 4600, ["10.0.0.7"], sign=k1.sign)
    loc._take(good)
    assert loc.lookup(1) == [("10.0.0.7", 4600)]
    forged = [
        seat_service_info(game, 1, 6666, ["10.6.6.6"]),  # unsigned
        seat_service_info(game, 1, 6666, ["10.6.6.6"], sign=evil.sign),  # another key
        seat_service_info(game, 9, 6666, ["10.6.6.6"], sign=evil.sign),  # not a seat of ours
    ]
    props: dict[str | bytes, str | bytes | None] = {k: v for k, v in good.properties.items()}
    moved = seat_service_info(game, 1, 6666, ["10.6.6.6"])
    moved._set_properties({**props, b"a": b"10.6.6.6"})  # the genuine signature, another address
    forged.append(moved)
    ported = seat_service_info(game, 1, 6666, ["10.0.0.7"])
    ported._set_properties({**props, b"p": b"6666"})  # ... another port
    forged.append(ported)
    for f in forged:
        loc._take(f)
    assert loc.lookup(1) == [("10.0.0.7", 4600)] and loc.lookup(9) == []
    # the seat's records heard last come first, a few of them kept (the dialler tries each)
    for i in range(SEAT_RECORDS_KEPT + 2):
        loc._take(seat_service_info(game, 1, 4600, [f"10.0.1.{i}"], sign=k1.sign))
    loc._take(good)
    assert loc.lookup(1)[0] == ("10.0.0.7", 4600)
    assert len(loc.lookup(1)) == SEAT_RECORDS_KEPT
