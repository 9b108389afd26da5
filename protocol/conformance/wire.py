"""Envelopes, canonical msgpack, the schema and the table's hashes (docs/protocol.md
"Envelope", "Canonical encoding", "Schema", "Table setup", "Hands" step 8)."""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from crypto import Hs, u8, u16

VERSION = 3                # `away` votes, `remove.proof` a list
DOMAIN = b"p2p-chinchon/envelope:"
MAX_FRAME = 1 << 20
SCHEMA = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema.json")))


class WireError(Exception):
    def __init__(self, code: str, reason: str = ""):
        super().__init__(f"{code}: {reason}")
        self.code = code


def _canon(x):
    if isinstance(x, dict):
        return {k: _canon(x[k]) for k in sorted(x, key=lambda k: k.encode())}
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    return x


def packb(x) -> bytes:
    return msgpack.packb(_canon(x), use_bin_type=True)


class _Ext:
    pass


def _ext(code, data):
    return _Ext()


def _nodes(x, depth=0):
    yield x, depth
    if isinstance(x, dict):
        for k, v in x.items():
            yield k, depth + 1
            yield from _nodes(v, depth + 1)
    elif isinstance(x, list):
        for v in x:
            yield from _nodes(v, depth + 1)


def unpack_strict(frame: bytes):
    """decode, then the whole-value checks in the product's order: depth, float, ext, keys"""
    try:
        x = msgpack.unpackb(frame, raw=False, use_list=True, strict_map_key=False, ext_hook=_ext)
    except msgpack.ExtraData:
        raise WireError("trailing_bytes") from None
    except Exception as e:  # noqa: BLE001
        raise WireError("malformed", str(e)) from e
    nodes = list(_nodes(x))
    # the envelope is level 0; an array or map below level 16 is refused (out_of_range)
    if any(isinstance(n, (list, dict)) and d > 16 for n, d in nodes):
        raise WireError("out_of_range", "nested deeper than 16 levels")
    if any(isinstance(n, float) for n, _ in nodes):
        raise WireError("float")
    if any(isinstance(n, (_Ext, msgpack.Timestamp)) for n, _ in nodes):
        raise WireError("ext_type")
    for n, _ in nodes:
        if isinstance(n, dict) and any(not isinstance(k, str) for k in n):
            raise WireError("bad_key")
    return x


# -- schema ------------------------------------------------------------------------------------

def _check(spec, x, where):
    if "ref" in spec:
        return _check(SCHEMA["types"][spec["ref"]], x, where)
    t = spec["type"]
    if t == "int":
        if not isinstance(x, int) or isinstance(x, bool):
            raise WireError("bad_type", where)
        if not spec["min"] <= x <= spec["max"]:
            raise WireError("out_of_range", where)
    elif t == "bool":
        if not isinstance(x, bool):
            raise WireError("bad_type", where)
    elif t == "nil":
        if x is not None:
            raise WireError("bad_type", where)
    elif t == "str":
        if not isinstance(x, str):
            raise WireError("bad_type", where)
        if len(x.encode()) > spec.get("max_bytes", 1 << 30) or ("enum" in spec and x not in spec["enum"]):
            raise WireError("out_of_range", where)
    elif t == "bin":
        if not isinstance(x, bytes):
            raise WireError("bad_type", where)
        if "len" in spec and len(x) != spec["len"]:
            raise WireError("out_of_range", where)
        if "min" in spec and not spec["min"] <= len(x) <= spec["max"]:
            raise WireError("out_of_range", where)
        if spec.get("multiple_of") and len(x) % spec["multiple_of"]:
            raise WireError("out_of_range", where)
    elif t == "list":
        if not isinstance(x, list):
            raise WireError("bad_type", where)
        if not spec.get("min_items", 0) <= len(x) <= spec["max_items"]:
            raise WireError("out_of_range", where)
        for v in x:
            _check(spec["items"], v, where)
    elif t == "map":
        if not isinstance(x, dict):
            raise WireError("bad_type", where)
        for k in x:
            if k not in spec["fields"]:
                raise WireError("unknown_field", f"{where}.{k}")
        for k, s in spec["fields"].items():
            if k not in x:
                raise WireError("missing_field", f"{where}.{k}")
            _check(s, x[k], f"{where}.{k}")
    elif t == "dict":
        if not isinstance(x, dict) or len(x) > spec["max_items"]:
            raise WireError("bad_type" if not isinstance(x, dict) else "out_of_range", where)
        for k, v in x.items():
            _check(spec["keys"], k, where)
            _check(spec["values"], v, f"{where}.{k}")
    elif t == "one_of":
        for s in spec["types"]:
            try:
                _check(s, x, where)
                return
            except WireError:
                pass
        raise WireError("bad_type", where)
    else:
        raise WireError("malformed", f"unknown spec {t}")


class Envelope:
    __slots__ = ("v", "game", "seq", "seat", "prev", "kind", "body", "sig", "frame", "hash")
    v: int
    game: bytes
    seq: int
    seat: int
    prev: bytes
    kind: str
    body: dict[str, Any]       # checked against the kind's schema by decode() and make()
    sig: bytes
    frame: bytes
    hash: bytes

    def signed_bytes(self) -> bytes:
        return DOMAIN + packb([self.v, self.game, self.seq, self.seat, self.prev, self.kind, self.body])

    def __repr__(self):
        return f"<{self.kind} seq={self.seq} seat={self.seat}>"


def decode(frame: bytes) -> Envelope:
    if len(frame) > MAX_FRAME:
        raise WireError("frame_too_large")
    x = unpack_strict(frame)
    if not isinstance(x, list) or len(x) != 8:
        raise WireError("bad_envelope")
    if x[0] != VERSION or isinstance(x[0], bool):
        raise WireError("version")
    for f, val in zip(SCHEMA["envelope"], x, strict=False):
        if f["name"] in ("kind", "body"):
            continue
        _check(f, val, f["name"])
    if not isinstance(x[5], str):
        raise WireError("bad_type", "kind")
    if x[5] not in SCHEMA["kinds"]:
        raise WireError("unknown_kind", x[5])
    _check(SCHEMA["kinds"][x[5]], x[6], x[5])
    if packb(x) != frame:
        raise WireError("non_canonical")
    e = Envelope()
    e.v, e.game, e.seq, e.seat, e.prev, e.kind, e.body, e.sig = x
    e.frame = frame
    e.hash = hashlib.sha256(frame).digest()
    return e


def verify_sig(e: Envelope, key: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(e.sig, e.signed_bytes())
        return True
    except InvalidSignature:
        return False


def make(sk: Ed25519PrivateKey, game: bytes, seq: int, seat: int, prev: bytes, kind: str, body: dict) -> Envelope:
    _check(SCHEMA["kinds"][kind], body, kind)
    e = Envelope()
    e.v, e.game, e.seq, e.seat, e.prev, e.kind, e.body = VERSION, game, seq, seat, prev, kind, _canon(body)
    e.sig = sk.sign(e.signed_bytes())
    e.frame = packb([e.v, e.game, e.seq, e.seat, e.prev, e.kind, e.body, e.sig])
    e.hash = hashlib.sha256(e.frame).digest()
    return e


# -- table hashes -----------------------------------------------------------------------------

def rules_hash(rules: dict, k: int) -> bytes:
    R = [[key, rules[key]] for key in sorted(rules, key=lambda s: s.encode())]
    return Hs(b"p2p-chinchon/rules/v1", packb(R), u16(k))


def seating_hash(players: list[dict]) -> bytes:
    return Hs(b"p2p-chinchon/seating/v1", packb([[p["name"], p["key"], p["addr"]] for p in players]))


def toss_commit(game: bytes, seat: int, nonce: bytes) -> bytes:
    return Hs(b"p2p-chinchon/toss/v1", game, u8(seat), nonce)


def first_dealer(game: bytes, nonces: list[bytes]) -> int:
    return int.from_bytes(Hs(b"p2p-chinchon/first-dealer/v1", game, *nonces), "big") % len(nonces)


def hand_digest(game: bytes, hand: int, head: bytes, totals: list[int], final: list[int]) -> bytes:
    return Hs(b"p2p-chinchon/hand-digest/v1", game, u16(hand), head, packb(totals), packb(final))


def fingerprint(key: bytes) -> str:
    import base64
    s = base64.b32encode(hashlib.sha256(key).digest()).decode()[:16]
    return "-".join(s[i:i + 4] for i in range(0, 16, 4))
