"""Meeting at a magic-wormhole transit relay from trio: one text line each way, then
a raw byte pipe to whoever presented the same token from the other side.

:func:`meet` returns a :class:`RelayStream`; the pinned TLS of the lobby or the mesh then runs
inside it exactly as over a direct TCP connection, so the relay sees only TLS records (sizes and
timing). :func:`pair_secret` is the X25519 secret two seats' identity keys share, from which
:func:`.rendezvous.mesh_token` derives their link's token.
"""

from __future__ import annotations

import ctypes
import logging
from typing import Any

import trio

from p2p_chinchon.net.rendezvous import CodeError, RelayReply, relay_request

__all__ = ["RelayDown", "RelayError", "RelayStream", "meet", "pair_secret"]

log = logging.getLogger(__name__)


class RelayError(Exception):
    """The relay answered, but did not open the pipe (message: why)."""


class RelayDown(RelayError, OSError):
    """No TCP connection to the relay (message: where and why, for a person)."""


class RelayStream(trio.abc.Stream):
    """A connection through the relay: the socket stream after the handshake, with the bytes
    that came with the relay's ``ok`` served first. ``relay`` is ``"host:port"``. It has no
    ``socket`` attribute on purpose: the address it comes from is the relay's, not the peer's,
    so nothing may take it for where the peer is."""

    def __init__(self, stream: trio.SocketStream, rest: bytes, relay: str) -> None:
        self._stream = stream
        self._rest = rest
        self.relay = relay

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self._stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self._stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        if self._rest:
            n = len(self._rest) if max_bytes is None else max_bytes
            data, self._rest = self._rest[:n], self._rest[n:]
            return data
        return await self._stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self._stream.aclose()


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def meet(host: str, port: int, token: str, side: str, *, connect_timeout: float = 10.0,
               wait: float | None = None) -> RelayStream:
    """Connect to the transit relay at ``host:port``, ask it to relay ``token`` for ``side``
    (:func:`.rendezvous.relay_request`) and wait for the other side (``wait`` seconds, None =
    as long as it takes). Raises :class:`RelayDown` (no TCP connection within
    ``connect_timeout``), :class:`RelayError` (the relay refused or closed) or
    ``trio.TooSlowError`` (nobody came within ``wait``)."""
    where = _where(host, port)
    try:
        with trio.fail_after(connect_timeout):
            stream = await trio.open_tcp_stream(host, port)
    except trio.TooSlowError:
        raise RelayDown(f"the transit relay at {where} does not answer") from None
    except (OSError, UnicodeError) as exc:  # UnicodeError: a name IDNA refuses
        from .mesh import _dial_error  # trio's "all attempts failed" wraps the reason

        why = _dial_error(exc)
        raise RelayDown(f"cannot reach the transit relay at {where} ({why})") from None
    try:
        await stream.send_all(relay_request(token, side))
        reply = RelayReply(f"the transit relay at {where}")
        with trio.fail_after(float("inf") if wait is None else wait):
            while True:
                data = await stream.receive_some(4096)
                if not data:
                    raise RelayError(f"the transit relay at {where} closed the connection")
                if reply.feed(data):
                    break
        if not reply.ok:
            raise RelayError(f"the transit relay at {where} answered {reply.answer!r}")
    except CodeError as exc:
        await trio.aclose_forcefully(stream)
        raise RelayError(str(exc)) from None
    except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
        await trio.aclose_forcefully(stream)
        raise RelayError(f"the connection to the transit relay at {where} broke: {exc}") from None
    except BaseException:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(stream)
        raise
    return RelayStream(stream, reply.rest, where)


def pair_secret(identity: Any, peer_key: bytes) -> bytes:
    """The 32-byte X25519 secret of ``identity`` and the Ed25519 public key ``peer_key``,
    both keys mapped to Curve25519 by libsodium (``crypto_sign_ed25519_*_to_curve25519``,
    then ``crypto_scalarmult``): the same for both seats, unknown to anyone else. Raises
    ValueError for a key libsodium refuses (not a point, or a low-order one)."""
    from p2p_chinchon.deck.sodium import library

    lib = library()
    if len(peer_key) != 32:
        raise ValueError("an identity key is 32 bytes")
    their = ctypes.create_string_buffer(32)
    if lib.crypto_sign_ed25519_pk_to_curve25519(their, bytes(peer_key)) != 0:
        raise ValueError("the peer's identity key has no Curve25519 form")
    seed = identity.private_key.private_bytes_raw()
    mine = ctypes.create_string_buffer(32)
    lib.crypto_sign_ed25519_sk_to_curve25519(mine, seed + identity.public_bytes)
    shared = ctypes.create_string_buffer(32)
    rc = lib.crypto_scalarmult(shared, mine, their)
    ctypes.memset(mine, 0, 32)
    if rc != 0:
        raise ValueError("the peer's identity key is a low-order point")
    return shared.raw
