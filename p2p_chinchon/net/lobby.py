"""Pre-seating link: a joiner connects to the host over TLS 1.3 and sends a signed
:class:`JoinRequest` bound to that host and that connection.

Protocol (every message one frame, :mod:`.framing`, inside TLS, :mod:`.tls`):

1. The joiner opens TCP to the host's lobby port and runs TLS as the client. It pins the host's
   identity key: the certificate must hold the key whose fingerprint the mDNS advertisement
   (or the user) gave; with a bare ``--connect`` any identity certificate is accepted and the
   caller must check that the host's signed offer carries the same key.
2. host -> joiner: CHALLENGE, 32 fresh random bytes.
3. joiner -> host: the join request, a msgpack map with exactly these keys::

    "v":     3
    "name":  str, 1..64 characters, no control characters (the player's display name)
    "key":   bin 32, the joiner's Ed25519 identity public key
    "addr":  str "host:port" (IPv6 as "[::1]:port") where the joiner's mesh listens
    "addrs": array of at most 8 str "host:port": the joiner's candidate addresses, best first
             (each --advertise, then its interface addresses with its mesh port)
    "sig":   bin 64, Ed25519 over  b"p2p-chinchon/join/v3\\0" + msgpack([name, key, addr, addrs])
             + CHALLENGE + SHA-256(host's certificate, DER)

The host verifies it against its own challenge and certificate, then hands the request and
the framed :class:`~.framing.Link` to the caller's ``on_join``; everything after that is opaque
frames chosen by the caller (their replies are read with :func:`read_answer`). A request that is
malformed, late, or whose signature does not verify is refused: the host logs why and closes
the connection without a reply, and ``on_join`` is not called. Because the signature covers a
fresh challenge and the host's certificate, a recorded or relayed request is worth nothing on
another connection or at another table.

The lobby runners that seat a table over this link (the host's ``host_lobby``, the joiner's
``join_lobby``) are in :mod:`.seating`.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import secrets
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2p_chinchon.wire import MAX_SEATS

from .addresses import check_host
from .framing import MAX_FRAME, FrameError, Link, peer_address, peer_name
from .tls import TlsError, accept_tls, dial_tls

__all__ = [
    "CHALLENGE_SIZE",
    "JOIN_MAX_FRAME",
    "BadAnswer",
    "BadJoinRequest",
    "Refused",
    "WrongHost",
    "JoinRequest",
    "check_candidates",
    "LobbyError",
    "Link",
    "APPROVAL_WAIT",
    "PromptQueue",
    "REFUSE_ADDRESS",
    "RELAYED",
    "connect_lobby",
    "format_addr",
    "lobby_players",
    "parse_addr",
    "read_answer",
    "serve_lobby",
]

log = logging.getLogger(__name__)

JOIN_DOMAIN = b"p2p-chinchon/join/v3\x00"
JOIN_VERSION = 3
CHALLENGE_SIZE = 32
CERT_FP_SIZE = 32
MAX_REFUSAL = 300  # characters of a host's refusal shown to the joiner
JOIN_MAX_FRAME = 2048  # a join request is ~200-900 bytes; cap what an unknown peer may send
MAX_NAME = 64
MAX_LOBBY = MAX_SEATS  # entries in a {"lobby"} update: the most seats a table has
_KEYS = {"v", "name", "key", "addr", "addrs", "sig"}
MAX_CANDIDATES = 8  # candidate addresses in a join request (and per seat in the seating)
MAX_ADDR_BYTES = 64
ASK_EVERY = 60.0  # s: an address whose last question ended without a seat is not asked again sooner
APPROVAL_WAIT = 120.0  # s from a joiner's "sit" to the host's answer; the joiner waits as long
REFUSE_ADDRESS = "address"  # the host's person refuses this joiner and everyone from its address
RELAYED = "the transit relay"  # the source address of a joiner who came through the relay
_ADDRESS_REFUSED = "the host refuses joiners from your address"


class LobbyError(Exception):
    """Base class of lobby errors."""


class BadJoinRequest(LobbyError):
    """A join request that does not parse or whose signature does not verify (message: why)."""


class Refused(LobbyError):
    """The host refused us (its reason, or that it hung up); the message is printable text."""


class WrongHost(LobbyError):
    """The lobby's TLS certificate is not the pinned host's, or TLS failed (message: why)."""


class BadAnswer(LobbyError):
    """The host's lobby answer is not what the protocol allows (any shape: not msgpack, not a
    map, a missing key, a value of the wrong type): a broken or hostile host."""


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
    if not port_s.isascii():
        raise ValueError(f"address {addr!r}: the port is not in ASCII digits")
    check_host(host, addr)
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


def check_candidates(addrs: object) -> tuple[str, ...]:
    """A join request's ``addrs``: at most :data:`MAX_CANDIDATES` distinct ``"host:port"``
    strings of at most 64 bytes each. Raises ``ValueError``."""
    if not isinstance(addrs, (list, tuple)) or len(addrs) > MAX_CANDIDATES:
        raise ValueError(f"addrs must be a list of at most {MAX_CANDIDATES} addresses")
    for a in addrs:
        parse_addr(a)
        if len(a.encode()) > MAX_ADDR_BYTES:
            raise ValueError(f"address {a[:70]!r} is longer than {MAX_ADDR_BYTES} bytes")
    if len(set(addrs)) != len(addrs):
        raise ValueError("addrs lists an address twice")
    return tuple(addrs)


@dataclass(frozen=True, slots=True)
class JoinRequest:
    """A joiner's signed request to sit at a table. Build with :meth:`create`. ``candidates``:
    more addresses where its mesh may be reached, best first (docs/protocol.md "Lobby")."""

    name: str
    public_key: bytes
    listen_addr: str
    signature: bytes
    candidates: tuple[str, ...] = ()

    @staticmethod
    def signed_bytes(name: str, public_key: bytes, listen_addr: str, candidates: Sequence[str],
                     challenge: bytes, cert: bytes) -> bytes:
        """The exact bytes the signature covers: the fields, the host's ``challenge`` (32
        bytes) and the SHA-256 ``cert`` of the host's TLS certificate (32 bytes)."""
        if len(challenge) != CHALLENGE_SIZE or len(cert) != CERT_FP_SIZE:
            raise ValueError("challenge and certificate hash are 32 bytes each")
        fields = [name, public_key, listen_addr, list(candidates)]
        packed: bytes = msgpack.packb(fields, use_bin_type=True)
        return JOIN_DOMAIN + packed + challenge + cert

    @classmethod
    def create(
        cls, name: str, public_key: bytes, listen_addr: str, sign: Callable[[bytes], bytes], *,
        challenge: bytes, cert: bytes, candidates: Sequence[str] = (),
    ) -> JoinRequest:
        """Validate the fields and sign them, bound to the host's ``challenge`` and ``cert``
        (see :meth:`signed_bytes`), with ``sign`` (the identity key's Ed25519 sign).
        Raises :class:`BadJoinRequest` for a bad name or key, ``ValueError`` for a bad addr."""
        _check_name(name)
        if not isinstance(public_key, bytes) or len(public_key) != 32:
            raise BadJoinRequest("public key must be 32 bytes")
        parse_addr(listen_addr)
        candidates = check_candidates(tuple(candidates))
        sig = sign(cls.signed_bytes(name, public_key, listen_addr, candidates, challenge, cert))
        return cls(name, public_key, listen_addr, sig, candidates)

    @property
    def listen_host_port(self) -> tuple[str, int]:
        return parse_addr(self.listen_addr)

    def encode(self) -> bytes:
        packed: bytes = msgpack.packb(
            {
                "v": JOIN_VERSION,
                "name": self.name,
                "key": self.public_key,
                "addr": self.listen_addr,
                "addrs": list(self.candidates),
                "sig": self.signature,
            },
            use_bin_type=True,
        )
        return packed

    @classmethod
    def decode(cls, data: bytes, *, challenge: bytes, cert: bytes) -> JoinRequest:
        """Parse and verify against the ``challenge`` we sent and our ``cert`` hash.
        Raises :class:`BadJoinRequest` (never anything else)."""
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
            candidates = check_candidates(obj["addrs"])
        except ValueError as exc:
            raise BadJoinRequest(str(exc)) from None
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(
                sig, cls.signed_bytes(name, key, addr, candidates, challenge, cert))
        except (InvalidSignature, ValueError):
            raise BadJoinRequest("signature does not verify under the request's key") from None
        return cls(name, key, addr, sig, candidates)


def _ip(stream: trio.abc.Stream) -> str | None:
    addr = peer_address(stream)
    return str(addr[0]) if isinstance(addr, tuple) and addr else None


def _is_loopback(ip: str | None) -> bool:
    try:
        return ip is not None and ipaddress.ip_address(ip.split("%")[0]).is_loopback
    except ValueError:
        return False


async def serve_lobby(
    listener: trio.abc.Listener[Any] | Sequence[trio.abc.Listener[Any]],
    on_join: Callable[[JoinRequest, Link], Awaitable[None]],
    *,
    identity: Any,
    max_frame: int = MAX_FRAME,
    request_timeout: float = 10.0,
    max_per_address: int | None = 2,
    limit_loopback: bool = False,
    rng: Any = secrets,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Accept joiners until cancelled; closes the listener(s) on exit.

    For each connection: TLS as the server with ``identity``'s certificate, send a challenge
    (``rng.token_bytes(32)``), read one frame within ``request_timeout`` s (TLS included),
    decode and verify it as a :class:`JoinRequest` bound to that challenge and our certificate,
    then ``await on_join(request, link)`` in its own task; the link is closed when ``on_join``
    returns. At most ``max_per_address`` joiners from one source IP are in ``on_join`` at once
    (a seated joiner stays there until it is told the seating, so this bounds the seats one
    LAN neighbour can hold); loopback sources are not limited unless ``limit_loopback`` (bots
    of ``play`` and the tests all come from 127.0.0.1). Refused requests are logged and closed.
    Exceptions from ``on_join`` that are link or lobby failures (``LobbyError``,
    ``FrameError``, broken or closed stream) are logged and end only that joiner; any other
    exception is a bug in the caller and propagates.
    """
    listeners = list(listener) if isinstance(listener, Sequence) else [listener]
    per_ip: dict[str, int] = {}

    async def handle(stream: trio.abc.Stream) -> None:
        who = peer_name(stream)
        try:
            with trio.fail_after(request_timeout):
                tls, cert = await accept_tls(stream, identity)
                link = Link(tls, max_size=JOIN_MAX_FRAME)
                challenge = rng.token_bytes(CHALLENGE_SIZE)
                await link.send(challenge)
                data = await link.receive()
            if data is None:
                raise BadJoinRequest("connection closed before a join request")
            request = JoinRequest.decode(data, challenge=challenge, cert=cert)
        except (trio.TooSlowError, LobbyError, FrameError, TlsError, trio.BrokenResourceError,
                trio.ClosedResourceError) as exc:
            why = "no join request in time" if isinstance(exc, trio.TooSlowError) else str(exc)
            log.warning("lobby: refused %s: %s", who, why)
            await trio.aclose_forcefully(stream)
            return
        except BaseException:  # cancelled (shutdown): do not leak the socket
            with trio.CancelScope(shield=True):
                await trio.aclose_forcefully(stream)
            raise
        ip = _ip(stream)
        # the source counted against max_per_address (None: not limited)
        limited = ip if ip is not None and (limit_loopback or not _is_loopback(ip)) else None
        async with link:
            if limited is not None and max_per_address is not None and per_ip.get(limited, 0) >= max_per_address:
                log.warning("lobby: refused %r (%s): %d joiners from that address already",
                            request.name, who, per_ip[limited])
                return
            if limited is not None and max_per_address is not None:
                per_ip[limited] = per_ip.get(limited, 0) + 1
            link.max_size = max_frame
            try:
                await on_join(request, link)
            except (LobbyError, FrameError, trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                log.warning("lobby: joiner %r (%s) dropped: %s", request.name, who, exc)
            finally:
                if limited is not None and max_per_address is not None:
                    per_ip[limited] -= 1

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
    identity: Any,
    *,
    name: str,
    listen_addr: str,
    candidates: Sequence[str] = (),
    expect_fingerprint: str | None = None,
    max_frame: int = MAX_FRAME,
    timeout: float | None = 10.0,
    local_address: str | None = None,
    stream: trio.abc.Stream | None = None,
) -> tuple[Link, bytes]:
    """Connect to a host's lobby over TLS, pin its key (``expect_fingerprint``, see
    :func:`.tls.dial_tls`), answer its challenge with a :class:`JoinRequest` signed by
    ``identity`` (name, mesh ``listen_addr``, more ``candidates``). Returns the open :class:`Link` for the caller's
    conversation and the host's 32-byte identity key (the caller checks it against the offer).
    ``local_address``: the source IP to connect from (None: the system's choice); ``stream``:
    a connection already open (through the transit relay), used instead of ``host:port``.
    If the host refuses the request, the link's next ``receive()`` returns ``None``.
    Raises ``OSError`` (cannot connect), ``trio.TooSlowError``, :class:`WrongHost` (TLS
    failed or another host's key), :class:`BadAnswer` (a bad challenge) or
    :class:`Refused` (the host hung up first)."""
    with trio.fail_after(math.inf if timeout is None else timeout):
        if stream is None:
            stream = await trio.open_tcp_stream(host, port, local_address=local_address)
        try:
            try:
                tls, host_key, cert = await dial_tls(stream, expect_fingerprint=expect_fingerprint)
            except TlsError as exc:
                raise WrongHost(f"{format_addr(host, port)} is not the expected table: {exc}") from None
            link = Link(tls, max_size=max_frame)
            challenge = await link.receive()
            if challenge is None:
                raise Refused("the host closed the lobby connection")
            if len(challenge) != CHALLENGE_SIZE:
                raise BadAnswer(f"the host's challenge has {len(challenge)} bytes, expected {CHALLENGE_SIZE}")
            req = JoinRequest.create(name, identity.public_bytes, listen_addr, identity.private_key.sign,
                                     challenge=challenge, cert=cert, candidates=candidates)
            await link.send(req.encode())
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
    return link, host_key


def lobby_players(value: object) -> tuple[tuple[str, bytes], ...]:
    """The players of a host's ``{"lobby": [{"name", "key"}, ...]}`` update, seat order (the
    host first): ``((name, 32-byte key), ...)``, at most :data:`MAX_LOBBY`. Unsigned and for
    display only (docs/protocol.md "Lobby updates"). Raises :class:`BadAnswer` for any other
    shape."""
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_LOBBY:
        raise BadAnswer(f"the host's lobby update is not a list of 1..{MAX_LOBBY} players")
    out = []
    for p in value:
        if not isinstance(p, dict) or set(p) != {"name", "key"}:
            raise BadAnswer("a player in the host's lobby update is not a map {name, key}")
        key = p["key"]
        if not isinstance(key, bytes) or len(key) != 32:
            raise BadAnswer("a player's key in the host's lobby update is not 32 bytes")
        try:
            name = _check_name(p["name"])
        except BadJoinRequest as exc:
            raise BadAnswer(f"a player's name in the host's lobby update: {exc}") from None
        out.append((name, key))
    return tuple(out)


async def read_answer(link: Link, key: str, kind: type, *, closed: str,
                      on_lobby: Callable[[tuple[tuple[str, bytes], ...]], Any] | None = None) -> Any:
    """The host's next lobby message, a msgpack map, and its value under ``key``, which must be
    of type ``kind``. A map ``{"error": str}`` is the host's refusal. Any number of lobby
    updates ``{"lobby": [...]}`` may come first: each is checked (:func:`lobby_players`) and
    given to ``on_lobby`` (when set), and the next message is read.

    Raises :class:`Refused` (the host refused us, or hung up: ``closed`` says at which step) or
    :class:`BadAnswer` (any other shape; never ``TypeError``/``KeyError``), and the link's
    ``FrameError`` or stream errors."""
    while True:
        msg = await _read_map(link, closed)
        if set(msg) == {"lobby"} and key != "lobby":
            players = lobby_players(msg["lobby"])
            if on_lobby is not None:
                on_lobby(players)
            continue
        value = msg.get(key)
        if key not in msg or type(value) is not kind:
            raise BadAnswer(f"the host's answer has no {kind.__name__} {key!r}")
        return value


async def _read_map(link: Link, closed: str) -> dict[str, Any]:
    """One host message as a msgpack map; an ``{"error"}`` map raises :class:`Refused`."""
    data = await link.receive()
    if data is None:
        raise Refused(closed)
    try:
        msg = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=False)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise BadAnswer(f"the host's answer is not msgpack: {exc}") from None
    if not isinstance(msg, dict):
        raise BadAnswer(f"the host's answer is a {type(msg).__name__}, not a map")
    if "error" in msg:
        err = msg["error"]
        text = err if isinstance(err, str) else repr(err)
        text = "".join(c if not unicodedata.category(c).startswith("C") else "?" for c in text)
        raise Refused(text[:MAX_REFUSAL] or "refused")
    return msg


class PromptQueue:
    """Host side: the host's person is asked about one joiner at a time, in arrival order
    (docs/protocol.md "Lobby").

    ``ask(request, ip, *, came, queued)`` asks the person (``came``: joiners already seated
    from ``ip``; ``queued``: how many more wait behind this one) and returns True (seat),
    False (refuse) or :data:`REFUSE_ADDRESS` (refuse this joiner, every queued one from the
    same address and any later one; for :data:`RELAYED`, whose joiners all share the relay's
    address, this joiner only). At most ``cap()`` joiners wait at once, the one being
    asked included; a joiner waits at most ``wait`` seconds, queue and question together
    (its own patience: :data:`APPROVAL_WAIT`). Requests that come back at once are throttled
    as a wrong code word is: an address whose last request expired or was withdrawn (its
    joiner left: a flood that re-queues) is not asked about again for ``every`` seconds
    (:data:`ASK_EVERY`), nor a key the person refused from that address; such a request is
    refused at once, "try again in N s" (the relay's address, which every code-word joiner
    shares, only by key)."""

    def __init__(self, ask: Callable[..., Awaitable[bool | str]], *, cap: Callable[[], int],
                 wait: float = APPROVAL_WAIT, every: float = ASK_EVERY) -> None:
        self._ask = ask
        self._cap = cap
        self.wait = wait
        self.every = every
        self._ended: dict[str, float] = {}  # address -> when its last request expired or was withdrawn
        self._said_no: dict[tuple[str, bytes], float] = {}  # (address, key) -> when the person refused it
        self._queue: list[tuple[str, trio.CancelScope]] = []
        self._moved = trio.Event()
        self.refused_ips: set[str] = set()

    def __len__(self) -> int:
        return len(self._queue)

    async def decide(self, request: JoinRequest, ip: str, *, came: int = 0) -> tuple[str, str | None]:
        """Wait for this joiner's turn and the person's answer: ``(why, refusal)``, ``why``
        one of "yes" (refusal None: seat it), "no", "address" (its address is refused),
        "busy" (``cap()`` joiners wait already), "expired" (``wait`` s went by), "again"
        (throttled: see the class); ``refusal``
        is the sentence to send the joiner (English). Cancel the call when the joiner leaves:
        its question is withdrawn (``ask`` is cancelled) and the next one is asked."""
        if ip in self.refused_ips:
            return "address", _ADDRESS_REFUSED
        now = trio.current_time()
        ended = max(self._ended.get(ip, -math.inf) if ip != RELAYED else -math.inf,
                    self._said_no.get((ip, request.public_key), -math.inf))
        if now - ended < self.every:
            left = math.ceil(ended + self.every - now)
            return "again", f"the host was asked about this address a moment ago: try again in {left} s"
        if len(self._queue) >= self._cap():
            return "busy", "too many people are waiting for the host's answer: try again later"
        entry = (ip, trio.CancelScope(deadline=trio.current_time() + self.wait))
        self._queue.append(entry)
        answered = False
        try:
            with entry[1]:
                while self._queue[0] is not entry:
                    await self._moved.wait()
                behind = sum(1 for _, scope in self._queue[1:] if not scope.cancel_called)
                answer = await self._ask(request, ip, came=came, queued=behind)
                if answer == REFUSE_ADDRESS and ip == RELAYED:
                    # every code-word joiner shares the relay's address: refuse this one only
                    return "no", "the host did not let you sit down"
                if answer == REFUSE_ADDRESS:
                    self.refused_ips.add(ip)
                    for other_ip, scope in self._queue:
                        if other_ip == ip:
                            scope.cancel()  # each is refused below, in its own call
                    # out of the queue now, not when their calls next run: the next
                    # question's count must not include them (a clean-clone CI run caught it)
                    self._queue = [e for e in self._queue if e[0] != ip or e is entry]
                    return "address", _ADDRESS_REFUSED
                answered = True
                if answer is not True:
                    self._said_no[(ip, request.public_key)] = trio.current_time()
                return ("yes", None) if answer is True else ("no", "the host did not let you sit down")
            if ip in self.refused_ips:
                return "address", _ADDRESS_REFUSED
            return "expired", f"the host did not answer within {self.wait:g} s"
        finally:
            if not answered:  # expired, or withdrawn: its joiner left
                self._ended[ip] = trio.current_time()
            if entry in self._queue:
                self._queue.remove(entry)
            self._moved.set()
            self._moved = trio.Event()


class StreamListener(trio.abc.Listener[trio.abc.Stream]):
    """A listener whose connections are handed to it (:meth:`put`) instead of accepted from a
    socket: the lobby's connections that came through the transit relay."""

    def __init__(self) -> None:
        self._send, self._recv = trio.open_memory_channel[trio.abc.Stream](16)

    async def put(self, stream: trio.abc.Stream) -> None:
        """Hand over a connection; closes it when the listener is closed."""
        try:
            await self._send.send(stream)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            await trio.aclose_forcefully(stream)

    async def accept(self) -> trio.abc.Stream:
        try:
            return await self._recv.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise trio.ClosedResourceError from None

    async def aclose(self) -> None:
        await self._recv.aclose()
        await trio.lowlevel.checkpoint()
