"""docs/protocol.md read literally: the coin toss, the dealer moving one seat per hand, the
shuffle order, the version-1 shuffle proof, the re-shuffle input and slot numbering, and
hand_digest, checked on real transcripts (the game vectors) by code written from the document.

Nothing here imports the deck or the table: only libsodium (through PyNaCl's bindings),
hashlib, msgpack and the envelope decoder. If the document drifted from what the code does
(the first dealer, the shuffle order, the initial deck, the challenge, the seed expansion, the
openings, the discard pile's re-shuffle input, the new slots' numbers, the digest's inputs),
a real transcript would stop checking here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib
from pathlib import Path

import msgpack
import nacl.bindings as na

from p2p_chinchon.transcript import parse_transcript
from p2p_chinchon.wire import decode_envelope

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = b"\x01" + bytes(31)
DOMAIN = b"p2p-chinchon/deck/v1/"


def unblob(text: str) -> bytes:
    kind, _, payload = text.partition(":")
    return bytes.fromhex(payload) if kind == "hex" else zlib.decompress(base64.b64decode(payload))


def frames_of(name: str) -> list[bytes]:
    vec = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    return parse_transcript(unblob(vec["input"]["transcript"])).frames


def add(p: bytes, q: bytes) -> bytes:
    if p == IDENTITY:
        return q
    if q == IDENTITY:
        return p
    return na.crypto_core_ed25519_add(p, q)


def mask(s: int, y: bytes) -> tuple[bytes, bytes]:
    """(s·G, s·Y); 0 gives (O, O)."""
    s %= L
    if s == 0:
        return IDENTITY, IDENTITY
    sb = s.to_bytes(32, "little")
    return na.crypto_scalarmult_ed25519_base_noclamp(sb), na.crypto_scalarmult_ed25519_noclamp(sb, y)


def card_point(i: int) -> bytes:
    return na.crypto_core_ed25519_from_uniform(hashlib.sha512(DOMAIN + b"card\x00" + struct.pack(">H", i)).digest()[:32])


def framed(*parts: bytes) -> bytes:
    return b"".join(struct.pack(">I", len(p)) + p for p in parts)


def ctx(game: bytes, hand: int, seat: int) -> bytes:
    return bytes([len(game)]) + game + struct.pack(">IB", hand, seat)


def shadow(src: list[bytes], perm: list[int], scalars: list[int], y: bytes) -> bytes:
    out = []
    for i, p in enumerate(perm):
        g, h = mask(scalars[i], y)
        out.append(add(src[p][:32], g) + add(src[p][32:], h))
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


def verify(c_ctx: bytes, rnd: int, k: int, y: bytes, deck_in: list[bytes], deck_out: list[bytes],
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
    return hashlib.sha512(DOMAIN + b"shuffle/cut-and-choose\x00" + framed(*parts)).digest()[:32] == c


def cts(deck: bytes) -> list[bytes]:
    return [deck[i:i + 64] for i in range(0, len(deck), 64)]


def hs(label: bytes, *parts: bytes) -> bytes:
    return hashlib.sha256(framed(label, *parts)).digest()


def final_deck(slots: list[bytes], secrets: list[bytes], n_cards: int) -> list[int]:
    """Card index of every slot, opened with every seat's secret: c2 - (sum x)·c1."""
    x = sum(int.from_bytes(sk, "little") for sk in secrets) % L
    index = {card_point(i): i for i in range(n_cards)}
    out = []
    for ct in slots:
        xc1 = na.crypto_scalarmult_ed25519_noclamp(x.to_bytes(32, "little"), ct[:32])
        out.append(index[na.crypto_core_ed25519_sub(ct[32:], xc1)])
    return out


def next_in(active: list[int], seat: int, n: int) -> int:
    """The first seat after ``seat`` (seat+1, seat+2, ... mod n) that is in ``active``."""
    return next((seat + i) % n for i in range(1, n + 1) if (seat + i) % n in active)


def check_game(name: str) -> dict[str, int]:
    """Check a game vector (one 40-card pack) as the document describes it; returns counts of
    what was checked."""
    envs = [decode_envelope(f) for f in frames_of(name)]
    game, k, limit = envs[0].game, envs[0].body["proof_rounds"], envs[0].body["rules"]["limit"]
    n_seats, n_cards = len(envs[1].body["players"]), 40
    active = list(range(n_seats))
    nonces: dict[int, bytes] = {}
    publics: dict[int, bytes] = {}
    secrets: dict[int, bytes] = {}
    slots: list[bytes] = []
    pile: list[int] = []
    current: list[bytes] = []
    expect: list[tuple[str, int]] = []  # (kind, seat) the document says come next
    dealer, hand = -1, -1
    counts: dict[str, int] = {}

    def count(key: str) -> None:
        counts[key] = counts.get(key, 0) + 1

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
        elif e.kind == "key_commit" and b["hand"] != hand:
            if hand >= 0:  # the deal moves one seat, to the next seat still in
                dealer = next_in(active, dealer, n_seats)
            hand = b["hand"]
            count("hands")
            i = active.index(dealer)
            expect = [("shuffle", s) for s in active[i + 1:] + active[:i + 1]]
        elif e.kind == "key_share":
            publics[e.seat] = b["share"][:32]
            if len(publics) == len(active):
                y = publics[active[0]]
                for s in active[1:]:
                    y = na.crypto_core_ed25519_add(y, publics[s])
                current = [IDENTITY + card_point(i) for i in range(n_cards)]  # the initial deck
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
            assert verify(ctx(game, b["hand"], e.seat), b["round"], k, y, current, out, b["proof"]), (name, e.seq)
            count(f"round {b['round']} shuffles")
            current = out
        elif e.kind == "deal_shares" and not slots:
            slots, current = current, []
            pile = [7 * len(active)]  # the upcard
        elif e.kind in ("draw", "discard"):
            if current:  # a re-shuffle just ended: its output continues the slot numbers
                slots, current = slots + current, []
                pile = pile[-1:]
            if e.kind == "discard":
                pile.append(b["slot"])
            elif b["source"] == "discard":
                pile.pop()
            else:  # shares for a stock draw: every other seat of A, in seat order
                expect = [("draw_share", s) for s in active if s != e.seat]
        elif e.kind == "close":
            i = active.index(e.seat)  # the others show, going round from the closer
            expect = [("show", s) for s in active[i + 1:] + active[:i]]
        elif e.kind == "secret":
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


def test_three_seats_check_as_documented() -> None:
    """Three seats: the shuffle order, the draw shares' order and the showdown's order are
    not trivial, and the deal moves round the table."""
    counts = check_game("game-ok-3-seats")
    assert counts["hands"] >= 3 and counts["digests"] == counts["hands"]
    assert counts["draw_share order"] >= 4 and counts["show order"] >= 2 * counts["hands"] - 2


def test_reshuffle_input_and_new_slots_as_documented() -> None:
    counts = check_game("game-ok-restock")
    # both seats' round-1 shuffles verify on the pile minus its top, bottom first; the digest
    # covers the new slots numbered after the last one
    assert counts["round 1 shuffles"] == 2 and counts["digests"] == 1 and counts["slots"] > 40
