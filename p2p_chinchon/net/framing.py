"""Length-prefixed frames over a byte stream.

Layout of one frame: a 4-byte unsigned big-endian length ``n`` followed by ``n`` payload bytes.
An empty payload (``n == 0``) is a valid frame; the mesh uses it as a keepalive.

A receiver refuses a frame whose header claims more than ``max_size`` bytes *from the header
alone*: it never allocates or waits for the claimed size, so a hostile peer cannot make a node
reserve gigabytes with four bytes. Payload bytes are read in bounded chunks as they arrive.

Errors: :class:`FrameTooLarge` (header over the cap, or a local payload over the cap) and
:class:`TruncatedFrame` (EOF inside a header or payload), both :class:`FrameError`.
A clean EOF exactly at a frame boundary is not an error: receivers return ``None``.
"""

from __future__ import annotations

import struct

import trio

__all__ = [
    "HEADER_SIZE",
    "MAX_FRAME",
    "FrameDecoder",
    "FrameError",
    "FrameReader",
    "FrameTooLarge",
    "Link",
    "TruncatedFrame",
    "encode_frame",
    "peer_address",
    "peer_name",
    "receive_frame",
    "send_frame",
]

MAX_FRAME = 1 << 20
"""Default cap on one frame's payload, in bytes (1 MiB)."""

HEADER_SIZE = 4
_HEADER = struct.Struct(">I")
_CHUNK = 1 << 16  # read granularity: bounds memory per read, not the frame size


class FrameError(Exception):
    """A stream broke the framing: oversize frame or EOF in the middle of a frame."""


class FrameTooLarge(FrameError):
    """A frame's length is over the cap. ``size`` is the claimed length, ``limit`` the cap."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the cap of {limit} bytes")
        self.size = size
        self.limit = limit


class TruncatedFrame(FrameError):
    """The stream ended inside a frame (``got`` of ``expected`` bytes of the header or body)."""

    def __init__(self, where: str, got: int, expected: int) -> None:
        super().__init__(f"EOF inside frame {where}: got {got} of {expected} bytes")
        self.where = where
        self.got = got
        self.expected = expected


def _check_max(max_size: int) -> None:
    if not 0 <= max_size <= 0xFFFFFFFF:
        raise ValueError(f"max_size must be in [0, 2**32 - 1], got {max_size}")


def encode_frame(payload: bytes, max_size: int = MAX_FRAME) -> bytes:
    """Header + payload as one ``bytes``. Raises :class:`FrameTooLarge` over ``max_size``."""
    _check_max(max_size)
    if len(payload) > max_size:
        raise FrameTooLarge(len(payload), max_size)
    return _HEADER.pack(len(payload)) + bytes(payload)


async def send_frame(
    stream: trio.abc.SendStream, payload: bytes, max_size: int = MAX_FRAME
) -> None:
    """Write one frame. Raises :class:`FrameTooLarge` (nothing is written) or whatever the
    stream raises (``trio.BrokenResourceError``, ``trio.ClosedResourceError``)."""
    await stream.send_all(encode_frame(payload, max_size))


async def _receive_exactly(stream: trio.abc.ReceiveStream, n: int, where: str) -> bytearray | None:
    """Read exactly ``n`` bytes; ``None`` on EOF before the first byte, else TruncatedFrame."""
    buf = bytearray()
    while len(buf) < n:
        chunk = await stream.receive_some(min(n - len(buf), _CHUNK))
        if not chunk:
            if not buf and where == "header":
                return None
            raise TruncatedFrame(where, len(buf), n)
        buf += chunk
    return buf


async def receive_frame(stream: trio.abc.ReceiveStream, max_size: int = MAX_FRAME) -> bytes | None:
    """Read one frame without reading past it (unbuffered; see :class:`FrameReader`).

    Returns the payload, or ``None`` on a clean EOF at a frame boundary.
    Raises :class:`FrameTooLarge` as soon as the header is read, :class:`TruncatedFrame` on EOF
    inside a frame.
    """
    _check_max(max_size)
    header = await _receive_exactly(stream, HEADER_SIZE, "header")
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > max_size:
        raise FrameTooLarge(size, max_size)
    if size == 0:
        return b""
    body = await _receive_exactly(stream, size, "body")
    assert body is not None  # only a header read may return None
    return bytes(body)


class FrameDecoder:
    """Sans-I/O incremental decoder: ``feed(data)`` then ``next_frame()`` until it returns None.

    After a :class:`FrameTooLarge` the decoder is poisoned (framing is lost) and keeps raising.
    """

    def __init__(self, max_size: int = MAX_FRAME) -> None:
        _check_max(max_size)
        self.max_size = max_size
        self._buf = bytearray()
        self._need: int | None = None  # body length once the header is parsed
        self._error: FrameError | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray) -> None:
        self._buf += data

    def next_frame(self) -> bytes | None:
        """The next complete payload, or ``None`` if more bytes are needed."""
        if self._error is not None:
            raise self._error
        if self._need is None:
            if len(self._buf) < HEADER_SIZE:
                return None
            (size,) = _HEADER.unpack_from(self._buf)
            if size > self.max_size:
                self._error = FrameTooLarge(size, self.max_size)
                self._buf.clear()
                raise self._error
            del self._buf[:HEADER_SIZE]
            self._need = size
        if len(self._buf) < self._need:
            return None
        payload = bytes(self._buf[: self._need])
        del self._buf[: self._need]
        self._need = None
        return payload

    def eof(self) -> None:
        """Declare end of input: raises :class:`TruncatedFrame` if a frame is incomplete."""
        if self._need is not None:
            raise TruncatedFrame("body", len(self._buf), self._need)
        if self._buf:
            raise TruncatedFrame("header", len(self._buf), HEADER_SIZE)


class FrameReader:
    """Buffered frame reader on a receive stream: fewer syscalls when frames are small.

    Reads the stream in chunks of at most 64 KiB, so memory stays bounded by ``max_size`` plus
    one chunk. Same return values and errors as :func:`receive_frame`.
    """

    def __init__(self, stream: trio.abc.ReceiveStream, max_size: int = MAX_FRAME) -> None:
        self.stream = stream
        self._decoder = FrameDecoder(max_size)
        self._eof = False

    @property
    def max_size(self) -> int:
        """Current cap; may be changed between frames (e.g. small during a handshake)."""
        return self._decoder.max_size

    @max_size.setter
    def max_size(self, value: int) -> None:
        _check_max(value)
        self._decoder.max_size = value

    async def receive(self) -> bytes | None:
        while True:
            frame = self._decoder.next_frame()
            if frame is not None:
                return frame
            if self._eof:
                self._decoder.eof()
                return None
            data = await self.stream.receive_some(_CHUNK)
            if not data:
                self._eof = True
            else:
                self._decoder.feed(data)


def peer_address(stream: object) -> object:
    """The remote socket address under ``stream`` (through TLS layers), or None."""
    while hasattr(stream, "transport_stream"):
        stream = stream.transport_stream
    sock = getattr(stream, "socket", None)
    try:
        return sock.getpeername() if sock is not None else None
    except OSError:
        return None


def peer_name(stream: object) -> str:
    """Who is at the other end of ``stream``, for a log line: its socket address, "the transit
    relay HOST:PORT" through the relay (a :class:`~.relay.RelayStream`: its socket is the
    relay's, the peer's address is unknown), else "?"."""
    while hasattr(stream, "transport_stream"):
        stream = stream.transport_stream
    relay = getattr(stream, "relay", None)
    if relay is not None:
        return f"the transit relay {relay}"
    addr = peer_address(stream)
    return "?" if addr is None else str(addr)


class Link:
    """A framed, bidirectional connection: ``send(bytes)``, ``receive() -> bytes | None``,
    ``aclose()``. Concurrent ``send`` calls are serialised; use one receiver at a time.

    ``remote`` is the peer's socket address when the stream is (TLS over) a socket.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        max_size: int = MAX_FRAME,
        reader: FrameReader | None = None,
    ) -> None:
        self.stream = stream
        self._reader = reader if reader is not None else FrameReader(stream, max_size)
        self._reader.max_size = max_size
        self._send_lock = trio.Lock()
        self.remote: object = peer_address(stream)

    @property
    def max_size(self) -> int:
        """Cap on frames in both directions; may be raised after an initial small frame."""
        return self._reader.max_size

    @max_size.setter
    def max_size(self, value: int) -> None:
        self._reader.max_size = value

    async def send(self, payload: bytes) -> None:
        """Send one frame. Raises :class:`FrameTooLarge`, ``trio.BrokenResourceError``,
        ``trio.ClosedResourceError``."""
        async with self._send_lock:
            await send_frame(self.stream, payload, self.max_size)

    async def receive(self) -> bytes | None:
        """Next frame, ``None`` on clean EOF. Raises :class:`FrameError` or stream errors."""
        return await self._reader.receive()

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> Link:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
