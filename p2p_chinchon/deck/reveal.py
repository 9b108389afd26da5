"""Revealing a slot: decryption shares with a DLEQ (Chaum-Pedersen) proof.

Seat i's share of ciphertext ``(c1, c2)`` is ``d = x_i*c1``, with a non-interactive proof that
``log_G(Y_i) = log_c1(d)`` (Chaum and Pedersen, "Wallet databases with observers", 1992;
Fiat-Shamir transform). The challenge hash covers the context, the slot and the ciphertext, so
a share cannot be moved to another slot, hand, seat or game. A private reveal (deal, stock draw)
collects every other seat's share and the owner completes it with :func:`own_share`; a public
reveal (discard, shown hand) adds the owner's share too (Barnett and Smart 2003, section 4).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from p2p_chinchon.deck.context import Context, transcript_hash
from p2p_chinchon.deck.elgamal import Ciphertext
from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.deck.group import GROUP, L
from p2p_chinchon.deck.keys import KeyPair
from p2p_chinchon.rng import Rng

__all__ = [
    "SHARE_LEN", "decryption_share", "verify_decryption_share", "own_share",
    "decryption_shares", "verify_decryption_shares",
]

_G = GROUP
SHARE_LEN = 96


def _slot_bytes(slot: int) -> bytes:
    if type(slot) is not int or not 0 <= slot < 2**32:
        raise ValueError("slot must be an int in [0, 2**32)")
    return struct.pack(">I", slot)


def _dleq_challenge(ctx: Context, slot: bytes, ct: Ciphertext, public: bytes, d: bytes,
                    a: bytes, b: bytes) -> int:
    h = transcript_hash(b"dec-share", ctx, slot, ct.c1, ct.c2, public, d, a, b)
    return int.from_bytes(h.digest(), "little") % L


def own_share(keypair: KeyPair, ct: Ciphertext) -> bytes:
    """``x*c1`` (32 bytes): the drawer's own share, computed locally and never sent."""
    return _G.mul(keypair.x, ct.c1)


def decryption_share(ctx: Context, keypair: KeyPair, ct: Ciphertext, slot: int, rng: Rng) -> bytes:
    """Seat ``ctx.seat``'s share for ``slot``, 96 bytes: ``d (32) || e (32) || z (32)``.

    ``d = x*c1``; ``A = w*G``, ``B = w*c1``,
    ``e = H(DOMAIN "dec-share" ctx u32be(slot) c1 c2 Y_i d A B) mod L``, ``z = w + e*x``.
    Raises DeckError(step="share") if ``c1`` is not a valid point (e.g. an unshuffled slot).
    """
    sb = _slot_bytes(slot)
    if not _G.is_valid_point(ct.c1):
        raise DeckError(None, "share", "cannot share an unmasked or invalid ciphertext")
    d = _G.mul(keypair.x, ct.c1)
    w = _G.random_scalar(rng)
    e = _dleq_challenge(ctx, sb, ct, keypair.public, d, _G.mul_base(w), _G.mul(w, ct.c1))
    z = (w + e * keypair.x) % L
    return d + _G.scalar_to_bytes(e) + _G.scalar_to_bytes(z)


def verify_decryption_share(ctx: Context, public: bytes, ct: Ciphertext, slot: int,
                            share: bytes) -> bytes:
    """Check seat ``ctx.seat``'s share of ``slot`` against its public key share Y_i.

    Returns d (32 bytes). Raises DeckError(seat=ctx.seat, step="share") on a wrong length,
    an invalid point, a scalar >= L or a proof that does not verify (wrong d, other slot,
    other ciphertext, other context).
    """
    seat = ctx.seat
    sb = _slot_bytes(slot)
    if type(share) is not bytes or len(share) != SHARE_LEN:
        raise DeckError(seat, "share", f"decryption share must be {SHARE_LEN} bytes")
    d = share[:32]
    try:
        _G.check_point(d)
        e = _G.scalar_from_bytes(share[32:64])
        z = _G.scalar_from_bytes(share[64:])
        a = _G.sub(_G.mul_base(z), _G.mul(e, public))
        b = _G.sub(_G.mul(z, ct.c1), _G.mul(e, d))
    except DeckError as exc:
        raise exc.blame(seat, "share") from None
    if _dleq_challenge(ctx, sb, ct, public, d, a, b) != e:
        raise DeckError(seat, "share", f"DLEQ proof for slot {slot} does not verify")
    return d


def decryption_shares(ctx: Context, keypair: KeyPair, items: Sequence[tuple[int, Ciphertext]],
                      rng: Rng) -> list[bytes]:
    """Batch of :func:`decryption_share` over ``(slot, ciphertext)`` pairs."""
    return [decryption_share(ctx, keypair, ct, slot, rng) for slot, ct in items]


def verify_decryption_shares(ctx: Context, public: bytes,
                             items: Sequence[tuple[int, Ciphertext]],
                             shares: Sequence[bytes]) -> list[bytes]:
    """Batch of :func:`verify_decryption_share`; returns the d values in order."""
    if len(items) != len(shares):
        raise DeckError(ctx.seat, "share", "number of shares does not match the slots")
    return [verify_decryption_share(ctx, public, ct, slot, s)
            for (slot, ct), s in zip(items, shares, strict=True)]
