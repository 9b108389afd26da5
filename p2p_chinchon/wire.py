"""Signed envelopes in canonical msgpack: the unit of everything peers say to each other.

One envelope is the fixed msgpack array ``[v, game, seq, seat, prev, kind, body, sig]``
(``docs/protocol.md`` "Envelope"):

====== ======= =====================================================================
field  msgpack meaning
====== ======= =====================================================================
v      int     protocol version, :data:`p2p_chinchon.PROTOCOL_VERSION`
game   bin 16  game id (random, chosen by the host)
seq    int     index of this envelope in the table's total order (0 = the offer)
seat   int     sender's seat, 0..7
prev   bin 32  :meth:`Envelope.hash` of envelope ``seq - 1``; 32 zero bytes for seq 0
kind   str     message kind, a key of ``SCHEMA["kinds"]``
body   map     fields of that kind, validated against the schema
sig    bin 64  Ed25519 over ``SIG_DOMAIN || msgpack([v, game, seq, seat, prev, kind, body])``
====== ======= =====================================================================

Canonical encoding (one byte string per value, checked on decode by re-encoding): ints in their
smallest msgpack form, ``bytes`` as bin, ``str`` as str (UTF-8), maps with ``str`` keys sorted by
their UTF-8 bytes and no duplicates, arrays for lists; no floats, no ext types, nil only where the
schema allows it; nothing after the envelope. Frames are at most :data:`MAX_FRAME` bytes.

The message schema (:data:`SCHEMA`) is defined here, in Python, and ``protocol/schema.json`` is
its JSON dump (:func:`schema_json`), kept equal by ``tests/test_wire_schema.py``; regenerate the
file with ``python protocol/make_vectors.py``.

Errors: :class:`WireError` (a ``ValueError``) for anything that is not a well-formed envelope,
with a stable ``code`` (see :data:`WIRE_ERROR_CODES`); :class:`SignatureError` (a ``WireError``)
when a signature does not verify. Signatures: RFC 8032 Ed25519 via the ``cryptography`` package.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2p_chinchon import PROTOCOL_VERSION
from p2p_chinchon.rng import Rng

__all__ = [
    "ENVELOPE_FIELDS",
    "Envelope",
    "GAME_ID_BYTES",
    "HASH_BYTES",
    "KINDS",
    "MAX_CANDIDATES",
    "MAX_FRAME",
    "MAX_SEATS",
    "SCHEMA",
    "SIG_BYTES",
    "SIG_DOMAIN",
    "SignatureError",
    "WIRE_ERROR_CODES",
    "WireError",
    "ZERO_HASH",
    "canonical_encode",
    "decode_envelope",
    "load_public_key",
    "make_envelope",
    "new_game_id",
    "schema_json",
    "validate_body",
    "verify_envelope",
]

# --- size caps (docs/protocol.md "Size caps") -------------------------------------------------

MAX_FRAME = 1 << 20
"""Largest envelope frame in bytes (1 MiB), checked before any parsing."""
MAX_SEATS = 8
MAX_PROOF_FRAME = 2048  # one frame quoted in a remove's proof (a leave: reason <= 256 chars)
MAX_CANDIDATES = 8  # more addresses of one seat in the seating (docs/protocol.md "Lobby")
GAME_ID_BYTES = 16
HASH_BYTES = 32
SIG_BYTES = 64
PUBLIC_KEY_BYTES = 32
SHARE_BYTES = 96  # deck layer: d (32) || DLEQ proof (64); for key_share: key || Schnorr proof
MAX_SEQ = 2**32 - 1
MAX_HAND = 65535
MAX_CARDS = 108  # the largest deck the rules build: two 52-card packs with two jokers each
POINT_BYTES = 64  # one ElGamal ciphertext (two points) in a shuffled deck
MAX_PROOF_BYTES = 768 * 1024
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
MAX_DEPTH = 16  # arrays/maps nested in an envelope; the schema needs 4 (keeps recursion bounded)
MAX_CONTAINER_ITEMS = 1024  # items in any one msgpack array or map of a frame

SIG_DOMAIN = b"p2p-chinchon/envelope:"
"""Prefix of the bytes every envelope signature covers (domain separation from other uses)."""
ZERO_HASH = bytes(HASH_BYTES)
"""``prev`` of the envelope with seq 0."""

WIRE_ERROR_CODES = (
    "frame_too_large",  # frame over MAX_FRAME bytes
    "malformed",  # not msgpack at all, truncated, invalid UTF-8, unhashable map key
    "trailing_bytes",  # bytes after the envelope
    "float",  # a float anywhere
    "ext_type",  # a msgpack ext type (incl. timestamps) anywhere
    "bad_key",  # a map key that is not str
    "bad_envelope",  # not an array of 8
    "version",  # v is not PROTOCOL_VERSION
    "unknown_kind",
    "unknown_field",
    "missing_field",
    "bad_type",  # wrong msgpack type for a field (incl. nil where not allowed)
    "out_of_range",  # int range, bin/str length, list size, enum, nesting depth
    "non_canonical",  # decodes, but re-encoding gives other bytes
    "bad_signature",
    "bad_key_bytes",  # public key is not 32 bytes / not a valid Ed25519 key
)


class WireError(ValueError):
    """Bytes or values that are not a well-formed envelope.

    ``code`` is one of :data:`WIRE_ERROR_CODES` (stable, used by the test vectors); ``reason``
    is a human sentence naming the field (``body.players[2].key``) and what is wrong.
    """

    def __init__(self, reason: str, code: str = "malformed") -> None:
        super().__init__(f"{code}: {reason}")
        self.reason = reason
        self.code = code


class SignatureError(WireError):
    """An envelope's Ed25519 signature does not verify under the given public key."""

    def __init__(self, reason: str, code: str = "bad_signature") -> None:
        super().__init__(reason, code)


# --- schema -----------------------------------------------------------------------------------
# Type specs are JSON-able dicts:
#   {"type": "int", "min": a, "max": b}       {"type": "bool"}        {"type": "nil"}
#   {"type": "str", "max_bytes": n[, "enum": [...]]}
#   {"type": "bin", "len": n} | {"type": "bin", "min": a, "max": b[, "multiple_of": m]}
#   {"type": "list", "items": T, "max_items": n[, "min_items": m]}
#   {"type": "map", "fields": {name: T, ...}}        fixed fields, all present
#   {"type": "dict", "keys": T_str, "values": T, "max_items": n}   open str-keyed map
#   {"type": "one_of", "types": [T, ...]}            e.g. nil|T = one_of [nil, T]
#   {"ref": "name"}                                  a named type from SCHEMA["types"]
# To add a kind or a field: edit _KINDS / _TYPES below, then run protocol/make_vectors.py to
# rewrite protocol/schema.json (a test checks they agree).

_Spec: TypeAlias = dict[str, Any]  # one type spec, as above


def _int(lo: int, hi: int) -> _Spec:
    return {"type": "int", "min": lo, "max": hi}


def _str(max_bytes: int, enum: list[str] | None = None) -> _Spec:
    spec: dict[str, Any] = {"type": "str", "max_bytes": max_bytes}
    if enum is not None:
        spec["enum"] = enum
    return spec


def _bin(n: int) -> _Spec:
    return {"type": "bin", "len": n}


def _bin_range(lo: int, hi: int, multiple_of: int | None = None) -> _Spec:
    spec: dict[str, Any] = {"type": "bin", "min": lo, "max": hi}
    if multiple_of is not None:
        spec["multiple_of"] = multiple_of
    return spec


def _list(items: _Spec, max_items: int, min_items: int = 0) -> _Spec:
    spec: dict[str, Any] = {"type": "list", "items": items, "max_items": max_items}
    if min_items:
        spec["min_items"] = min_items
    return spec


def _map(**fields: _Spec) -> _Spec:
    return {"type": "map", "fields": fields}


def _ref(name: str) -> _Spec:
    return {"ref": name}


_TYPES: dict[str, _Spec] = {
    "hand": _int(0, MAX_HAND),  # 0-based hand number within the game
    "slot": _int(0, 4095),  # position of a card in the masked deck (re-shuffles add slots)
    "seat": _int(0, MAX_SEATS - 1),
    "share": _bin(SHARE_BYTES),
    "hash": _bin(HASH_BYTES),
    "nonce": _bin(32),
    "score": _int(INT32_MIN, INT32_MAX),
    "reveal": _map(slot=_ref("slot"), share=_ref("share")),
}

_KINDS: dict[str, _Spec] = {
    # lobby
    "offer": _map(
        name=_str(64),
        rules={
            "type": "dict",
            "keys": _str(64),
            "values": {"type": "one_of", "types": [_int(INT32_MIN, INT32_MAX), {"type": "bool"}, _str(64)]},
            "max_items": 64,
        },
        max_seats=_int(2, MAX_SEATS),
        app=_str(16, ["p2p-chinchon"]),
        nonce=_ref("nonce"),
        proof_rounds=_int(1, 128),  # k, shadow shuffles per cut-and-choose proof
        host_key=_bin(PUBLIC_KEY_BYTES),  # seat 0's identity key: verifies this offer
    ),
    "seating": _map(
        players=_list(_map(name=_str(32), key=_bin(PUBLIC_KEY_BYTES), addr=_str(64),
                                addrs=_list(_str(64), MAX_CANDIDATES)), MAX_SEATS, 2),
    ),
    "agree": _map(rules_hash=_ref("hash"), seating_hash=_ref("hash"), toss_commit=_ref("hash")),
    "toss": _map(nonce=_ref("nonce")),
    # per hand: keys, shuffle, deal
    "key_commit": _map(hand=_ref("hand"), commit=_ref("hash")),
    "key_share": _map(hand=_ref("hand"), share=_ref("share"), nonce=_ref("nonce")),
    "shuffle": _map(
        hand=_ref("hand"),
        round=_int(0, 255),
        deck=_bin_range(POINT_BYTES, MAX_CARDS * POINT_BYTES, POINT_BYTES),
        proof=_bin_range(0, MAX_PROOF_BYTES),
    ),
    "deal_shares": _map(hand=_ref("hand"), shares=_list(_ref("share"), 128)),
    # turn
    "draw": _map(hand=_ref("hand"), source=_str(16, ["stock", "discard"])),
    "draw_share": _map(hand=_ref("hand"), slot=_ref("slot"), share=_ref("share")),
    "discard": _map(hand=_ref("hand"), slot=_ref("slot"), share=_ref("share")),
    "close": _map(hand=_ref("hand"), slot=_ref("slot"), shares=_list(_ref("reveal"), 8)),
    "show": _map(hand=_ref("hand"), shares=_list(_ref("reveal"), 8)),
    # end of hand / game
    "secret": _map(hand=_ref("hand"), secret=_bin(32)),
    "hand_digest": _map(hand=_ref("hand"), digest=_ref("hash"), totals=_list(_ref("score"), MAX_SEATS)),
    "reenter": _map(hand=_ref("hand"), accept={"type": "bool"}),
    "game_end": _map(winner=_int(0, 255), digest=_ref("hash")),  # 255: no winner
    "fault": _map(
        accused=_int(0, 255),  # 255: nobody can be blamed
        rule=_str(64),
        reason=_str(256),
        evidence=_list(_bin_range(0, MAX_FRAME), 8),
    ),
    "leave": _map(reason=_str(256)),
    # a seat gone for good, removed by every other seat still at the table (docs/protocol.md "Removal")
    # proof (first remove only, else empty): for "left" the seat's own signed leave; for "absent"
    # the signed ``away`` votes of a strict majority of the seats in the game
    "remove": _map(seat=_ref("seat"), hand=_ref("hand"), reason=_str(16, ["absent", "left"]),
                   proof=_list(_bin_range(0, MAX_PROOF_FRAME), MAX_SEATS)),
    # never chained: "at my chain's head (this envelope's seq and prev) the table waits for
    # ``seat``, away from me for rejoin_wait" (docs/protocol.md "Removal")
    "away": _map(seat=_ref("seat"), hand=_ref("hand")),
}

ENVELOPE_FIELDS: tuple[tuple[str, _Spec], ...] = (
    ("v", _int(PROTOCOL_VERSION, PROTOCOL_VERSION)),
    ("game", _bin(GAME_ID_BYTES)),
    ("seq", _int(0, MAX_SEQ)),
    ("seat", _ref("seat")),
    ("prev", _ref("hash")),
    ("kind", {"type": "kind"}),  # a key of "kinds"
    ("body", {"type": "body"}),  # the map type "kinds"[kind]
    ("sig", _bin(SIG_BYTES)),
)

SCHEMA: dict[str, Any] = {
    "protocol_version": PROTOCOL_VERSION,
    "envelope": [{"name": n, **t} for n, t in ENVELOPE_FIELDS],
    "signature": {
        "algorithm": "Ed25519 (RFC 8032)",
        "domain": SIG_DOMAIN.decode("ascii"),
        "signed": "domain || msgpack([v, game, seq, seat, prev, kind, body])",
    },
    "hash": "SHA-256 of the whole frame (with sig)",
    "caps": {
        "frame_bytes": MAX_FRAME,
        "seats": MAX_SEATS,
        "seq_max": MAX_SEQ,
        "hand_max": MAX_HAND,
        "cards_max": MAX_CARDS,
        "proof_bytes": MAX_PROOF_BYTES,
    },
    "types": _TYPES,
    "kinds": _KINDS,
}
"""The message schema (JSON-able). ``protocol/schema.json`` is ``schema_json()``."""

KINDS: frozenset[str] = frozenset(_KINDS)


def schema_json() -> str:
    """The schema as the exact text of ``protocol/schema.json`` (2-space indent, trailing LF)."""
    return json.dumps(SCHEMA, indent=2) + "\n"


def _resolve(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    while "ref" in spec:
        spec = _TYPES[spec["ref"]]
    return spec


def _check(spec: Mapping[str, Any], value: Any, path: str) -> None:
    """Raise WireError unless ``value`` (already canonical: dict/list/bytes/...) fits ``spec``."""
    spec = _resolve(spec)
    t = spec["type"]
    if t == "int":
        if type(value) is not int:
            raise WireError(f"{path}: expected int, got {_tname(value)}", "bad_type")
        if not spec["min"] <= value <= spec["max"]:
            raise WireError(f"{path}: {value} not in {spec['min']}..{spec['max']}", "out_of_range")
    elif t == "bool":
        if type(value) is not bool:
            raise WireError(f"{path}: expected bool, got {_tname(value)}", "bad_type")
    elif t == "nil":
        if value is not None:
            raise WireError(f"{path}: expected nil, got {_tname(value)}", "bad_type")
    elif t == "str":
        if type(value) is not str:
            raise WireError(f"{path}: expected str, got {_tname(value)}", "bad_type")
        try:
            n = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            raise WireError(f"{path}: str is not valid Unicode (lone surrogate)", "bad_type") from None
        if n > spec["max_bytes"]:
            raise WireError(f"{path}: str of {n} bytes, at most {spec['max_bytes']}", "out_of_range")
        if "enum" in spec and value not in spec["enum"]:
            raise WireError(f"{path}: {value!r} not one of {spec['enum']}", "out_of_range")
    elif t == "bin":
        if type(value) is not bytes:
            raise WireError(f"{path}: expected bin, got {_tname(value)}", "bad_type")
        n = len(value)
        if "len" in spec:
            if n != spec["len"]:
                raise WireError(f"{path}: bin of {n} bytes, expected {spec['len']}", "out_of_range")
        else:
            if not spec["min"] <= n <= spec["max"]:
                raise WireError(f"{path}: bin of {n} bytes, not in {spec['min']}..{spec['max']}", "out_of_range")
            m = spec.get("multiple_of")
            if m and n % m:
                raise WireError(f"{path}: bin of {n} bytes, not a multiple of {m}", "out_of_range")
    elif t == "list":
        if type(value) is not list:
            raise WireError(f"{path}: expected array, got {_tname(value)}", "bad_type")
        if not spec.get("min_items", 0) <= len(value) <= spec["max_items"]:
            raise WireError(
                f"{path}: {len(value)} items, not in {spec.get('min_items', 0)}..{spec['max_items']}",
                "out_of_range",
            )
        for i, item in enumerate(value):
            _check(spec["items"], item, f"{path}[{i}]")
    elif t == "map":
        if type(value) is not dict:
            raise WireError(f"{path}: expected map, got {_tname(value)}", "bad_type")
        fields = spec["fields"]
        for k in value:
            if k not in fields:
                raise WireError(f"{path}: unknown field {_short(k)}", "unknown_field")
        for k, sub in fields.items():
            if k not in value:
                raise WireError(f"{path}: missing field {_short(k)}", "missing_field")
            _check(sub, value[k], f"{path}.{k}")
    elif t == "dict":
        if type(value) is not dict:
            raise WireError(f"{path}: expected map, got {_tname(value)}", "bad_type")
        if len(value) > spec["max_items"]:
            raise WireError(f"{path}: {len(value)} entries, at most {spec['max_items']}", "out_of_range")
        for k, v in value.items():
            _check(spec["keys"], k, f"{path} key")
            _check(spec["values"], v, f"{path}[{_short(k)}]")
    elif t == "one_of":
        errors = []
        for alt in spec["types"]:
            try:
                _check(alt, value, path)
                return
            except WireError as exc:
                errors.append(exc)
        # A range error in the alternative of the right type is the most useful one to report.
        best = next((e for e in errors if e.code != "bad_type"), errors[0])
        raise best
    else:  # pragma: no cover - schema bug, not input
        raise AssertionError(f"unknown schema type {t!r}")


def _short(value: Any, limit: int = 60) -> str:
    """repr() cut to ``limit`` characters: error messages stay small whatever the input."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tname(value: Any) -> str:
    if value is None:
        return "nil"
    names: dict[type, str] = {bytes: "bin", dict: "map", list: "array"}
    return names.get(type(value), type(value).__name__)


def validate_body(kind: str, body: Any) -> None:
    """Check ``body`` (canonical Python values) against the schema of ``kind``.

    Raises :class:`WireError` with code ``unknown_kind``, ``unknown_field``, ``missing_field``,
    ``bad_type`` or ``out_of_range``.
    """
    if type(kind) is not str or kind not in _KINDS:
        raise WireError(f"kind: unknown message kind {_short(kind)}", "unknown_kind")
    _check(_KINDS[kind], body, "body")


# --- canonical encoding -----------------------------------------------------------------------


def _canon(value: Any, path: str = "value", depth: int = 0) -> Any:
    """Deep copy of ``value`` in canonical form: maps sorted by key bytes, tuples as lists."""
    t = type(value)
    if (t is dict or t is list or t is tuple) and depth >= MAX_DEPTH:
        raise WireError(f"{path}: nested deeper than {MAX_DEPTH} levels", "out_of_range")
    if t is dict:
        out = {}
        for k in sorted(value, key=lambda k: k.encode("utf-8", "surrogatepass") if type(k) is str else b""):
            if type(k) is not str:
                raise WireError(f"{path}: map key {_short(k)} is not a str", "bad_key")
            out[k] = _canon(value[k], f"{path}.{k}", depth + 1)
        return out
    if t is list or t is tuple:
        return [_canon(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if t is bytes or t is str or t is int or t is bool or value is None:
        return value
    if t is bytearray or t is memoryview:
        return bytes(value)
    if t is float:
        raise WireError(f"{path}: floats are not allowed", "float")
    if isinstance(value, (msgpack.ExtType, msgpack.Timestamp)):
        raise WireError(f"{path}: msgpack ext types are not allowed", "ext_type")
    raise WireError(f"{path}: cannot encode {t.__name__}", "bad_type")


def _pack(value: Any) -> bytes:
    try:
        packed: bytes = msgpack.packb(value, use_bin_type=True)
        return packed
    except (OverflowError, ValueError, TypeError) as exc:  # ints beyond 64 bits etc.
        raise WireError(f"cannot encode: {exc}", "out_of_range") from None


def canonical_encode(value: Any) -> bytes:
    """Canonical msgpack of ``value`` (dict/list/tuple/bytes/str/int/bool/None).

    Raises WireError (``bad_key``, ``float``, ``ext_type``, ``bad_type``, ``out_of_range``).
    """
    return _pack(_canon(value))


def _signed_bytes(v: int, game: bytes, seq: int, seat: int, prev: bytes, kind: str,
                  body: dict[str, Any]) -> bytes:
    return SIG_DOMAIN + _pack([v, game, seq, seat, prev, kind, body])


# --- envelope ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Envelope:
    """One signed message. Construction validates every field and the body against the schema
    (WireError otherwise) but does not check the signature (:func:`verify_envelope`).

    ``body`` is a canonical deep copy (maps sorted, lists not tuples); treat it as read-only:
    :meth:`encode`, :meth:`hash` and :meth:`signed_bytes` are computed once at construction.
    """

    v: int
    game: bytes
    seq: int
    seat: int
    prev: bytes
    kind: str
    body: dict[str, Any]
    sig: bytes
    _signed: bytes = field(init=False, repr=False, compare=False)
    _frame: bytes = field(init=False, repr=False, compare=False)
    _hash: bytes = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        body = _canon(self.body, "body")
        # decode_envelope passes whatever the frame held: each field is checked below
        given: tuple[tuple[str, Any], ...] = (("game", self.game), ("prev", self.prev), ("sig", self.sig))
        for name, value in given:
            if type(value) in (bytearray, memoryview):
                object.__setattr__(self, name, bytes(value))
        for name, spec in ENVELOPE_FIELDS:
            if name == "kind":
                if type(self.kind) is not str or self.kind not in _KINDS:
                    raise WireError(f"kind: unknown message kind {_short(self.kind)}", "unknown_kind")
            elif name == "body":
                _check(_KINDS[self.kind], body, "body")
            elif name == "v":
                if type(self.v) is not int:
                    raise WireError(f"v: expected int, got {_tname(self.v)}", "bad_type")
                if self.v != PROTOCOL_VERSION:
                    raise WireError(f"v: protocol version {self.v}, this node speaks {PROTOCOL_VERSION}", "version")
            else:
                _check(spec, getattr(self, name), name)
        object.__setattr__(self, "body", body)
        signed = _signed_bytes(self.v, self.game, self.seq, self.seat, self.prev, self.kind, body)
        frame = _pack([self.v, self.game, self.seq, self.seat, self.prev, self.kind, body, self.sig])
        if len(frame) > MAX_FRAME:
            raise WireError(f"frame of {len(frame)} bytes, at most {MAX_FRAME}", "frame_too_large")
        object.__setattr__(self, "_signed", signed)
        object.__setattr__(self, "_frame", frame)
        object.__setattr__(self, "_hash", hashlib.sha256(frame).digest())

    def encode(self) -> bytes:
        """The frame: canonical msgpack ``[v, game, seq, seat, prev, kind, body, sig]``."""
        return self._frame

    def hash(self) -> bytes:
        """SHA-256 of :meth:`encode` (32 bytes); the next envelope's ``prev``."""
        return self._hash

    def signed_bytes(self) -> bytes:
        """``SIG_DOMAIN || msgpack([v, game, seq, seat, prev, kind, body])``: what ``sig`` signs."""
        return self._signed

    def __hash__(self) -> int:
        return hash(self._hash)


def new_game_id(rng: Rng) -> bytes:
    """A fresh 16-byte game id from an injected rng (``secrets`` in production)."""
    return rng.token_bytes(GAME_ID_BYTES)


def make_envelope(
    private_key: Ed25519PrivateKey,
    *,
    game: bytes,
    seq: int,
    seat: int,
    prev: bytes,
    kind: str,
    body: Mapping[str, Any],
) -> Envelope:
    """Validate ``body`` against the schema of ``kind`` and sign a new envelope.

    ``v`` is :data:`PROTOCOL_VERSION`. Raises WireError before signing anything invalid.
    """
    if not isinstance(private_key, Ed25519PrivateKey):
        raise TypeError("private_key must be an Ed25519PrivateKey")
    if type(kind) is not str or kind not in _KINDS:
        raise WireError(f"kind: unknown message kind {_short(kind)}", "unknown_kind")
    canon = _canon(body, "body")
    _check(_KINDS[kind], canon, "body")
    for name, spec in ENVELOPE_FIELDS:
        if name in ("game", "seq", "seat", "prev"):
            value: Any = {"game": game, "seq": seq, "seat": seat, "prev": prev}[name]
            _check(spec, bytes(value) if type(value) in (bytearray, memoryview) else value, name)
    signed = _signed_bytes(PROTOCOL_VERSION, bytes(game), seq, seat, bytes(prev), kind, canon)
    sig = private_key.sign(signed)
    return Envelope(PROTOCOL_VERSION, bytes(game), seq, seat, bytes(prev), kind, canon, sig)


def _walk(value: Any, path: str) -> None:
    """Reject floats, ext types and non-str map keys anywhere in a decoded msgpack value."""
    stack = [(value, path, 0)]
    while stack:
        v, p, depth = stack.pop()
        t = type(v)
        if (t is dict or t is list) and depth > MAX_DEPTH:
            raise WireError(f"{p}: nested deeper than {MAX_DEPTH} levels", "out_of_range")
        if t is dict:
            for k, item in v.items():
                if type(k) is not str:
                    raise WireError(f"{p}: map key {_short(k)} is not a str", "bad_key")
                stack.append((item, f"{p}.{k}", depth + 1))
        elif t is list:
            stack.extend((item, f"{p}[{i}]", depth + 1) for i, item in enumerate(v))
        elif t is float:
            raise WireError(f"{p}: floats are not allowed", "float")
        elif t is msgpack.ExtType or t is msgpack.Timestamp:
            raise WireError(f"{p}: msgpack ext types are not allowed", "ext_type")


def decode_envelope(data: bytes) -> Envelope:
    """Parse one frame strictly. Does not check the signature (see :func:`verify_envelope`).

    Raises :class:`WireError` (``code`` names the first problem found, in this order):
    ``frame_too_large``, ``malformed``, ``trailing_bytes``, ``float``/``ext_type``/``bad_key``,
    ``bad_envelope``, ``version``, ``bad_type``/``out_of_range`` (envelope fields),
    ``unknown_kind``, body errors (see :func:`validate_body`), and ``non_canonical`` when the
    bytes are not the unique canonical encoding of what they decode to.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise WireError(f"frame must be bytes, got {type(data).__name__}", "bad_type")
    data = bytes(data)
    if len(data) > MAX_FRAME:
        raise WireError(f"frame of {len(data)} bytes, at most {MAX_FRAME}", "frame_too_large")
    try:
        # No schema list or map comes near these bounds; they make a frame of a million tiny
        # items fail in the C parser instead of in the Python walk below.
        obj = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=False, timestamp=0,
                              max_array_len=MAX_CONTAINER_ITEMS, max_map_len=MAX_CONTAINER_ITEMS)
    except msgpack.ExtraData as exc:
        raise WireError(f"{len(data) - len(exc.extra)} bytes of envelope then {len(exc.extra)} extra", "trailing_bytes") from None
    except (ValueError, TypeError, msgpack.UnpackException) as exc:
        raise WireError(f"not a msgpack value: {exc}", "malformed") from None
    _walk(obj, "envelope")
    if type(obj) is not list or len(obj) != len(ENVELOPE_FIELDS):
        raise WireError(f"expected an array of {len(ENVELOPE_FIELDS)}, got {_tname(obj)}", "bad_envelope")
    env = Envelope(*obj)
    if env.encode() != data:
        raise WireError("not the canonical encoding (key order, duplicate keys, int/str/bin width)", "non_canonical")
    return env


# --- signatures -------------------------------------------------------------------------------


def load_public_key(public_key: bytes | Ed25519PublicKey) -> Ed25519PublicKey:
    """An Ed25519 public key from its 32 raw bytes. Raises SignatureError(code='bad_key_bytes')."""
    if isinstance(public_key, Ed25519PublicKey):
        return public_key
    if type(public_key) not in (bytes, bytearray) or len(public_key) != PUBLIC_KEY_BYTES:
        raise SignatureError("public key must be 32 bytes", "bad_key_bytes")
    try:
        return Ed25519PublicKey.from_public_bytes(bytes(public_key))
    except ValueError as exc:
        raise SignatureError(f"not an Ed25519 public key: {exc}", "bad_key_bytes") from None


_sodium_verify: Any = None  # libsodium's crypto_sign_verify_detached (rbcl's library), on first use


def _sodium_accepts(sig: bytes, message: bytes, public_key: bytes) -> bool:
    """libsodium's Ed25519 verification (the libsodium ``rbcl`` bundles, which the deck
    already loads): about half the cost of ``cryptography``'s per signature. It is stricter:
    on top of the same equation (cofactorless, the recomputed R compared byte for byte with
    the signature's) and the same canonical S (< L), it refuses small-order and
    non-canonical public keys and small-order R, which ``cryptography`` (OpenSSL) accepts.
    So what it accepts, ``cryptography`` accepts too, and :func:`verify_envelope` asks
    ``cryptography`` about anything it refuses: the verdict is ``cryptography``'s, always
    (vectors ``frame-sig-*``)."""
    global _sodium_verify
    if _sodium_verify is None:
        import ctypes

        from p2p_chinchon.deck import sodium

        fn = sodium.library().crypto_sign_verify_detached
        fn.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p)
        fn.restype = ctypes.c_int
        _sodium_verify = fn
    verdict: int = _sodium_verify(sig, message, len(message), public_key)
    return verdict == 0


def verify_envelope(env: Envelope, public_key_bytes: bytes | Ed25519PublicKey) -> None:
    """Check ``env.sig`` over ``env.signed_bytes()``. Raises :class:`SignatureError`.
    A signature libsodium accepts is valid; any other is judged by ``cryptography``
    (:func:`_sodium_accepts`), so the strictness is ``cryptography``'s."""
    if (type(public_key_bytes) is bytes and len(public_key_bytes) == PUBLIC_KEY_BYTES and type(env.sig) is bytes
            and len(env.sig) == 64 and _sodium_accepts(env.sig, env.signed_bytes(), public_key_bytes)):
        return
    key = load_public_key(public_key_bytes)
    try:
        key.verify(env.sig, env.signed_bytes())
    except InvalidSignature:
        raise SignatureError(f"seq {env.seq} seat {env.seat} ({env.kind}): Ed25519 signature does not verify") from None
