"""ElGamal masking of card points, decks as byte strings, opening and end-of-hand decryption.

A card is the public point ``M_i = card_points(n)[i]``. A masked card under the joint key Y is
``(c1, c2) = (r*G, M + r*Y)``; re-masking adds ``s*(G, Y)``; each seat's decryption share is
``d_i = x_i*c1`` and ``M = c2 - sum(d_i)`` (Barnett and Smart 2003, section 4; ElGamal 1985).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence
from typing import NamedTuple

from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.deck.group import GROUP, L

__all__ = [
    "Ciphertext", "MAX_CARDS", "card_points", "initial_deck", "encode_deck", "decode_deck",
    "remask", "open_card", "decrypt_with_secrets", "decrypt_deck", "card_index",
]

#: Largest deck (cards or sub-deck) the deck layer handles; proofs encode indices in one byte.
MAX_CARDS = 256

_G = GROUP


class Ciphertext(NamedTuple):
    """An ElGamal ciphertext: two 32-byte points ``c1 = r*G`` and ``c2 = M + r*Y``.

    Constructing one directly does not validate; :meth:`from_bytes` and :func:`decode_deck`
    do (use them for anything received).
    """

    c1: bytes
    c2: bytes

    def to_bytes(self) -> bytes:
        """64 bytes: ``c1 || c2``."""
        return self.c1 + self.c2

    @classmethod
    def from_bytes(cls, b: bytes) -> Ciphertext:
        """Decode 64 bytes; DeckError(step="decode") on wrong length or an invalid point."""
        if type(b) is not bytes or len(b) != 64:
            raise DeckError(None, "decode", "ciphertext must be 64 bytes")
        c1, c2 = b[:32], b[32:]
        if not (_G.is_valid_point(c1) and _G.is_valid_point(c2)):
            raise DeckError(None, "decode", "ciphertext holds an invalid point")
        return cls(c1, c2)


@functools.lru_cache(maxsize=8)
def card_points(n: int) -> tuple[bytes, ...]:
    """Public points for card indices 0..n-1 (1 <= n <= MAX_CARDS).

    ``M_i = from_hash(SHA-512(DOMAIN || "card" || 0x00 || u16be i))`` (RFC 9496, libsodium's
    ``crypto_core_ristretto255_from_hash``; docs/protocol.md "Group and encodings"): nobody knows a
    discrete log relation between them. Checked valid and pairwise distinct. The points do not
    depend on n, so ``card_points(40)`` is a prefix of ``card_points(80)``.
    """
    if type(n) is not int or not 1 <= n <= MAX_CARDS:
        raise ValueError(f"card_points(n) needs 1 <= n <= {MAX_CARDS}")
    from p2p_chinchon.deck.context import DOMAIN

    pts = tuple(_G.hash_to_point(DOMAIN + b"card\x00" + struct.pack(">H", i)) for i in range(n))
    if len(set(pts)) != n or not all(_G.is_valid_point(p) for p in pts):
        raise AssertionError("card points collide or are invalid")  # pragma: no cover
    return pts


@functools.lru_cache(maxsize=8)
def _index_of(points: tuple[bytes, ...]) -> dict[bytes, int]:
    return {p: i for i, p in enumerate(points)}


def card_index(point: bytes, points: Sequence[bytes]) -> int:
    """The index of ``point`` among ``points``; DeckError(step="open") if it is no card."""
    i = _index_of(tuple(points)).get(point)
    if i is None:
        raise DeckError(None, "open", "decrypted point is not a card")
    return i


def initial_deck(n: int) -> list[Ciphertext]:
    """The public starting deck: card i in slot i, masked with randomness 0: ``(O, M_i)``.

    ``O`` is the identity (32 zero bytes); such ciphertexts are never sent, only recomputed.
    The first shuffle re-masks every slot with fresh randomness.
    """
    return [Ciphertext(_G.identity, m) for m in card_points(n)]


def encode_deck(deck: Sequence[Ciphertext]) -> bytes:
    """``64 * len(deck)`` bytes: the ciphertexts' ``c1 || c2`` in slot order."""
    return b"".join(c.c1 + c.c2 for c in deck)


def decode_deck(b: bytes, n: int) -> list[Ciphertext]:
    """Decode exactly ``n`` ciphertexts (1 <= n <= MAX_CARDS), validating all 2n points.

    Raises DeckError(seat=None, step="decode") on wrong length or any invalid point
    (non-canonical, small order, identity, off the prime-order subgroup).
    """
    if type(n) is not int or not 1 <= n <= MAX_CARDS:
        raise DeckError(None, "decode", f"deck size must be in 1..{MAX_CARDS}")
    if type(b) is not bytes or len(b) != 64 * n:
        raise DeckError(None, "decode", f"deck of {n} cards must be {64 * n} bytes")
    valid = _G.is_valid_point
    out = []
    for i in range(0, 64 * n, 64):
        c1, c2 = b[i:i + 32], b[i + 32:i + 64]
        if not (valid(c1) and valid(c2)):
            raise DeckError(None, "decode", f"slot {i // 64} holds an invalid point")
        out.append(Ciphertext(c1, c2))
    return out


def remask(ct: Ciphertext, s: int, joint_key: bytes) -> Ciphertext:
    """``(c1 + s*G, c2 + s*Y)``."""
    return Ciphertext(_G.add(ct.c1, _G.mul_base(s)), _G.add(ct.c2, _G.mul(s, joint_key)))


def open_card(ct: Ciphertext, shares_d: Sequence[bytes], points: Sequence[bytes]) -> int:
    """Card index of ``c2 - sum(shares_d)``; one share per seat (verified, or one's own).

    Raises DeckError(step="open") if the result is not one of ``points``.
    """
    m = ct.c2
    try:
        for d in shares_d:
            m = _G.sub(m, d)
    except DeckError as e:
        raise e.blame(None, "open") from None
    return card_index(m, points)


def decrypt_with_secrets(ct: Ciphertext, secrets: Sequence[bytes], points: Sequence[bytes]) -> int:
    """Open a slot with every seat's revealed per-hand secret: ``c2 - (sum x_i)*c1``.

    ``secrets`` are 32-byte canonical scalars (check each with ``verify_secret`` first).
    Raises DeckError(step="open") if a secret is malformed or the slot holds no card.
    """
    try:
        x = sum(_G.scalar_from_bytes(s) for s in secrets) % L
        return card_index(_G.sub(ct.c2, _G.mul(x, ct.c1)), points)
    except DeckError as e:
        raise e.blame(None, "open") from None


def decrypt_deck(deck: Sequence[Ciphertext], secrets: Sequence[bytes],
                 points: Sequence[bytes]) -> list[int]:
    """End-of-hand audit: open every slot with all secrets; the result must be a permutation
    of ``range(len(points))`` restricted to ``len(deck)`` distinct cards.

    Returns the card index of each slot. Raises DeckError(step="open") if a slot is no card
    or a card appears twice.
    """
    try:
        x = sum(_G.scalar_from_bytes(s) for s in secrets) % L
    except DeckError as e:
        raise e.blame(None, "open") from None
    idx = _index_of(tuple(points))
    out = []
    for slot, ct in enumerate(deck):
        i = idx.get(_G.sub(ct.c2, _G.mul(x, ct.c1)))
        if i is None:
            raise DeckError(None, "open", f"slot {slot} holds no card")
        out.append(i)
    if len(set(out)) != len(out):
        raise DeckError(None, "open", "a card appears in two slots")
    return out
