"""Sans-I/O: the lobby's join request (a joiner's signed name, key and addresses), its limits,
the host:port address form, and the host's lobby update as a joiner reads it
(docs/protocol.md "Lobby"). No trio, sockets or TLS: :mod:`.lobby` carries these over its link,
:mod:`.admission` decides on them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2p_chinchon.wire import MAX_SEATS

from .addresses import check_host

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
