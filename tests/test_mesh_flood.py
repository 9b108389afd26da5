"""A mesh port flooded with idle TCP connections: a seat's redial still gets in,
idle connections are closed when they send no ClientHello, one address holds few slots.

Real meshes on loopback; strangers connect from other 127.0.0.0/8 addresses. The flood's
connections stay open on the stranger's side for the whole test."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import trio

from harness.mesh import HOST, LOG, make_table, next_event, raw, run_meshes
from p2p_chinchon.net import tls
from p2p_chinchon.net.mesh import Mesh, MeshConfig, PeerAddr, PeerUp

# Handshake and ClientHello limits far longer than the test: a flood slot never frees itself,
# so only the accept limits can let the redial in.
PATIENT = MeshConfig(backoff_min=0.02, backoff_max=0.2, handshake_timeout=60.0, client_hello_timeout=60.0)
GUARD = 15.0  # a hang guard, not a performance bound


async def connect_from(source: str, port: int) -> trio.SocketStream:
    return await trio.open_tcp_stream(HOST, port, local_address=source)


async def closed_by_server(stream: trio.SocketStream) -> bool:
    """Wait until the server closes ``stream`` (it sends nothing before a ClientHello)."""
    try:
        return await stream.receive_some(1) == b""
    except trio.BrokenResourceError:  # reset
        return True


@asynccontextmanager
async def flood(port: int, sources: list[str], per_source: int) -> AsyncIterator[list[trio.SocketStream]]:
    """``per_source`` idle connections from each of ``sources``, all established (in the
    listener's accept queue) on entry, kept open by us until exit."""
    streams = [await connect_from(src, port) for src in sources for _ in range(per_source)]
    try:
        yield streams
    finally:
        for s in streams:
            await trio.aclose_forcefully(s)


async def blip_and_redial(sources: list[str], per_source: int) -> None:
    table = await make_table(2)
    async with run_meshes(table, config=PATIENT) as m:
        await next_event(m[0], lambda e: e == PeerUp(1))
        await next_event(m[1], lambda e: e == PeerUp(0))
        async with flood(table.ports[1], sources, per_source):
            # the blip: seat 0 drops its link and redials seat 1; its connection is queued
            # behind the whole flood, so seat 1 meets it with the flood already pending
            m[0].drop(1, "blip")
            await next_event(m[0], lambda e: e == PeerUp(1), GUARD)
            await next_event(m[1], lambda e: e == PeerUp(0), GUARD)
            assert m[0].is_up(1) and m[1].is_up(0)


async def test_flood_from_one_address_does_not_stop_a_redial() -> None:
    """The measured case: 80 idle connections from one stranger address, then a blip."""
    await blip_and_redial(["127.0.0.9"], 80)


async def test_flood_from_many_addresses_does_not_stop_a_redial() -> None:
    """20 addresses x 4 connections fill the strangers' 64 slots; the seat's address has its own."""
    await blip_and_redial([f"127.0.0.{20 + i}" for i in range(20)], 4)


async def test_a_flood_from_the_seats_own_address_is_passed_the_other_way() -> None:
    """Another laptop behind the same home router (seat 0's own address) holds every slot of
    seat 1's port for that address: seat 0's redials are refused there, so seat 1 dials seat 0
    the other way (its port is not flooded) and the pair is linked again while the flood stays."""
    table = await make_table(2)
    async with run_meshes(table, config=PATIENT) as m:
        await next_event(m[0], lambda e: e == PeerUp(1))
        await next_event(m[1], lambda e: e == PeerUp(0))
        async with flood(table.ports[1], [HOST], 2 * PATIENT.max_pending_per_address):
            m[0].drop(1, "blip")
            await next_event(m[0], lambda e: e == PeerUp(1), GUARD)
            await next_event(m[1], lambda e: e == PeerUp(0), GUARD)
            assert m[0].is_up(1) and m[1].is_up(0) and not m[1]._links[0].own


async def test_a_seat_dialling_from_another_address_is_known_after_its_first_link() -> None:
    """Seat 1's seating says seat 0 is at 127.0.0.77, but seat 0 dials from 127.0.0.1 (NAT,
    another interface): the address of its authenticated link gets the reserved slots."""
    table = await make_table(2)
    elsewhere = {**table.peers, 0: PeerAddr("127.0.0.77", 9, table.peers[0].public_key)}
    async with trio.open_nursery() as nursery:
        m0 = Mesh(0, table.game_id, table.keys[0].sign, table.peers, config=PATIENT)
        m1 = Mesh(1, table.game_id, table.keys[1].sign, elsewhere, listener=table.listeners[1], config=PATIENT)
        await nursery.start(m1.run)
        await nursery.start(m0.run)
        await table.listeners[0].aclose()  # seat 0 only dials
        await next_event(m1, lambda e: e == PeerUp(0))
        async with flood(table.ports[1], [f"127.0.0.{20 + i}" for i in range(20)], 4):
            m0.drop(1, "blip")
            await next_event(m0, lambda e: e == PeerUp(1), GUARD)
            await next_event(m1, lambda e: e == PeerUp(0), GUARD)
        await m0.aclose()
        await m1.aclose()


async def test_idle_connection_is_closed_after_the_client_hello_limit(caplog) -> None:
    caplog.set_level(logging.WARNING, LOG)
    config = MeshConfig(handshake_timeout=60.0, client_hello_timeout=0.2)
    table = await make_table(2)
    async with run_meshes(table, config=config) as m:  # the mesh itself connects within it
        await next_event(m[1], lambda e: e == PeerUp(0))
        async with flood(table.ports[1], ["127.0.0.9"], 3) as idle:
            with trio.fail_after(GUARD):
                for s in idle:
                    assert await closed_by_server(s)
        assert any("127.0.0.9" in r.getMessage() and "no TLS ClientHello within 0.2 s" in r.getMessage()
                   for r in caplog.records)
        assert m[0].is_up(1)  # the seat's link was left alone


async def test_fifth_pending_connection_from_one_address_is_refused(caplog) -> None:
    caplog.set_level(logging.WARNING, LOG)
    table = await make_table(2)
    async with run_meshes(table, seats=[1], config=PATIENT):
        port = table.ports[1]
        async with flood(port, ["127.0.0.9"], 4), flood(port, ["127.0.0.9"], 1) as (fifth,):
            with trio.fail_after(GUARD):
                assert await closed_by_server(fifth)  # the 4 accepted before it hold the slots
                # another address is accepted: its TLS handshake completes, pinned to seat 1
                other = await connect_from("127.0.0.10", port)
                link, _key, _cert = await tls.dial_tls(other, expect_key=raw(table.keys[1]))
                await link.aclose()
        assert any("refusing ('127.0.0.9'" in r.getMessage() and "4 handshakes already pending" in r.getMessage()
                   for r in caplog.records)
