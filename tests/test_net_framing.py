"""Length-prefixed framing: round trips, oversize headers, truncation, garbage."""

from __future__ import annotations

import struct

import pytest
import trio
import trio.testing
from hypothesis import given, strategies as st

from p2p_chinchon.net.framing import (
    MAX_FRAME,
    FrameDecoder,
    FrameError,
    FrameReader,
    FrameTooLarge,
    Link,
    TruncatedFrame,
    encode_frame,
    receive_frame,
    send_frame,
)


class CountingStream(trio.abc.ReceiveStream):
    """Feeds fixed bytes and records every receive_some(max_bytes) request."""

    def __init__(self, data: bytes, chunk: int = 1 << 20) -> None:
        self.data = bytearray(data)
        self.chunk = chunk
        self.requests: list[int | None] = []
        self.delivered = 0

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        await trio.lowlevel.checkpoint()
        self.requests.append(max_bytes)
        n = min(self.chunk, len(self.data), max_bytes if max_bytes is not None else 1 << 30)
        out = bytes(self.data[:n])
        del self.data[:n]
        self.delivered += n
        return out

    async def aclose(self) -> None:
        pass


def header(n: int) -> bytes:
    return struct.pack(">I", n)


async def test_round_trip_over_memory_stream() -> None:
    a, b = trio.testing.memory_stream_pair()
    payloads = [b"", b"x", b"hello" * 1000, bytes(range(256)) * 300]
    async with trio.open_nursery() as nursery:

        async def sender() -> None:
            for p in payloads:
                await send_frame(a, p)
            await a.aclose()

        nursery.start_soon(sender)
        got = []
        while (frame := await receive_frame(b)) is not None:
            got.append(frame)
    assert got == payloads


async def test_round_trip_over_tcp_with_frame_reader() -> None:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    payloads = [bytes([i]) * (i * 997) for i in range(40)]
    got: list[bytes] = []
    async with trio.open_nursery() as nursery:

        async def server() -> None:
            stream = await listeners[0].accept()
            reader = FrameReader(stream)
            while (frame := await reader.receive()) is not None:
                got.append(frame)
            await stream.aclose()

        nursery.start_soon(server)
        client = await trio.open_tcp_stream("127.0.0.1", port)
        # all frames in one write: the reader must split them itself
        await client.send_all(b"".join(encode_frame(p) for p in payloads))
        await client.aclose()
    await listeners[0].aclose()
    assert got == payloads


async def test_oversize_header_rejected_without_reading_body() -> None:
    claimed = 3 << 30  # 3 GiB: must not be allocated or awaited
    stream = CountingStream(header(claimed) + b"A" * 100)
    with pytest.raises(FrameTooLarge) as info:
        await receive_frame(stream, max_size=1024)
    assert info.value.size == claimed and info.value.limit == 1024
    assert stream.delivered == 4  # only the header was consumed
    assert all(r is not None and r <= 4 for r in stream.requests)


async def test_frame_reader_oversize_rejected_and_stays_failed() -> None:
    stream = CountingStream(header(MAX_FRAME + 1) + b"B" * 10)
    reader = FrameReader(stream)
    with pytest.raises(FrameTooLarge):
        await reader.receive()
    with pytest.raises(FrameTooLarge):  # framing is lost: never resynchronise on garbage
        await reader.receive()


async def test_exactly_max_size_is_accepted() -> None:
    stream = CountingStream(encode_frame(b"z" * 100, max_size=100), chunk=7)
    assert await receive_frame(stream, max_size=100) == b"z" * 100
    assert await receive_frame(stream, max_size=100) is None


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"\x00\x00", "header"),
        (header(10) + b"12345", "body"),
        (header(1), "body"),
    ],
)
async def test_eof_mid_frame_is_an_error(data: bytes, where: str) -> None:
    with pytest.raises(TruncatedFrame) as info:
        await receive_frame(CountingStream(data, chunk=3))
    assert info.value.where == where
    with pytest.raises(TruncatedFrame):
        await FrameReader(CountingStream(data, chunk=3)).receive()


async def test_clean_eof_at_boundary_returns_none() -> None:
    stream = CountingStream(encode_frame(b"one") + encode_frame(b"two"), chunk=2)
    reader = FrameReader(stream)
    assert await reader.receive() == b"one"
    assert await reader.receive() == b"two"
    assert await reader.receive() is None
    assert await receive_frame(CountingStream(b"")) is None


async def test_send_frame_refuses_oversize_and_writes_nothing() -> None:
    a, b = trio.testing.memory_stream_pair()
    with pytest.raises(FrameTooLarge):
        await send_frame(a, b"x" * 11, max_size=10)
    await a.aclose()
    assert await receive_frame(b) is None


def test_bad_max_size_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        FrameDecoder(-1)
    with pytest.raises(ValueError):
        encode_frame(b"", max_size=1 << 32)


@given(
    payloads=st.lists(st.binary(max_size=300), max_size=20),
    cuts=st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=10),
)
def test_decoder_any_split(payloads: list[bytes], cuts: list[int]) -> None:
    data = b"".join(encode_frame(p, 300) for p in payloads)
    dec = FrameDecoder(300)
    out: list[bytes] = []
    pos, i = 0, 0
    while pos < len(data):
        step = cuts[i % len(cuts)]
        dec.feed(data[pos : pos + step])
        pos += step
        i += 1
        while (frame := dec.next_frame()) is not None:
            out.append(frame)
    dec.eof()
    assert out == payloads
    assert dec.buffered == 0


@given(garbage=st.binary(min_size=1, max_size=200))
def test_decoder_garbage_never_crashes(garbage: bytes) -> None:
    dec = FrameDecoder(64)
    dec.feed(garbage)
    frames = []
    try:
        while (frame := dec.next_frame()) is not None:
            frames.append(frame)
        dec.eof()
    except FrameError:
        return  # oversize or truncated: a typed error is the only acceptable failure
    assert b"".join(encode_frame(f, 64) for f in frames) == garbage


async def test_link_send_receive_and_size_cap() -> None:
    a, b = trio.testing.memory_stream_pair()
    left, right = Link(a, max_size=16), Link(b, max_size=16)
    await left.send(b"ping")
    assert await right.receive() == b"ping"
    with pytest.raises(FrameTooLarge):
        await left.send(b"x" * 17)
    await a.send_all(header(17))
    with pytest.raises(FrameTooLarge):
        await right.receive()
    await left.aclose()
    await right.aclose()
