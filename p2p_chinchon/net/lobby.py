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
from typing import Any

import msgpack
import trio

from .framing import MAX_FRAME, FrameError, Link, peer_address, peer_name
from .joinrequest import (  # the join request, sans-I/O; importable from here too
    _ADDRESS_REFUSED,
    APPROVAL_WAIT as APPROVAL_WAIT,
    ASK_EVERY as ASK_EVERY,
    CERT_FP_SIZE as CERT_FP_SIZE,
    CHALLENGE_SIZE as CHALLENGE_SIZE,
    JOIN_DOMAIN as JOIN_DOMAIN,
    JOIN_MAX_FRAME as JOIN_MAX_FRAME,
    JOIN_VERSION as JOIN_VERSION,
    MAX_ADDR_BYTES as MAX_ADDR_BYTES,
    MAX_CANDIDATES as MAX_CANDIDATES,
    MAX_LOBBY as MAX_LOBBY,
    MAX_NAME as MAX_NAME,
    MAX_REFUSAL as MAX_REFUSAL,
    REFUSE_ADDRESS as REFUSE_ADDRESS,
    RELAYED as RELAYED,
    BadAnswer as BadAnswer,
    BadJoinRequest as BadJoinRequest,
    JoinRequest as JoinRequest,
    LobbyError as LobbyError,
    Refused as Refused,
    WrongHost as WrongHost,
    check_candidates as check_candidates,
    format_addr as format_addr,
    lobby_players as lobby_players,
    parse_addr as parse_addr,
)
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
