"""The mesh tests' harness: seats' keys and addresses on loopback, meshes run together in one
nursery, and waits for their events (real sockets, TLS 1.3, the real handshake)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2p_chinchon.net import tls
from p2p_chinchon.net.framing import FrameReader
from p2p_chinchon.net.mesh import Frame, Mesh, MeshConfig, MeshEvent, PeerAddr, dial_handshake

HOST = "127.0.0.1"
FAST = MeshConfig(backoff_min=0.02, backoff_max=0.2, handshake_timeout=3.0)
LOG = "p2p_chinchon.net.mesh"


def raw(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes_raw()


@dataclass
class Table:
    game_id: bytes
    keys: list[Ed25519PrivateKey]
    listeners: list[trio.SocketListener]
    peers: dict[int, PeerAddr]

    @property
    def ports(self) -> list[int]:
        return [p.port for _, p in sorted(self.peers.items())]


async def make_table(n: int) -> Table:
    keys = [Ed25519PrivateKey.generate() for _ in range(n)]
    listeners = [(await trio.open_tcp_listeners(0, host=HOST))[0] for _ in range(n)]
    peers = {
        i: PeerAddr(HOST, listeners[i].socket.getsockname()[1], raw(keys[i])) for i in range(n)
    }
    return Table(secrets.token_bytes(16), keys, listeners, peers)


async def tls_open(table: Table, to: int) -> tuple[trio.SSLStream[Any], bytes]:
    """A TLS link to seat ``to``'s mesh listener, its key pinned; returns (stream, cert hash)."""
    stream = await trio.open_tcp_stream(HOST, table.ports[to])
    tls_stream, _key, cert = await tls.dial_tls(stream, expect_key=raw(table.keys[to]))
    return tls_stream, cert


@asynccontextmanager
async def run_meshes(
    table: Table, seats: list[int] | None = None, config: MeshConfig = FAST
) -> AsyncIterator[dict[int, Mesh]]:
    seats = list(range(len(table.keys))) if seats is None else seats
    async with trio.open_nursery() as nursery:
        meshes = {}
        for i in seats:
            m = Mesh(i, table.game_id, table.keys[i].sign, table.peers, listener=table.listeners[i], config=config)
            await nursery.start(m.run)
            meshes[i] = m
        try:
            yield meshes
        finally:
            for m in meshes.values():
                await m.aclose()
            for i, lst in enumerate(table.listeners):
                if i not in seats:
                    await lst.aclose()


async def next_event(mesh: Mesh, pred: Callable[[MeshEvent], bool], timeout: float = 5.0) -> MeshEvent:
    """The first event matching ``pred``; earlier ones are discarded."""
    with trio.fail_after(timeout):
        async for ev in mesh.inbound:
            if pred(ev):
                return ev
    raise AssertionError("inbound ended")


async def frames(mesh: Mesh, count: int, timeout: float = 5.0) -> list[Frame]:
    got: list[Frame] = []
    with trio.fail_after(timeout):
        while len(got) < count:
            ev = await mesh.inbound.receive()
            if isinstance(ev, Frame):
                got.append(ev)
    return got


def no_event(mesh: Mesh) -> list[MeshEvent]:
    out = []
    while True:
        try:
            out.append(mesh.inbound.receive_nowait())
        except trio.WouldBlock:
            return out


async def raw_peer(table: Table, seat: int, to: int) -> tuple[trio.SSLStream[Any], FrameReader]:
    """Authenticate as ``seat`` (with its real key) to ``to``, by hand."""
    stream, cert = await tls_open(table, to)
    reader = FrameReader(stream)
    await dial_handshake(
        stream, reader, game_id=table.game_id, seat=seat, peer_seat=to,
        sign=table.keys[seat].sign, peer_key=table.keys[to].public_key(), cert=cert,
    )
    return stream, reader
