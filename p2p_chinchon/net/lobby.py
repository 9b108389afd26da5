"""Pre-seating link: a joiner connects to the host and sends a signed :class:`JoinRequest`.

Protocol: the joiner opens TCP to the host's lobby port and sends one frame, the join request
(a msgpack map, below). The host verifies it and hands the request and the framed
:class:`~.framing.Link` to the caller's ``on_join``; everything after that (seat offers, rules,
the seating list) is opaque frames chosen by the caller. A request that is malformed or whose
signature does not verify is refused: the host logs why and closes the connection without a
reply, and ``on_join`` is not called.

Join request frame: msgpack map with exactly these keys::

    "v":    1
    "name": str, 1..64 characters, no control characters (the player's display name)
    "key":  bin 32, the joiner's Ed25519 identity public key
    "addr": str "host:port" (IPv6 as "[::1]:port") where the joiner's mesh listens
    "sig":  bin 64, Ed25519 over  b"p2p-chinchon/join/v1\\0" + msgpack([name, key, addr])

The signature binds name and mesh address to the key. It carries no nonce: a replayed request
could occupy a lobby slot, but the replayer cannot pass the mesh handshake (which is a fresh
challenge-response on the same key) nor sign any table message.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .framing import MAX_FRAME, FrameError, Link

__all__ = [
    "JOIN_MAX_FRAME",
    "BadJoinRequest",
    "JoinRequest",
    "LobbyError",
    "Link",
    "connect_lobby",
    "format_addr",
    "parse_addr",
    "serve_lobby",
]

log = logging.getLogger(__name__)

JOIN_DOMAIN = b"p2p-chinchon/join/v1\x00"
JOIN_VERSION = 1
JOIN_MAX_FRAME = 1024  # a join request is ~200 bytes; cap what an unknown peer may send
MAX_NAME = 64
_KEYS = {"v", "name", "key", "addr", "sig"}


class LobbyError(Exception):
    """Base class of lobby errors."""


class BadJoinRequest(LobbyError):
    """A join request that does not parse or whose signature does not verify (message: why)."""


def parse_addr(addr: str) -> tuple[str, int]:
    """``"host:port"`` or ``"[v6]:port"`` -> (host, port). Raises ``ValueError``."""
    if not isinstance(addr, str):
        raise ValueError("address must be a string")
    host, sep, port_s = addr.rpartition(":")
    if not sep or not host or not port_s.isdigit():
        raise ValueError(f"address {addr!r} is not host:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f"address {addr!r}: write IPv6 hosts as [host]:port")
    port = int(port_s)
    if not 0 < port < 65536 or not host:
        raise ValueError(f"address {addr!r}: port must be 1..65535")
    return host, port


def format_addr(host: str, port: int) -> str:
    """(host, port) -> ``"host:port"`` (IPv6 hosts bracketed)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
        raise BadJoinRequest(f"name must be a string of 1..{MAX_NAME} characters")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise BadJoinRequest("name contains control characters")
    return name


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """A joiner's signed request to sit at a table. Build with :meth:`create`."""

    name: str
    public_key: bytes
    listen_addr: str
    signature: bytes

    @staticmethod
    def signed_bytes(name: str, public_key: bytes, listen_addr: str) -> bytes:
        """The exact bytes the signature covers."""
        return JOIN_DOMAIN + msgpack.packb([name, public_key, listen_addr], use_bin_type=True)

    @classmethod
    def create(
        cls, name: str, public_key: bytes, listen_addr: str, sign: Callable[[bytes], bytes]
    ) -> JoinRequest:
        """Validate the fields and sign them with ``sign`` (the identity key's Ed25519 sign).
        Raises :class:`BadJoinRequest` for a bad name or key, ``ValueError`` for a bad addr."""
        _check_name(name)
        if not isinstance(public_key, bytes) or len(public_key) != 32:
            raise BadJoinRequest("public key must be 32 bytes")
        parse_addr(listen_addr)
        sig = sign(cls.signed_bytes(name, public_key, listen_addr))
        return cls(name, public_key, listen_addr, sig)

    @property
    def listen_host_port(self) -> tuple[str, int]:
        return parse_addr(self.listen_addr)

    def encode(self) -> bytes:
        return msgpack.packb(
            {
                "v": JOIN_VERSION,
                "name": self.name,
                "key": self.public_key,
                "addr": self.listen_addr,
                "sig": self.signature,
            },
            use_bin_type=True,
        )

    @classmethod
    def decode(cls, data: bytes) -> JoinRequest:
        """Parse and verify. Raises :class:`BadJoinRequest` (never anything else)."""
        if len(data) > JOIN_MAX_FRAME:
            raise BadJoinRequest(f"join request of {len(data)} bytes is too large")
        try:
            obj = msgpack.unpackb(
                data, raw=False, strict_map_key=True, use_list=False)
        except Exception as exc:  # msgpack raises several unrelated types on garbage
            raise BadJoinRequest(f"join request is not msgpack: {exc}") from None
        if not isinstance(obj, dict) or set(obj) != _KEYS:
            raise BadJoinRequest(f"join request must be a map with keys {sorted(_KEYS)}")
        if type(obj["v"]) is not int or obj["v"] != JOIN_VERSION:
            raise BadJoinRequest(f"unsupported join request version {obj['v']!r}")
        name = _check_name(obj["name"])
        key, addr, sig = obj["key"], obj["addr"], obj["sig"]
        if not isinstance(key, bytes) or len(key) != 32:
            raise BadJoinRequest("key must be 32 bytes")
        if not isinstance(sig, bytes) or len(sig) != 64:
            raise BadJoinRequest("sig must be 64 bytes")
        try:
            parse_addr(addr)
        except ValueError as exc:
            raise BadJoinRequest(str(exc)) from None
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(sig, cls.signed_bytes(name, key, addr))
        except (InvalidSignature, ValueError):
            raise BadJoinRequest("signature does not verify under the request's key") from None
        return cls(name, key, addr, sig)


def _peer(stream: trio.abc.Stream) -> str:
    sock = getattr(stream, "socket", None)
    try:
        return str(sock.getpeername()) if sock is not None else "?"
    except OSError:
        return "?"


async def serve_lobby(
    listener: trio.abc.Listener[Any] | Sequence[trio.abc.Listener[Any]],
    on_join: Callable[[JoinRequest, Link], Awaitable[None]],
    *,
    max_frame: int = MAX_FRAME,
    request_timeout: float = 10.0,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept joiners until cancelled; closes the listener(s) on exit.

    For each connection: read one frame within ``request_timeout`` s, decode and verify it as
    a :class:`JoinRequest`, then ``await on_join(request, link)`` in its own task; the link is
    closed when ``on_join`` returns. Refused requests are logged and closed. Exceptions from
    ``on_join`` that are link or lobby failures (``LobbyError``, ``FrameError``, broken or
    closed stream) are logged and end only that joiner; any other exception is a bug in the
    caller and propagates.
    """
    listeners = list(listener) if isinstance(listener, Sequence) else [listener]

    async def handle(stream: trio.abc.Stream) -> None:
        link = Link(stream, max_size=JOIN_MAX_FRAME)
        async with link:
            try:
                with trio.fail_after(request_timeout):
                    data = await link.receive()
                if data is None:
                    raise BadJoinRequest("connection closed before a join request")
                request = JoinRequest.decode(data)
            except (trio.TooSlowError, LobbyError, FrameError, trio.BrokenResourceError) as exc:
                why = "no join request in time" if isinstance(exc, trio.TooSlowError) else str(exc)
                log.warning("lobby: refused %s: %s", _peer(stream), why)
                return
            link.max_size = max_frame
            try:
                await on_join(request, link)
            except (LobbyError, FrameError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                log.warning("lobby: joiner %r (%s) dropped: %s", request.name, _peer(stream), exc)

    async def accept_loop(lst: trio.abc.Listener[Any], nursery: trio.Nursery) -> None:
        while True:
            try:
                stream = await lst.accept()
            except trio.ClosedResourceError:
                return
            except OSError as exc:
                log.warning("lobby: accept failed: %r", exc)
                await trio.sleep(0.1)
                continue
            nursery.start_soon(handle, stream)

    try:
        async with trio.open_nursery() as nursery:
            for lst in listeners:
                nursery.start_soon(accept_loop, lst, nursery)
            task_status.started()
    finally:
        with trio.CancelScope(shield=True):
            for lst in listeners:
                await trio.aclose_forcefully(lst)


async def connect_lobby(
    host: str,
    port: int,
    request: JoinRequest,
    *,
    max_frame: int = MAX_FRAME,
    timeout: float = 10.0,
) -> Link:
    """Connect to a host's lobby and send ``request``; returns the open :class:`Link` for the
    caller's conversation. If the host refuses the request, the link's first ``receive()``
    returns ``None``. Raises ``OSError`` (cannot connect) or ``trio.TooSlowError``."""
    with trio.fail_after(math.inf if timeout is None else timeout):
        stream = await trio.open_tcp_stream(host, port)
    link = Link(stream, max_size=max_frame)
    try:
        with trio.fail_after(math.inf if timeout is None else timeout):
            await link.send(request.encode())
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    return link
