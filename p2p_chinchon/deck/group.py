"""The prime-order group behind the deck: a small interface and its ristretto255 implementation.

Points are 32-byte canonical ristretto255 encodings (RFC 9496, section 4.3); scalars are Python
ints in [0, L) on the API and 32-byte little-endian strings on the wire. Everything is delegated
to libsodium's ``crypto_core_ristretto255_*`` / ``crypto_scalarmult_ristretto255*`` functions:
the libsodium the ``rbcl`` package bundles, loaded by :mod:`.sodium` (no primitive is
implemented here).

Pitfalls handled here:
- ristretto255 has prime order L (no cofactor), and decoding accepts only canonical encodings,
  so "valid" means: 32 bytes that decode (``crypto_core_ristretto255_is_valid_point``) and are
  not the identity (all zero bytes), which no honest message ever holds.
- libsodium's scalar multiplication ignores the top bit and accepts scalars >= L (giving the
  same point as ``s mod L``), so every received scalar is checked canonical (< L) first.
- ``rbcl``'s addition wrapper drops libsodium's return code (an invalid input silently gives
  the identity), so :meth:`add`/:meth:`sub` call libsodium themselves and check it.
- libsodium signals a failed check (invalid point, scalar 0, identity result) with a return
  code of -1 (``RuntimeError`` in rbcl); the wrappers turn that into identity results where
  mathematically meaningful, and into a :class:`DeckError` otherwise, never a crash.
"""

from __future__ import annotations

import ctypes
import hashlib
from typing import Protocol

from p2p_chinchon.deck import sodium
from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.rng import Rng

_sodium = sodium.library()  # rbcl's libsodium, called directly (rbcl's wrappers hide return codes)


__all__ = ["Group", "Ristretto255Group", "RISTRETTO255", "GROUP", "L"]

#: Order of ristretto255 (RFC 9496, section 4; the prime-order subgroup of Curve25519).
L = 2**252 + 27742317777372353535851937790883648493

_IDENTITY = bytes(32)
_buf = ctypes.create_string_buffer
_is_valid = _sodium.crypto_core_ristretto255_is_valid_point
_c_add = _sodium.crypto_core_ristretto255_add
_c_sub = _sodium.crypto_core_ristretto255_sub
_c_mul = _sodium.crypto_scalarmult_ristretto255
_c_base = _sodium.crypto_scalarmult_ristretto255_base
_c_from_hash = _sodium.crypto_core_ristretto255_from_hash


def valid(p: bytes) -> bool:
    """Fast path of :meth:`Ristretto255Group.is_valid_point` for 32-byte ``bytes``."""
    return p != _IDENTITY and _is_valid(p) == 1


def add(p: bytes, q: bytes) -> bytes:
    """``p + q`` on 32-byte encodings; RuntimeError if libsodium refuses an input."""
    out = _buf(32)
    if _c_add(out, p, q):
        raise RuntimeError("ristretto255 addition refused an input")
    return out.raw


def sub(p: bytes, q: bytes) -> bytes:
    """``p - q`` on 32-byte encodings; RuntimeError if libsodium refuses an input."""
    out = _buf(32)
    if _c_sub(out, p, q):
        raise RuntimeError("ristretto255 subtraction refused an input")
    return out.raw


def mul(sb: bytes, p: bytes) -> bytes:
    """``s * p`` for a 32-byte little-endian scalar < L; the identity if s = 0 or p = O.

    RuntimeError if ``p`` is not a valid encoding."""
    out = _buf(32)
    if _c_mul(out, sb, p):
        if p == _IDENTITY or int.from_bytes(sb, "little") % L == 0:
            return _IDENTITY
        raise RuntimeError("ristretto255 multiplication refused the point")
    return out.raw


def mul_base(sb: bytes) -> bytes:
    """``s * G`` for a 32-byte little-endian scalar < L (the identity for s = 0)."""
    out = _buf(32)
    if _c_base(out, sb):
        return _IDENTITY  # libsodium refuses only a zero result
    return out.raw


class Group(Protocol):
    """What the deck needs from a prime-order group.

    Points are ``bytes`` of length ``point_len``; scalars are ints in [0, ``order``).
    Operations on invalid input raise :class:`DeckError` with ``step="group"``.
    """

    name: str
    order: int
    point_len: int
    scalar_len: int
    generator: bytes
    identity: bytes

    def is_valid_point(self, p: bytes) -> bool: ...
    def check_point(self, p: bytes) -> bytes: ...
    def add(self, p: bytes, q: bytes) -> bytes: ...
    def sub(self, p: bytes, q: bytes) -> bytes: ...
    def mul(self, s: int, p: bytes) -> bytes: ...
    def mul_base(self, s: int) -> bytes: ...
    def hash_to_point(self, data: bytes) -> bytes: ...
    def hash_to_scalar(self, data: bytes) -> int: ...
    def random_scalar(self, rng: Rng) -> int: ...
    def scalar_to_bytes(self, s: int) -> bytes: ...
    def scalar_from_bytes(self, b: bytes) -> int: ...


class Ristretto255Group:
    """ristretto255 via libsodium (through ``rbcl``).

    Source: RFC 9496 (group, encoding, hash-to-group, L); libsodium "Ristretto" documentation.
    """

    name = "ristretto255"
    order = L
    point_len = 32
    scalar_len = 32
    #: RFC 9496, section 4.4: the encoding of the standard generator.
    generator = bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76")
    identity = _IDENTITY

    # -- points ---------------------------------------------------------------------------

    def is_valid_point(self, p: bytes) -> bool:
        """True iff ``p`` is 32 bytes, a canonical ristretto255 encoding, and not the identity."""
        return type(p) is bytes and len(p) == 32 and valid(p)

    def check_point(self, p: bytes) -> bytes:
        """Return ``p`` if valid (see :meth:`is_valid_point`), else raise DeckError."""
        if not self.is_valid_point(p):
            raise DeckError(None, "group", "invalid point (non-canonical, not on the group, "
                                           "identity or wrong length)")
        return p

    def add(self, p: bytes, q: bytes) -> bytes:
        """``p + q``; DeckError if either is not a canonical encoding (identity allowed)."""
        try:
            return add(p, q)
        except (RuntimeError, TypeError, ctypes.ArgumentError) as exc:
            raise DeckError(None, "group", f"point addition failed: {exc}") from None

    def sub(self, p: bytes, q: bytes) -> bytes:
        """``p - q``; DeckError if either is not a canonical encoding (identity allowed)."""
        try:
            return sub(p, q)
        except (RuntimeError, TypeError, ctypes.ArgumentError) as exc:
            raise DeckError(None, "group", f"point subtraction failed: {exc}") from None

    def mul(self, s: int, p: bytes) -> bytes:
        """``s * p`` for a scalar int and a point (identity allowed: gives identity)."""
        if type(p) is not bytes or len(p) != 32:
            raise DeckError(None, "group", "point must be 32 bytes")
        try:
            return mul((s % L).to_bytes(32, "little"), p)
        except RuntimeError:
            raise DeckError(None, "group", "scalar multiplication rejected the point") from None

    def mul_base(self, s: int) -> bytes:
        """``s * G``."""
        return mul_base((s % L).to_bytes(32, "little"))

    def hash_to_point(self, data: bytes) -> bytes:
        """RFC 9496 hash-to-group: ``crypto_core_ristretto255_from_hash(SHA-512(data))``.

        Two Elligator maps of the 64-byte digest, added: nobody knows the discrete log of the
        result to any other point, so such points serve as independent generators.
        """
        out = _buf(32)
        if _c_from_hash(out, hashlib.sha512(data).digest()):
            raise RuntimeError("ristretto255 hash-to-group failed")
        return out.raw

    # -- scalars --------------------------------------------------------------------------

    def hash_to_scalar(self, data: bytes) -> int:
        """SHA-512(data) as a little-endian int, reduced mod L (bias ~2^-259)."""
        return int.from_bytes(hashlib.sha512(data).digest(), "little") % L

    def random_scalar(self, rng: Rng) -> int:
        """Uniform nonzero scalar from ``rng`` (64 random bytes reduced mod L)."""
        while True:
            s = int.from_bytes(rng.token_bytes(64), "little") % L
            if s:
                return s

    def scalar_to_bytes(self, s: int) -> bytes:
        """32 bytes little-endian of ``s mod L``."""
        return (s % L).to_bytes(32, "little")

    def scalar_from_bytes(self, b: bytes) -> int:
        """Decode a canonical 32-byte little-endian scalar; DeckError if len != 32 or >= L."""
        if type(b) is not bytes or len(b) != 32:
            raise DeckError(None, "group", "scalar must be 32 bytes")
        s = int.from_bytes(b, "little")
        if s >= L:
            raise DeckError(None, "group", "non-canonical scalar (>= L)")
        return s


#: The group every deck function uses (protocol version 2).
RISTRETTO255 = Ristretto255Group()
GROUP = RISTRETTO255
