"""Check the value vectors of protocol/vectors/ with this implementation (python -m ... or run)."""
from __future__ import annotations

import base64
import glob
import json
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crypto as cr  # noqa: E402
import wire  # noqa: E402

VEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")


def b(v):
    if isinstance(v, str) and v.startswith("hex:"):
        return bytes.fromhex(v[4:])
    if isinstance(v, str) and v.startswith("zlib64:"):
        return zlib.decompress(base64.b64decode(v[7:]))
    return v


def deck(x):
    return cr.dec_deck(b(x)) if not b(x)[:32] == bytes(32) else [(b(x)[i:i+32], b(x)[i+32:i+64]) for i in range(0, len(b(x)), 64)]


def check(name, d):
    i, v = d["input"], d["verdict"]
    layer = d["layer"]
    if layer == "showdown":
        import engine as en
        eng = en.Engine(i["rules"], i["players"])
        kept = [tuple(c) for c in i["closer"]]
        try:
            score, chinchon = eng.close_result(kept)
        except en.RuleError:
            return v == {"result": "illegal"}
        melds, clean = eng.close_melds(kept)
        pens = eng.showdown(melds, clean, [[tuple(c) for c in h] for h in i["hands"]])
        got = {"result": "ok", "score": score, "chinchon": chinchon, "clean": clean, "game_won": chinchon,
               "closer_melds": sorted(sorted(list(c) for c in m) for m in melds), "penalties": [score, *pens]}
        ok = all(got[k] == v[k] for k in got)
        if not ok:
            print("   got", got, "want", v)
        return ok
    if layer == "card_point":
        return cr.card_point(i["index"]).hex() == v["point"]
    if layer == "rules_hash":
        return wire.rules_hash(i["rules"], i["proof_rounds"]).hex() == v["hash"]
    if layer == "seating_hash":
        return wire.seating_hash([{k: b(x) for k, x in p.items()} for p in i["players"]]).hex() == v["hash"]
    if layer == "toss":
        g = b(i["game"])
        ns = [b(x) for x in i["nonces"]]
        return ([wire.toss_commit(g, s, n).hex() for s, n in enumerate(ns)] == v["commits"]
                and wire.first_dealer(g, ns) == v["first_dealer"])
    if layer == "hand_digest":
        return wire.hand_digest(b(i["game"]), i["hand"], b(i["head"]), i["totals"], i["final_deck"]).hex() == v["digest"]
    if layer == "key_share":
        try:
            Y = cr.check_key_share(cr.ctx_of(b(i["game"]), i["hand"], i["seat"]), b(i["share"]), b(i["nonce"]), b(i["commit"]))
            got = {"result": "ok", "public": Y.hex()}
        except cr.DeckError as ex:
            got = {"result": "DeckError", "step": ex.step}
        return all(got.get(k) == x for k, x in v.items())
    if layer == "dleq":
        try:
            dd = cr.check_dec_share(cr.ctx_of(b(i["game"]), i["hand"], i["seat"]), i["slot"], b(i["c1"]), b(i["c2"]), b(i["public"]), b(i["share"]))
            got = {"result": "ok", "d": dd.hex()}
        except cr.DeckError as ex:
            got = {"result": "DeckError", "step": ex.step}
        return all(got.get(k) == x for k, x in v.items())
    if layer == "shuffle":
        ctx = cr.ctx_of(b(i["game"]), i["hand"], i["seat"])
        D, D2 = deck(i["deck_in"]), deck(i["deck_out"])
        try:
            if i["system"] == "terelius-wikstrom":
                if "generators" in i:
                    assert [cr.tw_gen(j) for j in range(i["n"] + 1)] == [b(x) for x in i["generators"]]
                cr.tw_verify(ctx, i["round"], b(i["joint_key"]), D, D2, b(i["proof"]))
            else:
                cr.cc_verify(ctx, i["round"], i["k"], b(i["joint_key"]), D, D2, b(i["proof"]))
            got = {"result": "ok"}
        except cr.DeckError as ex:
            got = {"result": "DeckError", "step": ex.step, "seat": i["seat"]}
        return all(got.get(k) == x for k, x in v.items())
    if layer == "frame":
        try:
            e = wire.decode(b(i["frame"]))
            if "public_key" in i and not wire.verify_sig(e, b(i["public_key"])):
                got = {"result": "SignatureError", "code": "bad_signature"}
            else:
                import hashlib
                got = {"result": "ok", "kind": e.kind, "seq": e.seq, "seat": e.seat,
                       "hash": hashlib.sha256(b(i["frame"])).hexdigest()}
        except wire.WireError as ex:
            got = {"result": "WireError", "code": ex.code}
        ok = all(got.get(k) == x for k, x in v.items())
        if not ok:
            print("   got", got, "want", v)
        return ok
    if layer == "chain":
        import chain
        got = chain.verdict([b(x) for x in i["transcripts"]])
        ok = all(got.get(k) == x for k, x in v.items())
        if not ok:
            print("   got", got, "want", v)
        return ok
    if layer == "lobby":
        return lobby_verdict(i) == v or all(lobby_verdict(i).get(k) == x for k, x in v.items())
    if layer == "mesh":
        got = mesh_verdict(i)
        return all(got.get(k) == x for k, x in v.items())
    if layer == "relay":
        got = relay_verdict(i)
        ok = all(got.get(k) == x for k, x in v.items())
        if not ok:
            print("   got", got, "want", v)
        return ok
    if layer == "game":
        import table
        ok, summary = table.audit(table.split_frames(b(i["transcript"])))
        want = v["result"]
        if want == "ok":
            return ok and summary.startswith("ok") and f"winner seat {v['winner']}" in summary \
                and f"{v['hands']} hands" in summary
        if want == "incomplete":
            return summary.startswith("incomplete") and (v.get("rule") != "left" or f"seat {v['seat']} left" in summary)
        if want == "accused" and v.get("seat") is None:   # blames nobody: no seat named, or a claim nothing can check
            return summary.startswith("stopped") and ("accuses seat 255 (unverifiable)" in summary
                                                      or f"(unverifiable): {v['rule']}" in summary)
        if want == "accused":
            return summary.startswith("stopped") and any(
                f"accused: seat {v['seat']}: {v['rule']}: {how}" in summary for how in ("confirmed", "consistent")) \
                or f"accuses seat {v['seat']} (unverifiable): {v['rule']}" in summary
        if want == "cheat" and v.get("rule") == "false_accusation":
            return summary.startswith("stopped") and "false_accusation" in summary
        if want == "cheat":
            return summary.startswith("cheat") and f"envelope {v['index']}: seat {v['seat']}: {v['rule']}" in summary
        return not ok   # corrupt
    return None


def relay_verdict(i):
    """docs "Code words and the transit relay": X25519 of the Ed25519 identity keys (the
    birational map u = (1 + y) / (1 - y), the private scalar from SHA-512 of the seed), HKDF
    to the pair's token, and the relay's handshake lines"""
    import hashlib
    import struct

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    def line(token, side):
        return f"please relay {token} for side {side}\n"

    if "seed" not in i:
        token = b(i["key"]).hex()
        host_side = hashlib.sha256(b"p2p-chinchon/lobby-host").hexdigest()[:16]
        return {"result": "ok", "token": token, "host_line": line(token, host_side),
                "joiner_line": line(token, f"{1:016x}")}
    p = 2**255 - 19
    L = 2**252 + 27742317777372353535851937790883648493
    d = -121665 * pow(121666, -1, p) % p
    K = b(i["peer_key"])
    y = (int.from_bytes(K, "little") & ((1 << 255) - 1)) % p    # y >= p is reduced, not refused
    x2 = (y * y - 1) * pow(d * y * y + 1, -1, p) % p
    x = pow(x2, (p + 3) // 8, p)
    if (x * x - x2) % p:
        x = x * pow(2, (p - 1) // 4, p) % p
    if (x * x - x2) % p or (x == 0 and K[31] >> 7):
        return {"result": "refused"}                            # not a point of the curve
    if x & 1 != K[31] >> 7:
        x = p - x

    def add(P, Q):
        t = d * P[0] * Q[0] * P[1] * Q[1] % p
        return ((P[0] * Q[1] + Q[0] * P[1]) * pow(1 + t, -1, p) % p,
                (P[1] * Q[1] + P[0] * Q[0]) * pow(1 - t, -1, p) % p)
    acc, P, n = (0, 1), (x, y), L
    while n:                                                    # L·A
        if n & 1:
            acc = add(acc, P)
        P, n = add(P, P), n >> 1
    two = add((x, y), (x, y))
    four = add(two, two)
    eight = add(four, four)                                     # 8·A
    if eight == (0, 1) or acc[0] != 0:
        return {"result": "refused"}        # small order, or L·A not the identity nor (0, -1)
    u = (1 + y) * pow(1 - y, p - 2, p) % p
    mine = X25519PrivateKey.from_private_bytes(hashlib.sha512(b(i["seed"])).digest()[:32])
    try:
        shared = mine.exchange(X25519PublicKey.from_public_bytes(u.to_bytes(32, "little")))
    except ValueError:  # a small-order point: the all-zero secret
        return {"result": "refused"}
    lo, hi = sorted((i["seat"], i["peer"]))
    info = b"p2p-chinchon/mesh-relay/v1\x00" + struct.pack(">HH", lo, hi)
    token = HKDF(algorithm=hashes.SHA256(), length=32, salt=b(i["game"]), info=info).derive(shared).hex()
    return {"result": "ok", "x25519": shared.hex(), "token": token,
            "line": line(token, f"{i['seat']:016x}"), "peer_line": line(token, f"{i['peer']:016x}")}


def lobby_verdict(i):
    """the host's side: check the join request against its challenge and certificate"""
    import hashlib

    import msgpack
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    import links
    cert = b(i["host_certificate"])
    if hashlib.sha256(cert).hexdigest() != i["cert_hash"] or links.cert_key(cert) != b(i["host_key"]):
        return {"result": "certificate"}
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    ours = x509.load_der_x509_certificate(links.certificate(Ed25519PrivateKey.generate(), b(i["host_key"])))
    if ours.tbs_certificate_bytes != x509.load_der_x509_certificate(cert).tbs_certificate_bytes:
        return {"result": "our certificate differs"}
    msgs = [(m["from"], b(m["payload"])) for m in i["messages"]]
    challenge, req = msgs[0][1], msgpack.unpackb(msgs[1][1], raw=False)
    if set(req) != {"v", "name", "key", "addr", "addrs", "sig"} or req["v"] != 3:
        return {"result": "BadJoinRequest"}
    signed = (b"p2p-chinchon/join/v3\x00" + wire.packb([req["name"], req["key"], req["addr"], req["addrs"]]) + challenge
              + hashlib.sha256(cert).digest())
    try:
        Ed25519PublicKey.from_public_bytes(req["key"]).verify(req["sig"], signed)
    except InvalidSignature:
        return {"result": "BadJoinRequest"}
    host = [msgpack.unpackb(p, raw=False) for f, p in msgs[2:] if f == "host"]
    offer = next(m["offer"] for m in host if "offer" in m)
    seat = next(m["seat"] for m in host if "seat" in m)
    seating = wire.decode(next(m["seating"] for m in host if "seating" in m))
    assert [p for f, p in msgs if f == "joiner"][1] == b"sit"
    return {"result": "ok", "name": req["name"], "key": req["key"].hex(), "addr": req["addr"], "seat": seat,
            "offer_hash": hashlib.sha256(offer).hexdigest(),
            "seated_addr": seating.body["players"][seat]["addr"],
            "seated_addrs": seating.body["players"][seat]["addrs"]}


def mesh_verdict(i):
    """both sides of the handshake, from the bytes each wrote inside TLS"""
    import hashlib
    import struct

    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    import links

    def frames(x):
        out, pos = [], 0
        while pos < len(x):
            n = struct.unpack(">I", x[pos:pos + 4])[0]
            out.append(x[pos + 4:pos + 4 + n])
            pos += 4 + n
        return out
    game, dl, ac = b(i["game"]), i["dialler"], i["acceptor"]
    keys = [b(k) for k in i["keys"]]
    cert = b(i["acceptor_certificate"])
    C = hashlib.sha256(cert).digest()
    d, a = frames(b(i["dialler_wrote"])), frames(b(i["acceptor_wrote"]))
    try:
        if links.cert_key(cert) != keys[ac]:
            raise links.LinkError("certificate")
        _, _, n_d = links._parse_hello(d[0], game)
        x, y, n_a = links._parse_hello(a[0], game)
        if (x, y) != (ac, dl):
            raise links.LinkError("hello")
        Ed25519PublicKey.from_public_bytes(keys[ac]).verify(a[1], links.auth(game, ac, dl, n_a, n_d, C))
        Ed25519PublicKey.from_public_bytes(keys[dl]).verify(d[1], links.auth(game, dl, ac, n_d, n_a, C))
        if a[2] != links.OK:
            raise links.LinkError("ok")
    except (links.LinkError, InvalidSignature, IndexError):
        return {"result": "HandshakeError"}
    return {"result": "ok", "dialler": dl, "acceptor": ac}


def main():
    bad = 0
    for f in sorted(glob.glob(os.path.join(VEC, "*.json"))):
        d = json.load(open(f))
        r = check(d["name"], d)
        if r is None:
            continue
        print(("ok  " if r else "FAIL"), d["name"])
        bad += not r
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)
