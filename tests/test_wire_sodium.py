"""Envelope signatures through the libsodium that ``rbcl`` bundles: what
libsodium accepts is accepted without ``cryptography``; anything it refuses is judged by
``cryptography`` (OpenSSL), whose strictness the protocol keeps: the ``frame-sig-*`` vectors
(small-order and non-canonical keys, small-order R, non-canonical S and R) get one verdict
from both paths."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2p_chinchon import wire
from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng
from vector_blobs import unblob

VECTORS = sorted((Path(__file__).resolve().parent.parent / "protocol" / "vectors").glob("frame-sig-*.json"))


def _cases():
    for path in VECTORS:
        vec = json.loads(path.read_text("utf-8"))
        env = wire.decode_envelope(unblob(vec["input"]["frame"]))
        yield pytest.param(env, unblob(vec["input"]["public_key"]), vec["verdict"]["result"] == "ok", id=vec["name"])


def _cryptography(env: wire.Envelope, key: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(env.sig, env.signed_bytes())
        return True
    except InvalidSignature:
        return False


def _ours(env: wire.Envelope, key: bytes) -> bool:
    try:
        wire.verify_envelope(env, key)
        return True
    except wire.SignatureError:
        return False


def test_the_edge_vectors_exist():
    assert len(VECTORS) >= 6


@pytest.mark.parametrize("env, key, valid", list(_cases()))
def test_both_paths_give_the_vectors_verdict(env, key, valid):
    assert _cryptography(env, key) is valid
    assert _ours(env, key) is valid
    # libsodium alone is stricter: it refuses every small-order or non-canonical key or R
    assert wire._sodium_accepts(env.sig, env.signed_bytes(), key) is (valid and _canonical_and_large(env, key))


def _canonical_and_large(env: wire.Envelope, key: bytes) -> bool:
    small = {(1).to_bytes(32, "little"), (2 ** 255 - 18).to_bytes(32, "little"), (1 | 1 << 255).to_bytes(32, "little")}
    return key not in small and env.sig[:32] not in small


def test_a_valid_signature_needs_no_cryptography(monkeypatch):
    ident = Identity.generate(SeededRng("sodium-sig"))
    env = wire.make_envelope(ident.private_key, game=bytes(16), seq=3, seat=0, prev=bytes(32), kind="leave",
                             body={"reason": "x"})

    def refuse(*_a, **_k):
        raise AssertionError("cryptography was asked about a valid signature")

    monkeypatch.setattr(wire, "load_public_key", refuse)
    wire.verify_envelope(env, ident.public_bytes)  # libsodium accepts it: done
    bad = wire.Envelope(env.v, env.game, env.seq, env.seat, env.prev, env.kind, env.body, env.sig[:-1] + b"\0")
    with pytest.raises(AssertionError):  # refused by libsodium: cryptography decides
        wire.verify_envelope(bad, ident.public_bytes)
