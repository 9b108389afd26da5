"""A fake transit relay on loopback and two meshes that meet there."""

from __future__ import annotations

import re

import trio

from harness import free_port


async def read_line(stream: trio.abc.Stream) -> bytes:
    """Bytes up to a newline (a relay client's handshake line), or all until the stream closed."""
    line = b""
    while not line.endswith(b"\n"):
        data = await stream.receive_some(200)
        if not data:
            break
        line += data
    return line


async def fake_relay(pairs: dict, stream: trio.abc.Stream, line: bytes | None = None) -> None:
    """The transit relay's matching in a few lines: two connections of one token and different
    sides get ``ok`` and a pipe (``pairs``: token -> the side and stream waiting). ``line``:
    the client's handshake line when already read."""
    line = await read_line(stream) if line is None else line
    m = re.fullmatch(rb"please relay (\w{64}) for side (\w{16})\n", line)
    if m is None:
        await stream.send_all(b"bad handshake\n")
        return
    token, side = m.groups()
    waiting = pairs.get(token)
    if waiting is None or waiting[0] == side:
        done = trio.Event()
        pairs[token] = (side, stream, done)
        await done.wait()  # the other side's task pipes both ways
        return
    del pairs[token]
    _, other, done = waiting

    async def pipe(a: trio.abc.Stream, b: trio.abc.Stream) -> None:
        try:
            while data := await a.receive_some(65536):
                await b.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        nursery.cancel_scope.cancel()

    try:
        await other.send_all(b"ok\n")
        await stream.send_all(b"ok\n")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pipe, stream, other)
            nursery.start_soon(pipe, other, stream)
    finally:
        done.set()


async def relayed_pair(nursery: trio.Nursery, plan, ids: list, game: bytes) -> tuple:
    """Seats 0 and 1 of ``game`` (identities ``ids``), each dialling the other at a closed
    port, with the relay ``plan``: started in ``nursery``, returned once their link is up
    (it must be relayed on both ends)."""
    from p2p_chinchon.net.mesh import Mesh, MeshConfig, PeerAddr, PeerUp

    config = MeshConfig(backoff_min=0.02, backoff_max=0.2)
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0]
    m0 = Mesh(0, game, ids[0], {1: PeerAddr("127.0.0.1", free_port(), ids[1].public_bytes)},
              config=config, relay=plan)
    m1 = Mesh(1, game, ids[1], {0: PeerAddr("127.0.0.1", free_port(), ids[0].public_bytes)},
              listener=listener, config=config, relay=plan)
    await nursery.start(m0.run)
    await nursery.start(m1.run)
    with trio.fail_after(60):
        assert await m1.inbound.receive() == PeerUp(0)
        assert await m0.inbound.receive() == PeerUp(1)
    assert m0.relayed == {1} and m1.relayed == {0}
    return m0, m1
