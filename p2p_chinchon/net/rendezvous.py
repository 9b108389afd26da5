"""Sans-I/O pieces of playing by code word: the magic-wormhole mailbox's code
exchange, the transit relay's handshake, and the relay tokens the seats derive.

Nothing here opens a socket or imports Twisted (``mailbox.py`` talks to the mailbox, ``relay.py``
to the relay). docs/protocol.md "Code words and the transit relay" is the normative text.

- :func:`check_code` a typed code word (``7-crossover-clockwork``);
- :func:`encode_host_hello` / :func:`decode_host_hello`, :func:`encode_joiner_hello` /
  :func:`decode_joiner_hello`: the one message each side sends through the mailbox;
- :func:`lobby_token` (from the mailbox's SPAKE2 key) and :func:`mesh_token` (from the seating
  and the two seats' identity keys): 64 hex characters, what both ends of one link present;
- :func:`relay_request`, :class:`RelayReply`: the relay's one-line handshake.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from p2p_chinchon.net.addresses import parse_advertise

__all__ = [
    "APPID",
    "DEFAULT_MAILBOX",
    "DEFAULT_RELAY",
    "CodeError",
    "HostHello",
    "RelayReply",
    "check_code",
    "decode_host_hello",
    "decode_joiner_hello",
    "encode_host_hello",
    "encode_joiner_hello",
    "lobby_token",
    "mesh_token",
    "parse_relay",
    "relay_request",
    "relay_side",
]

APPID = "p2p-chinchon/table/v1"
"""Our magic-wormhole application id: the mailbox keeps our nameplates apart from file
transfers' (a `wormhole receive` never meets a table)."""
DEFAULT_MAILBOX = "ws://relay.magic-wormhole.io:4000/v1"  # magic-wormhole's own public servers
DEFAULT_RELAY = "transit.magic-wormhole.io:4001"
HELLO_VERSION = 1
MAX_HELLO = 2048  # bytes of one mailbox message (8 candidates of 64 bytes fit many times)
MAX_CANDIDATES = 8
LOBBY_PURPOSE = "p2p-chinchon/lobby-relay/v1"  # the wormhole derive_key purpose of the lobby token
MESH_INFO = b"p2p-chinchon/mesh-relay/v1\x00"
_CODE = re.compile(r"^[1-9][0-9]{0,3}(-[a-z]{2,20}){1,4}$")
_FINGERPRINT = re.compile(r"^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$")


class CodeError(ValueError):
    """A code word, a mailbox message or a relay answer that is not what it must be (the
    message is one sentence for a person)."""


def check_code(text: str) -> str:
    """A typed code word, trimmed and lower-cased: a number then 1-4 words, with hyphens
    (``7-crossover-clockwork``). Raises :class:`CodeError`."""
    code = text.strip().lower()
    if not _CODE.match(code):
        raise CodeError(f"{text!r} is not a code word: it looks like 7-crossover-clockwork (a number and words)")
    return code


def _candidates(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_CANDIDATES:
        raise CodeError(f"the {what}'s addresses are not a list of at most {MAX_CANDIDATES}")
    out = []
    for item in value:
        # printable: the host logs them (no terminal escapes), and a lone surrogate (no UTF-8) is not
        if not isinstance(item, str) or not item.isprintable() or len(item.encode()) > 64:
            raise CodeError(f"the {what} sent a bad address {item!r}")
        try:
            host, port = parse_advertise(item)
        except ValueError as exc:
            raise CodeError(f"the {what} sent a bad address: {exc}") from None
        if port is None:
            raise CodeError(f"the {what} sent an address without a port: {item!r}")
        out.append(item)
    return tuple(out)


def _load(data: bytes, kind: str) -> dict[str, Any]:
    if not isinstance(data, bytes | bytearray) or len(data) > MAX_HELLO:
        raise CodeError(f"the mailbox message is not at most {MAX_HELLO} bytes")
    try:
        body = json.loads(bytes(data).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CodeError("the mailbox message is not JSON") from None
    except RecursionError:  # 2048 bytes of "[" nest deeper than the interpreter's stack
        raise CodeError("the mailbox message is JSON nested too deeply") from None
    if not isinstance(body, dict) or body.get("kind") != kind or type(body.get("v")) is not int \
            or body["v"] != HELLO_VERSION:
        raise CodeError(f"the mailbox message is not a p2p-chinchon {kind} (version {HELLO_VERSION})")
    return body


@dataclass(frozen=True)
class HostHello:
    """What the host tells a joiner by code word: its identity ``fingerprint``, its lobby
    ``candidates`` (``"host:port"``, best first) and the transit ``relay`` (``"host:port"``) the
    table uses."""

    fingerprint: str
    candidates: tuple[str, ...]
    relay: str


def encode_host_hello(fingerprint: str, candidates: list[str] | tuple[str, ...], relay: str) -> bytes:
    """The host's mailbox message: UTF-8 JSON ``{"kind": "host", "v": 1, "fp", "addrs",
    "relay"}``. Raises :class:`CodeError` for values :func:`decode_host_hello` would refuse."""
    data = json.dumps({"kind": "host", "v": HELLO_VERSION, "fp": fingerprint, "addrs": list(candidates),
                       "relay": relay}, separators=(",", ":")).encode()
    decode_host_hello(data)
    return data


def decode_host_hello(data: bytes) -> HostHello:
    """Parse the host's mailbox message. Raises :class:`CodeError`."""
    body = _load(data, "host")
    fp, relay = body.get("fp"), body.get("relay")
    if not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp):  # (match's $ allows a final newline)
        raise CodeError("the host's fingerprint is not XXXX-XXXX-XXXX-XXXX")
    if not isinstance(relay, str):
        raise CodeError("the host named no transit relay")
    if not relay.isprintable() or len(relay.encode()) > 64:  # kept beside the secrets, shown
        raise CodeError(f"the host named a bad transit relay {relay[:70]!r}")
    parse_relay(relay)
    return HostHello(fp, _candidates(body.get("addrs"), "host"), relay)


def encode_joiner_hello(candidates: list[str] | tuple[str, ...]) -> bytes:
    """The joiner's mailbox message: ``{"kind": "joiner", "v": 1, "addrs"}`` (where its mesh
    may be reached; the host logs them: its join request carries them signed)."""
    data = json.dumps({"kind": "joiner", "v": HELLO_VERSION, "addrs": list(candidates)},
                      separators=(",", ":")).encode()
    decode_joiner_hello(data)
    return data


def decode_joiner_hello(data: bytes) -> tuple[str, ...]:
    """The joiner's candidate addresses from its mailbox message. Raises :class:`CodeError`."""
    return _candidates(_load(data, "joiner").get("addrs"), "joiner")


def parse_relay(text: str) -> tuple[str, int]:
    """``--relay HOST:PORT`` (or magic-wormhole's ``tcp:HOST:PORT``) -> (host, port). Raises
    :class:`CodeError`."""
    text = text.strip()
    if text.startswith("tcp:"):
        text = text[4:]
    try:
        host, port = parse_advertise(text)
    except ValueError as exc:
        raise CodeError(f"--relay: {exc}") from None
    if port is None:
        raise CodeError(f"--relay {text!r}: give HOST:PORT (magic-wormhole's relay listens on 4001)")
    return host, port


def lobby_token(key: bytes) -> str:
    """The relay token of a code-word lobby link: ``key`` is the 32 bytes both ends got from
    the wormhole's ``derive_key(LOBBY_PURPOSE, 32)`` (so only the two who shared the code know
    it), as 64 lower-case hex characters. Raises ValueError for another length."""
    if len(key) != 32:
        raise ValueError("a lobby relay key is 32 bytes")
    return key.hex()


def mesh_token(shared: bytes, game_id: bytes, a: int, b: int) -> str:
    """The relay token of the mesh link between seats ``a`` and ``b`` (either order):
    HKDF-SHA256 (RFC 5869) of ``shared`` (the X25519 secret of the two seats' identity keys,
    32 bytes: only they can compute it), salt = the 16-byte game id, info = MESH_INFO || u16
    low seat || u16 high seat, 32 bytes, as hex. A stranger, or another seat, cannot present
    it; another game or another pair gets another token. Raises ValueError for bad sizes."""
    if len(shared) != 32 or len(game_id) != 16 or a == b or not (0 <= a <= 0xFFFF and 0 <= b <= 0xFFFF):
        raise ValueError("mesh_token takes a 32-byte secret, a 16-byte game id and two distinct seats")
    lo, hi = sorted((a, b))
    info = MESH_INFO + struct.pack(">HH", lo, hi)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=game_id, info=info).derive(shared).hex()


def relay_side(seat: int, lobby_host: bool = False) -> str:
    """The 16 hex characters a seat gives as its relay "side": the relay pairs two
    connections of one token only when their sides differ, so a seat's own spare connections
    never meet each other. The lobby uses ``host`` / ``joiner`` sides."""
    if lobby_host:
        return hashlib.sha256(b"p2p-chinchon/lobby-host").hexdigest()[:16]
    return f"{seat:016x}"


def relay_request(token: str, side: str) -> bytes:
    """The relay's handshake line: ``please relay TOKEN for side SIDE\\n`` (64 and 16 hex
    characters). Raises ValueError for another shape."""
    if not re.fullmatch(r"[0-9a-f]{64}", token) or not re.fullmatch(r"[0-9a-f]{16}", side):
        raise ValueError("a relay token is 64 hex characters and a side 16")
    return f"please relay {token} for side {side}\n".encode()


class RelayReply:
    """Reads the relay's answer to :func:`relay_request`: feed bytes with :meth:`feed` until it
    returns True (the line is complete); then :attr:`ok` says whether the pipe is open and
    :attr:`rest` holds the bytes after the line (already the other side's). The relay answers
    ``ok\\n`` once the other side arrives, ``impatient\\n`` or ``bad handshake\\n`` otherwise; a
    line longer than :data:`MAX_LINE` or another answer raises :class:`CodeError`."""

    MAX_LINE = 64

    def __init__(self, name: str = "the transit relay") -> None:
        self.name = name  # how errors name the relay ("the transit relay at host:port")
        self._buf = b""
        self.ok = False
        self.rest = b""
        self.answer = ""

    def feed(self, data: bytes) -> bool:
        self._buf += data
        line, sep, rest = self._buf.partition(b"\n")
        if not sep:
            if len(self._buf) > self.MAX_LINE:
                raise CodeError(f"{self.name} sent a line too long for its handshake")
            return False
        self.answer = line.decode("ascii", "replace")
        if line == b"ok":
            self.ok, self.rest = True, rest
        elif line not in (b"impatient", b"bad handshake"):
            raise CodeError(f"{self.name} answered {self.answer[:40]!r}, not ok")
        return True
