"""A second, independent verifier of the Terelius-Wikström vectors, written from
docs/protocol.md ("Terelius-Wikström shuffle proof") with only hashlib and rbcl: the document
is enough to check a proof, and it agrees with p2p_chinchon.deck on both vectors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import rbcl

from harness.tw_spec import PREFIX, spec_verify
from vector_blobs import unblob

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
@pytest.mark.parametrize("name,ok", [("shuffle-tw-ok", True), ("shuffle-tw-tampered", False)])
def test_the_document_alone_verifies_the_tw_vectors(name, ok):
    vec = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    inp = vec["input"]
    assert (vec["verdict"]["result"] == "ok") is ok
    assert spec_verify(inp) is ok
    gens = [unblob(g) for g in inp["generators"]]
    assert gens[0] == rbcl.crypto_core_ristretto255_from_hash(
        hashlib.sha512(PREFIX + b"tw/generator\x00\x00\x00").digest())
