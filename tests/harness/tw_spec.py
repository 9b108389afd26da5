"""The Terelius-Wikström proof verifier written from docs/protocol.md alone (hashlib and rbcl)."""

from __future__ import annotations

import hashlib
import struct

import rbcl

from vector_blobs import unblob

L = 2**252 + 27742317777372353535851937790883648493
G = bytes.fromhex("e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76")
O = bytes(32)
PREFIX = b"p2p-chinchon/deck/v2/"


def padd(p: bytes, q: bytes) -> bytes:
    return p if q == O else q if p == O else rbcl.crypto_core_ristretto255_add(p, q)


def psub(p: bytes, q: bytes) -> bytes:
    return padd(p, smul(L - 1, q))


def smul(s: int, p: bytes) -> bytes:
    s %= L
    if s == 0 or p == O:
        return O
    return rbcl.crypto_scalarmult_ristretto255(s.to_bytes(32, "little"), p)


def T(label: bytes, ctx: bytes, *parts: bytes) -> bytes:
    out = PREFIX + label + b"\x00" + struct.pack(">I", len(ctx)) + ctx
    return out + b"".join(struct.pack(">I", len(x)) + x for x in parts)


def H(data: bytes) -> int:
    return int.from_bytes(hashlib.sha512(data).digest(), "little") % L


def spec_verify(inp) -> bool:
    n, rnd = inp["n"], inp["round"]
    game = unblob(inp["game"])
    ctx = bytes([len(game)]) + game + struct.pack(">IB", inp["hand"], inp["seat"])
    y, proof = unblob(inp["joint_key"]), unblob(inp["proof"])
    d_in, d_out = unblob(inp["deck_in"]), unblob(inp["deck_out"])
    e = [(d_in[64 * j:64 * j + 32], d_in[64 * j + 32:64 * j + 64]) for j in range(n)]
    e2 = [(d_out[64 * j:64 * j + 32], d_out[64 * j + 32:64 * j + 64]) for j in range(n)]
    if len(proof) != 128 * n + 160:
        return False
    pts = [proof[32 * q:32 * q + 32] for q in range(2 * n)]
    if any(p == O or not rbcl.crypto_core_ristretto255_is_valid_point(p) for p in pts):
        return False
    sc = [int.from_bytes(proof[q:q + 32], "little") for q in range(64 * n, len(proof), 32)]
    if any(x >= L for x in sc):
        return False
    a, ch = pts[:n], pts[n:]
    c, z1, z2, z3, z4, zh, zp = sc[0], sc[1], sc[2], sc[3], sc[4], sc[5:5 + n], sc[5 + n:]
    gens = [rbcl.crypto_core_ristretto255_from_hash(hashlib.sha512(
        PREFIX + b"tw/generator\x00" + struct.pack(">H", i)).digest()) for i in range(n + 1)]
    seed = hashlib.sha512(T(b"shuffle/tw/u", ctx, struct.pack(">I", rnd), struct.pack(">H", n),
                            y, b"".join(gens), d_in, d_out, b"".join(a))).digest()
    x = hashlib.shake_256(seed).digest(64 * n)
    u = [int.from_bytes(x[64 * j:64 * j + 64], "little") % L for j in range(n)]
    sum_a, sum_h = O, O
    for j in range(n):
        sum_a, sum_h = padd(sum_a, a[j]), padd(sum_h, gens[j + 1])
    prod = 1
    for v in u:
        prod = prod * v % L
    t1 = padd(smul(c, psub(sum_a, sum_h)), smul(z1, G))
    t2 = padd(smul(c, psub(ch[-1], smul(prod, gens[0]))), smul(z2, G))
    t3, t41, t42 = smul(z3, G), smul(L - z4, G), smul(L - z4, y)
    for j in range(n):
        t3 = padd(padd(t3, smul(c * u[j], a[j])), smul(zp[j], gens[j + 1]))
        t41 = padd(padd(t41, smul(c * u[j], e[j][0])), smul(zp[j], e2[j][0]))
        t42 = padd(padd(t42, smul(c * u[j], e[j][1])), smul(zp[j], e2[j][1]))
    that = [padd(padd(smul(c, ch[i]), smul(zh[i], G)), smul(zp[i], ch[i - 1] if i else gens[0]))
            for i in range(n)]
    c2 = H(T(b"shuffle/tw/c", ctx, seed, b"".join(ch), t1, t2, t3, t41, t42, b"".join(that)))
    return c2 == c
