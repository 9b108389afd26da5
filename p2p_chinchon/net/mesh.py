"""Full mesh of private, authenticated links (TLS 1.3 over TCP) between the seats of one table.

One :class:`Mesh` is one seat's side: a link to every other seat, carrying opaque ``bytes``
frames (see :mod:`.framing`). Seat ``i`` dials every seat ``j > i`` and accepts from every
``j < i`` (the pair's *own* direction), so each pair has one link; if a dialler reconnects while
the acceptor still holds an old link, the newer authenticated link replaces the older one. A
link down (or silent for :attr:`MeshConfig.stale_after` s) for
:attr:`MeshConfig.redial_after` s is dialled the other way too (seat ``j`` dials
a listening ``i < j``: ``i``'s dials may go to an address ``j`` left, while ``j`` still reaches
``i``). A link the other way never replaces a link of the own direction heard within
:attr:`MeshConfig.stale_after` s, and one of the own direction always replaces it, so both
sides keep the same link; the dialler does not dial while a link the other way is up and heard
(a path that keeps failing, or cannot be dialled, is not preferred to one that works), and dials
again, without waiting for ``idle_timeout``, when its own link is open but silent as long.

Each link is TLS 1.3 (:mod:`.tls`): the acceptor presents the self-signed certificate of its
identity key, and the dialler refuses the link unless that key is the acceptor's key in
``peers`` (the signed seating). Inside the TLS channel both sides then run this handshake (every
message one frame, all integers big-endian), which proves the dialler's key and binds both
proofs to the acceptor's certificate::

    dialler i -> acceptor j : HELLO(i, j, n_i)
    acceptor j -> dialler i : HELLO(j, i, n_j), SIG_j(AUTH(j, i, n_j, n_i))
    dialler i -> acceptor j : SIG_i(AUTH(i, j, n_i, n_j))
    acceptor j -> dialler i : OK

    HELLO(a, b, n)    = b"CHCNMESH" | u8 version=2 | game id (16) | u16 a | u16 b | nonce n (32)
    AUTH(a, b, x, y)  = b"p2p-chinchon/mesh-auth/v2\\0" | game id | u16 a | u16 b | x | y | C
    C                 = SHA-256 of the acceptor's TLS certificate (DER), 32 bytes
    SIG               = Ed25519 signature (64 bytes) by the signer's identity key
    OK                = b"CHCNMESHok"

Nonces are 32 fresh bytes from :mod:`secrets`; each side signs the other side's nonce
(challenge-response), so a recorded handshake cannot be replayed; the signer's and verifier's
seats are both in the signed text, so a signature cannot be reflected; and ``C`` ties the
dialler's proof to the TLS server it checked, so it is worth nothing on another connection.

Scope of the guarantee: after set-up every byte is encrypted and authenticated by TLS, so a
listener learns only sizes and timing, and an on-path attacker can only delay or cut a link
(the node then blames nobody for the gap it cannot prove; table messages are still signed
envelopes, ``wire.py``, so a transcript stands on its own).

Delivery: frames sent on one link arrive in order. Frames sent to a seat whose link is down,
or queued on a link that then breaks, are **dropped**: the driver re-sends what a peer lacks
when it sees :class:`PeerUp`. Each link has a bounded send queue; a peer that stops reading
until its queue is full is disconnected rather than blocking the others.

Events on :attr:`Mesh.inbound`: :class:`PeerUp` when a link is authenticated, :class:`Frame`
for each payload, :class:`PeerDown` (with a reason) when it ends. For one seat they strictly
alternate Up, Frames..., Down, Up, ...
"""

from __future__ import annotations

import ipaddress
import logging
import math
import secrets
import struct
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2p_chinchon.identity import Identity

from .framing import (
    MAX_FRAME,
    FrameError,
    FrameReader,
    FrameTooLarge,
    encode_frame,
    peer_address,
    peer_name,
    send_frame,
)
from .tls import TlsError, accept_tls, dial_tls

if TYPE_CHECKING:
    from .relay import RelayStream

__all__ = [
    "Frame",
    "HandshakeError",
    "Mesh",
    "MeshConfig",
    "MeshError",
    "MeshEvent",
    "MeshTimeout",
    "PeerAddr",
    "PeerDown",
    "PeerUp",
    "RelayPlan",
    "UnknownSeat",
    "accept_handshake",
    "dial_handshake",
    "open_mesh",
]

log = logging.getLogger(__name__)

MAGIC = b"CHCNMESH"
VERSION = 2
AUTH_DOMAIN = b"p2p-chinchon/mesh-auth/v2\x00"
OK = MAGIC + b"ok"
NONCE_SIZE = 32
GAME_ID_SIZE = 16
SIG_SIZE = 64
MAX_SEAT = 0xFFFF
_HELLO = struct.Struct(">8sB16sHH32s")
_SEATS = struct.Struct(">HH")
HANDSHAKE_MAX_FRAME = 128  # handshake frames are 61-64 bytes; cap unauthenticated input
CERT_FP_SIZE = 32


# ---------------------------------------------------------------- values and events


@dataclass(frozen=True, slots=True)
class PeerAddr:
    """Where a seat listens and which Ed25519 identity key (32 raw bytes) it must prove;
    ``alternates``: more ``(host, port)`` where it may be reached (its candidates in the
    seating), dialled together with ``host:port``."""

    host: str
    port: int
    public_key: bytes
    alternates: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Frame:
    """One payload received from ``seat``."""

    seat: int
    payload: bytes


@dataclass(frozen=True, slots=True)
class PeerUp:
    """The link to ``seat`` is authenticated both ways; frames sent from now on are delivered."""

    seat: int


@dataclass(frozen=True, slots=True)
class PeerDown:
    """The link to ``seat`` ended; ``reason`` is human-readable (for logs and the UI)."""

    seat: int
    reason: str = ""


MeshEvent = Frame | PeerUp | PeerDown


@dataclass(frozen=True, slots=True)
class RelayPlan:
    """Where a link that does not come up directly meets instead: the transit
    relay at ``host:port``, under ``token(peer_seat)`` (64 hex characters both seats of the
    pair derive, :func:`.rendezvous.mesh_token`). A dialler also tries the relay once the
    seat's direct places have had ``after`` seconds (at once when its last link was relayed);
    an acceptor waits there for a lower seat not linked for ``after`` seconds. TLS and the
    handshake run inside unchanged."""

    host: str
    port: int
    token: Callable[[int], str]
    after: float = 4.0
    wait: float = 30.0  # a dialler's wait at the relay for the acceptor, per attempt
    # an acceptor's wait there, per visit: then it comes again on a fresh connection (one the
    # relay or a NAT dropped without a word, or a relay that never answers, must not hold it)
    accept_wait: float = 120.0


@dataclass(frozen=True, slots=True)
class MeshConfig:
    """Tunables. Times in seconds, sizes in bytes unless noted."""

    max_frame: int = MAX_FRAME
    connect_timeout: float = 5.0
    handshake_timeout: float = 10.0
    backoff_min: float = 0.05
    backoff_max: float = 2.0
    keepalive_interval: float = 5.0  # an empty frame is sent after this long without sending
    idle_timeout: float = 20.0  # a link that receives nothing for this long is closed
    send_queue: int = 1024  # frames queued per peer before it is declared stuck
    inbound_capacity: int = 128  # events buffered in Mesh.inbound before readers wait
    # Accept limits (unauthenticated connections: see Mesh's "Accept limits").
    max_pending_handshakes: int = 64  # pending from addresses not known as a seat's, in all
    max_pending_per_address: int = 4  # per source address (IPv6: per /64), per seat known there
    client_hello_timeout: float = 2.0  # a connection that sends no TLS byte for this long is closed
    stagger: float = 0.25  # a dial tries a seat's places together, the next this much later
    redial_after: float = 3.0  # a link down this long is dialled the other way too (a lower seat's)
    stale_after: float = 6.0  # a link silent this long (over keepalive_interval) counts as down: redialled


class MeshError(Exception):
    """Base class of mesh errors."""


class HandshakeError(MeshError):
    """A link handshake failed; the message says why (wrong game, bad signature, ...)."""


class UnknownSeat(MeshError, KeyError):
    """A seat that is not one of this mesh's peers."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown seat"


class MeshTimeout(MeshError, trio.TooSlowError):
    """:meth:`Mesh.wait_connected` timed out; ``missing`` holds the seats not yet up."""

    def __init__(self, missing: frozenset[int]) -> None:
        super().__init__(f"seats not connected: {sorted(missing)}")
        self.missing = missing


# ---------------------------------------------------------------- handshake


def _check_seat(seat: int, what: str = "seat") -> None:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat <= MAX_SEAT:
        raise ValueError(f"{what} must be an int in [0, {MAX_SEAT}], got {seat!r}")


def _hello(game_id: bytes, sender: int, receiver: int, nonce: bytes) -> bytes:
    return _HELLO.pack(MAGIC, VERSION, game_id, sender, receiver, nonce)


def _parse_hello(data: bytes | None, game_id: bytes) -> tuple[int, int, bytes]:
    if data is None:
        raise HandshakeError("connection closed during handshake")
    if len(data) != _HELLO.size:
        raise HandshakeError(f"hello has {len(data)} bytes, expected {_HELLO.size}")
    magic, version, game, sender, receiver, nonce = _HELLO.unpack(data)
    if magic != MAGIC:
        raise HandshakeError("not a p2p-chinchon mesh hello (bad magic)")
    if version != VERSION:
        raise HandshakeError(f"unsupported mesh version {version}")
    if game != game_id:
        raise HandshakeError(f"hello for another game {game.hex()}")
    return sender, receiver, nonce


def _auth_message(
    game_id: bytes, signer: int, verifier: int, signer_nonce: bytes, verifier_nonce: bytes, cert: bytes
) -> bytes:
    if len(cert) != CERT_FP_SIZE:
        raise ValueError("the acceptor's certificate fingerprint is 32 bytes")
    return AUTH_DOMAIN + game_id + _SEATS.pack(signer, verifier) + signer_nonce + verifier_nonce + cert


def _verify(key: Ed25519PublicKey, sig: bytes | None, message: bytes, seat: int) -> None:
    if sig is None:
        raise HandshakeError("connection closed during handshake")
    if len(sig) != SIG_SIZE:
        raise HandshakeError(f"signature from seat {seat} has {len(sig)} bytes, expected 64")
    try:
        key.verify(sig, message)
    except InvalidSignature:
        raise HandshakeError(f"signature does not match seat {seat}'s identity key") from None


def _load_key(raw: bytes, seat: int) -> Ed25519PublicKey:
    if not isinstance(raw, bytes | bytearray) or len(raw) != 32:
        raise ValueError(f"seat {seat}: public key must be 32 raw bytes")
    try:
        return Ed25519PublicKey.from_public_bytes(bytes(raw))
    except ValueError as exc:
        raise ValueError(f"seat {seat}: invalid Ed25519 public key: {exc}") from None


async def dial_handshake(
    stream: trio.abc.Stream,
    reader: FrameReader,
    *,
    game_id: bytes,
    seat: int,
    peer_seat: int,
    sign: Callable[[bytes], bytes],
    peer_key: Ed25519PublicKey,
    cert: bytes,
) -> None:
    """Dialler's side of the link handshake (module docstring), run inside TLS. ``reader`` must
    wrap ``stream`` and is left positioned after the handshake, ready for data frames. ``cert``
    is the SHA-256 of the acceptor's certificate as the TLS handshake showed it.

    Raises :class:`HandshakeError`, :class:`~.framing.FrameError`, or stream errors.
    """
    saved_max = reader.max_size
    reader.max_size = HANDSHAKE_MAX_FRAME
    my_nonce = secrets.token_bytes(NONCE_SIZE)
    await send_frame(stream, _hello(game_id, seat, peer_seat, my_nonce))
    sender, receiver, their_nonce = _parse_hello(await reader.receive(), game_id)
    if (sender, receiver) != (peer_seat, seat):
        raise HandshakeError(
            f"expected hello from seat {peer_seat} to {seat}, got {sender} to {receiver}"
        )
    sig = await reader.receive()
    _verify(peer_key, sig, _auth_message(game_id, peer_seat, seat, their_nonce, my_nonce, cert), peer_seat)
    await send_frame(stream, sign(_auth_message(game_id, seat, peer_seat, my_nonce, their_nonce, cert)))
    ok = await reader.receive()
    if ok != OK:
        raise HandshakeError(f"seat {peer_seat} did not confirm the handshake")
    reader.max_size = saved_max


async def accept_handshake(
    stream: trio.abc.Stream,
    reader: FrameReader,
    *,
    game_id: bytes,
    seat: int,
    sign: Callable[[bytes], bytes],
    keys: Mapping[int, Ed25519PublicKey],
    cert: bytes,
) -> int:
    """Acceptor's side of the link handshake, run inside TLS. ``keys`` are the seats allowed
    to dial us; ``cert`` is the SHA-256 of the certificate we presented.

    Returns the authenticated peer seat. Raises :class:`HandshakeError`,
    :class:`~.framing.FrameError`, or stream errors.
    """
    saved_max = reader.max_size
    reader.max_size = HANDSHAKE_MAX_FRAME
    sender, receiver, their_nonce = _parse_hello(await reader.receive(), game_id)
    if receiver != seat:
        raise HandshakeError(f"hello addressed to seat {receiver}, this is seat {seat}")
    key = keys.get(sender)
    if key is None:
        raise HandshakeError(f"seat {sender} may not dial seat {seat}")
    my_nonce = secrets.token_bytes(NONCE_SIZE)
    sig = sign(_auth_message(game_id, seat, sender, my_nonce, their_nonce, cert))
    await stream.send_all(encode_frame(_hello(game_id, seat, sender, my_nonce)) + encode_frame(sig))
    _verify(key, await reader.receive(), _auth_message(game_id, sender, seat, their_nonce, my_nonce, cert), sender)
    await send_frame(stream, OK)
    reader.max_size = saved_max
    return sender


# ---------------------------------------------------------------- the mesh


class _Link:
    """One authenticated connection to a seat, with its own send queue and cancel scope."""

    def __init__(self, seat: int, stream: trio.abc.Stream, reader: FrameReader, queue: int) -> None:
        self.seat = seat
        self.stream = stream
        self.reader = reader
        self.queue_send, self.queue_recv = trio.open_memory_channel[bytes](queue)
        self.scope = trio.CancelScope()
        self.alive = True
        self.reason: str | None = None
        self.finished = trio.Event()
        self.started_at = trio.current_time()
        self.heard_at = self.started_at  # when it last received a frame (keepalives too)
        self.own = True  # in the pair's own direction (the lower seat dialled)

    def close(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        self.alive = False
        self.scope.cancel()


def _identity_of(sign: Any) -> Identity:
    """The :class:`Identity` behind a ``sign`` argument (see :class:`Mesh`)."""
    if isinstance(sign, Identity):
        return sign
    key = getattr(sign, "__self__", sign)  # a bound Ed25519PrivateKey.sign
    if isinstance(key, Ed25519PrivateKey):
        return Identity(key)
    raise TypeError("sign must be an Identity, an Ed25519PrivateKey or its bound sign method")


_LINK_ERRORS = (OSError, trio.BrokenResourceError, trio.ClosedResourceError)
_HOSTS_KEPT = 2  # source hosts remembered per seat, newest first (its reserved slots)


def _source_key(host: str | None) -> str | None:
    """What the accept limits count per: an IPv4 address, or an IPv6 /64 (one host's usual
    share, which it can fill with addresses at will); None for a name or no address."""
    try:
        ip = ipaddress.ip_address((host or "").split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # a dual-stack listener: the IPv4 address it stands for
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _place(place: tuple[str, int]) -> str:
    host, port = place
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _dial_error(exc: BaseException) -> str:
    """Why a TCP connect failed, in a few words ("Connection refused", "No route to host")."""
    while True:
        if isinstance(exc, OSError) and exc.strerror:
            return exc.strerror.rsplit(": ", 1)[-1]  # trio's "Error connecting to (...): why"
        inner = exc.exceptions[0] if isinstance(exc, BaseExceptionGroup) else exc.__cause__
        if inner is None:
            break
        exc = inner
    text = str(exc)
    return text.rsplit(": ", 1)[-1] if ": " in text else text or type(exc).__name__


class Mesh:
    """One seat's links to every other seat of a seated table.

    Args:
        seat: this node's seat number (0..65535).
        game_id: 16 bytes naming the table; a hello for another game is refused.
        sign: this seat's identity: an :class:`~p2p_chinchon.identity.Identity`, an
            ``Ed25519PrivateKey``, or that key's bound ``sign`` method. It signs the handshake
            and makes the TLS certificate this seat presents.
        peers: ``{seat: PeerAddr}`` for the other seats (this seat's own entry, if present,
            is used only to check that ``sign`` matches its key).
        listener: a listener (or list of listeners, e.g. from ``trio.open_tcp_listeners``)
            on which lower seats dial us; the mesh closes it on exit. Or:
        port, host: open listeners on this port (0 = any free port) and host (None = all).
        config: :class:`MeshConfig`.

    Raises ``ValueError`` for a malformed argument (bad seat, key, or game id, or a seat that
    must accept connections but has no listener).

    Use: ``await nursery.start(mesh.run)`` (or ``async with open_mesh(...)``), read
    :attr:`inbound`, :meth:`send` / :meth:`broadcast`, then :meth:`aclose`.

    Accept limits: a connection that has not finished its handshake holds a *pending* slot.
    Each source address (an IPv6 /64) may hold ``max_pending_per_address`` of them, and all
    addresses not known to be a seat's ``max_pending_handshakes`` together; a connection over
    a limit is closed at once, one that sends no TLS ClientHello within
    ``client_hello_timeout`` is closed then. A *known* address is one a lower seat (one that
    dials us) may dial from: its seating address, its signed mDNS records' addresses (with
    ``locate``), and the addresses its last authenticated links came from (a seat behind NAT,
    or dialling from another interface, is known after its first link). A known address has
    ``max_pending_per_address`` slots per seat known there, outside the strangers' total: so
    no flood from other addresses, one or many, can refuse a seat's redial. It does not help
    when the flood comes from the seat's own address (same host, same NAT): that flood only
    holds a slot for ``client_hello_timeout`` per connection, and the seat's redials, with
    backoff, compete with it for the address's slots; meanwhile this seat dials it the other
    way (its own port is not flooded), which links the pair unless that seat cannot be dialled.
    """

    def __init__(
        self,
        seat: int,
        game_id: bytes,
        sign: Callable[[bytes], bytes],
        peers: Mapping[int, PeerAddr],
        *,
        listener: trio.abc.Listener[Any] | Sequence[trio.abc.Listener[Any]] | None = None,
        port: int | None = None,
        host: str | None = None,
        config: MeshConfig | None = None,
        locate: Callable[[int], Sequence[tuple[str, int]]] | None = None,
        relay: RelayPlan | None = None,
    ) -> None:
        _check_seat(seat)
        if not isinstance(game_id, bytes | bytearray) or len(game_id) != GAME_ID_SIZE:
            raise ValueError("game_id must be 16 bytes")
        self.seat = seat
        self.game_id = bytes(game_id)
        self._identity = _identity_of(sign)
        self._sign = self._identity.private_key.sign
        self.config = config if config is not None else MeshConfig()
        self._peers: dict[int, PeerAddr] = {}
        self._keys: dict[int, Ed25519PublicKey] = {}
        for s, addr in peers.items():
            _check_seat(s, "peer seat")
            key = _load_key(addr.public_key, s)
            if s == seat:
                probe = b"p2p-chinchon/mesh-self-test\x00" + self.game_id
                try:
                    key.verify(self._sign(probe), probe)
                except InvalidSignature:
                    raise ValueError("sign() does not match this seat's public key") from None
                continue
            self._peers[s] = addr
            self._keys[s] = key
        self._home = dict(self._peers)  # the seating's addresses and candidates (_places)
        self._answered: dict[int, tuple[str, int]] = {}  # where each dialled seat last answered
        # seat we dial -> place "host:port" -> why the last dial there failed, and how many
        # dials in a row failed everywhere (cleared when a link comes up): dial_trouble()
        self._dial_errors: dict[int, dict[str, str]] = {}
        self._dial_failures: dict[int, int] = {}
        self._accept_keys = dict(self._keys)  # lower seats dial us; higher ones too, the other way
        if listener is None:
            self._listeners: list[trio.abc.Listener[Any]] = []
        elif isinstance(listener, Sequence):
            self._listeners = list(listener)
        else:
            self._listeners = [listener]
        self._listen_port = port
        self._listen_host = host
        if any(s < seat for s in self._keys) and not self._listeners and port is None:
            raise ValueError(f"seat {seat} accepts links from lower seats: give a listener or port")
        self._inbound_send, self.inbound = trio.open_memory_channel[MeshEvent](
            self.config.inbound_capacity
        )
        """Receive channel of :data:`MeshEvent` (``Frame``, ``PeerUp``, ``PeerDown``)."""
        self._links: dict[int, _Link] = {}
        self._seat_locks = {s: trio.Lock() for s in self._peers}
        self._changed = trio.Event()
        self._scope: trio.CancelScope | None = None
        self._nursery: trio.Nursery | None = None
        self._running = False
        self._closed = False
        self._done = trio.Event()
        self._pending_at: dict[str | None, int] = {}  # source (_source_key) -> pending handshakes
        self._strangers = 0  # pending handshakes from addresses not known as a lower seat's
        self._came_from: dict[int, list[str]] = {s: [] for s in self._accept_keys}  # seat -> last hosts
        # seat -> where else it may listen now ([(host, port)], e.g. from its mDNS record):
        # tried when dialling its known address keeps failing (its address changed)
        self._locate = locate
        self._relay = relay
        self._relay_place = None if relay is None else (f"transit relay {relay.host}", relay.port)
        self._via_relay: set[int] = set()  # seats whose last link came through the relay
        self._no_token: set[int] = set()  # seats whose key gives no relay token (told once)

    # ------------------------------------------------------------ public state

    @property
    def peer_seats(self) -> frozenset[int]:
        return frozenset(self._peers)

    @property
    def connected(self) -> frozenset[int]:
        """Seats whose link is currently up."""
        return frozenset(s for s, link in self._links.items() if link.alive)

    @property
    def relayed(self) -> frozenset[int]:
        """Seats whose current link runs through the transit relay."""
        return frozenset(s for s in self.connected if s in self._via_relay)

    def is_up(self, seat: int) -> bool:
        link = self._links.get(seat)
        return link is not None and link.alive

    def dial_trouble(self) -> dict[int, list[tuple[str, str]]]:
        """Seats this seat dials that it has not reached since its last dial began failing:
        ``{seat: [("host:port", why the last dial there failed), ...]}``, in dialling order
        (what a person is told when a seat cannot be reached)."""
        out = {}
        for seat, n in self._dial_failures.items():
            if n and not self.is_up(seat):
                errors = self._dial_errors.get(seat, {})
                places = list(map(_place, self._places(seat)))
                if self._relay_place is not None:
                    places.append(_place(self._relay_place))
                out[seat] = [(p, errors[p]) for p in places if p in errors]
        return out

    @property
    def port(self) -> int | None:
        """The TCP port of the first listener (useful with ``port=0``), once listening."""
        for lst in self._listeners:
            sock = getattr(lst, "socket", None)
            if sock is not None:
                return int(sock.getsockname()[1])
        return None

    # ------------------------------------------------------------ lifecycle

    async def run(self, *, task_status: trio.TaskStatus[int | None] = trio.TASK_STATUS_IGNORED) -> None:
        """Listen, dial, and keep links up until :meth:`aclose` or cancellation.

        ``task_status.started(port)`` is called once listening (``port`` may be None)."""
        if self._running:
            raise RuntimeError("Mesh.run() called twice")
        self._running = True
        try:
            if self._closed:
                task_status.started(self.port)
                return
            if not self._listeners and self._listen_port is not None:
                self._listeners = list(
                    await trio.open_tcp_listeners(self._listen_port, host=self._listen_host)
                )
            with trio.CancelScope() as scope:
                self._scope = scope
                async with trio.open_nursery() as nursery:
                    self._nursery = nursery
                    for lst in self._listeners:
                        nursery.start_soon(self._accept_loop, lst)
                    for s in sorted(self._peers):
                        nursery.start_soon(self._redial_loop, s)
                        if s > self.seat:
                            nursery.start_soon(self._dial_loop, s)
                        elif self._relay is not None:
                            nursery.start_soon(self._relay_accept_loop, s)
                    task_status.started(self.port)
        finally:
            self._closed = True
            with trio.CancelScope(shield=True):
                for lst in self._listeners:
                    await trio.aclose_forcefully(lst)
            self._inbound_send.close()
            self._set_changed()  # wake wait_connected() callers so they see the close
            self._done.set()

    async def aclose(self) -> None:
        """Close every link and listener and end :meth:`run`; ``inbound`` then ends.
        Idempotent. No ``PeerDown`` events are emitted for a shutdown."""
        self._closed = True
        if self._scope is not None:
            self._scope.cancel()
        if self._running:
            await self._done.wait()
        else:
            self._inbound_send.close()
            await trio.lowlevel.checkpoint()

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Wait until every peer seat is up. Raises :class:`MeshTimeout` after ``timeout`` s,
        :class:`MeshError` if the mesh is closed meanwhile."""
        with trio.move_on_after(math.inf if timeout is None else timeout):
            while self.connected != self.peer_seats:
                if self._closed:
                    raise MeshError("mesh is closed")
                await self._changed.wait()
            return
        raise MeshTimeout(self.peer_seats - self.connected)

    # ------------------------------------------------------------ sending

    def send_nowait(self, seat: int, payload: bytes) -> bool:
        """Queue ``payload`` for ``seat``. True if queued on a live link; False if the link is
        down (the frame is dropped) or the peer's queue is full (the link is then closed).

        Raises :class:`UnknownSeat`, ``ValueError`` (empty payload, reserved for keepalives),
        :class:`~.framing.FrameTooLarge`."""
        if seat not in self._peers:
            raise UnknownSeat(f"seat {seat} is not a peer of seat {self.seat}")
        if not payload:
            raise ValueError("empty payloads are reserved for keepalives")
        if len(payload) > self.config.max_frame:
            raise FrameTooLarge(len(payload), self.config.max_frame)
        link = self._links.get(seat)
        if link is None or not link.alive:
            return False
        try:
            link.queue_send.send_nowait(bytes(payload))
        except trio.WouldBlock:
            link.close(f"send queue full ({self.config.send_queue} frames): peer is not reading")
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    async def send(self, seat: int, payload: bytes) -> bool:
        """Async form of :meth:`send_nowait` (same result and errors); never blocks on a peer."""
        await trio.lowlevel.checkpoint()
        return self.send_nowait(seat, payload)

    async def broadcast(self, payload: bytes) -> frozenset[int]:
        """Queue ``payload`` for every peer; returns the seats it was queued for."""
        await trio.lowlevel.checkpoint()
        if not payload:
            raise ValueError("empty payloads are reserved for keepalives")
        if len(payload) > self.config.max_frame:
            raise FrameTooLarge(len(payload), self.config.max_frame)
        return frozenset(s for s in sorted(self._peers) if self.send_nowait(s, payload))

    def drop(self, seat: int, reason: str = "dropped by the driver") -> None:
        """Close the current link to ``seat`` (e.g. it sent an invalid envelope). A dialled
        seat is redialled after backoff; a lower seat may dial again. Not a ban."""
        if seat not in self._peers:
            raise UnknownSeat(f"seat {seat} is not a peer of seat {self.seat}")
        link = self._links.get(seat)
        if link is not None:
            link.close(reason)

    # ------------------------------------------------------------ internals

    def _set_changed(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def _emit(self, event: MeshEvent) -> None:
        try:
            await self._inbound_send.send(event)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # nobody listens any more (shutting down)

    def _jitter(self, delay: float) -> float:
        # 50-100 % of the delay, so seats that lost a link together do not redial in lockstep
        return delay * (0.5 + secrets.randbelow(1001) / 2000)

    def _places(self, peer: int) -> list[tuple[str, int]]:
        """Where to dial ``peer``, best first: where it last answered, the seating's address
        (observed by the host), its candidates in the seating (advertised, then private), then
        what the locator knows (its signed mDNS records). All are dialled together (staggered),
        so a dead or forged place costs one failed connect, never the right place (the key
        stays the seating's: a wrong place only fails TLS or the handshake)."""
        home = self._home[peer]
        places = [(home.host, home.port), *home.alternates]
        if self._locate is not None:
            places += self._locate(peer)
        last = self._answered.get(peer)
        if last is not None:
            places.insert(0, last)
        return list(dict.fromkeys(places))

    def _relay_token(self, peer: int) -> str | None:
        """The relay token of our pair with ``peer``; None (logged once) when its identity key
        has no X25519 secret with ours (a small-order key, which OpenSSL takes for Ed25519):
        that pair has no token, so its link cannot meet at the relay (docs/protocol.md,
        vector ``relay-low-order-key``)."""
        assert self._relay is not None
        try:
            return self._relay.token(peer)
        except ValueError as exc:
            if peer not in self._no_token:
                self._no_token.add(peer)
                log.warning("seat %d: seat %d has no relay token (%s): its link cannot meet at the transit relay",
                            self.seat, peer, exc)
            return None

    def _note_failure(self, peer: int, place: tuple[str, int], why: str) -> None:
        self._dial_errors.setdefault(peer, {})[_place(place)] = why

    async def _connect_any(
        self, peer: int, places: Sequence[tuple[str, int]], relay: bool = True,
    ) -> tuple[trio.SocketStream | RelayStream, tuple[str, int]] | None:
        """TCP to the first of ``places`` that answers (each started :attr:`MeshConfig.stagger`
        s after the one before it, so the best place wins when it answers at once); None when
        none did (each failure noted)."""
        cfg = self.config
        won: tuple[trio.SocketStream, tuple[str, int]] | None = None

        async def claim(stream: Any, place: tuple[str, int], scope: trio.CancelScope) -> None:
            # the first connection up wins, direct or relayed; a later one is closed
            nonlocal won
            if won is not None:
                await trio.aclose_forcefully(stream)
                return
            won = (stream, place)
            scope.cancel()

        async def attempt(i: int, place: tuple[str, int], scope: trio.CancelScope) -> None:
            await trio.sleep(i * cfg.stagger)
            try:
                with trio.fail_after(cfg.connect_timeout):
                    stream = await trio.open_tcp_stream(*place)
            except trio.TooSlowError:
                self._note_failure(peer, place, f"no answer in {cfg.connect_timeout:g} s")
                return
            except (OSError, UnicodeError) as exc:  # UnicodeError: a name IDNA refuses ('x..y')
                self._note_failure(peer, place, _dial_error(exc))
                return
            await claim(stream, place, scope)

        async def through_relay(scope: trio.CancelScope) -> None:
            from .relay import RelayError, meet
            from .rendezvous import relay_side

            plan, place = self._relay, self._relay_place
            assert plan is not None and place is not None
            await trio.sleep(0 if peer in self._via_relay else plan.after)
            token = self._relay_token(peer)
            if token is None:
                self._note_failure(peer, place, f"no relay token: seat {peer}'s identity key has no X25519 form")
                return
            try:
                stream: Any = await meet(plan.host, plan.port, token, relay_side(self.seat), wait=plan.wait)
            except RelayError as exc:
                self._note_failure(peer, place, str(exc))
                return
            except trio.TooSlowError:
                self._note_failure(peer, place, f"seat {peer} did not come in {plan.wait:g} s")
                return
            await claim(stream, place, scope)

        try:
            async with trio.open_nursery() as nursery:
                for i, place in enumerate(places):
                    nursery.start_soon(attempt, i, place, nursery.cancel_scope)
                if self._relay is not None and relay:
                    nursery.start_soon(through_relay, nursery.cancel_scope)
        except BaseException:
            if won is not None:
                with trio.CancelScope(shield=True):
                    await trio.aclose_forcefully(won[0])
            raise
        return won

    async def _dial_loop(self, peer: int) -> None:
        cfg = self.config
        delay = cfg.backoff_min
        refused: set[tuple[str, int]] = set()  # places whose TLS or handshake failed last time
        while True:
            while self._fresh(peer):  # a working link the other way is kept until it fails
                await trio.sleep(0.5)
            link = await self._dial(peer, refused)
            if link is None:
                self._dial_failures[peer] = self._dial_failures.get(peer, 0) + 1
                log.debug("seat %d: cannot reach seat %d: %s", self.seat, peer, self._dial_errors.get(peer))
            if link is not None and trio.current_time() - link.started_at > 2 * cfg.backoff_max:
                delay = cfg.backoff_min  # it was a working link: redial promptly
            await trio.sleep(self._jitter(delay))
            delay = min(delay * 2, cfg.backoff_max)

    async def _redial_loop(self, peer: int) -> None:
        """Dial ``peer`` again whenever its link has been down or silent (:meth:`_fresh`) for
        :attr:`MeshConfig.redial_after` s (polled: a link that flickers does not send us), with
        backoff while that lasts: a lower seat the other way (its failures are not reported as
        ours to reach); a higher seat, whose own :meth:`_dial_loop` waits on the silent link
        until ``idle_timeout``, only while that link is open and silent (this seat's address
        changed, or a path died without a word): the new link replaces it."""
        cfg = self.config
        refused: set[tuple[str, int]] = set()
        lower = peer < self.seat
        down = 0.0

        def needed() -> bool:
            if lower:
                return not self._fresh(peer)
            link = self._links.get(peer)
            return link is not None and link.alive and not self._fresh(peer)

        while True:
            await trio.sleep(0.5)
            down = 0.0 if self._fresh(peer) else down + 0.5
            if down < cfg.redial_after or not needed():
                continue
            delay = cfg.backoff_min
            while needed():
                await self._dial(peer, refused, direct_only=lower)
                await trio.sleep(self._jitter(delay))
                delay = min(delay * 2, cfg.backoff_max)
            down = 0.0

    def _fresh(self, peer: int) -> bool:
        """The link to ``peer`` is up and heard within :attr:`MeshConfig.stale_after` s (a
        link whose other end moved stays up, silent, until ``idle_timeout``)."""
        link = self._links.get(peer)
        return link is not None and link.alive and trio.current_time() - link.heard_at < self.config.stale_after

    async def _dial(self, peer: int, refused: set[tuple[str, int]], direct_only: bool = False) -> _Link | None:
        """One dial of ``peer`` at every place it may be (the relay too, unless
        ``direct_only``), and its link run until it ends; None when no link came up.
        ``refused`` (updated): places whose TLS or handshake failed, skipped next time."""
        cfg = self.config
        if True:
            places = self._places(peer)
            tried = [p for p in places if p not in refused] or places
            refused.clear()
            place: tuple[str, int] | None = None
            stream: trio.abc.Stream | None = None
            link: _Link | None = None
            try:
                got = await self._connect_any(peer, tried, relay=not direct_only)
                if got is not None:
                    stream, place = got
                    with trio.fail_after(cfg.handshake_timeout):
                        stream, _key, cert = await dial_tls(stream, expect_key=self._home[peer].public_key)
                        reader = FrameReader(stream, cfg.max_frame)
                        await dial_handshake(
                            stream,
                            reader,
                            game_id=self.game_id,
                            seat=self.seat,
                            peer_seat=peer,
                            sign=self._sign,
                            peer_key=self._keys[peer],
                            cert=cert,
                        )
                    owned, stream = stream, None  # _run_link closes it from here on
                    home = self._home[peer]
                    if place == self._relay_place:
                        self._via_relay.add(peer)
                        log.info("seat %d: seat %d met through the %s", self.seat, peer, _place(place))
                    else:
                        self._via_relay.discard(peer)
                        if place != (home.host, home.port) and self._answered.get(peer) != place:
                            log.info("seat %d: seat %d answered at %s (the seating's address is %s:%d)",
                                     self.seat, peer, _place(place), home.host, home.port)
                        self._answered[peer] = place
                    self._dial_failures[peer] = 0
                    self._dial_errors.pop(peer, None)
                    link = await self._run_link(peer, owned, reader, own=peer > self.seat)
            except (HandshakeError, FrameError, TlsError) as exc:
                assert place is not None
                log.warning("seat %d: refused seat %d at %s: %s", self.seat, peer, _place(place), exc)
                self._note_failure(peer, place, f"not seat {peer}: {exc}")
                refused.add(place)
            except (trio.TooSlowError, *_LINK_ERRORS) as exc:
                if place is not None:
                    self._note_failure(peer, place, "the connection broke before the link was up"
                                       if not isinstance(exc, trio.TooSlowError) else "no answer to TLS in time")
                log.debug("seat %d: dial seat %d failed: %r", self.seat, peer, exc)
            finally:
                if stream is not None:
                    with trio.CancelScope(shield=True):
                        await trio.aclose_forcefully(stream)
        return link

    async def _accept_loop(self, listener: trio.abc.Listener[Any]) -> None:
        assert self._nursery is not None
        while True:
            try:
                stream = await listener.accept()
            except trio.ClosedResourceError:
                return
            except OSError as exc:  # e.g. EMFILE: wait for descriptors to free up
                log.warning("seat %d: accept failed: %r", self.seat, exc)
                await trio.sleep(0.1)
                continue
            addr = peer_address(stream)
            host = addr[0] if isinstance(addr, tuple) else None
            source = _source_key(host)
            stranger, refusal = self._admit(source)
            if refusal is not None:
                log.warning("seat %d: refusing %s: %s", self.seat, peer_name(stream), refusal)
                await trio.aclose_forcefully(stream)
                continue
            self._pending_at[source] = self._pending_at.get(source, 0) + 1
            self._strangers += stranger
            self._nursery.start_soon(self._incoming, stream, host, source, stranger)

    async def _relay_accept_loop(self, peer: int) -> None:
        """Wait at the transit relay for lower seat ``peer`` whenever it has not been linked
        for :attr:`RelayPlan.after` seconds (the dialler comes there after as long), and run
        what arrives as an incoming connection: TLS and the handshake decide, as for any."""
        from .relay import RelayDown, RelayError, meet
        from .rendezvous import relay_side

        plan = self._relay
        assert plan is not None
        token = self._relay_token(peer)
        if token is None:
            return
        delay = self.config.backoff_max
        while True:
            unlinked = 0.0
            while unlinked < plan.after:  # polled: a link that flickers does not send us there
                unlinked = 0.0 if self.is_up(peer) else unlinked + 0.5
                await trio.sleep(0.5)
            try:
                stream: Any = await meet(plan.host, plan.port, token, relay_side(self.seat), wait=plan.accept_wait)
            except trio.TooSlowError:
                continue  # nobody came: wait again on a fresh connection
            except RelayError as exc:
                if isinstance(exc, RelayDown):
                    log.warning("seat %d: %s", self.seat, exc)
                await trio.sleep(self._jitter(delay))
                delay = min(delay * 2, 30.0)
                continue
            delay = self.config.backoff_max
            self._pending_at[None] = self._pending_at.get(None, 0) + 1
            await self._incoming(stream, None, None, False, relayed=True)

    def _seats_at(self) -> dict[str, int]:
        """Source keys a lower seat may dial from (Mesh "Accept limits") -> how many seats."""
        count: dict[str, int] = {}
        for s in self._accept_keys:
            hosts = {self._home[s].host, *self._came_from[s]}
            if self._locate is not None:
                hosts.update(h for h, _port in self._locate(s))
            for key in {k for h in hosts if (k := _source_key(h)) is not None}:
                count[key] = count.get(key, 0) + 1
        return count

    def _admit(self, source: str | None) -> tuple[bool, str | None]:
        """Whether a new connection from ``source`` is a stranger's, and why it is refused
        (None: admitted)."""
        cfg = self.config
        seats = self._seats_at().get(source, 0) if source is not None else 0
        cap = cfg.max_pending_per_address * max(1, seats)
        if source is not None and self._pending_at.get(source, 0) >= cap:
            return not seats, f"{cap} handshakes already pending from {source}"
        if not seats and self._strangers >= cfg.max_pending_handshakes:
            return True, f"{self._strangers} handshakes already pending from unknown addresses"
        return not seats, None

    async def _incoming(self, stream: trio.abc.Stream, host: str | None, source: str | None,
                        stranger: bool, relayed: bool = False) -> None:
        try:
            with trio.fail_after(self.config.handshake_timeout):
                stream, cert = await accept_tls(stream, self._identity,
                                                hello_timeout=self.config.client_hello_timeout)
                reader = FrameReader(stream, self.config.max_frame)
                peer = await accept_handshake(
                    stream,
                    reader,
                    game_id=self.game_id,
                    seat=self.seat,
                    sign=self._sign,
                    keys=self._accept_keys,
                    cert=cert,
                )
        except (HandshakeError, FrameError, TlsError, trio.TooSlowError, *_LINK_ERRORS) as exc:
            reason = "handshake timed out" if isinstance(exc, trio.TooSlowError) else str(exc) or repr(exc)
            log.warning("seat %d: refused connection from %s: %s", self.seat, peer_name(stream), reason)
            await trio.aclose_forcefully(stream)
            return
        except BaseException:  # cancelled (shutdown): do not leak the socket
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            raise
        finally:
            self._pending_at[source] -= 1
            if not self._pending_at[source]:
                del self._pending_at[source]
            self._strangers -= stranger
        if host is not None:  # its next redial may come from here again (NAT, another interface)
            seen = self._came_from[peer]
            seen[:] = [host, *(h for h in seen if h != host)][:_HOSTS_KEPT]
        if relayed:
            self._via_relay.add(peer)
        else:
            self._via_relay.discard(peer)
        await self._run_link(peer, stream, reader, own=peer < self.seat)

    async def _run_link(self, seat: int, stream: trio.abc.Stream, reader: FrameReader, own: bool = True) -> _Link:
        link = _Link(seat, stream, reader, self.config.send_queue)
        link.own = own
        try:
            async with self._seat_locks[seat]:
                old = self._links.get(seat)
                if (old is not None and old.alive and old.own and not own
                        and trio.current_time() - old.heard_at < self.config.stale_after):
                    link.close("a link in the pair's own direction is up")
                    return link
                if old is not None:
                    old.close("replaced by a newer connection")
                    await old.finished.wait()
                self._links[seat] = link
                self._set_changed()
                await self._emit(PeerUp(seat))
            log.info("seat %d: link to seat %d up (%s)", self.seat, seat, peer_name(stream))
            try:
                with link.scope:
                    async with trio.open_nursery() as nursery:
                        nursery.start_soon(self._reader, link)
                        nursery.start_soon(self._writer, link)
            finally:
                link.alive = False
                link.queue_send.close()
                self._set_changed()
                await trio.aclose_forcefully(stream)
            # not reached on shutdown (cancelled): no PeerDown then, by design
            reason = link.reason or "closed"
            log.info("seat %d: link to seat %d down: %s", self.seat, seat, reason)
            await self._emit(PeerDown(seat, reason))
        finally:
            link.alive = False
            if self._links.get(seat) is link:
                del self._links[seat]
            link.finished.set()
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
        return link

    async def _reader(self, link: _Link) -> None:
        idle = self.config.idle_timeout
        try:
            while True:
                with trio.move_on_after(idle) as scope:
                    payload = await link.reader.receive()
                if scope.cancelled_caught:
                    link.close(f"nothing received for {idle:g} s")
                    return
                if payload is None:
                    link.close("connection closed by peer")
                    return
                link.heard_at = trio.current_time()
                if payload:  # empty frames are keepalives
                    await self._emit(Frame(link.seat, payload))
        except FrameTooLarge as exc:
            link.close(f"oversize frame: {exc}")
        except FrameError as exc:
            link.close(f"framing error: {exc}")
        except _LINK_ERRORS as exc:
            link.close(f"connection lost: {exc!r}")

    async def _writer(self, link: _Link) -> None:
        keepalive = self.config.keepalive_interval
        try:
            while True:
                payload = b""
                with trio.move_on_after(keepalive):
                    payload = await link.queue_recv.receive()
                data = bytearray(encode_frame(payload, self.config.max_frame))
                while len(data) < 1 << 16:  # coalesce queued frames into one write
                    try:
                        data += encode_frame(link.queue_recv.receive_nowait(), self.config.max_frame)
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                await link.stream.send_all(data)
        except trio.EndOfChannel:
            link.close("closed")
        except _LINK_ERRORS as exc:
            link.close(f"send failed: {exc!r}")


@asynccontextmanager
async def open_mesh(*args: Any, **kwargs: Any) -> AsyncIterator[Mesh]:
    """``async with open_mesh(...) as mesh:`` runs :class:`Mesh` (same arguments) in a nursery
    of its own, started (listening) on entry and closed on exit."""
    mesh = Mesh(*args, **kwargs)
    async with trio.open_nursery() as nursery:
        await nursery.start(mesh.run)
        try:
            yield mesh
        finally:
            await mesh.aclose()
