"""The prime-order group behind the deck: a small interface and its Ed25519 implementation.

Points are 32-byte canonical compressed Edwards25519 encodings; scalars are Python ints in
[0, L) on the API and 32-byte little-endian strings on the wire. Everything is delegated to
libsodium through ``nacl.bindings`` (no primitive is implemented here).

Pitfalls handled here (DESIGN.md, "Deck"):
- libsodium's ``*_noclamp`` multiplications accept scalars >= L and give the same point as
  ``s mod L``, so every received scalar is checked canonical (< L) before use.
- ``crypto_core_ed25519_add`` accepts non-canonical and off-subgroup encodings, so every received
  point goes through ``crypto_core_ed25519_is_valid_point`` (canonical, on the curve, in the
  prime-order subgroup, not of small order; this rejects the identity).
- libsodium signals a failed operation (scalar 0, identity result) with ``RuntimeError``; the
  wrappers below turn that into identity results where mathematically meaningful, and into a
  :class:`DeckError` otherwise, never a crash.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

import nacl.bindings as _na
import nacl.exceptions as _nae

from p2p_chinchon.deck.errors import DeckError

__all__ = ["Group", "Ed25519Group", "ED25519", "L"]

#: Order of the prime-order subgroup of Edwards25519 (RFC 8032, section 5.1).
L = 2**252 + 27742317777372353535851937790883648493

_base = _na.crypto_scalarmult_ed25519_base_noclamp
_mul = _na.crypto_scalarmult_ed25519_noclamp
_add = _na.crypto_core_ed25519_add
_sub = _na.crypto_core_ed25519_sub
_valid = _na.crypto_core_ed25519_is_valid_point
_from_uniform = _na.crypto_core_ed25519_from_uniform
_reduce = _na.crypto_core_ed25519_scalar_reduce
_NaclErrors = (_nae.RuntimeError, _nae.TypeError, _nae.ValueError, RuntimeError)


class Group(Protocol):
    """What the deck needs from a prime-order group (ristretto255 could implement it too).

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
    def random_scalar(self, rng) -> int: ...
    def scalar_to_bytes(self, s: int) -> bytes: ...
    def scalar_from_bytes(self, b: bytes) -> int: ...


class Ed25519Group:
    """The prime-order subgroup of Edwards25519 via libsodium (PyNaCl bindings).

    Source: RFC 8032 (curve, encoding, L); libsodium "Point*scalar multiplication" and
    "Finite field arithmetic" documentation for the ``crypto_core_ed25519_*`` functions.
    """

    name = "ed25519"
    order = L
    point_len = 32
    scalar_len = 32
    generator = bytes.fromhex("58" + "66" * 31)
    identity = b"\x01" + bytes(31)

    # -- points ---------------------------------------------------------------------------

    def is_valid_point(self, p: bytes) -> bool:
        """True iff ``p`` is a canonical encoding of a prime-order-subgroup point, not identity."""
        if type(p) is not bytes or len(p) != 32:
            return False
        try:
            return bool(_valid(p))
        except _NaclErrors:
            return False

    def check_point(self, p: bytes) -> bytes:
        """Return ``p`` if valid (see :meth:`is_valid_point`), else raise DeckError."""
        if not self.is_valid_point(p):
            raise DeckError(None, "group", "invalid point (non-canonical, off-subgroup, "
                                           "small order or wrong length)")
        return p

    def add(self, p: bytes, q: bytes) -> bytes:
        try:
            return _add(p, q)
        except _NaclErrors as exc:
            raise DeckError(None, "group", f"point addition failed: {exc}") from None

    def sub(self, p: bytes, q: bytes) -> bytes:
        try:
            return _sub(p, q)
        except _NaclErrors as exc:
            raise DeckError(None, "group", f"point subtraction failed: {exc}") from None

    def mul(self, s: int, p: bytes) -> bytes:
        """``s * p`` for a scalar int and a point (identity allowed: gives identity)."""
        s %= L
        if s == 0 or p == self.identity:
            return self.identity
        try:
            return _mul(s.to_bytes(32, "little"), p)
        except _NaclErrors:
            raise DeckError(None, "group", "scalar multiplication rejected the point") from None

    def mul_base(self, s: int) -> bytes:
        """``s * G``."""
        s %= L
        if s == 0:
            return self.identity
        return _base(s.to_bytes(32, "little"))

    def hash_to_point(self, data: bytes) -> bytes:
        """Elligator 2 map (``crypto_core_ed25519_from_uniform``) of SHA-512(data)[:32].

        libsodium clears the cofactor, so the result is in the prime-order subgroup.
        """
        return _from_uniform(hashlib.sha512(data).digest()[:32])

    # -- scalars --------------------------------------------------------------------------

    def hash_to_scalar(self, data: bytes) -> int:
        """SHA-512(data) reduced mod L (as in Ed25519 signatures; bias ~2^-259)."""
        return int.from_bytes(hashlib.sha512(data).digest(), "little") % L

    def random_scalar(self, rng) -> int:
        """Uniform nonzero scalar from ``rng`` (64 random bytes reduced mod L)."""
        while True:
            s = int.from_bytes(rng.token_bytes(64), "little") % L
            if s:
                return s

    def scalar_to_bytes(self, s: int) -> bytes:
        return (s % L).to_bytes(32, "little")

    def scalar_from_bytes(self, b: bytes) -> int:
        """Decode a canonical 32-byte little-endian scalar; DeckError if len != 32 or >= L."""
        if type(b) is not bytes or len(b) != 32:
            raise DeckError(None, "group", "scalar must be 32 bytes")
        s = int.from_bytes(b, "little")
        if s >= L:
            raise DeckError(None, "group", "non-canonical scalar (>= L)")
        return s


#: The group every deck function uses.
ED25519 = Ed25519Group()
