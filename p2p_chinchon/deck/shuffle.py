"""Verifiable shuffle: permute and re-mask a deck, with a proof of shuffle.

Two proof systems implement :class:`ShuffleProofSystem`: :class:`TereliusWikstrom` (the
default; ``p2p_chinchon.deck.tw``) and the cut-and-choose proof below (table option
``shuffle_proof=cut-and-choose``). :func:`proof_system` builds one from its name.

Cut-and-choose:

Statement: ``deck_out[i] = deck_in[pi(i)] + r_i*(G, Y)`` for some permutation pi and scalars
r_i (Y = joint key). Proof: k shadow shuffles made non-interactive with Fiat-Shamir
(Barnett and Smart 2003, section 5, after Sako and Kilian 1995; soundness error 2^-k).

Shadow j is ``S_j[i] = deck_in[pi_j(i)] + s_ji*(G, Y)`` where ``(pi_j, s_j)`` are expanded from a
32-byte seed. The challenge ``c`` (32 bytes) hashes the whole statement and every shadow; bit j
of c chooses what shadow j opens:

- bit 0: the seed (the verifier recomputes S_j from deck_in);
- bit 1: ``rho_j = pi^-1 o pi_j`` and ``t_ji = s_ji - r_(rho_j(i))`` with
  ``S_j[i] = deck_out[rho_j(i)] + t_ji*(G, Y)`` (the verifier recomputes S_j from deck_out).

Shadows are not shipped: the verifier recomputes them from the openings and checks that the
hash of the statement and recomputed shadows equals c (the usual (challenge, response) form).

Proof bytes (k and n are known to the verifier from the rules and the deck)::

    c (32) || opening_0 || ... || opening_(k-1)
    opening_j = seed_j (32)                       if bit j of c is 0
              = rho_j (n bytes, a permutation of 0..n-1) || t_j (n x 32-byte scalars < L)
                                                  if bit j of c is 1
    bit j of c = (c[j // 8] >> (j % 8)) & 1

    c = SHA-512(DOMAIN "shuffle/cut-and-choose" 00 || frame(ctx) || frame(u32be round)
                || frame(u16be k) || frame(u16be n) || frame(Y) || frame(deck_in)
                || frame(deck_out) || frame(S_0) || ... || frame(S_(k-1)))[:32]

Seed expansion (shadow j): ``X = SHAKE-256(DOMAIN "shadow" 00 || u16be n || seed)``; bytes
``X[64i : 64i+64]`` (little-endian) mod L give s_ji for i < n; then pi_j is Fisher-Yates over
``a = [0..n-1]``: for m = n-1 down to 1, take the next unused 2 bytes of X (big-endian v),
reject if ``v >= 65536 - 65536 % (m+1)``, else swap a[m] with a[v % (m+1)]; pi_j = a.

Costs (counted by the benchmark): prover (k+1)*n base and (k+1)*n variable-base
multiplications, all of which can be precomputed once the joint key is known
(:func:`prepare_shuffle`), leaving 2(k+1)n point additions once deck_in arrives; verifier
k*n base + k*n variable-base multiplications and 2kn additions.
"""

from __future__ import annotations

import ctypes
import hashlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, cast

from p2p_chinchon.deck.context import DOMAIN, Context, transcript_hash
from p2p_chinchon.deck.elgamal import MAX_CARDS, Ciphertext, encode_deck
from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.deck.group import GROUP, L, add as _add, mul as _mul, mul_base as _base
from p2p_chinchon.deck.tw import TereliusWikstrom, tw_proof_length
from p2p_chinchon.rng import Rng

__all__ = [
    "ShuffleProofSystem", "CutAndChoose", "TereliusWikstrom", "ShufflePrep", "prepare_shuffle",
    "shuffle", "verify_shuffle", "proof_length", "proof_system", "PROOF_SYSTEMS",
    "DEFAULT_K", "MAX_K",
]

DEFAULT_K = 64
MAX_K = 256  # bits of the 32-byte challenge

_G = GROUP
_pack = struct.pack
#: What libsodium (through ctypes) raises on a malformed point or argument.
_LibErrors = (RuntimeError, TypeError, ValueError, ctypes.ArgumentError)


def _mask_pair(sb: bytes, y: bytes) -> tuple[bytes, bytes]:
    """``(s*G, s*Y)`` for a 32-byte scalar < L (s = 0 gives the identity twice)."""
    return _base(sb), _mul(sb, y)


def _fisher_yates(n: int, randbelow: Callable[[int], int]) -> list[int]:
    a = list(range(n))
    for m in range(n - 1, 0, -1):
        j = randbelow(m + 1)
        a[m], a[j] = a[j], a[m]
    return a


def expand_seed(seed: bytes, n: int) -> tuple[list[int], list[bytes]]:
    """Shadow permutation and 32-byte scalars from a 32-byte seed (layout in module doc)."""
    prefix = DOMAIN + b"shadow\x00" + _pack(">H", n) + seed
    need = 64 * n + 2 * n + 64
    x = hashlib.shake_256(prefix).digest(need)
    scal = [(int.from_bytes(x[64 * i:64 * i + 64], "little") % L).to_bytes(32, "little")
            for i in range(n)]
    pos = 64 * n

    def randbelow(bound: int) -> int:
        nonlocal pos, x, need
        limit = 65536 - 65536 % bound
        while True:
            if pos + 2 > len(x):  # SHAKE output of any length extends the shorter one
                need *= 2
                x = hashlib.shake_256(prefix).digest(need)
            v = (x[pos] << 8) | x[pos + 1]
            pos += 2
            if v < limit:
                return v % bound

    return _fisher_yates(n, randbelow), scal


def _shadow(src: Sequence[Ciphertext], perm: Sequence[int], sg: Sequence[bytes],
            sy: Sequence[bytes]) -> bytes:
    """Encoded deck ``src[perm[i]] + (sg[i], sy[i])``."""
    out: list[bytes] = []
    app = out.append
    for i, p in enumerate(perm):
        c = src[p]
        app(_add(c[0], sg[i]))
        app(_add(c[1], sy[i]))
    return b"".join(out)


def _shadow_from_scalars(src: Sequence[Ciphertext], perm: Sequence[int],
                         scal: Sequence[bytes], y: bytes) -> bytes:
    out: list[bytes] = []
    app = out.append
    for i, p in enumerate(perm):
        c = src[p]
        g, h = _mask_pair(scal[i], y)
        app(_add(c[0], g))
        app(_add(c[1], h))
    return b"".join(out)


def _statement_hash(ctx: Context, round: int, k: int, n: int, y: bytes,
                    deck_in: Sequence[Ciphertext], deck_out: Sequence[Ciphertext]
                    ) -> hashlib._Hash:
    return transcript_hash(b"shuffle/cut-and-choose", ctx, _pack(">I", round), _pack(">H", k),
                           _pack(">H", n), y, encode_deck(deck_in), encode_deck(deck_out))


def _bits(c: bytes, k: int) -> list[int]:
    return [(c[j >> 3] >> (j & 7)) & 1 for j in range(k)]


@dataclass(eq=False)
class ShufflePrep:
    """Secret material for one shuffle, computed before the input deck is known.

    Holds the permutation (``perm[i]`` = input slot moved to output slot i), the re-masking
    scalars and their multiples, and the proof system's precomputation. Single use: a second
    :func:`shuffle` with the same prep raises ValueError (reusing shadows would leak pi).
    """

    joint_key: bytes
    n: int
    k: int
    perm: list[int] = field(repr=False)
    r: list[int] = field(repr=False)
    rg: list[bytes] = field(repr=False)
    ry: list[bytes] = field(repr=False)
    proof_state: object = field(repr=False)
    used: bool = False
    system: str = ""


class ShuffleProofSystem(Protocol):
    """A non-interactive proof that deck_out is a re-masked permutation of deck_in.

    :class:`TereliusWikstrom` (the default) and :class:`CutAndChoose` implement it.
    ``precompute`` gets the prep (joint key, n, permutation, re-masking scalars) before the
    input deck is known and returns the proof's own precomputation (``prep.proof_state``).
    ``verify`` raises DeckError; ``k`` is the cut-and-choose rounds (0 for TW).
    """

    name: str
    k: int

    def precompute(self, prep: ShufflePrep, rng: Rng) -> object: ...

    def prove(self, ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
              deck_out: Sequence[Ciphertext], prep: ShufflePrep, round: int) -> bytes: ...

    def verify(self, ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
               deck_out: Sequence[Ciphertext], proof: bytes, round: int) -> None: ...


@dataclass(frozen=True)
class _Shadows:
    seeds: list[bytes]
    perms: list[list[int]]
    scalars: list[list[bytes]]
    sg: list[list[bytes]]
    sy: list[list[bytes]]


class CutAndChoose:
    """Cut-and-choose shuffle proof with ``k`` shadow shuffles (1 <= k <= 256)."""

    name = "cut-and-choose"

    def __init__(self, k: int = DEFAULT_K) -> None:
        if type(k) is not int or not 1 <= k <= MAX_K:
            raise ValueError(f"k must be an int in [1, {MAX_K}]")
        self.k = k

    def precompute(self, prep: ShufflePrep, rng: Rng) -> _Shadows:
        joint_key, n = prep.joint_key, prep.n
        seeds, perms, scalars, sgs, sys_ = [], [], [], [], []
        for _ in range(self.k):
            seed = rng.token_bytes(32)
            perm, scal = expand_seed(seed, n)
            pairs = [_mask_pair(sb, joint_key) for sb in scal]
            seeds.append(seed)
            perms.append(perm)
            scalars.append(scal)
            sgs.append([p[0] for p in pairs])
            sys_.append([p[1] for p in pairs])
        return _Shadows(seeds, perms, scalars, sgs, sys_)

    def prove(self, ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
              deck_out: Sequence[Ciphertext], prep: ShufflePrep, round: int) -> bytes:
        sh = cast(_Shadows, prep.proof_state)
        n = len(deck_in)
        h = _statement_hash(ctx, round, self.k, n, joint_key, deck_in, deck_out)
        for j in range(self.k):
            s = _shadow(deck_in, sh.perms[j], sh.sg[j], sh.sy[j])
            h.update(_pack(">I", len(s)))
            h.update(s)
        c = h.digest()[:32]
        inv = [0] * n
        for i, p in enumerate(prep.perm):
            inv[p] = i
        parts = [c]
        r = prep.r
        for j, bit in enumerate(_bits(c, self.k)):
            if not bit:
                parts.append(sh.seeds[j])
                continue
            rho = [inv[p] for p in sh.perms[j]]
            parts.append(bytes(rho))
            scal = sh.scalars[j]
            parts.extend(((int.from_bytes(scal[i], "little") - r[rho[i]]) % L)
                         .to_bytes(32, "little") for i in range(n))
        return b"".join(parts)

    def verify(self, ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
               deck_out: Sequence[Ciphertext], proof: bytes, round: int) -> None:
        seat = ctx.seat
        n, k = len(deck_in), self.k
        if type(proof) is not bytes or len(proof) < 32:
            raise DeckError(seat, "shuffle", "proof too short")
        c = proof[:32]
        bits = _bits(c, k)
        want = 32 + sum(n + 32 * n if b else 32 for b in bits)
        if len(proof) != want:
            raise DeckError(seat, "shuffle", f"proof must be {want} bytes for its challenge")
        h = _statement_hash(ctx, round, k, n, joint_key, deck_in, deck_out)
        pos = 32
        full = set(range(n))
        for j, bit in enumerate(bits):
            if not bit:
                perm, scal = expand_seed(proof[pos:pos + 32], n)
                pos += 32
                s = _shadow_from_scalars(deck_in, perm, scal, joint_key)
            else:
                rho = proof[pos:pos + n]
                pos += n
                if set(rho) != full:
                    raise DeckError(seat, "shuffle", f"opening {j} is not a permutation")
                scal = [proof[q:q + 32] for q in range(pos, pos + 32 * n, 32)]
                pos += 32 * n
                for sb in scal:
                    if int.from_bytes(sb, "little") >= L:
                        raise DeckError(seat, "shuffle", f"opening {j} has a scalar >= L")
                s = _shadow_from_scalars(deck_out, rho, scal, joint_key)
            h.update(_pack(">I", len(s)))
            h.update(s)
        if h.digest()[:32] != c:
            raise DeckError(seat, "shuffle", "shuffle proof does not verify")


def proof_length(proof: bytes, n: int, k: int = DEFAULT_K, *,
                 system: ShuffleProofSystem | None = None) -> int:
    """Expected length of a proof for n cards (for size caps): 128n + 160 for TW; for
    cut-and-choose (``system=CutAndChoose(k)``) it depends on the first 32 bytes."""
    if system is None or system.name == TereliusWikstrom.name:
        return tw_proof_length(n)
    return 32 + sum(n + 32 * n if b else 32 for b in _bits(proof[:32], system.k))


#: Proof systems by the table option's value (``shuffle_proof``); the first is the default.
PROOF_SYSTEMS = (TereliusWikstrom.name, CutAndChoose.name)


def proof_system(name: str = TereliusWikstrom.name, k: int = DEFAULT_K) -> ShuffleProofSystem:
    """The proof system named ``name`` (one of :data:`PROOF_SYSTEMS`); ``k`` is the rounds of
    cut-and-choose (ignored for TW). ValueError on an unknown name or k out of range."""
    if name == TereliusWikstrom.name:
        return TereliusWikstrom()
    if name == CutAndChoose.name:
        return CutAndChoose(k)
    raise ValueError(f"unknown shuffle proof system {name!r}; one of {', '.join(PROOF_SYSTEMS)}")


def _check_deck_args(joint_key: bytes, deck_in: Sequence[Ciphertext],
                     deck_out: Sequence[Ciphertext] | None = None) -> int:
    if not _G.is_valid_point(joint_key):
        raise DeckError(None, "shuffle", "joint key is not a valid point")
    n = len(deck_in)
    if not 1 <= n <= MAX_CARDS:
        raise DeckError(None, "shuffle", f"deck size must be in 1..{MAX_CARDS}")
    if deck_out is not None and len(deck_out) != n:
        raise DeckError(None, "shuffle", f"output deck has {len(deck_out)} cards, input {n}")
    return n


def prepare_shuffle(joint_key: bytes, n: int, rng: Rng, k: int = DEFAULT_K, *,
                    system: ShuffleProofSystem | None = None) -> ShufflePrep:
    """Do all of a shuffle's scalar multiplications before the input deck arrives.

    The permutation is Fisher-Yates with ``rng.randbelow``; scalars are uniform nonzero
    mod L from ``rng.token_bytes``. Pass the result to :func:`shuffle` as ``prep=`` (once).
    ``system`` defaults to Terelius-Wikström (``k`` is then ignored).
    """
    system = system or TereliusWikstrom()
    if not _G.is_valid_point(joint_key):
        raise ValueError("joint key is not a valid point")
    if type(n) is not int or not 1 <= n <= MAX_CARDS:
        raise ValueError(f"deck size must be in 1..{MAX_CARDS}")
    perm = _fisher_yates(n, rng.randbelow)
    r = [_G.random_scalar(rng) for _ in range(n)]
    pairs = [_mask_pair(x.to_bytes(32, "little"), joint_key) for x in r]
    prep = ShufflePrep(joint_key, n, system.k, perm, r, [p[0] for p in pairs],
                       [p[1] for p in pairs], None, system=system.name)
    prep.proof_state = system.precompute(prep, rng)
    return prep


def shuffle(ctx: Context, joint_key: bytes, deck_in: list[Ciphertext], rng: Rng,
            k: int = DEFAULT_K, round: int = 0, *, prep: ShufflePrep | None = None,
            system: ShuffleProofSystem | None = None) -> tuple[list[Ciphertext], bytes]:
    """Permute and re-mask ``deck_in``; return ``(deck_out, proof_bytes)``.

    ``ctx.seat`` is the shuffling seat; ``round`` is 0 for the hand's first shuffle and
    1, 2, ... for each re-shuffle of the stock (a sub-deck). ``prep`` (from
    :func:`prepare_shuffle` with the same joint key, n and k) moves the multiplications
    off the critical path. ``system`` defaults to Terelius-Wikström (``k`` is then ignored).
    Raises DeckError(step="shuffle") on a bad joint key or deck size, ValueError on a used or
    mismatched prep.
    """
    system = system or TereliusWikstrom()
    n = _check_deck_args(joint_key, deck_in)
    if type(round) is not int or not 0 <= round < 2**32:
        raise ValueError("round must be an int in [0, 2**32)")
    if prep is None:
        prep = prepare_shuffle(joint_key, n, rng, system.k, system=system)
    if prep.used:
        raise ValueError("ShufflePrep already used: make a fresh one for every shuffle")
    if (prep.joint_key != joint_key or prep.n != n or prep.k != system.k
            or prep.system != system.name):
        raise ValueError("ShufflePrep was made for another joint key, deck size, k or system")
    prep.used = True
    try:
        deck_out = [Ciphertext(_add(deck_in[p].c1, prep.rg[i]), _add(deck_in[p].c2, prep.ry[i]))
                    for i, p in enumerate(prep.perm)]
        return deck_out, system.prove(ctx, joint_key, deck_in, deck_out, prep, round)
    except _LibErrors as exc:
        raise DeckError(None, "shuffle", f"input deck holds a malformed point: {exc}") from None


def verify_shuffle(ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
                   deck_out: Sequence[Ciphertext], proof: bytes, k: int = DEFAULT_K,
                   round: int = 0, *, system: ShuffleProofSystem | None = None) -> None:
    """Check seat ``ctx.seat``'s shuffle of ``deck_in`` into ``deck_out``; returns None.

    ``deck_out`` must come from :func:`decode_deck` (which validates every point).
    Raises DeckError(seat=ctx.seat, step="shuffle") on any failure: wrong deck length,
    malformed proof (length, non-permutation, scalar >= L) or a challenge mismatch (a deck
    that is not a re-masked permutation, or a proof made for another statement: other game,
    hand, seat, round, joint key or decks). ``system`` defaults to Terelius-Wikström.
    """
    system = system or TereliusWikstrom()
    try:
        _check_deck_args(joint_key, deck_in, deck_out)
        if type(round) is not int or not 0 <= round < 2**32:
            raise DeckError(None, "shuffle", "round out of range")
        system.verify(ctx, joint_key, deck_in, deck_out, proof, round)
    except DeckError as exc:
        raise exc.blame(ctx.seat, "shuffle") from None
    except _LibErrors as exc:
        raise DeckError(ctx.seat, "shuffle", f"malformed point in a deck: {exc}") from None
