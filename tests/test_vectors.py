"""Run every protocol vector in protocol/vectors/ through the verdict function of its layer.

A vector is ``{name, layer, description, input, verdict}`` (protocol/README.md). The runner is
generic: ``VERDICTS[layer](input) -> dict`` computes the actual verdict, and every key of the
expected verdict must match. To add a layer (e.g. game-level vectors checked by the table
replay), add a function to VERDICTS.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import zlib
from pathlib import Path
from typing import Any, Callable

import pytest

from p2p_chinchon.transcript import ChainError, find_equivocation, parse_transcript, verify_loaded
from p2p_chinchon.wire import SignatureError, WireError, decode_envelope, verify_envelope

ROOT = Path(__file__).resolve().parent.parent
VECTOR_DIR = ROOT / "protocol" / "vectors"
VECTORS = sorted(VECTOR_DIR.glob("*.json"))


def unblob(text: str) -> bytes:
    kind, _, payload = text.partition(":")
    if kind == "hex":
        return bytes.fromhex(payload)
    if kind == "zlib64":
        return zlib.decompress(base64.b64decode(payload))
    raise ValueError(f"unknown blob encoding {kind!r}")


def frame_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """Strict decode of one frame, then the signature if a public key is given."""
    try:
        env = decode_envelope(unblob(inp["frame"]))
        if "public_key" in inp:
            verify_envelope(env, unblob(inp["public_key"]))
    except SignatureError as exc:
        return {"result": "SignatureError", "code": exc.code}
    except WireError as exc:
        return {"result": "WireError", "code": exc.code}
    return {"result": "ok", "kind": env.kind, "seq": env.seq, "seat": env.seat, "hash": env.hash().hex()}


def chain_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """Load each transcript file; equivocation across all of them first, then each chain."""
    loaded = [parse_transcript(unblob(t)) for t in inp["transcripts"]]
    eq = find_equivocation(*(r.frames for r in loaded))
    if eq is not None:
        return {"result": "Equivocation", "seat": eq.seat, "seq": eq.seq}
    infos = []
    for t, result in enumerate(loaded):
        try:
            infos.append(verify_loaded(result))
        except ChainError as exc:
            return {"result": type(exc).__name__, "transcript": t, "index": exc.index, "seat": exc.seat,
                    "code": getattr(exc, "code", None)}
    return {"result": "ok", "envelopes": infos[0].length, "head": infos[0].head.hex(),
            "torn_tail": len(loaded[0].torn_tail or b"")}


def game_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """Replay a whole transcript through the table, as `p2p-chinchon audit` does."""
    from p2p_chinchon.audit import audit_frames

    loaded = parse_transcript(unblob(inp["transcript"]))
    r = audit_frames(loaded.frames, torn_tail=loaded.torn_tail is not None)
    return {"result": r.verdict, "seat": r.seat, "index": r.index, "rule": r.rule, "winner": r.winner,
            "hands": r.hands}


VERDICTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "frame": frame_verdict,
    "chain": chain_verdict,
    "game": game_verdict,
}


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector(path: Path) -> None:
    vec = json.loads(path.read_text("utf-8"))
    assert vec["name"] == path.stem
    assert vec["layer"] in VERDICTS, f"no verdict function for layer {vec['layer']!r}"
    actual = VERDICTS[vec["layer"]](vec["input"])
    expected = vec["verdict"]
    assert {k: actual.get(k) for k in expected} == expected, vec["description"]


def test_vectors_cover_every_verdict() -> None:
    """The suite has valid vectors and one for each way a frame or a chain can be rejected."""
    results = {(v["layer"], v["verdict"]["result"], v["verdict"].get("code"))
               for v in (json.loads(p.read_text("utf-8")) for p in VECTORS)}
    layers_results = {(layer, r) for layer, r, _ in results}
    for needed in [("frame", "ok"), ("frame", "WireError"), ("frame", "SignatureError"), ("chain", "ok"),
                   ("chain", "Equivocation"), ("chain", "ChainSignatureError"), ("chain", "ChainLinkError"),
                   ("chain", "ChainSeqError"), ("chain", "ChainGameError"), ("chain", "ChainSeatError"),
                   ("chain", "CorruptFrameError")]:
        assert needed in layers_results, needed
    codes = {c for layer, r, c in results if layer == "frame" and r == "WireError"}
    for code in ["frame_too_large", "malformed", "trailing_bytes", "float", "ext_type", "bad_key", "bad_envelope",
                 "version", "unknown_kind", "unknown_field", "missing_field", "bad_type", "out_of_range",
                 "non_canonical"]:
        assert code in codes, code


def test_generated_files_are_up_to_date() -> None:
    """protocol/schema.json and the frame-/chain- vectors are exactly what the generator writes
    (deterministic keys and RFC 8032 signatures), so the committed vectors match the code."""
    spec = importlib.util.spec_from_file_location("make_vectors", ROOT / "protocol" / "make_vectors.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    files = mod.all_files()
    assert len(files) > 40
    for path, text in files.items():
        assert path.exists(), f"missing {path.relative_to(ROOT)}: run python protocol/make_vectors.py"
        assert path.read_text("utf-8") == text, f"stale {path.relative_to(ROOT)}: run python protocol/make_vectors.py"


def test_valid_chain_vectors_are_valid_tables() -> None:
    """A chain vector whose chain is "ok" is also a valid (if unfinished) table to `audit`:
    real rules, the real rules and seating hashes, toss nonces that open their commitments."""
    from p2p_chinchon.audit import audit_frames

    checked = 0
    for path in VECTORS:
        vec = json.loads(path.read_text("utf-8"))
        if vec["layer"] != "chain" or vec["verdict"]["result"] != "ok":
            continue
        loaded = parse_transcript(unblob(vec["input"]["transcripts"][0]))
        report = audit_frames(loaded.frames, torn_tail=loaded.torn_tail is not None)
        assert report.verdict == "incomplete", (path.name, report.verdict, report.rule, report.detail)
        checked += 1
    assert checked >= 3
