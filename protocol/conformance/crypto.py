"""The deck's cryptography, written from docs/protocol.md ("Notation", "The deck").

ristretto255 through libsodium (rbcl), SHA-256/512 and SHAKE-256 from hashlib.  Nothing here
imports p2p_chinchon.
"""
from __future__ import annotations

import hashlib
import os
import secrets as _secrets
import struct
import sys
import tempfile

import rbcl

# rbcl writes its bundled libsodium to a new temporary file at each import and leaves it;
# once loaded, the file is not needed (POSIX)
_lib = getattr(sys.modules.get("rbcl._sodium"), "lib_path", None)
if (isinstance(_lib, str) and os.name == "posix" and os.path.basename(_lib).startswith("tmp")
        and os.path.dirname(os.path.abspath(_lib)) == os.path.abspath(tempfile.gettempdir())):
    try:
        os.unlink(_lib)
    except OSError:
        pass

L = 2**252 + 27742317777372353535851937790883648493
O = bytes(32)
G = bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76")
PREFIX = b"p2p-chinchon/deck/v2/"


class DeckError(Exception):
    def __init__(self, step: str, reason: str = ""):
        super().__init__(f"{step}: {reason}")
        self.step = step


def u8(x: int) -> bytes:
    return struct.pack(">B", x)


def u16(x: int) -> bytes:
    return struct.pack(">H", x)


def u32(x: int) -> bytes:
    return struct.pack(">I", x)


def framed(*parts: bytes) -> bytes:
    return b"".join(u32(len(p)) + p for p in parts)


def Hs(label: bytes, *parts: bytes) -> bytes:
    """The table's framed hash (rules_hash, seating_hash, toss, hand_digest)."""
    return hashlib.sha256(framed(label, *parts)).digest()


def ctx_of(game: bytes, hand: int, seat: int) -> bytes:
    return u8(len(game)) + game + u32(hand) + u8(seat)


def T(label: str, ctx: bytes, *parts: bytes) -> bytes:
    return PREFIX + label.encode() + b"\x00" + framed(ctx, *parts)


def Hscalar(label: str, ctx: bytes, *parts: bytes) -> int:
    return int.from_bytes(hashlib.sha512(T(label, ctx, *parts)).digest(), "little") % L


# -- scalars and points ------------------------------------------------------------------

def sc(x: int) -> bytes:
    return (x % L).to_bytes(32, "little")


def sc_in(b: bytes, step: str) -> int:
    if len(b) != 32:
        raise DeckError(step, "scalar length")
    x = int.from_bytes(b, "little")
    if x >= L:
        raise DeckError(step, "non-canonical scalar")
    return x


def rand_scalar(nonzero: bool = True) -> int:
    while True:
        x = int.from_bytes(_secrets.token_bytes(64), "little") % L
        if x or not nonzero:
            return x


def valid_point(p: bytes) -> bool:
    return len(p) == 32 and p != O and rbcl.crypto_core_ristretto255_is_valid_point(p)


def pt_in(p: bytes, step: str) -> bytes:
    if not valid_point(p):
        raise DeckError(step, "invalid point")
    return p


def add(p: bytes, q: bytes) -> bytes:
    if p == O:
        return q
    if q == O:
        return p
    return rbcl.crypto_core_ristretto255_add(p, q)


def sub(p: bytes, q: bytes) -> bytes:
    if q == O:
        return p
    if p == q:
        return O
    return rbcl.crypto_core_ristretto255_sub(p, q)


def mul(s: int, p: bytes) -> bytes:
    s %= L
    if s == 0 or p == O:
        return O
    return rbcl.crypto_scalarmult_ristretto255(sc(s), p)


def base(s: int) -> bytes:
    s %= L
    if s == 0:
        return O
    return rbcl.crypto_scalarmult_ristretto255_base(sc(s))


def neg(p: bytes) -> bytes:
    return sub(O, p) if p != O else O


def from_hash(h64: bytes) -> bytes:
    return rbcl.crypto_core_ristretto255_from_hash(h64)


_CARD_POINTS: dict[int, bytes] = {}


def card_point(i: int) -> bytes:
    if i not in _CARD_POINTS:
        _CARD_POINTS[i] = from_hash(hashlib.sha512(PREFIX + b"card\x00" + u16(i)).digest())
    return _CARD_POINTS[i]


def card_of_point(p: bytes, C: int) -> int | None:
    for i in range(C):
        if card_point(i) == p:
            return i
    return None


# -- keys ---------------------------------------------------------------------------------

def key_commit(ctx: bytes, Y: bytes, nonce: bytes) -> bytes:
    return hashlib.sha512(T("key-commit", ctx, Y, nonce)).digest()[:32]


def key_share(ctx: bytes, x: int) -> bytes:
    Y = base(x)
    w = rand_scalar()
    A = base(w)
    e = Hscalar("key-share", ctx, Y, A)
    z = (w + e * x) % L
    return Y + sc(e) + sc(z)


def check_key_share(ctx: bytes, share: bytes, nonce: bytes, commit: bytes) -> bytes:
    if len(share) != 96:
        raise DeckError("key_share", "length")
    Y = pt_in(share[:32], "key_share")
    e = sc_in(share[32:64], "key_share")
    z = sc_in(share[64:], "key_share")
    if key_commit(ctx, Y, nonce) != commit:
        raise DeckError("key_share", "commitment does not open")
    A = sub(base(z), mul(e, Y))
    if Hscalar("key-share", ctx, Y, A) != e:
        raise DeckError("key_share", "Schnorr proof")
    return Y


# -- decryption shares (DLEQ) ------------------------------------------------------------------

def dec_share(ctx: bytes, slot: int, c1: bytes, c2: bytes, x: int, Y: bytes) -> bytes:
    d = mul(x, c1)
    w = rand_scalar()
    A, B = base(w), mul(w, c1)
    e = Hscalar("dec-share", ctx, u32(slot), c1, c2, Y, d, A, B)
    z = (w + e * x) % L
    return d + sc(e) + sc(z)


def check_dec_share(ctx: bytes, slot: int, c1: bytes, c2: bytes, Y: bytes, share: bytes) -> bytes:
    if len(share) != 96:
        raise DeckError("share", "length")
    d = pt_in(share[:32], "share")
    e = sc_in(share[32:64], "share")
    z = sc_in(share[64:], "share")
    A = sub(base(z), mul(e, Y))
    B = sub(mul(z, c1), mul(e, d))
    if Hscalar("dec-share", ctx, u32(slot), c1, c2, Y, d, A, B) != e:
        raise DeckError("share", "DLEQ proof")
    return d


# -- decks ------------------------------------------------------------------------------------

def enc_deck(deck: list[tuple[bytes, bytes]]) -> bytes:
    return b"".join(c1 + c2 for c1, c2 in deck)


def dec_deck(b: bytes, step: str = "shuffle") -> list[tuple[bytes, bytes]]:
    if len(b) % 64 or not b:
        raise DeckError(step, "deck length")
    out = []
    for i in range(0, len(b), 64):
        out.append((pt_in(b[i:i + 32], step), pt_in(b[i + 32:i + 64], step)))
    return out


def initial_deck(C: int) -> list[tuple[bytes, bytes]]:
    return [(O, card_point(i)) for i in range(C)]


# -- Terelius-Wikstrom ------------------------------------------------------------------------------

_GENS: dict[int, bytes] = {}


def tw_gen(i: int) -> bytes:
    if i not in _GENS:
        _GENS[i] = from_hash(hashlib.sha512(PREFIX + b"tw/generator\x00" + u16(i)).digest())
    return _GENS[i]


def _tw_u(ctx, rnd, n, Y, Hs_, D, D2, a):
    seed = hashlib.sha512(T("shuffle/tw/u", ctx, u32(rnd), u16(n), Y, b"".join(Hs_),
                            enc_deck(D), enc_deck(D2), b"".join(a))).digest()
    stream = hashlib.shake_256(seed).digest(64 * n)
    u = [int.from_bytes(stream[64 * j:64 * j + 64], "little") % L for j in range(n)]
    return seed, u


def _tw_c(ctx, seed, chat, t1, t2, t3, t4, that):
    return int.from_bytes(hashlib.sha512(T("shuffle/tw/c", ctx, seed, b"".join(chat), t1, t2, t3,
                                           t4[0], t4[1], b"".join(that))).digest(), "little") % L


def tw_verify(ctx: bytes, rnd: int, Y: bytes, D, D2, proof: bytes) -> None:
    n = len(D)
    if len(D2) != n or len(proof) != 128 * n + 160:
        raise DeckError("shuffle", "proof length")
    pts = [proof[32 * i:32 * i + 32] for i in range(2 * n)]
    for p in pts:
        pt_in(p, "shuffle")
    a, chat = pts[:n], pts[n:]
    off = 64 * n
    scal = [sc_in(proof[off + 32 * i:off + 32 * i + 32], "shuffle") for i in range(2 * n + 5)]
    c, z1, z2, z3, z4 = scal[:5]
    zhat, zp = scal[5:5 + n], scal[5 + n:]
    H = [tw_gen(i) for i in range(n + 1)]
    seed, u = _tw_u(ctx, rnd, n, Y, H, D, D2, a)
    sa = O
    for x in a:
        sa = add(sa, x)
    sh = O
    for x in H[1:]:
        sh = add(sh, x)
    t1 = add(mul(c, sub(sa, sh)), base(z1))
    pu = 1
    for x in u:
        pu = pu * x % L
    t2 = add(mul(c, sub(chat[n - 1], mul(pu, H[0]))), base(z2))
    s3 = O
    for j in range(n):
        s3 = add(s3, mul(u[j], a[j]))
    t3 = add(mul(c, s3), base(z3))
    for i in range(n):
        t3 = add(t3, mul(zp[i], H[i + 1]))
    uc1, uc2 = O, O
    for j in range(n):
        uc1 = add(uc1, mul(u[j], D[j][0]))
        uc2 = add(uc2, mul(u[j], D[j][1]))
    t41 = sub(mul(c, uc1), base(z4))
    t42 = sub(mul(c, uc2), mul(z4, Y))
    for i in range(n):
        t41 = add(t41, mul(zp[i], D2[i][0]))
        t42 = add(t42, mul(zp[i], D2[i][1]))
    that = []
    for i in range(n):
        prevc = chat[i - 1] if i else H[0]
        that.append(add(add(mul(c, chat[i]), base(zhat[i])), mul(zp[i], prevc)))
    if _tw_c(ctx, seed, chat, t1, t2, t3, (t41, t42), that) != c:
        raise DeckError("shuffle", "Terelius-Wikstrom proof does not verify")


def shuffle_prove(ctx: bytes, rnd: int, Y: bytes, D):
    """Permute and re-mask D; return (D', proof).  D'[i] = D[pi(i)] + r_i (G, Y)."""
    n = len(D)
    pi = list(range(n))
    for m in range(n - 1, 0, -1):           # Fisher-Yates with the OS generator
        k = _secrets.randbelow(m + 1)
        pi[m], pi[k] = pi[k], pi[m]
    r = [rand_scalar() for _ in range(n)]
    D2 = [(add(D[pi[i]][0], base(r[i])), add(D[pi[i]][1], mul(r[i], Y))) for i in range(n)]
    inv = [0] * n
    for i in range(n):
        inv[pi[i]] = i
    H = [tw_gen(i) for i in range(n + 1)]
    s = [rand_scalar() for _ in range(n)]
    a = [add(base(s[j]), H[inv[j] + 1]) for j in range(n)]
    seed, u = _tw_u(ctx, rnd, n, Y, H, D, D2, a)
    up = [u[pi[i]] for i in range(n)]
    rho = [rand_scalar() for _ in range(n)]
    chat, R, prevc, prevR = [], 0, H[0], 0
    for i in range(n):
        ci = add(base(rho[i]), mul(up[i], prevc))
        chat.append(ci)
        R = (rho[i] + up[i] * prevR) % L
        prevc, prevR = ci, R
    w1, w2, w3, w4 = (rand_scalar() for _ in range(4))
    wh = [rand_scalar() for _ in range(n)]
    wp = [rand_scalar() for _ in range(n)]
    t1 = base(w1)
    t2 = base(w2)
    t3 = base(w3)
    for i in range(n):
        t3 = add(t3, mul(wp[i], H[i + 1]))
    t41, t42 = neg(base(w4)), neg(mul(w4, Y))
    for i in range(n):
        t41 = add(t41, mul(wp[i], D2[i][0]))
        t42 = add(t42, mul(wp[i], D2[i][1]))
    that = []
    for i in range(n):
        prevc = chat[i - 1] if i else H[0]
        that.append(add(base(wh[i]), mul(wp[i], prevc)))
    c = _tw_c(ctx, seed, chat, t1, t2, t3, (t41, t42), that)
    z1 = (w1 - c * sum(s)) % L
    z2 = (w2 - c * R) % L
    z3 = (w3 - c * sum(s[j] * u[j] for j in range(n))) % L
    z4 = (w4 - c * sum(r[i] * up[i] for i in range(n))) % L
    zh = [(wh[i] - c * rho[i]) % L for i in range(n)]
    zpp = [(wp[i] - c * up[i]) % L for i in range(n)]
    proof = b"".join(a) + b"".join(chat) + b"".join(sc(x) for x in [c, z1, z2, z3, z4] + zh + zpp)
    return D2, proof


# -- cut-and-choose (verifier only) ----------------------------------------------------------

def _shadow(n: int, seed: bytes):
    need = 64 * n + 2 * n + 64
    while True:
        X = hashlib.shake_256(PREFIX + b"shadow\x00" + u16(n) + seed).digest(need)
        s = [int.from_bytes(X[64 * i:64 * i + 64], "little") % L for i in range(n)]
        a = list(range(n))
        pos = 64 * n
        ok = True
        for m in range(n - 1, 0, -1):
            while True:
                if pos + 2 > len(X):
                    ok = False
                    break
                v = int.from_bytes(X[pos:pos + 2], "big")
                pos += 2
                if v < 65536 - (65536 % (m + 1)):
                    break
            if not ok:
                break
            a[m], a[v % (m + 1)] = a[v % (m + 1)], a[m]
        if ok:
            return a, s
        need *= 2


def cc_verify(ctx: bytes, rnd: int, k: int, Y: bytes, D, D2, proof: bytes) -> None:
    n = len(D)
    if len(proof) < 32:
        raise DeckError("shuffle", "proof length")
    c = proof[:32]
    bits = [(c[j // 8] >> (j % 8)) & 1 for j in range(k)]
    if len(proof) != 32 + sum(33 * n if b else 32 for b in bits):
        raise DeckError("shuffle", "proof length")
    pos = 32
    shadows = []
    for j in range(k):
        if not bits[j]:
            sigma, s = _shadow(n, proof[pos:pos + 32])
            pos += 32
            S = [(add(D[sigma[i]][0], base(s[i])), add(D[sigma[i]][1], mul(s[i], Y))) for i in range(n)]
        else:
            rho = list(proof[pos:pos + n])
            pos += n
            if sorted(rho) != list(range(n)):
                raise DeckError("shuffle", "not a permutation")
            t = [sc_in(proof[pos + 32 * i:pos + 32 * i + 32], "shuffle") for i in range(n)]
            pos += 32 * n
            S = [(add(D2[rho[i]][0], base(t[i])), add(D2[rho[i]][1], mul(t[i], Y))) for i in range(n)]
        shadows.append(enc_deck(S))
    c2 = hashlib.sha512(T("shuffle/cut-and-choose", ctx, u32(rnd), u16(k), u16(n), Y, enc_deck(D),
                          enc_deck(D2), *shadows)).digest()[:32]
    if c2 != c:
        raise DeckError("shuffle", "cut-and-choose challenge")


def cc_prove(ctx: bytes, rnd: int, k: int, Y: bytes, D):
    """cut-and-choose: permute and re-mask D, prove it with k shadow shuffles."""
    n = len(D)
    pi = list(range(n))
    for m in range(n - 1, 0, -1):
        j = _secrets.randbelow(m + 1)
        pi[m], pi[j] = pi[j], pi[m]
    r = [rand_scalar() for _ in range(n)]
    D2 = [(add(D[pi[i]][0], base(r[i])), add(D[pi[i]][1], mul(r[i], Y))) for i in range(n)]
    inv = [0] * n
    for i in range(n):
        inv[pi[i]] = i
    seeds, shadows, params = [], [], []
    for _ in range(k):
        seed = _secrets.token_bytes(32)
        sigma, s = _shadow(n, seed)
        S = [(add(D[sigma[i]][0], base(s[i])), add(D[sigma[i]][1], mul(s[i], Y))) for i in range(n)]
        seeds.append(seed)
        params.append((sigma, s))
        shadows.append(enc_deck(S))
    c = hashlib.sha512(T("shuffle/cut-and-choose", ctx, u32(rnd), u16(k), u16(n), Y, enc_deck(D),
                         enc_deck(D2), *shadows)).digest()[:32]
    out = [c]
    for j in range(k):
        if not (c[j // 8] >> (j % 8)) & 1:
            out.append(seeds[j])
        else:
            sigma, s = params[j]
            rho = [inv[sigma[i]] for i in range(n)]
            out.append(bytes(rho) + b"".join(sc(s[i] - r[rho[i]]) for i in range(n)))
    return D2, b"".join(out)
