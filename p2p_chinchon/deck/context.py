"""The context bound into every Fiat-Shamir hash and commitment, and the hash framing."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

__all__ = ["Context", "DOMAIN", "transcript_hash"]

#: Prefix of every hash input of this deck (protocol version 2: ristretto255).
DOMAIN = b"p2p-chinchon/deck/v2/"


@dataclass(frozen=True, slots=True)
class Context:
    """Who says what, where: the game, the hand number and the seat authoring a message.

    ``game_id``: 1..255 bytes; ``hand``: 0..2**32-1; ``seat``: 0..255 (the *author* of the
    message being made or verified; a verifier uses the sender's seat). Raises ValueError or
    TypeError on out-of-range fields.
    """

    game_id: bytes
    hand: int
    seat: int

    def __post_init__(self) -> None:
        if not isinstance(self.game_id, bytes) or not 1 <= len(self.game_id) <= 255:
            raise TypeError("Context.game_id must be 1..255 bytes")
        for name, top in (("hand", 2**32), ("seat", 256)):
            v = getattr(self, name)
            if type(v) is not int or not 0 <= v < top:
                raise ValueError(f"Context.{name} must be an int in [0, {top})")

    def encode(self) -> bytes:
        """``u8 len(game_id) || game_id || u32be hand || u8 seat``."""
        return bytes([len(self.game_id)]) + self.game_id + struct.pack(">IB", self.hand, self.seat)

    def for_seat(self, seat: int) -> Context:
        """The same game and hand, authored by ``seat``."""
        return Context(self.game_id, self.hand, seat)


def transcript_hash(label: bytes, ctx: Context, *parts: bytes) -> hashlib._Hash:
    """SHA-512 over ``DOMAIN || label || 0x00 || frame(ctx.encode()) || frame(part)...``.

    ``frame(x) = u32be len(x) || x``, so no two different statements share a hash input.
    Returns the hash object (callers may ``update`` it further with framed data).
    """
    h = hashlib.sha512(DOMAIN + label + b"\x00")
    c = ctx.encode()
    h.update(struct.pack(">I", len(c)) + c)
    for p in parts:
        h.update(struct.pack(">I", len(p)))
        h.update(p)
    return h
