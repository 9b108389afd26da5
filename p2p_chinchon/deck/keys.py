"""Per-hand key shares: commitment, Schnorr proof of knowledge, joint key, secret reveal.

Each seat i draws x_i, publishes ``key_commitment(ctx, Y_i, nonce)`` first; once every seat has
committed, it publishes Y_i = x_i*G with a Schnorr proof of knowledge of x_i (Schnorr 1991,
Fiat-Shamir 1986) bound to the context, and its nonce. The joint key is Y = sum Y_i.
Committing before anyone reveals, plus the proof of knowledge, stops a rogue key
``Y_j = Y* - sum(other Y_i)`` chosen to cancel the others (the "rogue key" attack; see
Barnett and Smart 2003, section 4, on key generation).
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field

from p2p_chinchon.deck.context import Context, transcript_hash
from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.deck.group import GROUP, L
from p2p_chinchon.rng import Rng

__all__ = [
    "KeyPair", "key_commitment", "make_key_share", "verify_key_share", "joint_key",
    "verify_secret", "KEY_SHARE_LEN", "NONCE_LEN", "COMMITMENT_LEN",
]

_G = GROUP
KEY_SHARE_LEN = 96
NONCE_LEN = 32
COMMITMENT_LEN = 32


@dataclass(frozen=True, slots=True)
class KeyPair:
    """One seat's key for one hand: secret scalar ``x`` (int in [1, L)), ``public = x*G``
    (32 bytes) and the 32-byte commitment ``nonce``. Never reuse across hands."""

    x: int = field(repr=False)
    public: bytes
    nonce: bytes = field(repr=False)

    @classmethod
    def generate(cls, rng: Rng) -> KeyPair:
        """Fresh key pair and nonce from ``rng`` (``secrets`` in production)."""
        x = _G.random_scalar(rng)
        return cls(x, _G.mul_base(x), rng.token_bytes(NONCE_LEN))

    def secret_bytes(self) -> bytes:
        """The 32-byte secret to reveal at the end of the hand (``verify_secret`` checks it)."""
        return _G.scalar_to_bytes(self.x)

    def commitment(self, ctx: Context) -> bytes:
        """``key_commitment(ctx, self.public, self.nonce)``."""
        return key_commitment(ctx, self.public, self.nonce)


def key_commitment(ctx: Context, public: bytes, nonce: bytes) -> bytes:
    """32-byte commitment ``SHA-512(DOMAIN "key-commit" ctx Y nonce)[:32]`` (framed)."""
    return transcript_hash(b"key-commit", ctx, public, nonce).digest()[:COMMITMENT_LEN]


def _schnorr_challenge(ctx: Context, public: bytes, a: bytes) -> int:
    return int.from_bytes(transcript_hash(b"key-share", ctx, public, a).digest(), "little") % L


def make_key_share(ctx: Context, keypair: KeyPair, rng: Rng) -> bytes:
    """The key share message, 96 bytes: ``Y (32) || e (32) || z (32)``.

    Schnorr proof: ``A = w*G``, ``e = H(DOMAIN "key-share" ctx Y A) mod L``, ``z = w + e*x``.
    """
    w = _G.random_scalar(rng)
    e = _schnorr_challenge(ctx, keypair.public, _G.mul_base(w))
    z = (w + e * keypair.x) % L
    return keypair.public + _G.scalar_to_bytes(e) + _G.scalar_to_bytes(z)


def verify_key_share(ctx: Context, data: bytes, commitment: bytes, nonce: bytes) -> bytes:
    """Check seat ``ctx.seat``'s key share against its earlier commitment; return Y (32 bytes).

    Raises DeckError(seat=ctx.seat, step="key_share") on a wrong length, an invalid or
    identity point, a scalar >= L, a commitment mismatch or a bad proof.
    """
    seat = ctx.seat
    if type(data) is not bytes or len(data) != KEY_SHARE_LEN:
        raise DeckError(seat, "key_share", f"key share must be {KEY_SHARE_LEN} bytes")
    if type(nonce) is not bytes or len(nonce) != NONCE_LEN:
        raise DeckError(seat, "key_share", f"nonce must be {NONCE_LEN} bytes")
    if type(commitment) is not bytes or len(commitment) != COMMITMENT_LEN:
        raise DeckError(seat, "key_share", f"commitment must be {COMMITMENT_LEN} bytes")
    y, eb, zb = data[:32], data[32:64], data[64:]
    try:
        _G.check_point(y)
        e = _G.scalar_from_bytes(eb)
        z = _G.scalar_from_bytes(zb)
        if not hmac.compare_digest(key_commitment(ctx, y, nonce), commitment):
            raise DeckError(seat, "key_share", "key share does not match its commitment")
        a = _G.sub(_G.mul_base(z), _G.mul(e, y))
    except DeckError as exc:
        raise exc.blame(seat, "key_share") from None
    if _schnorr_challenge(ctx, y, a) != e:
        raise DeckError(seat, "key_share", "Schnorr proof of knowledge does not verify")
    return y


def joint_key(publics: Sequence[bytes]) -> bytes:
    """Sum of the seats' verified public shares (index = seat). 32 bytes.

    Raises DeckError(step="joint_key") naming the seat of an invalid share, or with seat=None
    if the sum is the identity (or no shares are given).
    """
    if not publics:
        raise DeckError(None, "joint_key", "no key shares")
    acc: bytes | None = None
    for seat, y in enumerate(publics):
        if not _G.is_valid_point(y):
            raise DeckError(seat, "joint_key", "invalid public key share")
        acc = y if acc is None else _G.add(acc, y)
    if acc is None or not _G.is_valid_point(acc):  # (never None: publics is not empty)
        raise DeckError(None, "joint_key", "joint key is the identity")
    return acc


def verify_secret(ctx: Context, secret: bytes, public: bytes) -> None:
    """End of hand: check seat ``ctx.seat``'s revealed 32-byte secret: canonical and x*G == Y.

    Raises DeckError(seat=ctx.seat, step="secret").
    """
    try:
        x = _G.scalar_from_bytes(secret)
    except DeckError as exc:
        raise exc.blame(ctx.seat, "secret") from None
    if x == 0 or not hmac.compare_digest(_G.mul_base(x), public):
        raise DeckError(ctx.seat, "secret", "revealed secret does not match the public share")
