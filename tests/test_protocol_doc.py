"""docs/protocol.md read literally: card points, joint keys, the coin toss, the dealer moving
one seat per hand, the shuffle order, the shuffle proofs (Terelius-Wikström by default,
cut-and-choose as a rules option), key shares and decryption shares, the re-shuffle input and
slot numbering, the final deck and hand_digest, checked on real transcripts (the game vectors)
and on the value vectors by code written from the document (protocol version 2); and the links'
identity certificates, join requests and mesh handshakes on the lobby and mesh vectors.

Nothing here imports the deck or the table: only libsodium's ristretto255 functions (through
``rbcl``), hashlib, msgpack, the envelope decoder and, for the links, the ``cryptography``
X.509 parser and Ed25519 verifier. The Terelius-Wikström verifier is the one
``tests/harness/tw_spec.py`` holds, written from the document. If the document drifted from what the code
does (the card points, the joint key, the first dealer, the shuffle order, the initial deck,
either proof, the discard pile's re-shuffle input, the new slots' numbers, the digest's inputs),
a real transcript would stop checking here.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Any

import msgpack
import pytest
import rbcl

from harness.tw_spec import PREFIX, G, L, O, T, padd, psub, smul, spec_verify
from p2p_chinchon.transcript import parse_transcript
from p2p_chinchon.wire import decode_envelope
from vector_blobs import unblob

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
DOMAIN = PREFIX  # "p2p-chinchon/deck/v2/"


def frames_of(name: str) -> list[bytes]:
    return parse_transcript(unblob(load(name)["input"]["transcript"])).frames


def load(name: str) -> dict:
    return json.loads((VECTORS / f"{name}.json").read_text("utf-8"))


def mask(s: int, y: bytes) -> tuple[bytes, bytes]:
    """(s·G, s·Y); 0 gives (O, O)."""
    return smul(s, G), smul(s, y)


def card_point(i: int) -> bytes:
    """M_i = from_hash(SHA-512("p2p-chinchon/deck/v2/card" || 00 || u16be i))."""
    return rbcl.crypto_core_ristretto255_from_hash(hashlib.sha512(DOMAIN + b"card\x00" + struct.pack(">H", i)).digest())


def H(label: bytes, c: bytes, *parts: bytes) -> int:
    return int.from_bytes(hashlib.sha512(T(label, c, *parts)).digest(), "little") % L


def framed(*parts: bytes) -> bytes:
    return b"".join(struct.pack(">I", len(p)) + p for p in parts)


def ctx(game: bytes, hand: int, seat: int) -> bytes:
    return bytes([len(game)]) + game + struct.pack(">IB", hand, seat)


def shadow(src: list[bytes], perm: list[int], scalars: list[int], y: bytes) -> bytes:
    out = []
    for i, p in enumerate(perm):
        g, h = mask(scalars[i], y)
        out.append(padd(src[p][:32], g) + padd(src[p][32:], h))
    return b"".join(out)


def expand(seed: bytes, n: int) -> tuple[list[int], list[int]]:
    """The document's seed expansion, reading SHAKE-256 as an unbounded stream."""
    stream = hashlib.shake_256(DOMAIN + b"shadow\x00" + struct.pack(">H", n) + seed)
    x = stream.digest(64 * n + 4 * n * 8)  # plenty for the rejections of a small deck
    scalars = [int.from_bytes(x[64 * i:64 * i + 64], "little") % L for i in range(n)]
    a, pos = list(range(n)), 64 * n
    for m in range(n - 1, 0, -1):
        while True:
            v = struct.unpack(">H", x[pos:pos + 2])[0]
            pos += 2
            if v < 65536 - 65536 % (m + 1):
                break
        j = v % (m + 1)
        a[m], a[j] = a[j], a[m]
    return a, scalars


def verify_cut_and_choose(c_ctx: bytes, rnd: int, k: int, y: bytes, deck_in: list[bytes], deck_out: list[bytes],
           proof: bytes) -> bool:
    n = len(deck_in)
    c = proof[:32]
    bits = [(c[j // 8] >> (j % 8)) & 1 for j in range(k)]
    parts = [c_ctx, struct.pack(">I", rnd), struct.pack(">H", k), struct.pack(">H", n), y,
             b"".join(deck_in), b"".join(deck_out)]
    pos = 32
    for bit in bits:
        if bit == 0:
            perm, scalars = expand(proof[pos:pos + 32], n)
            pos += 32
            parts.append(shadow(deck_in, perm, scalars, y))
        else:
            rho = list(proof[pos:pos + n])
            pos += n
            t = [int.from_bytes(proof[pos + 32 * i:pos + 32 * i + 32], "little") for i in range(n)]
            pos += 32 * n
            assert sorted(rho) == list(range(n)) and all(x < L for x in t)
            parts.append(shadow(deck_out, rho, t, y))
    assert pos == len(proof)
    return hashlib.sha512(T(b"shuffle/cut-and-choose", *parts)).digest()[:32] == c


def verify_shuffle(system: str, game: bytes, hand: int, seat: int, rnd: int, k: int, y: bytes,
                   deck_in: list[bytes], deck_out: list[bytes], proof: bytes) -> bool:
    """The rules' ``shuffle_proof`` picks the proof system; TW through test_tw_spec's verifier."""
    if system == "cut-and-choose":
        return verify_cut_and_choose(ctx(game, hand, seat), rnd, k, y, deck_in, deck_out, proof)
    assert system == "terelius-wikstrom", system
    hexed = {key: "hex:" + v.hex() for key, v in (("game", game), ("joint_key", y), ("proof", proof),
                                                   ("deck_in", b"".join(deck_in)), ("deck_out", b"".join(deck_out)))}
    return spec_verify({**hexed, "n": len(deck_in), "round": rnd, "hand": hand, "seat": seat})


def cts(deck: bytes) -> list[bytes]:
    return [deck[i:i + 64] for i in range(0, len(deck), 64)]


def hs(label: bytes, *parts: bytes) -> bytes:
    return hashlib.sha256(framed(label, *parts)).digest()


def final_deck(slots: list[bytes], secrets: list[bytes], n_cards: int) -> list[int]:
    """Card index of every slot, opened with every seat's secret: c2 - (sum x)·c1."""
    x = sum(int.from_bytes(sk, "little") for sk in secrets) % L
    index = {card_point(i): i for i in range(n_cards)}
    return [index[psub(ct[32:], smul(x, ct[:32]))] for ct in slots]


def key_share_ok(c: bytes, commit: bytes, share: bytes, nonce: bytes) -> bool:
    """"Keys": Y_i valid, e and z canonical, the commitment opens, the Schnorr proof verifies."""
    y, e, z = share[:32], int.from_bytes(share[32:64], "little"), int.from_bytes(share[64:], "little")
    if len(share) != 96 or y == O or not rbcl.crypto_core_ristretto255_is_valid_point(y) or e >= L or z >= L:
        return False
    if hashlib.sha512(T(b"key-commit", c, y, nonce)).digest()[:32] != commit:
        return False
    return e == H(b"key-share", c, y, psub(smul(z, G), smul(e, y)))


def dec_share_ok(c: bytes, slot: int, c1: bytes, c2: bytes, public: bytes, share: bytes) -> bool:
    """"Decryption shares": d valid, e and z canonical, the Chaum-Pedersen proof verifies."""
    d, e, z = share[:32], int.from_bytes(share[32:64], "little"), int.from_bytes(share[64:], "little")
    if len(share) != 96 or d == O or not rbcl.crypto_core_ristretto255_is_valid_point(d) or e >= L or z >= L:
        return False
    a, b = psub(smul(z, G), smul(e, public)), psub(smul(z, c1), smul(e, d))
    return e == H(b"dec-share", c, struct.pack(">I", slot), c1, c2, public, d, a, b)


def next_in(active: list[int], seat: int, n: int) -> int:
    """The first seat after ``seat`` (seat+1, seat+2, ... mod n) that is in ``active``."""
    return next((seat + i) % n for i in range(1, n + 1) if (seat + i) % n in active)


def check_game(name: str) -> dict[str, int]:
    """Check a game vector (one 40-card pack) as the document describes it; returns counts of
    what was checked."""
    envs = [decode_envelope(f) for f in frames_of(name)]
    game, k, rules = envs[0].game, envs[0].body["proof_rounds"], envs[0].body["rules"]
    limit, system = rules["limit"], rules.get("shuffle_proof", "terelius-wikstrom")
    n_seats, n_cards = len(envs[1].body["players"]), 40
    active = list(range(n_seats))
    nonces: dict[int, bytes] = {}
    publics: dict[int, bytes] = {}
    commits: dict[tuple[int, int], bytes] = {}
    secrets: dict[int, bytes] = {}
    slots: list[bytes] = []
    pile: list[int] = []
    current: list[bytes] = []
    expect: list[tuple[str, int]] = []  # (kind, seat) the document says come next
    dealer, hand = -1, -1
    stock = drawn = -1  # the next stock slot; the slot of the last stock draw
    counts: dict[str, int] = {}

    def count(key: str) -> None:
        counts[key] = counts.get(key, 0) + 1

    def share_ok(slot: int, share: bytes) -> None:
        """e's decryption share of ``slot`` at its current ciphertext, by e's key ("Decryption shares")."""
        c1, c2 = slots[slot][:32], slots[slot][32:]
        if not dec_share_ok(ctx(game, e.body["hand"], e.seat), slot, c1, c2, publics[e.seat], share):
            raise AssertionError(name, e.seq)
        count("decryption shares")

    for e in envs:
        b = e.body
        if expect and expect[0][0] == e.kind:
            assert (e.kind, e.seat) == expect.pop(0), (name, e.seq)
            count(f"{e.kind} order")
        if e.kind == "toss":
            nonces[e.seat] = b["nonce"]
            if len(nonces) == n_seats:
                seed = hs(b"p2p-chinchon/first-dealer/v1", game, *[nonces[s] for s in range(n_seats)])
                dealer = int.from_bytes(seed, "big") % n_seats
        if e.kind == "key_commit":
            commits[b["hand"], e.seat] = b["commit"]
        if e.kind == "key_commit" and b["hand"] != hand:
            if hand >= 0:  # the deal moves one seat, to the next seat still in
                dealer = next_in(active, dealer, n_seats)
            hand = b["hand"]
            count("hands")
            i = active.index(dealer)
            expect = [("shuffle", s) for s in active[i + 1:] + active[:i + 1]]
        elif e.kind == "key_share":
            c = ctx(game, b["hand"], e.seat)
            if not key_share_ok(c, commits[b["hand"], e.seat], b["share"], b["nonce"]):
                raise AssertionError(name, e.seq)
            count("key shares")
            publics[e.seat] = b["share"][:32]
            if len(publics) == len(active):
                y = O
                for s in active:
                    y = padd(y, publics[s])  # the joint key
                assert y != O
                current = [O + card_point(i) for i in range(n_cards)]  # the initial deck
                slots, pile, secrets = [], [], {}
        elif e.kind == "shuffle":
            if b["round"] > 0 and not current:
                # the discard pile minus its top, bottom first, at its slots' current ciphertexts
                current = [slots[s] for s in pile[:-1]]
                i = active.index(dealer)
                order = active[i + 1:] + active[:i + 1]  # the same shuffle order as round 0
                assert e.seat == order[0], (name, e.seq)
                expect = [("shuffle", s) for s in order[1:]]
            out = cts(b["deck"])
            if not verify_shuffle(system, game, b["hand"], e.seat, b["round"], k, y, current, out, b["proof"]):
                raise AssertionError(name, e.seq)
            count(f"round {b['round']} shuffles")
            count(f"{system} proofs")
            current = out
        elif e.kind == "deal_shares":
            m = len(active)
            if not slots:
                slots, current = current, []
                pile, stock = [7 * m], 7 * m + 1  # the upcard; the stock after it
            i = active.index(dealer)
            order = active[i + 1:] + active[:i + 1]  # playing order: slot k goes to order[k mod m]
            dealt = [k for k in range(7 * m) if order[k % m] != e.seat] + [7 * m]
            assert len(b["shares"]) == len(dealt), (name, e.seq)
            for slot, share in zip(dealt, b["shares"], strict=True):
                share_ok(slot, share)
        elif e.kind in ("draw", "discard"):
            if current:  # a re-shuffle just ended: its output continues the slot numbers
                slots, current, stock = slots + current, [], len(slots)
                pile = pile[-1:]
            if e.kind == "discard":
                share_ok(b["slot"], b["share"])
                pile.append(b["slot"])
            elif b["source"] == "discard":
                pile.pop()
            else:  # shares for a stock draw: every other seat of A, in seat order
                expect = [("draw_share", s) for s in active if s != e.seat]
                drawn, stock = stock, stock + 1  # the lowest stock slot
        elif e.kind == "draw_share":
            assert b["slot"] == drawn, (name, e.seq)
            share_ok(b["slot"], b["share"])
        elif e.kind in ("close", "show"):
            for r in b["shares"]:
                share_ok(r["slot"], r["share"])
            count(f"{e.kind} shares")
            if e.kind == "close":
                i = active.index(e.seat)  # the others show, going round from the closer
                expect = [("show", s) for s in active[i + 1:] + active[:i]]
        elif e.kind == "secret":
            x = int.from_bytes(b["secret"], "little")
            if not (0 < x < L and smul(x, G) == publics[e.seat]):
                raise AssertionError(name, e.seq)
            secrets[e.seat] = b["secret"]
        elif e.kind == "hand_digest" and publics:
            final = final_deck(slots, [secrets[s] for s in active], n_cards)
            assert sorted(final[:n_cards]) == list(range(n_cards))
            digest = hs(b"p2p-chinchon/hand-digest/v1", game, struct.pack(">H", b["hand"]), e.prev,
                        msgpack.packb(list(b["totals"])), msgpack.packb(final))
            assert digest == b["digest"], (name, e.seq)
            count("digests")
            counts["slots"] = max(counts.get("slots", 0), len(final))
            publics = {}
            active = [s for s in active if b["totals"][s] <= limit]  # back in below if re-entered
        elif e.kind == "reenter" and b["accept"]:
            active = sorted(active + [e.seat])
    assert not expect, (name, expect)
    return counts


def test_a_game_checks_as_documented() -> None:
    counts = check_game("game-ok-2-seats")
    # two hands: the dealer moved, four round-0 shuffles in shuffle order, two digests
    assert counts["hands"] == 2 and counts["round 0 shuffles"] == 4 and counts["digests"] == 2
    assert counts["slots"] == 40 and counts["shuffle order"] == 4
    assert counts["terelius-wikstrom proofs"] == 4 and counts["key shares"] == 4
    # every deal share (8 per seat per hand), then draw, discard, close and show shares
    assert counts["decryption shares"] > 2 * 2 * 8 and counts["show shares"] == 2


@pytest.mark.parametrize("name", ["game-wrong-shuffle-proof", "game-shuffle-duplicates-card",
                                  "game-wrong-decryption-share", "game-wrong-secret"])
def test_the_documented_checks_catch_the_cheat_where_audit_does(name: str) -> None:
    """A bad shuffle proof (TW), a bad decryption share or a secret that does not match its key
    share stops the document's checks at the envelope index the audit verdict names."""
    with pytest.raises(AssertionError) as info:
        check_game(name)
    assert info.value.args == (name, load(name)["verdict"]["index"])


def test_three_seats_check_as_documented() -> None:
    """Three seats: the shuffle order, the draw shares' order and the showdown's order are
    not trivial, and the deal moves round the table."""
    counts = check_game("game-ok-3-seats")
    assert counts["hands"] >= 3 and counts["digests"] == counts["hands"]
    assert counts["draw_share order"] >= 4 and counts["show order"] >= 2 * counts["hands"] - 2


def test_a_cut_and_choose_game_checks_as_documented() -> None:
    """The rules option ``shuffle_proof=cut-and-choose``: every shuffle, the first one on the
    initial deck (c1 = O) included, verifies by the document's cut-and-choose section."""
    counts = check_game("game-ok-cut-and-choose")
    assert counts["cut-and-choose proofs"] == counts["round 0 shuffles"] == 2 * counts["hands"]
    assert counts["digests"] == counts["hands"] >= 2


def test_reshuffle_input_and_new_slots_as_documented() -> None:
    counts = check_game("game-ok-restock")
    # both seats' round-1 shuffles verify on the pile minus its top, bottom first; the digest
    # covers the new slots numbered after the last one
    assert counts["round 1 shuffles"] == 2 and counts["digests"] == 1 and counts["slots"] > 40


@pytest.mark.parametrize("i", [0, 1, 39, 79])
def test_card_points_as_documented(i: int) -> None:
    assert card_point(i).hex() == load(f"card-point-{i}")["verdict"]["point"]


@pytest.mark.parametrize("name", ["key-share-ok", "key-share-other-seat"])
def test_key_share_vectors_as_documented(name: str) -> None:
    vec = load(name)
    inp: dict[str, Any] = {k: unblob(v) if isinstance(v, str) else v for k, v in vec["input"].items()}
    ok = key_share_ok(ctx(inp["game"], inp["hand"], inp["seat"]), inp["commit"], inp["share"], inp["nonce"])
    assert ok is (vec["verdict"]["result"] == "ok")
    if ok:
        assert inp["share"][:32].hex() == vec["verdict"]["public"]


@pytest.mark.parametrize("name", ["dleq-ok", "dleq-other-slot", "dleq-bad-challenge"])
def test_decryption_share_vectors_as_documented(name: str) -> None:
    vec = load(name)
    inp: dict[str, Any] = {k: unblob(v) if isinstance(v, str) else v for k, v in vec["input"].items()}
    ok = dec_share_ok(ctx(inp["game"], inp["hand"], inp["seat"]), inp["slot"], inp["c1"], inp["c2"],
                      inp["public"], inp["share"])
    assert ok is (vec["verdict"]["result"] == "ok")
    if ok:  # the slot opens, with the other seats' d, to the card the trace names
        d = inp["share"][:32]
        assert d.hex() == vec["verdict"]["d"]
        opened = inp["c2"]
        for di in [d, *map(unblob, vec["trace"]["other_shares"])]:
            opened = psub(opened, di)
        assert opened == card_point(vec["trace"]["card_index"])


@pytest.mark.parametrize("name", ["shuffle-cut-and-choose-ok", "shuffle-cut-and-choose-tampered"])
def test_cut_and_choose_vectors_as_documented(name: str) -> None:
    vec = load(name)
    inp = vec["input"]
    assert inp["system"] == "cut-and-choose"
    d_in, d_out = cts(unblob(inp["deck_in"])), cts(unblob(inp["deck_out"]))
    proof = unblob(inp["proof"])
    try:
        ok = verify_shuffle("cut-and-choose", unblob(inp["game"]), inp["hand"], inp["seat"], inp["round"],
                            inp["k"], unblob(inp["joint_key"]), d_in, d_out, proof)
    except AssertionError:  # a malformed opening (not a permutation, a scalar >= L, wrong length)
        ok = False
    assert ok is (vec["verdict"]["result"] == "ok")


# --- links (protocol.md "Links"): certificates, the join request, the mesh handshake ------------


def documented_certificate_checks(der: bytes, key: bytes) -> None:
    """Every field protocol.md "TLS 1.3: certificates" gives, read from the DER with the
    `cryptography` X.509 parser (not our certificate builder)."""
    import base64
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    cert = x509.load_der_x509_certificate(der)
    fp = base64.b32encode(hashlib.sha256(key).digest()).decode()[:16]
    name = "p2p-chinchon " + "-".join(fp[i:i + 4] for i in range(0, 16, 4))
    assert cert.version == x509.Version.v3
    for who in (cert.subject, cert.issuer):
        assert [(a.oid, a.value) for a in who] == [(x509.NameOID.COMMON_NAME, name)]
    assert cert.serial_number == (int.from_bytes(hashlib.sha256(key).digest()[:16], "big") >> 1 or 1)
    utc = datetime.UTC
    assert cert.not_valid_before_utc == datetime.datetime(2000, 1, 1, tzinfo=utc)
    assert cert.not_valid_after_utc == datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=utc)
    assert cert.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw) == key
    assert cert.signature_algorithm_oid.dotted_string == "1.3.101.112"
    [ext] = cert.extensions
    assert ext.critical and ext.value == x509.BasicConstraints(ca=False, path_length=None)
    Ed25519PublicKey.from_public_bytes(key).verify(cert.signature, cert.tbs_certificate_bytes)


def ed25519_ok(key: bytes, sig: bytes, msg: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(key).verify(sig, msg)
    except InvalidSignature:
        return False
    return True


def documented_frames(data: bytes) -> list[bytes]:
    """u32be length || payload, repeated ("Transport")."""
    out = []
    while data:
        (n,) = struct.unpack(">I", data[:4])
        out.append(data[4:4 + n])
        data = data[4 + n:]
    return out


LOBBY_VECTORS = ["lobby-join", "lobby-bad-join-signature", "lobby-replayed-join", "lobby-other-certificate"]


@pytest.mark.parametrize("name", LOBBY_VECTORS)
def test_join_requests_as_documented(name: str) -> None:
    """The host's certificate as documented; the join request's signature over
    "p2p-chinchon/join/v3" || 00 || msgpack([name, key, addr, addrs]) || CHALLENGE || C."""
    vec = load(name)
    inp = vec["input"]
    der = unblob(inp["host_certificate"])
    documented_certificate_checks(der, unblob(inp["host_key"]))
    c = hashlib.sha256(der).digest()
    assert c.hex() == inp["cert_hash"]
    (who_c, challenge), (who_j, join) = ((m["from"], unblob(m["payload"])) for m in inp["messages"][:2])
    assert (who_c, who_j, len(challenge)) == ("host", "joiner", 32)
    req = msgpack.unpackb(join)
    assert set(req) == {"v", "name", "key", "addr", "addrs", "sig"} and req["v"] == 3
    fields = [req["name"], req["key"], req["addr"], req["addrs"]]
    signed = b"p2p-chinchon/join/v3\x00" + msgpack.packb(fields) + challenge + c
    assert ed25519_ok(req["key"], req["sig"], signed) == (vec["verdict"]["result"] == "ok")
    if "join_signed_bytes" in vec.get("trace", {}):
        assert unblob(vec["trace"]["join_signed_bytes"]) == signed


@pytest.mark.parametrize("name", ["mesh-handshake", "mesh-reflected-signature", "mesh-other-certificate"])
def test_mesh_handshakes_as_documented(name: str) -> None:
    """HELLO(a, b, n) and AUTH(a, b, x, y) = "p2p-chinchon/mesh-auth/v2" || 00 || game || u16 a
    || u16 b || x || y || C, C the SHA-256 of the acceptor's certificate."""
    vec = load(name)
    inp = vec["input"]
    game, keys = unblob(inp["game"]), [unblob(k) for k in inp["keys"]]
    der = unblob(inp["acceptor_certificate"])
    documented_certificate_checks(der, keys[inp["acceptor"]])
    c = hashlib.sha256(der).digest()
    hello_d, sig_d = documented_frames(unblob(inp["dialler_wrote"]))
    hello_a, sig_a, ok = documented_frames(unblob(inp["acceptor_wrote"]))

    def hello(data: bytes) -> tuple[int, int, bytes]:
        assert len(data) == 61 and data[:9] == b"CHCNMESH\x02" and data[9:25] == game
        a, b = struct.unpack(">HH", data[25:29])
        return a, b, data[29:]

    i, j, n_i = hello(hello_d)
    j2, i2, n_j = hello(hello_a)
    assert (i, j, j2, i2) == (inp["dialler"], inp["acceptor"], inp["acceptor"], inp["dialler"])
    assert ok == b"CHCNMESHok"

    def auth(a: int, b: int, x: bytes, y: bytes) -> bytes:
        msg = b"p2p-chinchon/mesh-auth/v2\x00" + game + struct.pack(">HH", a, b) + x + y + c
        assert len(msg) == 142
        return msg

    assert ed25519_ok(keys[j], sig_a, auth(j, i, n_j, n_i))
    valid = ed25519_ok(keys[i], sig_d, auth(i, j, n_i, n_j))
    assert valid == (vec["verdict"]["result"] == "ok")
