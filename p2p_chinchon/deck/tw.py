"""Terelius-Wikström proof of a shuffle (commitment-consistent), non-interactive.

Statement: ``deck_out[i] = deck_in[perm[i]] + r_i*(G, Y)`` for a permutation perm and scalars
r_i (Y = joint key), on ristretto255. Sources: Terelius and Wikström, "Proofs of restricted
shuffles" (AFRICACRYPT 2010); Wikström, "How to implement a stand-alone verifier for the
Verificatum mix-net"; Haenni, Locher, Koenig and Dubuis, "Pseudo-code algorithms for verifiable
re-encryption mix-nets" (FC 2017 workshops), algorithms GenShuffleProof / CheckShuffleProof,
written additively. Pitfalls from Haines, Lewis, Pereira and Teague, "How not to prove your
election outcome" (IEEE S&P 2020) are avoided: generators come from hash-to-group (nobody
knows a relation among them, so the commitments bind), and both challenges hash every public
input (strong Fiat-Shamir), the second one after every first message.

Notation (n cards, indices 0-based; G the standard generator)::

    H_i   = from_hash(SHA-512(DOMAIN "tw/generator" 00 u16be i))   for i = 0..n
    perm  the prover's permutation: output slot i holds input slot perm[i]; inv = perm^-1
    a_j   = s_j*G + H_(inv[j]+1)                                   permutation commitment, j < n
    seed  = SHA-512(T("shuffle/tw/u", ctx, u32be round, u16be n, Y, H_0..H_n, deck_in,
                      deck_out, a_0..a_(n-1)))                     (64 bytes)
    u_j   = SHAKE-256(seed)[64j : 64j+64] as little-endian int mod L, j < n
    u'_i  = u_(perm[i])
    c^_i  = rh_i*G + u'_i*c^_(i-1),  c^_(-1) = H_0                 commitment chain, i < n

First messages (omega, omega^_i, omega'_i uniform)::

    t1 = w1*G      t2 = w2*G      t3 = w3*G + sum_i w'_i*H_(i+1)
    t4 = -w4*(G, Y) + sum_i w'_i*deck_out[i]                       (a ciphertext, two points)
    t^_i = w^_i*G + w'_i*c^_(i-1)

    c = SHA-512(T("shuffle/tw/c", ctx, seed, c^_0..c^_(n-1), t1, t2, t3, t4.c1, t4.c2,
                  t^_0..t^_(n-1))) as little-endian int mod L

Responses, with sbar = sum s_j, stil = sum s_j*u_j, r' = sum r_i*u'_i and rhat the G-part of
c^_(n-1) (R_i = rh_i + u'_i*R_(i-1), R_(-1) = 0, rhat = R_(n-1))::

    z1 = w1 - c*sbar   z2 = w2 - c*rhat   z3 = w3 - c*stil   z4 = w4 - c*r'
    z^_i = w^_i - c*rh_i                   z'_i = w'_i - c*u'_i          (all mod L)

Proof bytes (n is the deck size, known to the verifier): ``a_0..a_(n-1) (32 each) ||
c^_0..c^_(n-1) (32 each) || c || z1 || z2 || z3 || z4 || z^_0..z^_(n-1) || z'_0..z'_(n-1)``
(scalars 32-byte little-endian, < L); 128n + 160 bytes (5,280 for n = 40).

The verifier checks every point (canonical, not the identity) and scalar (< L), recomputes u
from its own copy of the statement, then the first messages::

    t1 = c*(sum a_j - sum_(i>=1) H_i) + z1*G
    t2 = c*(c^_(n-1) - (prod u_j)*H_0) + z2*G
    t3 = c*(sum u_j*a_j) + z3*G + sum z'_i*H_(i+1)
    t4 = c*(sum u_j*deck_in[j]) - z4*(G, Y) + sum z'_i*deck_out[i]
    t^_i = c*c^_i + z^_i*G + z'_i*c^_(i-1)

and accepts iff the hash of those equals c. t1 says the committed matrix's columns sum to
the all-ones vector, t2 and t^ that prod u'_i = prod u_j (so, with t1, the matrix is a
permutation matrix: Schwartz-Zippel), t3 that u' is the committed matrix applied to u, and t4
that deck_out re-masks deck_in under that permutation.

Costs (n cards): prover precompute (needs Y only) n base mults and n variable-base mults
(the commitments and t3, besides the re-masking); online 4n variable-base and 2n base
mults; verifier 8n variable-base and n base mults, about 8n additions and 2n point checks.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from p2p_chinchon.deck.context import DOMAIN, Context, transcript_hash
from p2p_chinchon.deck.elgamal import Ciphertext, encode_deck
from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.deck.group import GROUP, L, add, mul, mul_base, sub, valid
from p2p_chinchon.rng import Rng

if TYPE_CHECKING:  # shuffle.py imports this module
    from p2p_chinchon.deck.shuffle import ShufflePrep

__all__ = ["TereliusWikstrom", "generators", "tw_proof_length"]

_pack = struct.pack
_G = GROUP


def _sb(s: int) -> bytes:
    return s.to_bytes(32, "little")


@functools.lru_cache(maxsize=8)
def generators(n: int) -> tuple[bytes, ...]:
    """``(H_0, ..., H_n)``: independent generators by hash-to-group (RFC 9496 from_hash).

    ``H_i = from_hash(SHA-512(DOMAIN || "tw/generator" || 0x00 || u16be i))``; they do not
    depend on n, so ``generators(40)`` is a prefix of ``generators(80)``.
    """
    if type(n) is not int or not 1 <= n <= 65534:
        raise ValueError("generators(n) needs 1 <= n <= 65534")
    gens = tuple(_G.hash_to_point(DOMAIN + b"tw/generator\x00" + _pack(">H", i))
                 for i in range(n + 1))
    if len(set(gens)) != n + 1 or not all(map(valid, gens)):
        raise AssertionError("generators collide or are invalid")  # pragma: no cover
    return gens


def _sum(points: Iterable[bytes]) -> bytes:
    it = iter(points)
    acc = next(it)
    for p in it:
        acc = add(acc, p)
    return acc


@functools.lru_cache(maxsize=8)
def _sum_h(n: int) -> bytes:
    return _sum(generators(n)[1:])


def tw_proof_length(n: int) -> int:
    """Bytes of a TW proof for an n-card deck: 128n + 160."""
    return 128 * n + 160


def _u_seed(ctx: Context, round: int, y: bytes, deck_in: Sequence[Ciphertext],
            deck_out: Sequence[Ciphertext], a_enc: bytes) -> bytes:
    n = len(deck_in)
    return transcript_hash(b"shuffle/tw/u", ctx, _pack(">I", round), _pack(">H", n), y,
                           b"".join(generators(n)), encode_deck(deck_in), encode_deck(deck_out),
                           a_enc).digest()


def challenges(seed: bytes, n: int) -> list[int]:
    """The n first-round challenges u_j from the 64-byte seed (layout in the module doc)."""
    x = hashlib.shake_256(seed).digest(64 * n)
    return [int.from_bytes(x[64 * j:64 * j + 64], "little") % L for j in range(n)]


def _final_challenge(ctx: Context, seed: bytes, chat: bytes, t1: bytes, t2: bytes, t3: bytes,
                     t41: bytes, t42: bytes, that: bytes) -> int:
    h = transcript_hash(b"shuffle/tw/c", ctx, seed, chat, t1, t2, t3, t41, t42, that)
    return int.from_bytes(h.digest(), "little") % L


@dataclass(eq=False)
class _TWPrep:
    """The prover's precomputation: everything that needs only Y, perm and r."""

    s: list[int] = field(repr=False)        # commitment randomness, by input slot j
    a_enc: bytes = field(repr=False)        # a_0..a_(n-1)
    w: list[int] = field(repr=False)        # w1..w4
    what: list[int] = field(repr=False)     # w^_i
    wprime: list[int] = field(repr=False)   # w'_i
    rh: list[int] = field(repr=False)       # chain randomness rh_i
    t123: tuple[bytes, bytes, bytes] = field(repr=False)
    t4_mask: tuple[bytes, bytes] = field(repr=False)  # (sum w'_i r_i - w4)*(G, Y)


class TereliusWikstrom:
    """The Terelius-Wikström proof of a shuffle (soundness error about n/L per challenge).

    ``k`` is 0: the proof has no rounds. Layout and equations in the module doc.
    """

    name = "terelius-wikstrom"
    k = 0

    def precompute(self, prep: ShufflePrep, rng: Rng) -> _TWPrep:
        """Commitments and first-message parts that need only Y, the permutation and r."""
        n, y, perm = prep.n, prep.joint_key, prep.perm
        gens = generators(n)
        inv = [0] * n
        for i, p in enumerate(perm):
            inv[p] = i
        rs = _G.random_scalar
        s = [rs(rng) for _ in range(n)]
        a_enc = b"".join(add(mul_base(_sb(s[j])), gens[inv[j] + 1]) for j in range(n))
        w = [rs(rng) for _ in range(4)]
        what = [rs(rng) for _ in range(n)]
        wprime = [rs(rng) for _ in range(n)]
        rh = [rs(rng) for _ in range(n)]
        t3 = mul_base(_sb(w[2]))
        for i in range(n):
            t3 = add(t3, mul(_sb(wprime[i]), gens[i + 1]))
        m = _sb((sum(wp * r for wp, r in zip(wprime, prep.r, strict=True)) - w[3]) % L)
        return _TWPrep(s, a_enc, w, what, wprime, rh,
                       (mul_base(_sb(w[0])), mul_base(_sb(w[1])), t3),
                       (mul_base(m), mul(m, y)))

    def prove(self, ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
              deck_out: Sequence[Ciphertext], prep: ShufflePrep, round: int) -> bytes:
        """The proof bytes (128n + 160) once ``deck_in`` is known; ``prep`` from
        ``prepare_shuffle`` with this system (its permutation made ``deck_out``)."""
        st = cast(_TWPrep, prep.proof_state)
        n, perm = len(deck_in), prep.perm
        seed = _u_seed(ctx, round, joint_key, deck_in, deck_out, st.a_enc)
        u = challenges(seed, n)
        up = [u[p] for p in perm]
        prev = generators(n)[0]
        chat, that = [], []
        big_r = 0
        for i in range(n):
            that.append(add(mul_base(_sb(st.what[i])), mul(_sb(st.wprime[i]), prev)))
            prev = add(mul_base(_sb(st.rh[i])), mul(_sb(up[i]), prev))
            chat.append(prev)
            big_r = (st.rh[i] + up[i] * big_r) % L
        t41, t42 = st.t4_mask
        for i, p in enumerate(perm):  # sum w'_i*deck_out[i] minus its precomputed r-part
            wb = _sb(st.wprime[i])
            t41 = add(t41, mul(wb, deck_in[p].c1))
            t42 = add(t42, mul(wb, deck_in[p].c2))
        t1, t2, t3 = st.t123
        chat_enc, that_enc = b"".join(chat), b"".join(that)
        c = _final_challenge(ctx, seed, chat_enc, t1, t2, t3, t41, t42, that_enc)
        w1, w2, w3, w4 = st.w
        z = [w1 - c * sum(st.s), w2 - c * big_r,
             w3 - c * sum(sj * uj for sj, uj in zip(st.s, u, strict=True)),
             w4 - c * sum(ri * ui for ri, ui in zip(prep.r, up, strict=True))]
        z += [st.what[i] - c * st.rh[i] for i in range(n)]
        z += [st.wprime[i] - c * up[i] for i in range(n)]
        return st.a_enc + chat_enc + _sb(c) + b"".join(_sb(x % L) for x in z)

    def verify(self, ctx: Context, joint_key: bytes, deck_in: Sequence[Ciphertext],
               deck_out: Sequence[Ciphertext], proof: bytes, round: int) -> None:
        """Return None, or raise DeckError(ctx.seat, "shuffle"): wrong length, an invalid or
        identity point, a scalar >= L, or a challenge mismatch (not a re-masked permutation,
        or a proof made for another context, round, key or decks)."""
        seat, n = ctx.seat, len(deck_in)
        want = tw_proof_length(n)
        if type(proof) is not bytes or len(proof) != want:
            raise DeckError(seat, "shuffle", f"proof must be {want} bytes for {n} cards")
        pts = [proof[q:q + 32] for q in range(0, 64 * n, 32)]
        for q, p in enumerate(pts):
            if not valid(p):
                what = "commitment" if q < n else "chain element"
                raise DeckError(seat, "shuffle", f"{what} {q % n} is not a valid point")
        sc = [int.from_bytes(proof[q:q + 32], "little") for q in range(64 * n, want, 32)]
        if max(sc) >= L:
            raise DeckError(seat, "shuffle", "a proof scalar is not canonical (>= L)")
        a, chat = pts[:n], pts[n:]
        c, z1, z2, z3, z4 = sc[:5]
        zhat, zp = sc[5:5 + n], sc[5 + n:]
        a_enc = proof[:32 * n]
        seed = _u_seed(ctx, round, joint_key, deck_in, deck_out, a_enc)
        u = challenges(seed, n)
        gens = generators(n)
        cb = _sb(c)
        t1 = add(mul(cb, sub(_sum(a), _sum_h(n))), mul_base(_sb(z1)))
        prod_u = 1
        for uj in u:
            prod_u = prod_u * uj % L
        t2 = add(mul(cb, sub(chat[-1], mul(_sb(prod_u), gens[0]))), mul_base(_sb(z2)))
        t3 = mul_base(_sb(z3))
        nz4 = _sb(-z4 % L)
        t41, t42 = mul_base(nz4), mul(nz4, joint_key)
        for j in range(n):
            cu = _sb(c * u[j] % L)
            t3 = add(t3, mul(cu, a[j]))
            t41 = add(t41, mul(cu, deck_in[j].c1))
            t42 = add(t42, mul(cu, deck_in[j].c2))
        for i in range(n):
            zb = _sb(zp[i])
            t3 = add(t3, mul(zb, gens[i + 1]))
            t41 = add(t41, mul(zb, deck_out[i].c1))
            t42 = add(t42, mul(zb, deck_out[i].c2))
        that = []
        prev = gens[0]
        for i in range(n):
            that.append(add(add(mul(cb, chat[i]), mul_base(_sb(zhat[i]))),
                            mul(_sb(zp[i]), prev)))
            prev = chat[i]
        if _final_challenge(ctx, seed, proof[32 * n:64 * n], t1, t2, t3, t41, t42,
                            b"".join(that)) != c:
            raise DeckError(seat, "shuffle", "shuffle proof does not verify")
