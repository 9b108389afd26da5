"""Lobby: signed join requests over a framed link; refusals of bad requests."""

from __future__ import annotations

import logging
import struct

import msgpack
import pytest
import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, strategies as st

from harness.lobby import Frames
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import tls
from p2p_chinchon.net.framing import Link, encode_frame
from p2p_chinchon.net.lobby import (
    JOIN_MAX_FRAME,
    BadAnswer,
    BadJoinRequest,
    JoinRequest,
    LobbyError,
    Refused,
    WrongHost,
    connect_lobby,
    format_addr,
    parse_addr,
    read_answer,
    serve_lobby,
)

HOST = "127.0.0.1"
LOG = "p2p_chinchon.net.lobby"


CHALLENGE = b"c" * 32
CERT = b"h" * 32
HOST_ID = Identity.generate()


def request_for(key: Ed25519PrivateKey, name: str = "Ana", addr: str = "10.0.0.2:4100") -> JoinRequest:
    return JoinRequest.create(name, key.public_key().public_bytes_raw(), addr, key.sign, challenge=CHALLENGE, cert=CERT)


def decode(data: bytes) -> JoinRequest:
    return JoinRequest.decode(data, challenge=CHALLENGE, cert=CERT)


async def join(port: int, key: Ed25519PrivateKey | Identity, name: str = "Ana", **kwargs) -> Link:
    ident = key if isinstance(key, Identity) else Identity(key)
    link, host_key = await connect_lobby(HOST, port, ident, name=name, listen_addr="10.0.0.2:4100", **kwargs)
    assert host_key == HOST_ID.public_bytes
    return link


async def lobby(nursery: trio.Nursery, on_join, identity: Identity = HOST_ID, **kwargs) -> int:
    listeners = await trio.open_tcp_listeners(0, host=HOST)
    port = listeners[0].socket.getsockname()[1]
    await nursery.start(lambda task_status: serve_lobby(listeners, on_join, identity=identity, task_status=task_status, **kwargs))
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
        link = await join(port, key, expect_fingerprint=HOST_ID.fingerprint)
        with trio.fail_after(5):
            assert await link.receive() == b"seat offer: 2"
            await link.send(b"accept")
            assert await link.receive() == b"x" * 100_000
            assert await link.receive() is None  # host closes when on_join returns
        await link.aclose()
        nursery.cancel_scope.cancel()
    assert [(r.name, r.public_key) for r in seen] == [("Ana", key.public_key().public_bytes_raw())]
    assert seen[0].listen_host_port == ("10.0.0.2", 4100)


def forged(req: JoinRequest, **changes: object) -> bytes:
    body = {"v": 3, "name": req.name, "key": req.public_key, "addr": req.listen_addr, "addrs": list(req.candidates),
            "sig": req.signature}
    body.update(changes)
    return msgpack.packb(body, use_bin_type=True)


async def tls_to(port: int) -> tuple[trio.SSLStream, bytes, bytes]:
    """A TLS connection to the lobby, pinned to HOST_ID; returns it, the challenge, the cert hash."""
    tcp = await trio.open_tcp_stream(HOST, port)
    stream, _key, cert = await tls.dial_tls(tcp, expect_key=HOST_ID.public_bytes)
    link = Link(stream)
    challenge = await link.receive()
    assert challenge is not None and len(challenge) == 32
    return stream, challenge, cert


@pytest.mark.parametrize(
    "case",
    ["other name", "other addr", "other key", "garbage", "oversize", "silent", "eof", "replayed",
     "other table", "no tls"],
)
async def test_bad_join_is_refused(case: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOG)
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    called = []

    async def on_join(req: JoinRequest, link: Link) -> None:
        called.append(req)

    async with trio.open_nursery() as nursery:
        port = await lobby(nursery, on_join, request_timeout=0.5)
        if case == "no tls":  # a well-formed request in clear is not even read
            stream: trio.abc.Stream = await trio.open_tcp_stream(HOST, port)
            await stream.send_all(encode_frame(request_for(key).encode()))
            answer = b""
            with trio.fail_after(5):
                while chunk := await stream.receive_some():
                    answer += chunk
            assert len(answer) < 64  # at most a TLS alert
            await stream.aclose()
            nursery.cancel_scope.cancel()
            assert called == [] and any("TLS handshake failed" in r.getMessage() for r in caplog.records)
            return
        stream, challenge, cert = await tls_to(port)
        raw = key.public_key().public_bytes_raw()
        req = JoinRequest.create("Ana", raw, "10.0.0.2:4100", key.sign, challenge=challenge, cert=cert)
        if case == "replayed":  # a request recorded on an earlier connection to this table
            earlier, old_challenge, _ = await tls_to(port)
            old = JoinRequest.create("Ana", raw, "10.0.0.2:4100", key.sign, challenge=old_challenge, cert=cert)
            await earlier.aclose()
            await stream.send_all(encode_frame(old.encode()))
        elif case == "other table":  # signed for another host's certificate (relayed)
            relayed = JoinRequest.create("Ana", raw, "10.0.0.2:4100", key.sign, challenge=challenge, cert=b"\x01" * 32)
            await stream.send_all(encode_frame(relayed.encode()))
        elif case == "other name":
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
            await stream.transport_stream.send_eof()
        # "silent": send nothing; the host gives up after request_timeout
        with trio.fail_after(5):
            assert await Link(stream).receive() is None  # closed without a reply
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
        l1 = await join(port, keys[0], name="bad")
        with trio.fail_after(5):
            assert await l1.receive() is None
        l2 = await join(port, keys[1], name="good")
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
            link = await join(port, Ed25519PrivateKey.generate())
            await link.aclose()
            await trio.sleep(5)
    assert info.group_contains(ZeroDivisionError, match="caller bug")


async def test_connect_lobby_refused_port() -> None:
    lst = (await trio.open_tcp_listeners(0, host=HOST))[0]
    port = lst.socket.getsockname()[1]
    await lst.aclose()
    with pytest.raises(OSError):
        await join(port, Ed25519PrivateKey.generate())


# ---------------------------------------------------------------- request encoding


def test_request_round_trip_and_validation() -> None:
    key = Ed25519PrivateKey.generate()
    req = request_for(key, name="Ñandú ♣", addr="[fe80::1]:4000")
    assert decode(req.encode()) == req
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
        decode(forged(req, v=1))
    with pytest.raises(BadJoinRequest, match="version"):
        decode(forged(req, v=True))
    with pytest.raises(BadJoinRequest, match="keys"):
        decode(msgpack.packb({"name": "x"}))
    with pytest.raises(BadJoinRequest, match="sig"):
        decode(forged(req, sig=b"\x00" * 63))
    with pytest.raises(BadJoinRequest, match="too large"):
        decode(b"\x00" * (JOIN_MAX_FRAME + 1))


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
        decode(data)


@given(
    st.dictionaries(
        st.sampled_from(["v", "name", "key", "addr", "addrs", "sig", "x"]),
        st.one_of(st.integers(min_value=-(2**63), max_value=2**64 - 1), st.text(max_size=70), st.binary(max_size=70), st.none(), st.booleans()),
    )
)
def test_decode_wrong_types_only_raises_bad_join_request(body: dict[str, object]) -> None:
    with pytest.raises(BadJoinRequest):
        decode(msgpack.packb(body, use_bin_type=True))


# ---------------------------------------------------------------- TLS pin, limits, hostile answers


async def test_wrong_pin_is_refused_before_anything_is_sent() -> None:
    called = []

    async def on_join(req: JoinRequest, link: Link) -> None:
        called.append(req)

    async with trio.open_nursery() as nursery:
        port = await lobby(nursery, on_join)
        with pytest.raises(WrongHost, match="expected"):
            await connect_lobby(HOST, port, Identity.generate(), name="Ana", listen_addr="10.0.0.2:4100",
                                expect_fingerprint=Identity.generate().fingerprint)
        nursery.cancel_scope.cancel()
    assert called == []


async def test_joiners_per_address_are_limited(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOG)
    seated: list[str] = []
    left: list[str] = []
    release = trio.Event()

    async def on_join(req: JoinRequest, link: Link) -> None:
        seated.append(req.name)
        await link.send(b"seated")
        await release.wait()  # a seated joiner holds its link until the seating
        left.append(req.name)

    async with trio.open_nursery() as nursery:
        port = await lobby(nursery, on_join, max_per_address=2, limit_loopback=True)
        links = [await join(port, Identity.generate(), name=f"p{i}") for i in range(3)]
        with trio.fail_after(5):
            answers = [await link.receive() for link in links]
        assert answers == [b"seated", b"seated", None]
        release.set()
        for link in links:
            await link.aclose()
        with trio.fail_after(5):  # the slots free when the joiners' conversations end
            while len(left) < 2:
                await trio.sleep(0.01)
            await trio.sleep(0.05)
        again = await join(port, Identity.generate(), name="later")
        with trio.fail_after(5):
            assert await again.receive() == b"seated"
        await again.aclose()
        nursery.cancel_scope.cancel()
    assert seated == ["p0", "p1", "later"]
    assert any("joiners from that address already" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("frame", "error"),
    [
        (None, Refused),
        (b"\xc1", BadAnswer),
        (msgpack.packb([1, 2]), BadAnswer),
        (msgpack.packb("offer"), BadAnswer),
        (msgpack.packb({}), BadAnswer),
        (msgpack.packb({"offer": "text, not bytes"}), BadAnswer),
        (msgpack.packb({1: b"int key"}), BadAnswer),
        (msgpack.packb({"error": 5}), Refused),
        (msgpack.packb({"error": "full\x1b[2J"}), Refused),
    ],
)
async def test_hostile_lobby_answers_raise_typed_errors(frame: bytes | None, error: type) -> None:
    with pytest.raises(error) as info:
        await read_answer(Frames(frame), "offer", bytes, closed="hung up")  # type: ignore[arg-type]
    assert "\x1b" not in str(info.value)


@given(st.binary(max_size=200))
async def test_any_lobby_answer_is_a_value_or_a_lobby_error(data: bytes) -> None:
    try:
        value = await read_answer(Frames(data), "seat", int, closed="hung up")  # type: ignore[arg-type]
    except LobbyError:
        return
    assert type(value) is int
