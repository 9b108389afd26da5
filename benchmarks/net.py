"""Loopback latency and throughput of the net layer (one process, real TCP sockets).

    python benchmarks/net.py [--rounds 2000] [--size 200]

Measures:
* framing ping-pong: send_frame / FrameReader between two sockets, round-trip time;
* mesh ping-pong: Mesh.send -> Frame event -> reply between two seats, round-trip time;
* mesh broadcast: 4 seats, every seat broadcasts N frames; frames delivered per second;
* mesh set-up: time until 8 seats are fully connected (28 authenticated links).
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import time

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2p_chinchon.net.framing import FrameReader, send_frame
from p2p_chinchon.net.mesh import Frame, Mesh, PeerAddr

HOST = "127.0.0.1"


def summary(name: str, samples: list[float]) -> None:
    samples = sorted(samples)
    p95 = samples[int(0.95 * (len(samples) - 1))]
    print(f"{name:28s} median {statistics.median(samples) * 1e6:8.1f} us   p95 {p95 * 1e6:8.1f} us   (n={len(samples)})")


async def framing_ping(rounds: int, size: int) -> None:
    lst = (await trio.open_tcp_listeners(0, host=HOST))[0]
    port = lst.socket.getsockname()[1]
    payload = secrets.token_bytes(size)
    async with trio.open_nursery() as nursery:

        async def echo() -> None:
            s = await lst.accept()
            r = FrameReader(s)
            while (f := await r.receive()) is not None:
                await send_frame(s, f)
            await s.aclose()

        nursery.start_soon(echo)
        c = await trio.open_tcp_stream(HOST, port)
        r = FrameReader(c)
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            await send_frame(c, payload)
            assert await r.receive() == payload
            times.append(time.perf_counter() - t)
        await c.aclose()
    await lst.aclose()
    summary(f"framing round trip {size} B", times)


async def start_meshes(nursery: trio.Nursery, n: int) -> list[Mesh]:
    keys = [Ed25519PrivateKey.generate() for _ in range(n)]
    lsts = [(await trio.open_tcp_listeners(0, host=HOST))[0] for _ in range(n)]
    peers = {i: PeerAddr(HOST, lsts[i].socket.getsockname()[1], keys[i].public_key().public_bytes_raw()) for i in range(n)}
    gid = secrets.token_bytes(16)
    meshes = [Mesh(i, gid, keys[i].sign, peers, listener=lsts[i]) for i in range(n)]
    for m in meshes:
        await nursery.start(m.run)
    return meshes


async def frame_from(m: Mesh) -> Frame:
    while True:
        ev = await m.inbound.receive()
        if isinstance(ev, Frame):
            return ev


async def mesh_ping(rounds: int, size: int) -> None:
    async with trio.open_nursery() as nursery:
        a, b = await start_meshes(nursery, 2)
        await a.wait_connected(10)
        await b.wait_connected(10)
        payload = secrets.token_bytes(size)

        async def echo() -> None:
            while True:
                f = await frame_from(b)
                await b.send(f.seat, f.payload)

        nursery.start_soon(echo)
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            await a.send(1, payload)
            await frame_from(a)
            times.append(time.perf_counter() - t)
        summary(f"mesh round trip {size} B", times)
        nursery.cancel_scope.cancel()


async def mesh_broadcast(count: int, size: int) -> None:
    async with trio.open_nursery() as nursery:
        meshes = await start_meshes(nursery, 4)
        for m in meshes:
            await m.wait_connected(10)
        payload = secrets.token_bytes(size)
        t = time.perf_counter()
        async with trio.open_nursery() as inner:
            for m in meshes:

                async def drain(m: Mesh = m) -> None:
                    for _ in range(count * 3):
                        await frame_from(m)

                inner.start_soon(drain)
            for _ in range(count):
                for m in meshes:
                    await m.broadcast(payload)
                await trio.sleep(0)
        dt = time.perf_counter() - t
        total = count * 4 * 3
        print(f"{'mesh broadcast 4 seats':28s} {total / dt:10.0f} frames/s ({total} frames of {size} B in {dt:.2f} s)")
        nursery.cancel_scope.cancel()


async def mesh_setup(n: int) -> None:
    async with trio.open_nursery() as nursery:
        t = time.perf_counter()
        meshes = await start_meshes(nursery, n)
        for m in meshes:
            await m.wait_connected(30)
        print(f"{f'mesh set-up {n} seats':28s} {(time.perf_counter() - t) * 1e3:8.1f} ms ({n * (n - 1) // 2} links)")
        nursery.cancel_scope.cancel()


async def main(args: argparse.Namespace) -> None:
    await framing_ping(args.rounds, args.size)
    await mesh_ping(args.rounds, args.size)
    await mesh_broadcast(args.rounds, args.size)
    await mesh_setup(8)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--size", type=int, default=200, help="payload bytes (a signed envelope is ~200)")
    trio.run(main, parser.parse_args())
