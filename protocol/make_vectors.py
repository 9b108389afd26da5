#!/usr/bin/env python3
"""Write protocol/schema.json and the envelope- and chain-level test vectors in protocol/vectors/.

Run from the repository root: ``python protocol/make_vectors.py`` (``--check`` only compares and
exits 1 if a file would change). Output is deterministic: keys come from a fixed seed and
Ed25519 signatures are deterministic (RFC 8032), so regenerating gives identical files.

Each vector is a JSON file ``{name, layer, description, input, verdict}``; binary values are
strings ``"hex:<hex>"`` or ``"zlib64:<base64 of zlib-compressed bytes>"`` (for big frames).
The expected verdict is written here *by construction* (this script knows which byte it broke),
never by running the checker. Layers and their inputs/verdicts (see protocol/README.md):

* ``frame``: ``input = {frame, public_key?}``; verdict ``{"result": "ok", kind, seq, seat,
  hash}`` or ``{"result": "WireError" | "SignatureError", "code": ...}``.
* ``chain``: ``input = {transcripts: [file bytes, ...]}`` (one or more nodes' transcript files);
  verdict ``{"result": "ok", envelopes, head, torn_tail}``, ``{"result": "Equivocation", seat,
  seq}`` or ``{"result": <ChainError subclass>, transcript, index, seat[, code]}``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2p_chinchon import PROTOCOL_VERSION, deck  # noqa: E402
from p2p_chinchon.engine import make_rules  # noqa: E402
from p2p_chinchon.identity import Identity  # noqa: E402
from p2p_chinchon.rng import SeededRng  # noqa: E402
from p2p_chinchon.table import rules_hash, seating_hash, toss_commitment  # noqa: E402
from p2p_chinchon.wire import SIG_DOMAIN, ZERO_HASH, Envelope, make_envelope, schema_json  # noqa: E402

VECTOR_DIR = ROOT / "protocol" / "vectors"
SCHEMA_PATH = ROOT / "protocol" / "schema.json"
PREFIXES = ("frame-", "chain-", "shuffle-")  # files this script owns; others are written elsewhere


def blob(data: bytes) -> str:
    """A vector blob (protocol/README.md); tests/vector_blobs.py reads it back."""
    if len(data) > 4096:
        return "zlib64:" + base64.b64encode(zlib.compress(data, 9)).decode("ascii")
    return "hex:" + data.hex()


# --- building blocks --------------------------------------------------------------------------

rng = SeededRng("p2p-chinchon protocol vectors v1")
SEATS = [Identity.generate(rng) for _ in range(3)]
OUTSIDER = Identity.generate(rng)
GAME = rng.token_bytes(16)
OTHER_GAME = rng.token_bytes(16)


def lobby_script(seats: list[Identity], r: SeededRng, game: bytes = GAME) -> list[tuple[int, str, dict]]:
    """The lobby and the first key commitments of a real table: full classic rules, the real
    rules and seating hashes, toss nonces that open their commitments (so ``audit`` replays
    the chain as a valid, incomplete game)."""
    classic = make_rules("classic")
    rules = classic.to_wire()
    names = ["Ana", "Beto", "Carla", "Dani", "Eva", "Fede", "Gala", "Hugo"]
    players = [{"name": n, "key": s.public_bytes, "addr": f"192.168.1.{10 + i}:7300",
                "addrs": [f"203.0.113.{10 + i}:7300"] if i else []}
               for i, (n, s) in enumerate(zip(names, seats, strict=False))]
    script: list[tuple[int, str, dict]] = [
        (0, "offer", {"name": "Mesa de Ana", "rules": rules, "max_seats": max(4, len(seats)), "app": "p2p-chinchon",
                      "nonce": r.token_bytes(32), "proof_rounds": rules["shuffle_proof_rounds"],
                      "host_key": seats[0].public_bytes}),
        (0, "seating", {"players": players}),
    ]
    nonces = [r.token_bytes(32) for _ in seats]
    for seat in range(len(seats)):
        script.append((seat, "agree", {"rules_hash": rules_hash(rules, classic.shuffle_proof_rounds),
                                       "seating_hash": seating_hash(players),
                                       "toss_commit": toss_commitment(game, seat, nonces[seat])}))
    for seat in range(len(seats)):
        script.append((seat, "toss", {"nonce": nonces[seat]}))
    for seat in range(len(seats)):
        commit = deck.KeyPair.generate(r).commitment(deck.Context(game, 0, seat))
        script.append((seat, "key_commit", {"hand": 0, "commit": commit}))
    return script


def chain(script, *, game=GAME, signers=None, start_prev=ZERO_HASH, start_seq=0, keys=SEATS) -> list[Envelope]:
    """Sign a script in order; ``signers`` maps index -> Identity to sign with instead."""
    envs: list[Envelope] = []
    prev = start_prev
    for i, (seat, kind, body) in enumerate(script):
        signer = (signers or {}).get(i, keys[seat] if seat < len(keys) else OUTSIDER)
        env = make_envelope(signer.private_key, game=game, seq=start_seq + i, seat=seat, prev=prev,
                            kind=kind, body=body)
        envs.append(env)
        prev = env.hash()
    return envs


def relink(envs: list[Envelope], start: int, *, seq_shift: int = 0, game: bytes | None = None) -> list[Envelope]:
    """Re-sign envs[start:] by their own seats so each one's prev is the previous one's hash."""
    out = list(envs[:start])
    for e in envs[start:]:
        prev = out[-1].hash() if out else ZERO_HASH
        out.append(make_envelope(SEATS[e.seat].private_key, game=game or e.game, seq=e.seq + seq_shift,
                                 seat=e.seat, prev=prev, kind=e.kind, body=e.body))
    return out


def resign(e: Envelope, identity: Identity, **changes) -> Envelope:
    fields: dict[str, Any] = {"game": e.game, "seq": e.seq, "seat": e.seat, "prev": e.prev, "kind": e.kind, "body": e.body}
    fields.update(changes)
    return make_envelope(identity.private_key, **fields)


def file_of(envs, tail: bytes = b"") -> bytes:
    return b"".join(e.encode() if isinstance(e, Envelope) else e for e in envs) + tail


def raw_signed(fields: list, key: Identity) -> bytes:
    """Frame for arbitrary (possibly invalid) field values, signed like a real envelope."""
    sig = key.private_key.sign(SIG_DOMAIN + msgpack.packb(fields, use_bin_type=True))
    return msgpack.packb([*fields, sig], use_bin_type=True)


BASE = chain(lobby_script(SEATS, SeededRng("lobby")))


# --- frame vectors ----------------------------------------------------------------------------


def signature_edge_vectors(env: Envelope) -> list[dict]:
    """Ed25519 edge cases, each an envelope with a made signature and key: the verdict is the
    one the protocol requires (RFC 8032 verification as OpenSSL does it: S must be below L, R is
    compared as bytes, the equation is cofactorless; small-order or non-canonical public keys
    and a small-order R are *accepted*). libsodium refuses the accepted ones, so a verifier
    built on it must fall back (docs/protocol.md "Envelope"). Points come from libsodium
    (``crypto_scalarmult_ed25519_base_noclamp``)."""
    import ctypes

    from p2p_chinchon.deck import sodium

    lib = sodium.library()
    L, P = 2 ** 252 + 27742317777372353535851937790883648493, 2 ** 255 - 19

    def base(k: int) -> bytes:
        buf = ctypes.create_string_buffer(32)
        assert lib.crypto_scalarmult_ed25519_base_noclamp(buf, k.to_bytes(32, "little")) == 0
        return buf.raw

    def le(x: int) -> bytes:
        return x.to_bytes(32, "little")

    msg = env.signed_bytes()
    identity = le(1)  # the neutral element (0, 1): order 1
    r, a = 1234567, 7654321  # any scalar below L
    any_message = base(r) + le(r)  # R = rB, S = r: valid under any key A with [h]A = O
    A = base(a)
    h = int.from_bytes(hashlib.sha512(identity + A + msg).digest(), "little") % L
    seat1 = SEATS[1]
    real = env.sig
    s_real = int.from_bytes(real[32:], "little")
    cases = [
        ("small-order-key", "public key = the identity (small order); R = rB, S = r: accepted", any_message, identity, True),
        ("non-canonical-key", "public key = the identity encoded as p + 1 (non-canonical y): accepted", any_message, le(P + 1), True),
        ("negative-zero-key", "public key = the identity with the sign bit of x set (x = 0): accepted", any_message,
         le(1 | 1 << 255), True),
        ("small-order-r", "R = the identity (small order), S = h*a for the key aB: accepted", identity + le(h * a % L), A, True),
        ("s-not-canonical", "seat 1's real signature with S + L in place of S: refused", real[:32] + le(s_real + L),
         seat1.public_bytes, False),
        ("r-not-canonical", "R = the identity encoded as p + 1, S = 0, key = the identity: refused",
         le(P + 1) + bytes(32), identity, False),
    ]
    out = []
    for name, desc, sig, key, valid in cases:
        e = Envelope(env.v, env.game, env.seq, env.seat, env.prev, env.kind, env.body, sig)
        verdict = ({"result": "ok", "kind": e.kind, "seq": e.seq, "seat": e.seat, "hash": hashlib.sha256(e.encode()).hexdigest()}
                   if valid else {"result": "SignatureError", "code": "bad_signature"})
        out.append({"name": f"frame-sig-{name}", "layer": "frame", "description": f"envelope 3 re-signed: {desc}",
                    "input": {"frame": blob(e.encode()), "public_key": blob(key)}, "verdict": verdict})
    return out


def frame_vectors() -> list[dict]:
    out: list[dict] = []
    host = SEATS[0]

    def ok(name: str, env: Envelope, desc: str, key: Identity | None = host) -> None:
        inp = {"frame": blob(env.encode())}
        if key is not None:
            inp["public_key"] = blob(key.public_bytes)
        out.append({"name": f"frame-{name}", "layer": "frame", "description": desc, "input": inp,
                    "verdict": {"result": "ok", "kind": env.kind, "seq": env.seq, "seat": env.seat,
                                "hash": hashlib.sha256(env.encode()).hexdigest()}})

    def bad(name: str, frame: bytes, code: str, desc: str, result: str = "WireError",
            key: Identity | None = None) -> None:
        inp = {"frame": blob(frame)}
        if key is not None:
            inp["public_key"] = blob(key.public_bytes)
        out.append({"name": f"frame-{name}", "layer": "frame", "description": desc, "input": inp,
                    "verdict": {"result": result, "code": code}})

    r = SeededRng("frames")
    offer = BASE[0]
    ok("offer", offer, "the lobby offer of the base chain, signed by seat 0")
    ok("seating", BASE[1], "seating with three players")
    s1 = SEATS[1]
    shuffle = make_envelope(s1.private_key, game=GAME, seq=40, seat=1, prev=r.token_bytes(32), kind="shuffle",
                            body={"hand": 0, "round": 1, "deck": r.token_bytes(40 * 64), "proof": r.token_bytes(9000)})
    ok("shuffle", shuffle, "a 40-card shuffle with a 9000-byte proof", s1)
    close = make_envelope(s1.private_key, game=GAME, seq=77, seat=1, prev=r.token_bytes(32), kind="close",
                          body={"hand": 2, "slot": 17, "shares": [{"slot": s, "share": r.token_bytes(96)} for s in (3, 9, 21)]})
    ok("close", close, "close with three revealed cards", s1)
    fault = make_envelope(host.private_key, game=GAME, seq=12, seat=0, prev=r.token_bytes(32), kind="fault",
                          body={"accused": 1, "rule": "equivocation", "reason": "two different envelopes for seq 8",
                                "evidence": [BASE[8].encode(), BASE[9].encode()]})
    ok("fault", fault, "a fault carrying two frames as evidence")
    negative = make_envelope(s1.private_key, game=GAME, seq=90, seat=1, prev=r.token_bytes(32), kind="hand_digest",
                             body={"hand": 3, "digest": r.token_bytes(32), "totals": [-10, 57, 0]})
    ok("hand-digest-negative", negative, "negative ints (a minus-ten close) in canonical form", s1)

    bad("bad-signature", BASE[3].encode(), "bad_signature", "seat 1's agree checked against seat 0's key",
        "SignatureError", host)
    flipped = bytearray(offer.encode())
    flipped[-1] ^= 1
    bad("signature-bit-flip", bytes(flipped), "bad_signature", "last bit of the offer's signature flipped",
        "SignatureError", host)

    out.extend(signature_edge_vectors(BASE[3]))

    # a shuffle whose proof alone is over the frame cap
    fields = [PROTOCOL_VERSION, GAME, 41, 1, bytes(32), "shuffle",
              {"deck": bytes(64), "hand": 0, "proof": bytes((1 << 20) + 1), "round": 0}]
    bad("frame-too-large", raw_signed(fields, s1), "frame_too_large", "a frame of just over 1 MiB")
    bad("trailing-bytes", offer.encode() + b"\x00", "trailing_bytes", "a zero byte after the envelope")
    bad("truncated", offer.encode()[:-5], "malformed", "the last 5 bytes are missing")
    bad("reserved-byte", b"\xc1", "malformed", "0xc1 is never valid msgpack")
    bad("empty", b"", "malformed", "no bytes at all")

    def fields_of(e: Envelope) -> list:
        return [e.v, e.game, e.seq, e.seat, e.prev, e.kind, dict(e.body)]

    f = fields_of(offer)
    f[2] = 0.0
    bad("float-seq", raw_signed(f, host), "float", "seq encoded as a float64")
    f = fields_of(offer)
    f[6] = {**offer.body, "rules": {**offer.body["rules"], "limit": 100.0}}
    bad("float-in-body", raw_signed(f, host), "float", "a rule value encoded as a float")
    f = fields_of(offer)
    f[6] = {**offer.body, "rules": {**offer.body["rules"], "when": msgpack.ExtType(5, b"x")}}
    bad("ext-type", raw_signed(f, host), "ext_type", "an ext type (5) inside the rules map")
    f = fields_of(offer)
    f[6] = {**offer.body, "rules": {**offer.body["rules"], "when": msgpack.Timestamp(1, 0)}}
    bad("timestamp", raw_signed(f, host), "ext_type", "a msgpack timestamp (ext -1)")
    f = fields_of(offer)
    f[6] = {**offer.body, "rules": {1: 2}}
    bad("int-key", raw_signed(f, host), "bad_key", "a map with an int key")
    bad("seven-fields", msgpack.packb(fields_of(offer), use_bin_type=True), "bad_envelope",
        "the array without the signature")
    bad("map-envelope", msgpack.packb({"v": 1}), "bad_envelope", "a map instead of the array")
    f = fields_of(offer)
    f[0] = PROTOCOL_VERSION + 1
    bad("version", raw_signed(f, host), "version", f"protocol version {PROTOCOL_VERSION + 1}")
    f = fields_of(offer)
    f[5] = "cheat"
    bad("unknown-kind", raw_signed(f, host), "unknown_kind", "kind 'cheat'")
    f = fields_of(offer)
    f[6] = {**offer.body, "extra": 1}
    bad("unknown-field", raw_signed(f, host), "unknown_field", "an offer with an extra field")
    f = fields_of(offer)
    f[6] = {k: v for k, v in offer.body.items() if k != "nonce"}
    bad("missing-field", raw_signed(f, host), "missing_field", "an offer without its nonce")
    f = fields_of(offer)
    f[6] = {**offer.body, "nonce": None}
    bad("nil-field", raw_signed(f, host), "bad_type", "nil where the schema has no nil")
    f = fields_of(offer)
    f[6] = {**offer.body, "nonce": offer.body["nonce"].hex()[:32]}
    bad("str-for-bin", raw_signed(f, host), "bad_type", "a str where the nonce bin belongs")
    f = fields_of(offer)
    f[3] = True
    bad("bool-seat", raw_signed(f, host), "bad_type", "seat encoded as true")
    f = fields_of(offer)
    f[3] = 8
    bad("seat-8", raw_signed(f, host), "out_of_range", "seat 8 (seats are 0..7)")
    f = fields_of(offer)
    f[2] = -1
    bad("negative-seq", raw_signed(f, host), "out_of_range", "seq -1")
    f = fields_of(offer)
    f[1] = GAME[:15]
    bad("short-game-id", raw_signed(f, host), "out_of_range", "a 15-byte game id")
    f = fields_of(offer)
    f[6] = {**offer.body, "app": "other-app"}
    bad("wrong-app", raw_signed(f, host), "out_of_range", "app is not 'p2p-chinchon'")
    f = fields_of(offer)
    f[6] = {**offer.body, "name": "x" * 65}
    bad("long-name", raw_signed(f, host), "out_of_range", "a 65-byte table name")
    f = fields_of(offer)
    f[6] = {**offer.body, "name": "ñ" * 33}
    bad("long-utf8-name", raw_signed(f, host), "out_of_range", "33 'ñ' = 66 UTF-8 bytes, over 64")
    draw = [PROTOCOL_VERSION, GAME, 50, 1, bytes(32), "draw", {"hand": 0, "source": "hand"}]
    bad("draw-source", raw_signed(draw, s1), "out_of_range", "draw from 'hand' (stock or discard only)")
    share = [PROTOCOL_VERSION, GAME, 51, 1, bytes(32), "draw_share", {"hand": 0, "share": bytes(95), "slot": 3}]
    bad("short-share", raw_signed(share, s1), "out_of_range", "a 95-byte share")
    share = [PROTOCOL_VERSION, GAME, 51, 1, bytes(32), "draw_share", {"hand": 0, "share": bytes(96), "slot": 4096}]
    bad("slot-4096", raw_signed(share, s1), "out_of_range", "slot 4096 (slots are 0..4095)")
    deck = [PROTOCOL_VERSION, GAME, 52, 1, bytes(32), "shuffle", {"deck": bytes(40 * 64 + 1), "hand": 0, "proof": b"", "round": 0}]
    bad("deck-not-multiple", raw_signed(deck, s1), "out_of_range", "deck length not a multiple of 64")
    seating = [PROTOCOL_VERSION, GAME, 1, 0, bytes(32), "seating",
               {"players": [{"addr": "", "addrs": [], "key": bytes(32), "name": str(i)} for i in range(9)]}]
    bad("nine-players", raw_signed(seating, host), "out_of_range", "a seating of 9")

    # non-canonical encodings of a validly signed envelope: the signature still verifies
    canon = offer.encode()
    body = offer.body
    unsorted = dict(reversed(list(body.items())))
    frame = msgpack.packb([*fields_of(offer)[:6], unsorted, offer.sig], use_bin_type=True)
    bad("unsorted-keys", frame, "non_canonical", "body keys in reverse order")
    # duplicate key: repeat 'app' at the front of the body map (fixmap 0x8N -> 0x8N+1)
    n_keys = len(body)
    i = canon.index(bytes([0x80 + n_keys]) + b"\xa3app")
    entry = b"\xa3app" + msgpack.packb("p2p-chinchon")
    bad("duplicate-key", canon[:i] + bytes([0x81 + n_keys]) + entry + canon[i + 1 :], "non_canonical",
        "'app' twice in the body map")
    # seq 0 as uint8 (0xcc 0x00) instead of positive fixint 0x00
    # layout: fixarray 0x98, v 0x01, bin8 header c4 10, 16 bytes of game id, then seq at offset 20
    assert canon[:4] == bytes([0x98, PROTOCOL_VERSION, 0xC4, 0x10]) and canon[20] == 0
    bad("wide-int", canon[:20] + b"\xcc" + canon[20:], "non_canonical", "seq 0 written as uint8")
    # kind 'offer' with a str8 header instead of fixstr
    i = canon.index(b"\xa5offer")
    bad("wide-str", canon[:i] + b"\xd9\x05offer" + canon[i + 6 :], "non_canonical", "kind with a str8 header")
    # game id with a bin16 header instead of bin8
    bad("wide-bin", canon[:2] + b"\xc5\x00\x10" + canon[4:], "non_canonical", "game id with a bin16 header")
    # the envelope array with an array16 header
    bad("wide-array", b"\xdc\x00\x08" + canon[1:], "non_canonical", "the envelope as array16")
    nested: object = bytes(32)
    for _ in range(40):
        nested = [nested]
    f = fields_of(offer)
    f[6] = {**offer.body, "nonce": nested}
    bad("deep-nesting", raw_signed(f, host), "out_of_range", "the nonce wrapped in 40 arrays (cap: 16 levels)")
    bad("invalid-utf8", canon.replace(b"\xa5offer", b"\xa5offe\xff"), "malformed", "kind with invalid UTF-8")
    return out


# --- chain vectors ----------------------------------------------------------------------------


def chain_vectors() -> list[dict]:
    out: list[dict] = []

    def vec(name: str, desc: str, transcripts: list[bytes], verdict: dict) -> None:
        out.append({"name": f"chain-{name}", "layer": "chain", "description": desc,
                    "input": {"transcripts": [blob(t) for t in transcripts]}, "verdict": verdict})

    def ok(envs: list[Envelope], tail: bytes = b"") -> dict:
        head = hashlib.sha256(envs[-1].encode()).hexdigest()
        return {"result": "ok", "envelopes": len(envs), "head": head, "torn_tail": len(tail)}

    def err(cls: str, index: int, seat: int | None, transcript: int = 0, **extra) -> dict:
        return {"result": cls, "transcript": transcript, "index": index, "seat": seat, **extra}

    base = BASE
    n = len(base)
    vec("ok-3-seats", "lobby of three seats: offer, seating, agree, toss and key_commit from each",
        [file_of(base)], ok(base))
    two = chain(lobby_script(SEATS[:2], SeededRng("two seats")))
    vec("ok-2-seats", "lobby of two seats", [file_of(two)], ok(two))
    vec("ok-prefix", "two nodes' transcripts, one a prefix of the other: no equivocation",
        [file_of(base), file_of(base[:7])], ok(base))
    cut = base[-1].encode()
    vec("torn-tail", "the last frame cut in half by a crash: the rest is recovered",
        [file_of(base[:-1], cut[: len(cut) // 2])], ok(base[:-1], cut[: len(cut) // 2]))
    vec("zero-tail", "4096 zero bytes after the last frame (filesystem after a crash)",
        [file_of(base, bytes(4096))], ok(base, bytes(4096)))

    flipped = bytearray(base[6].encode())
    flipped[-7] ^= 0x10
    vec("bit-flip-signature", "one bit of envelope 6's signature flipped (the file was damaged)",
        [file_of(base[:6] + [bytes(flipped)] + base[7:])], err("ChainSignatureError", 6, 1))
    forged = relink(base[:6] + [resign(base[6], SEATS[2])] + base[7:], 7)
    vec("forged-signature", "envelope 6 claims seat 1 but is signed by seat 2; the rest links to it",
        [file_of(forged)], err("ChainSignatureError", 6, 1))
    forged_offer = relink([resign(base[0], OUTSIDER)] + base[1:], 1)
    vec("forged-offer", "the offer names seat 0's host_key but another key signed it",
        [file_of(forged_offer)], err("ChainSignatureError", 0, 0))
    usurper = [resign(base[0], OUTSIDER, body={**base[0].body, "host_key": OUTSIDER.public_bytes})]
    usurper.append(resign(base[1], OUTSIDER, prev=usurper[0].hash()))
    usurper = relink(usurper + base[2:], 2)
    vec("seating-not-host", "an outsider's offer (its own host_key) seats someone else as seat 0",
        [file_of(usurper)], err("ChainSeatError", 1, 0))

    broken = relink(base[:7] + [resign(base[7], SEATS[base[7].seat], prev=bytes(range(32)))] + base[8:], 8)
    vec("broken-prev", "envelope 7's prev is not the hash of envelope 6 (validly signed)",
        [file_of(broken)], err("ChainLinkError", 7, base[7].seat))
    gap = relink(base[:6] + base[7:], 6)  # seq numbers keep their gap; prev links are fine
    vec("seq-gap", "envelope with seq 6 is missing; seq 7 follows 5 with a correct prev",
        [file_of(gap)], err("ChainSeqError", 6, base[7].seat))
    other = chain(lobby_script(SEATS, SeededRng("lobby"), OTHER_GAME), game=OTHER_GAME)
    replay = relink(base[:6] + [other[6]] + base[7:], 7)
    vec("replay-other-game", "envelope 6 is seat 1's toss copied from another game; the rest links to it",
        [file_of(replay)], err("ChainGameError", 6, 1))
    outsider = base + chain([(3, "leave", {"reason": "hi"})], start_prev=base[-1].hash(), start_seq=n,
                            signers={0: OUTSIDER})
    vec("seat-not-seated", "seat 3 speaks in a seating of three", [file_of(outsider)], err("ChainSeatError", n, 3))
    early = chain([(0, "offer", base[0].body), (1, "toss", {"nonce": bytes(32)})] + [
        (e.seat, e.kind, e.body) for e in base[1:]])
    vec("speak-before-seating", "seat 1 speaks before the seating", [file_of(early)], err("ChainSeatError", 1, 1))

    canon = base[4].encode()
    unsorted = dict(reversed(list(base[4].body.items())))
    e4 = base[4]
    noncanon = msgpack.packb([e4.v, e4.game, e4.seq, e4.seat, e4.prev, e4.kind, unsorted, e4.sig], use_bin_type=True)
    assert len(noncanon) == len(canon) and noncanon != canon
    vec("non-canonical", "envelope 4 re-encoded with unsorted body keys (signature still valid)",
        [file_of(base[:4] + [noncanon] + base[5:])], err("CorruptFrameError", 4, None, code="non_canonical"))
    damaged = base[5].encode().replace(b"\xa5nonce", b"\xa5nonse")
    vec("corrupt-middle", "a byte of envelope 5 changed ('nonce' -> 'nonse'): the frame no longer decodes",
        [file_of(base[:5] + [damaged] + base[6:])], err("CorruptFrameError", 5, None, code="unknown_field"))
    vec("unparseable", "an 0xc1 byte after envelope 7: nothing after it can be framed",
        [file_of(base[:8], b"\xc1" + file_of(base[8:]))], err("CorruptFrameError", 8, None, code="unparseable"))
    vec("first-not-offer", "the chain of ok-3-seats without its offer, re-chained from seq 0 and re-signed by the "
        "host: envelope 0 must be an offer", [file_of(chain([(e.seat, e.kind, e.body) for e in base[1:]]))],
        err("ChainSeatError", 0, 0))
    vec("duplicate-frame", "envelope 5 written twice in a row: the second copy is at index 6, where seq 6 belongs",
        [file_of(base[:6] + base[5:])], err("ChainSeqError", 6, base[5].seat))
    vec("inserted-header", "5 bytes (a bin32 header claiming 4 GiB) inserted after envelope 7: a header claiming "
        "more than a frame may be is damage, not a torn tail", [file_of(base[:8], b"\xc6\xff\xff\xff\xff" + file_of(base[8:]))],
        err("CorruptFrameError", 8, None, code="frame_too_large"))
    vec("inserted-short-header", "3 bytes (a bin16 header claiming 65535 bytes, more than the rest) inserted after "
        "envelope 7: the stream ends inside it, but a frame cut short starts with an envelope's header (0x98), "
        "so this is damage, not a torn tail", [file_of(base[:8], b"\xc5\xff\xff" + file_of(base[8:]))],
        err("CorruptFrameError", 8, None, code="malformed"))
    # the order of the tail's checks: headers read in order, the first 0xc1 or over-claim wins
    start = base[8].encode()[:2]  # the envelope's array header and its v
    vec("tail-0xc1-before-claim", "after envelope 7, a frame that starts like an envelope, then 0xc1, then a bin32 "
        "header claiming 4 GiB, and the file ends: the headers are read in order and meet 0xc1 first",
        [file_of(base[:8], start + b"\xc1\xc6\xff\xff\xff\xff")], err("CorruptFrameError", 8, None, code="unparseable"))
    vec("tail-claim-before-0xc1", "after envelope 7, a frame that starts like an envelope, then a bin32 header "
        "claiming 4 GiB, then 0xc1, and the file ends: the headers are read in order and over-claim first",
        [file_of(base[:8], start + b"\xc6\xff\xff\xff\xff\xc1")],
        err("CorruptFrameError", 8, None, code="frame_too_large"))
    cut_len = base[8].encode()[:20] + b"\xc6\xff\xff\xff"
    vec("torn-in-length-field", "after envelope 7, a frame that starts like an envelope and ends inside the 4-byte "
        "length of a bin32 (3 of its bytes present): a length cut off by the end of the file claims nothing; the "
        "tail is torn", [file_of(base[:8], cut_len)], ok(base[:8], cut_len))

    b_side = chain([(e.seat, e.kind, e.body) for e in base[:8]] + [(0, "key_commit", {"hand": 0, "commit": bytes(32)})])
    assert b_side[:8] == base[:8] and b_side[8] != base[8]
    vec("equivocation", "seat 0 sent one key_commit (seq 8) to one node and another to the other",
        [file_of(base), file_of(b_side)], {"result": "Equivocation", "seat": 0, "seq": 8})
    fake = base[:8] + [resign(b_side[8], SEATS[1])]
    vec("forged-equivocation", "a second seq 8 'from seat 0' signed by seat 1 is no proof: bad signature",
        [file_of(base), file_of(fake)], err("ChainSignatureError", 8, 0, transcript=1))
    return out


def shuffle_vectors() -> list[dict]:
    """One Terelius-Wikström and one cut-and-choose proof (docs/protocol.md, "Shuffle
    proofs"), each valid and with one byte changed; seeded, so byte-reproducible."""
    from p2p_chinchon import deck
    from p2p_chinchon.deck.tw import _u_seed, generators

    out: list[dict] = []
    r = SeededRng("vectors/shuffle")
    n, game = 6, GAME
    kps = [deck.KeyPair.generate(r) for _ in range(2)]
    y = deck.joint_key([kp.public for kp in kps])
    for name, system in (("tw", deck.proof_system("terelius-wikstrom")),
                         ("cut-and-choose", deck.proof_system("cut-and-choose", 4))):
        ctx0, ctx = deck.Context(game, 3, 0), deck.Context(game, 3, 1)
        d_in, _ = deck.shuffle(ctx0, y, deck.initial_deck(n), r, system=system)
        d_out, proof = deck.shuffle(ctx, y, d_in, r, round=1, system=system)
        inp = {"system": system.name, "k": system.k, "game": blob(game), "hand": 3, "seat": 1,
               "round": 1, "n": n, "joint_key": blob(y), "deck_in": blob(deck.encode_deck(d_in)),
               "deck_out": blob(deck.encode_deck(d_out)), "proof": blob(proof)}
        if name == "tw":  # intermediate values for a second implementation to compare
            inp["generators"] = [blob(h) for h in generators(n)]
            inp["u_seed"] = blob(_u_seed(ctx, 1, y, d_in, d_out, proof[:32 * n]))
        out.append({"name": f"shuffle-{name}-ok", "layer": "shuffle",
                    "description": f"a valid {system.name} proof of seat 1's re-shuffle (round 1) "
                                   f"of {n} cards", "input": inp,
                    "verdict": {"result": "ok"}})
        bad = bytearray(proof)
        bad[-1] ^= 1  # the last response scalar (TW z'_5; cut-and-choose: an opening byte)
        out.append({"name": f"shuffle-{name}-tampered", "layer": "shuffle",
                    "description": f"the same {system.name} proof with its last byte changed",
                    "input": {**inp, "proof": blob(bytes(bad))},
                    "verdict": {"result": "DeckError", "seat": 1, "step": "shuffle"}})
    return out


def all_files() -> dict[Path, str]:
    files = {SCHEMA_PATH: schema_json()}
    for v in frame_vectors() + chain_vectors() + shuffle_vectors():
        files[VECTOR_DIR / f"{v['name']}.json"] = json.dumps(v, indent=2, ensure_ascii=False) + "\n"
    return files


def write_or_check(files: dict[Path, str], owned: Callable[[Path], bool], argv: list[str]) -> int:
    """The generators' command line: write ``files`` (and remove the vector files ``owned``
    by the generator that it no longer writes), or with ``--check`` only name each file that
    would change and exit 1 if any would."""
    if "--check" in argv:
        stale = [p for p, text in files.items() if not p.exists() or p.read_text("utf-8") != text]
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)}")
        return 1 if stale else 0
    VECTOR_DIR.mkdir(parents=True, exist_ok=True)
    for p in VECTOR_DIR.glob("*.json"):
        if owned(p) and p not in files:
            p.unlink()
    for p, text in files.items():
        p.write_text(text, "utf-8")
    print(f"wrote {len(files)} files")
    return 0


def main(argv: list[str]) -> int:
    return write_or_check(all_files(), lambda p: p.name.startswith(PREFIXES), argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
