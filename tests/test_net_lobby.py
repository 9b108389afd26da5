"""Lobby: signed join requests over a framed link; refusals of bad requests."""

from __future__ import annotations

import logging
import struct

import msgpack
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from p2p_chinchon.net.framing import Link, encode_frame
from p2p_chinchon.net.lobby import (
    JOIN_MAX_FRAME,
    BadJoinRequest,
    JoinRequest,
    LobbyError,
    connect_lobby,
    format_addr,
    parse_addr,
    serve_lobby,
)

HOST = "127.0.0.1"
LOG = "p2p_chinchon.net.lobby"


def request_for(key: Ed25519PrivateKey, name: str = "Ana", addr: str = "10.0.0.2:4100") -> JoinRequest:
    return JoinRequest.create(name, key.public_key().public_bytes_raw(), addr, key.sign)


async def lobby(nursery: trio.Nursery, on_join, **kwargs) -> int:  # type: ignore[no-untyped-def]
    listeners = await trio.open_tcp_listeners(0, host=HOST)
    port = listeners[0].socket.getsockname()[1]
    await nursery.start(lambda task_status: serve_lobby(listeners, on_join, task_status=task_status, **kwargs))
    return port


async def test_join_conversation() -> None:
    key = Ed25519PrivateKey.generate()
    seen: list[JoinRequest] = []

    async def on_join(req: JoinRequest, link: Link) -> None:
        seen.append(req)
        await link.send(b"seat offer: 2")
        assert await link.receive() == b"accept"
        await link.send(b"x" * 100_000)  # after the request, the normal frame cap applies

    async with trio.open_nursery() as nursery:
        port = await lobby(nursery, on_join)
        req = request_for(key)
        link = await connect_lobby(HOST, port, req)
        with trio.fail_after(5):
            assert await link.receive() == b"seat offer: 2"
            await link.send(b"accept")
            assert await link.receive() == b"x" * 100_000
            assert await link.receive() is None  # host closes when on_join returns
        await link.aclose()
        nursery.cancel_scope.cancel()
    assert seen == [req]
    assert seen[0].listen_host_port == ("10.0.0.2", 4100)


def forged(req: JoinRequest, **changes: object) -> bytes:
    body = {"v": 1, "name": req.name, "key": req.public_key, "addr": req.listen_addr, "sig": req.signature}
    body.update(changes)
    return msgpack.packb(body, use_bin_type=True)


@pytest.mark.parametrize(
    "case",
    ["other name", "other addr", "other key", "garbage", "oversize", "silent", "eof"],
)
async def test_bad_join_is_refused(case: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOG)
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    req = request_for(key)
    called = []

    async def on_join(req: JoinRequest, link: Link) -> None:
        called.append(req)

    async with trio.open_nursery() as nursery:
        port = await lobby(nursery, on_join, request_timeout=0.3)
        stream = await trio.open_tcp_stream(HOST, port)
        if case == "other name":
            await stream.send_all(encode_frame(forged(req, name="Eve")))
        elif case == "other addr":
            await stream.send_all(encode_frame(forged(req, addr="6.6.6.6:1")))
        elif case == "other key":
            await stream.send_all(encode_frame(forged(req, key=other.public_key().public_bytes_raw())))
        elif case == "garbage":
            await stream.send_all(encode_frame(b"\xc1\xff not msgpack"))
        elif case == "oversize":
            await stream.send_all(struct.pack(">I", JOIN_MAX_FRAME + 1))
        elif case == "eof":
            await stream.send_eof()
        # "silent": send nothing; the host gives up after request_timeout
        with trio.fail_after(5):
            assert await stream.receive_some() == b""  # closed without a reply
        await stream.aclose()
        nursery.cancel_scope.cancel()
    assert called == []
    assert any("lobby: refused" in r.getMessage() for r in caplog.records)


async def test_failing_joiner_does_not_stop_the_lobby() -> None:
    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    served = []

    async def on_join(req: JoinRequest, link: Link) -> None:
        if req.name == "bad":
            raise LobbyError("table full")
        served.append(req.name)
        await link.send(b"ok")

    async with trio.open_nursery() as nursery:
        port = await lobby(nursery, on_join)
        l1 = await connect_lobby(HOST, port, request_for(keys[0], name="bad"))
        with trio.fail_after(5):
            assert await l1.receive() is None
        l2 = await connect_lobby(HOST, port, request_for(keys[1], name="good"))
        with trio.fail_after(5):
            assert await l2.receive() == b"ok"
        await l1.aclose()
        await l2.aclose()
        nursery.cancel_scope.cancel()
    assert served == ["good"]


async def test_bug_in_on_join_propagates() -> None:
    async def on_join(req: JoinRequest, link: Link) -> None:
        raise ZeroDivisionError("caller bug")

    with pytest.raises(BaseExceptionGroup) as info:
        async with trio.open_nursery() as nursery:
            port = await lobby(nursery, on_join)
            link = await connect_lobby(HOST, port, request_for(Ed25519PrivateKey.generate()))
            await link.aclose()
            await trio.sleep(5)
    assert info.group_contains(ZeroDivisionError, match="caller bug")


async def test_connect_lobby_refused_port() -> None:
    lst = (await trio.open_tcp_listeners(0, host=HOST))[0]
    port = lst.socket.getsockname()[1]
    await lst.aclose()
    with pytest.raises(OSError):
        await connect_lobby(HOST, port, request_for(Ed25519PrivateKey.generate()))


# ---------------------------------------------------------------- request encoding


def test_request_round_trip_and_validation() -> None:
    key = Ed25519PrivateKey.generate()
    req = request_for(key, name="Ñandú ♣", addr="[fe80::1]:4000")
    assert JoinRequest.decode(req.encode()) == req
    assert req.listen_host_port == ("fe80::1", 4000)
    with pytest.raises(BadJoinRequest):
        request_for(key, name="")
    with pytest.raises(BadJoinRequest):
        request_for(key, name="a\nb")
    with pytest.raises(BadJoinRequest):
        request_for(key, name="x" * 65)
    with pytest.raises(ValueError):
        request_for(key, addr="nohost")
    with pytest.raises(BadJoinRequest, match="version"):
        JoinRequest.decode(forged(req, v=2))
    with pytest.raises(BadJoinRequest, match="version"):
        JoinRequest.decode(forged(req, v=True))
    with pytest.raises(BadJoinRequest, match="keys"):
        JoinRequest.decode(msgpack.packb({"name": "x"}))
    with pytest.raises(BadJoinRequest, match="sig"):
        JoinRequest.decode(forged(req, sig=b"\x00" * 63))
    with pytest.raises(BadJoinRequest, match="too large"):
        JoinRequest.decode(b"\x00" * (JOIN_MAX_FRAME + 1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1.2.3.4:80", ("1.2.3.4", 80)), ("[::1]:65535", ("::1", 65535)), ("host.local:1", ("host.local", 1))],
)
def test_parse_addr(text: str, expected: tuple[str, int]) -> None:
    assert parse_addr(text) == expected
    assert parse_addr(format_addr(*expected)) == expected


@pytest.mark.parametrize("bad", ["", ":80", "h:", "h:0", "h:65536", "::1:80", "h:8x", "h:-1"])
def test_parse_addr_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_addr(bad)


@given(st.binary(max_size=300))
def test_decode_garbage_only_raises_bad_join_request(data: bytes) -> None:
    with pytest.raises(BadJoinRequest):
        JoinRequest.decode(data)


@given(
    st.dictionaries(
        st.sampled_from(["v", "name", "key", "addr", "sig", "x"]),
        st.one_of(st.integers(min_value=-(2**63), max_value=2**64 - 1), st.text(max_size=70), st.binary(max_size=70), st.none(), st.booleans()),
    )
)
def test_decode_wrong_types_only_raises_bad_join_request(body: dict[str, object]) -> None:
    with pytest.raises(BadJoinRequest):
        JoinRequest.decode(msgpack.packb(body, use_bin_type=True))
