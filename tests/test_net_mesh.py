"""Full mesh on loopback, in-process, real sockets: connectivity, broadcast, authentication,
misbehaving peers, drops and reconnects."""

from __future__ import annotations

import json
import logging
import secrets
import struct
import subprocess
import sys
import textwrap

import pytest
import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.mesh import (
    FAST,
    HOST,
    LOG,
    Table,
    frames,
    make_table,
    next_event,
    no_event,
    raw,
    raw_peer,
    run_meshes,
    tls_open,
)
from netns import NetnsLab, require_netns
from p2p_chinchon.net import mesh as mesh_mod
from p2p_chinchon.net.framing import FrameReader, FrameTooLarge, encode_frame, send_frame
from p2p_chinchon.net.mesh import (
    Frame,
    HandshakeError,
    Mesh,
    MeshConfig,
    MeshTimeout,
    PeerAddr,
    PeerDown,
    PeerUp,
    UnknownSeat,
    accept_handshake,
    dial_handshake,
    open_mesh,
)

# ---------------------------------------------------------------- connectivity


@pytest.mark.parametrize("n", [2, 4, 8])
async def test_full_mesh_connects_and_broadcasts(n: int) -> None:
    table = await make_table(n)
    async with run_meshes(table) as meshes:
        for m in meshes.values():
            await m.wait_connected(10)
            assert m.connected == frozenset(range(n)) - {m.seat}
        rounds = 5
        for r in range(rounds):
            for m in meshes.values():
                assert await m.broadcast(f"{m.seat}:{r}".encode()) == m.peer_seats
        for m in meshes.values():
            got = await frames(m, rounds * (n - 1))
            by_sender: dict[int, list[bytes]] = {}
            for f in got:
                by_sender.setdefault(f.seat, []).append(f.payload)
            assert set(by_sender) == m.peer_seats
            for s, payloads in by_sender.items():  # per-link order preserved
                assert payloads == [f"{s}:{r}".encode() for r in range(rounds)]


async def test_point_to_point_send_and_large_frame() -> None:
    table = await make_table(3)
    async with run_meshes(table) as m:
        for x in m.values():
            await x.wait_connected(5)
        big = secrets.token_bytes(FAST.max_frame)
        assert await m[2].send(0, big)
        assert await m[0].send(1, b"just for one")
        (f,) = await frames(m[0], 1)
        assert f == Frame(2, big)
        (g,) = await frames(m[1], 1)
        assert g == Frame(0, b"just for one")
        assert not any(isinstance(e, Frame) for e in no_event(m[2]))  # seat 2 got nothing


async def test_send_argument_errors_and_down_link() -> None:
    table = await make_table(3)
    async with run_meshes(table, seats=[0, 1]) as m:  # seat 2 never comes up
        await next_event(m[0], lambda e: e == PeerUp(1))
        with pytest.raises(UnknownSeat):
            await m[0].send(7, b"x")
        with pytest.raises(UnknownSeat):
            await m[0].send(0, b"to myself")
        with pytest.raises(ValueError):
            await m[0].send(1, b"")
        with pytest.raises(FrameTooLarge):
            await m[0].send(1, b"x" * (FAST.max_frame + 1))
        assert await m[0].send(2, b"dropped") is False  # link down: dropped, documented
        assert await m[0].broadcast(b"hello") == frozenset({1})
        with pytest.raises(MeshTimeout) as info:
            await m[0].wait_connected(0.2)
        assert info.value.missing == frozenset({2})
        assert isinstance(info.value, trio.TooSlowError)


def test_constructor_validation() -> None:
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    peers = {i: PeerAddr(HOST, 1000 + i, raw(k)) for i, k in enumerate(keys)}
    gid = bytes(16)
    with pytest.raises(ValueError, match="game_id"):
        Mesh(0, b"short", keys[0].sign, peers)
    with pytest.raises(ValueError, match="seat"):
        Mesh(-1, gid, keys[0].sign, peers)
    with pytest.raises(ValueError, match="32 raw bytes"):
        Mesh(0, gid, keys[0].sign, {1: PeerAddr(HOST, 1, b"\x01" * 31)})
    with pytest.raises(ValueError, match="does not match"):
        Mesh(0, gid, keys[1].sign, peers)  # sign() of another identity
    with pytest.raises(ValueError, match="listener or port"):
        Mesh(1, gid, keys[1].sign, peers)  # seat 1 must accept seat 0
    Mesh(0, gid, keys[0].sign, peers)  # seat 0 only dials: no listener needed


async def test_open_mesh_with_port_zero() -> None:
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    gid = secrets.token_bytes(16)
    lst = (await trio.open_tcp_listeners(0, host=HOST))[0]
    port0 = lst.socket.getsockname()[1]
    async with open_mesh(1, gid, keys[1].sign, {0: PeerAddr(HOST, port0, raw(keys[0]))}, port=0, host=HOST, config=FAST) as m1:
        assert m1.port
        peers = {1: PeerAddr(HOST, m1.port, raw(keys[1]))}
        await lst.aclose()
        async with open_mesh(0, gid, keys[0].sign, peers, config=FAST) as m0:
            await m0.wait_connected(5)
            await m1.wait_connected(5)
            await m0.send(1, b"hi")
            assert (await frames(m1, 1))[0] == Frame(0, b"hi")
    # after exit inbound ends instead of hanging
    with trio.fail_after(1):
        async for _ in m1.inbound:
            pass


# ---------------------------------------------------------------- authentication


async def test_wrong_key_dialer_is_refused(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOG)
    table = await make_table(2)
    async with run_meshes(table, seats=[1]) as m:
        stream, cert = await tls_open(table, 1)
        impostor = Ed25519PrivateKey.generate()
        with pytest.raises(HandshakeError):
            await dial_handshake(
                stream, FrameReader(stream), game_id=table.game_id, seat=0, peer_seat=1,
                sign=impostor.sign, peer_key=table.keys[1].public_key(), cert=cert,
            )
        await stream.aclose()
        await trio.sleep(0.1)
        assert not m[1].is_up(0)
        assert no_event(m[1]) == []
    assert any("does not match seat 0" in r.getMessage() for r in caplog.records)


async def test_wrong_key_acceptor_is_refused_by_dialer(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOG)
    table = await make_table(2)
    wrong = dict(table.peers)
    wrong[1] = PeerAddr(HOST, table.ports[1], raw(Ed25519PrivateKey.generate()))
    async with trio.open_nursery() as nursery:
        m0 = Mesh(0, table.game_id, table.keys[0].sign, wrong, listener=table.listeners[0], config=FAST)
        m1 = Mesh(1, table.game_id, table.keys[1].sign, table.peers, listener=table.listeners[1], config=FAST)
        await nursery.start(m0.run)
        await nursery.start(m1.run)
        await trio.sleep(0.5)  # several dial attempts with backoff
        assert m0.connected == frozenset() and m1.connected == frozenset()
        assert no_event(m0) == [] and no_event(m1) == []
        await m0.aclose()
        await m1.aclose()
    msgs = [r.getMessage() for r in caplog.records]
    assert any("refused seat 1" in s and "expected" in s for s in msgs)  # the TLS pin


async def test_replayed_handshake_is_refused() -> None:
    table = await make_table(2)
    async with run_meshes(table, seats=[1]) as m:
        # a genuine first handshake, recorded by the "attacker" on the wire
        stream, cert = await tls_open(table, 1)
        reader = FrameReader(stream)
        nonce = secrets.token_bytes(32)
        hello = mesh_mod._hello(table.game_id, 0, 1, nonce)
        await send_frame(stream, hello)
        their = await reader.receive()
        assert their is not None
        their_nonce = their[-32:]
        await reader.receive()  # acceptor's signature
        sig = table.keys[0].sign(mesh_mod._auth_message(table.game_id, 0, 1, nonce, their_nonce, cert))
        await send_frame(stream, sig)
        assert await reader.receive() == mesh_mod.OK
        await next_event(m[1], lambda e: e == PeerUp(0))
        await stream.aclose()
        await next_event(m[1], lambda e: isinstance(e, PeerDown))
        # replay the same hello and signature on a new connection: the nonce has changed
        stream, _ = await tls_open(table, 1)
        reader = FrameReader(stream)
        await send_frame(stream, hello)
        await reader.receive()
        await reader.receive()
        await send_frame(stream, sig)
        with trio.fail_after(5):
            assert await reader.receive() is None  # closed, no OK
        await stream.aclose()
        assert not m[1].is_up(0)


@pytest.mark.parametrize(
    "first_bytes",
    [
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",  # header claims a huge frame
        encode_frame(b"\x00" * 61),  # right size, bad magic
        encode_frame(b"short"),
        b"\x00\x00",  # then EOF inside the header
    ],
)
async def test_garbage_before_handshake_is_refused(first_bytes: bytes, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOG)
    table = await make_table(3)
    async with run_meshes(table, seats=[1, 2]) as m:
        await next_event(m[1], lambda e: e == PeerUp(2))
        stream = await trio.open_tcp_stream(HOST, table.ports[2])
        await stream.send_all(first_bytes)
        await stream.send_eof()
        answer = b""
        with trio.fail_after(5):  # refused: at most a TLS alert, then closed
            while chunk := await stream.receive_some():
                answer += chunk
        assert mesh_mod.MAGIC not in answer and len(answer) < 64
        await stream.aclose()
        assert await m[1].send(2, b"still fine")
        assert (await frames(m[2], 1))[0] == Frame(1, b"still fine")
    assert any("refused connection" in r.getMessage() for r in caplog.records)


async def test_wrong_game_and_unproven_other_way_are_refused() -> None:
    """A hello for another game is refused at once; one from a higher seat (a dial the other
    way, allowed) is answered, but without that seat's signature no link comes up."""
    table = await make_table(3)
    async with run_meshes(table, seats=[1]) as m:
        for game, sender in ((secrets.token_bytes(16), 0), (table.game_id, 2)):
            stream, _ = await tls_open(table, 1)
            await send_frame(stream, mesh_mod._hello(game, sender, 1, secrets.token_bytes(32)))
            with trio.fail_after(5):
                reader = FrameReader(stream)
                if sender == 2:
                    assert await reader.receive() is not None  # its hello
                    assert await reader.receive() is not None  # its signature
                    await send_frame(stream, b"\x00" * 64)  # not seat 2's
                assert await reader.receive() is None
            await stream.aclose()
        assert no_event(m[1]) == []


async def _moved(table: Table, seat: int) -> dict[int, PeerAddr]:
    """``table.peers`` with ``seat`` at a port where nobody listens (it moved)."""
    dead = (await trio.open_tcp_listeners(0, host=HOST))[0]
    port = dead.socket.getsockname()[1]
    await dead.aclose()
    return {**table.peers, seat: PeerAddr(HOST, port, table.peers[seat].public_key)}


async def test_a_link_the_own_dialler_cannot_make_comes_up_the_other_way() -> None:
    """Seat 0 dials seat 1 at an address seat 1 left; seat 1 still reaches seat 0: after
    redial_after, seat 1 dials seat 0 and the pair is linked (both see PeerUp)."""
    table = await make_table(2)
    cfg = MeshConfig(backoff_min=0.02, backoff_max=0.2, handshake_timeout=3.0, redial_after=1.0)
    wrong = await _moved(table, 1)
    async with trio.open_nursery() as nursery:
        m0 = Mesh(0, table.game_id, table.keys[0].sign, wrong, listener=table.listeners[0], config=cfg)
        m1 = Mesh(1, table.game_id, table.keys[1].sign, table.peers, listener=table.listeners[1], config=cfg)
        await nursery.start(m0.run)
        await nursery.start(m1.run)
        assert await next_event(m0, lambda e: isinstance(e, PeerUp), timeout=15) == PeerUp(1)
        assert await next_event(m1, lambda e: isinstance(e, PeerUp), timeout=15) == PeerUp(0)
        assert m0.send_nowait(1, b"hello")
        assert (await frames(m1, 1))[0] == Frame(0, b"hello")
        assert m1.dial_trouble() == {}, "a dial the other way is not this seat's trouble to report"
        await m0.aclose()
        await m1.aclose()


async def test_a_dial_the_other_way_never_replaces_the_pairs_own_live_link() -> None:
    """While the link the lower seat dialled is up and heard, a dial the other way is closed
    on both sides and the pair's own link stays (no PeerDown); when it is stale, the link the
    other way replaces it, and the lower seat does not dial it away while it is heard (a path
    that keeps breaking is not preferred to one that works)."""
    table = await make_table(2)
    async with run_meshes(table) as m:
        await m[0].wait_connected(10)
        await m[1].wait_connected(10)
        own = m[0]._links[1]
        other = await m[1]._dial(0, set(), direct_only=True)
        assert other is not None and not other.own and not other.alive
        assert m[0]._links[1] is own and own.alive and m[1]._links[0].own
        assert [e for e in no_event(m[0]) + no_event(m[1]) if isinstance(e, PeerDown)] == []
        stale = trio.current_time() - 2 * FAST.stale_after
        own.heard_at = m[1]._links[0].heard_at = stale
        async with trio.open_nursery() as nursery:
            nursery.start_soon(m[1]._dial, 0, set(), True)
            assert await next_event(m[1], lambda e: isinstance(e, PeerUp)) == PeerUp(0)
            assert not m[1]._links[0].own
            assert m[1].send_nowait(0, b"one")
            assert await next_event(m[0], lambda e: isinstance(e, Frame)) == Frame(1, b"one")
            kept = m[1]._links[0]
            await trio.sleep(10 * FAST.backoff_max)  # the lower seat's redials, had it dialled
            assert m[1]._links[0] is kept and kept.alive and not m[0]._links[1].own
            nursery.cancel_scope.cancel()


async def test_a_dialler_whose_own_link_went_silent_dials_again_without_waiting_for_idle() -> None:
    """The lower seat's own link is open but heard from no more (its address changed, a path
    died without a word): it dials again after ``redial_after`` and the new link replaces the
    silent one on both sides, long before ``idle_timeout`` would close it."""
    table = await make_table(2)
    async with run_meshes(table) as m:
        await m[0].wait_connected(10)
        await m[1].wait_connected(10)
        silent = m[0]._links[1]
        fresh = m[0]._fresh
        m[0]._fresh = lambda peer: fresh(peer) and m[0]._links.get(peer) is not silent  # type: ignore[method-assign]
        with trio.fail_after(FAST.redial_after + 5):
            while m[0]._links.get(1) in (None, silent):
                await trio.sleep(0.05)
        assert FAST.idle_timeout > FAST.redial_after + 5
        assert not silent.alive and m[0]._links[1].own and m[1]._links[0].own
        assert m[0].send_nowait(1, b"again")
        assert await next_event(m[1], lambda e: isinstance(e, Frame)) == Frame(0, b"again")


# ---------------------------------------------------------------- misbehaving / dropped peers


@pytest.mark.parametrize("attack", ["oversize", "truncated"])
async def test_bad_frame_closes_only_that_link(attack: str) -> None:
    table = await make_table(3)
    async with run_meshes(table, seats=[1, 2]) as m:
        s1, r1 = await raw_peer(table, 0, 1)
        s2, r2 = await raw_peer(table, 0, 2)
        for x in m.values():
            await x.wait_connected(5)
        if attack == "oversize":
            await s1.send_all(struct.pack(">I", FAST.max_frame + 1) + b"junk")
        else:
            await s1.send_all(struct.pack(">I", 100) + b"only part")
            await s1.transport_stream.send_eof()
        down = await next_event(m[1], lambda e: isinstance(e, PeerDown))
        assert isinstance(down, PeerDown)
        assert down.seat == 0
        assert ("oversize" if attack == "oversize" else "framing error") in down.reason
        assert m[1].connected == frozenset({2})
        # the other links are untouched
        assert await m[1].send(2, b"1->2")
        assert (await frames(m[2], 1))[0] == Frame(1, b"1->2")
        assert await m[2].send(0, b"2->0")
        with trio.fail_after(5):
            assert await r2.receive() == b"2->0"
        await s1.aclose()
        await s2.aclose()


async def test_drop_and_redial() -> None:
    table = await make_table(3)
    async with run_meshes(table) as m:
        for x in m.values():
            await x.wait_connected(5)
        no_event(m[0]), no_event(m[2])
        m[2].drop(0, "test drop")  # seat 2 was dialled by 0: 0 redials
        down2 = await next_event(m[2], lambda e: isinstance(e, PeerDown))
        assert down2 == PeerDown(0, "test drop")
        assert isinstance(await next_event(m[0], lambda e: isinstance(e, PeerDown)), PeerDown)
        assert await next_event(m[0], lambda e: isinstance(e, PeerUp)) == PeerUp(2)
        assert await next_event(m[2], lambda e: isinstance(e, PeerUp)) == PeerUp(0)
        assert await m[2].send(0, b"after reconnect")
        assert (await frames(m[0], 1))[0] == Frame(2, b"after reconnect")


async def test_peer_restart_reconnects_on_same_port() -> None:
    table = await make_table(3)
    async with trio.open_nursery() as nursery:
        m = {}
        for i in range(3):
            m[i] = Mesh(i, table.game_id, table.keys[i].sign, table.peers, listener=table.listeners[i], config=FAST)
            await nursery.start(m[i].run)
        for x in m.values():
            await x.wait_connected(5)
        await m[2].aclose()  # seat 2 "crashes"; its listener is closed
        for i in (0, 1):
            assert await next_event(m[i], lambda e: isinstance(e, PeerDown)) == PeerDown(2, "connection closed by peer")
        assert await m[0].send(2, b"lost") is False
        # seat 2 comes back on the same port; seats 0 and 1 keep redialling
        await trio.sleep(0.3)
        again = (await trio.open_tcp_listeners(table.ports[2], host=HOST))[0]
        m2 = Mesh(2, table.game_id, table.keys[2].sign, table.peers, listener=again, config=FAST)
        await nursery.start(m2.run)
        await m2.wait_connected(5)
        for i in (0, 1):
            assert await next_event(m[i], lambda e: isinstance(e, PeerUp)) == PeerUp(2)
        await m2.broadcast(b"back")
        for i in (0, 1):
            assert (await frames(m[i], 1))[0] == Frame(2, b"back")
        for x in (m[0], m[1], m2):
            await x.aclose()


async def test_reconnect_replaces_stale_link() -> None:
    table = await make_table(2)
    async with run_meshes(table, seats=[1]) as m:
        old, old_reader = await raw_peer(table, 0, 1)
        assert await next_event(m[1], lambda e: True) == PeerUp(0)
        new, _ = await raw_peer(table, 0, 1)  # the old link looks alive to seat 1
        ev = await next_event(m[1], lambda e: True)
        assert ev == PeerDown(0, "replaced by a newer connection")
        assert await next_event(m[1], lambda e: True) == PeerUp(0)
        with trio.fail_after(5):
            assert await old_reader.receive() is None  # old link closed by seat 1
        await send_frame(new, b"on the new link")
        assert (await frames(m[1], 1))[0] == Frame(0, b"on the new link")
        await old.aclose()
        await new.aclose()


async def test_keepalive_keeps_idle_links_and_silent_peer_is_dropped() -> None:
    cfg = MeshConfig(backoff_min=0.02, backoff_max=0.2, keepalive_interval=0.05, idle_timeout=0.4)
    table = await make_table(3)
    async with run_meshes(table, seats=[1, 2], config=cfg) as m:
        silent, _ = await raw_peer(table, 0, 1)  # authenticates, then never sends
        await m[1].wait_connected(5)
        down = await next_event(m[1], lambda e: isinstance(e, PeerDown), timeout=5)
        assert isinstance(down, PeerDown)
        assert down.seat == 0 and "nothing received" in down.reason
        # the real 1-2 link idled just as long but keepalives held it up
        assert m[1].is_up(2) and m[2].is_up(1)
        assert not any(isinstance(e, PeerDown) for e in no_event(m[2]))
        await silent.aclose()


async def test_peer_that_stops_reading_is_disconnected() -> None:
    cfg = MeshConfig(backoff_min=0.02, backoff_max=0.2, send_queue=4)
    table = await make_table(2)
    async with run_meshes(table, seats=[1], config=cfg) as m:
        stalled, _ = await raw_peer(table, 0, 1)  # never reads
        await m[1].wait_connected(5)
        chunk = b"x" * (256 * 1024)
        sent = 0
        with trio.fail_after(10):
            while await m[1].send(0, chunk):
                sent += 1
                await trio.sleep(0)
        down = await next_event(m[1], lambda e: isinstance(e, PeerDown))
        assert isinstance(down, PeerDown)
        assert down.seat == 0 and "send queue full" in down.reason
        assert sent >= 4
        await stalled.aclose()


async def test_accept_handshake_direct() -> None:
    """The handshake functions work on any stream pair (used by tools and tests)."""
    a, b = trio.testing.memory_stream_pair()
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    gid = secrets.token_bytes(16)
    result = {}
    async with trio.open_nursery() as nursery:

        async def acceptor() -> None:
            result["seat"] = await accept_handshake(
                b, FrameReader(b), game_id=gid, seat=1, sign=keys[1].sign, keys={0: keys[0].public_key()},
                cert=b"C" * 32,
            )

        nursery.start_soon(acceptor)
        await dial_handshake(
            a, FrameReader(a), game_id=gid, seat=0, peer_seat=1, sign=keys[0].sign, peer_key=keys[1].public_key(),
            cert=b"C" * 32,
        )
    assert result["seat"] == 0


async def test_wait_connected_fails_when_mesh_closes() -> None:
    table = await make_table(2)
    async with trio.open_nursery() as nursery:
        m0 = Mesh(0, table.game_id, table.keys[0].sign, table.peers, config=FAST)
        await nursery.start(m0.run)  # seat 1 never answers (its listener is not served)

        async def close_soon() -> None:
            await trio.sleep(0.1)
            await m0.aclose()

        nursery.start_soon(close_soon)
        with trio.fail_after(5), pytest.raises(mesh_mod.MeshError, match="closed"):
            await m0.wait_connected()
    for lst in table.listeners:
        await lst.aclose()


# ---------------------------------------------------------------- separate hosts

PEER_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys, trio
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from p2p_chinchon.net.mesh import Frame, PeerAddr, PeerUp, open_mesh

    seat, n, subnet = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    keys = [Ed25519PrivateKey.from_private_bytes(hashlib.sha256(b"seat%d" % i).digest()) for i in range(n)]
    peers = {i: PeerAddr(f"{subnet}.{i + 1}", 4600, keys[i].public_key().public_bytes_raw()) for i in range(n)}

    async def main():
        got = {}
        async with open_mesh(seat, b"G" * 16, keys[seat].sign, peers, port=4600, host=f"{subnet}.{seat + 1}") as m:
            await m.wait_connected(20)
            await m.broadcast(b"hello from %d" % seat)
            with trio.fail_after(20):
                async for ev in m.inbound:
                    if isinstance(ev, Frame):
                        got[ev.seat] = ev.payload.decode()
                        if len(got) == n - 1:
                            break
            await trio.sleep(1)  # let the others read our frame before we close
        print(json.dumps(got))

    trio.run(main)
    """
)


@pytest.mark.netns
def test_mesh_across_namespaces() -> None:
    """Three processes on three hosts of a bridged lab form the mesh over real interfaces."""
    require_netns()
    n = 3
    with NetnsLab(n) as lab:
        procs = [
            lab.popen(i, [sys.executable, "-c", PEER_SCRIPT, str(i), str(n), lab.subnet],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in range(n)
        ]
        for i, proc in enumerate(procs):
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            got = json.loads(out)
            assert got == {str(j): f"hello from {j}" for j in range(n) if j != i}
