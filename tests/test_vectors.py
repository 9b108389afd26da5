"""Run every protocol vector in protocol/vectors/ through the verdict function of its layer.

A vector is ``{name, layer, description, input, verdict}`` (protocol/README.md). The runner is
generic: ``VERDICTS[layer](input) -> dict`` computes the actual verdict, and every key of the
expected verdict must match. To add a layer (e.g. game-level vectors checked by the table
replay), add a function to VERDICTS.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from p2p_chinchon import deck
from p2p_chinchon.net.lobby import BadJoinRequest, JoinRequest
from p2p_chinchon.table import rules_hash, seating_hash, toss_commitment
from p2p_chinchon.transcript import ChainError, find_equivocation, parse_transcript, verify_loaded
from p2p_chinchon.wire import SignatureError, WireError, decode_envelope, verify_envelope
from vector_blobs import unblob

ROOT = Path(__file__).resolve().parent.parent
VECTOR_DIR = ROOT / "protocol" / "vectors"
VECTORS = sorted(VECTOR_DIR.glob("*.json"))


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


def shuffle_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """Verify one shuffle proof of the named system from its statement (docs/protocol.md)."""
    from p2p_chinchon import deck

    n = inp["n"]
    ctx = deck.Context(unblob(inp["game"]), inp["hand"], inp["seat"])
    system = deck.proof_system(inp["system"], inp["k"] or deck.DEFAULT_K)
    try:
        deck.verify_shuffle(ctx, unblob(inp["joint_key"]), deck.decode_deck(unblob(inp["deck_in"]), n),
                            deck.decode_deck(unblob(inp["deck_out"]), n), unblob(inp["proof"]),
                            round=inp["round"], system=system)
    except deck.DeckError as exc:
        return {"result": "DeckError", "seat": exc.seat, "step": exc.step}
    return {"result": "ok"}
def _bin(inp: dict[str, Any], *names: str) -> list[bytes]:
    return [unblob(inp[n]) for n in names]


def rules_hash_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    return {"hash": rules_hash(inp["rules"], inp["proof_rounds"]).hex()}


def seating_hash_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    players = [{"name": p["name"], "key": unblob(p["key"]), "addr": p["addr"]} for p in inp["players"]]
    return {"hash": seating_hash(players).hex()}


def _framed_sha256(*parts: bytes) -> bytes:
    """docs/protocol.md "Notation": SHA-256 over u32be len(p) || p for each part."""
    return hashlib.sha256(b"".join(len(p).to_bytes(4, "big") + p for p in parts)).digest()


def toss_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    game = unblob(inp["game"])
    nonces = [unblob(x) for x in inp["nonces"]]
    seed = _framed_sha256(b"p2p-chinchon/first-dealer/v1", game, *nonces)
    return {"commits": [toss_commitment(game, s, n).hex() for s, n in enumerate(nonces)],
            "first_dealer": int.from_bytes(seed, "big") % len(nonces)}


def hand_digest_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    game, head = _bin(inp, "game", "head")
    digest = _framed_sha256(b"p2p-chinchon/hand-digest/v1", game, inp["hand"].to_bytes(2, "big"), head,
                            msgpack.packb(inp["totals"]), msgpack.packb(inp["final_deck"]))
    return {"digest": digest.hex()}


def card_point_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    i = inp["index"]
    return {"point": deck.card_points(i + 1)[i].hex()}


def _deck_result(fn: Callable[[], bytes], name: str) -> dict[str, Any]:
    try:
        value = fn()
    except deck.DeckError as exc:
        return {"result": "DeckError", "step": exc.step}
    return {"result": "ok", name: value.hex()}


def key_share_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    game, commit, share, nonce = _bin(inp, "game", "commit", "share", "nonce")
    ctx = deck.Context(game, inp["hand"], inp["seat"])
    return _deck_result(lambda: deck.verify_key_share(ctx, share, commit, nonce), "public")


def dleq_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    game, c1, c2, public, share = _bin(inp, "game", "c1", "c2", "public", "share")
    ctx = deck.Context(game, inp["hand"], inp["seat"])
    ct = deck.Ciphertext.from_bytes(c1 + c2)
    return _deck_result(lambda: deck.verify_decryption_share(ctx, public, ct, inp["slot"], share), "d")


def lobby_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """The joiner's pin of the host's certificate, the host's check of the join request against
    its challenge and certificate hash, then the joiner's reading of the host's answers."""
    from p2p_chinchon.identity import certificate_key
    from p2p_chinchon.net.tls import cert_fingerprint

    der = unblob(inp["host_certificate"])
    if certificate_key(der) != unblob(inp["host_key"]):
        return {"result": "PinMismatch"}
    cert = cert_fingerprint(der)
    assert cert.hex() == inp["cert_hash"]
    msgs = [(m["from"], unblob(m["payload"])) for m in inp["messages"]]
    (who_c, challenge), (who_j, join) = msgs[:2]
    assert (who_c, who_j) == ("host", "joiner")
    try:
        req = JoinRequest.decode(join, challenge=challenge, cert=cert)
    except BadJoinRequest:
        return {"result": "BadJoinRequest"}
    answers = [msgpack.unpackb(data) for who, data in msgs[2:] if who == "host"]
    offer = answers[0]["offer"]
    seating = decode_envelope(answers[2]["seating"])
    return {"result": "ok", "name": req.name, "key": req.public_key.hex(), "addr": req.listen_addr,
            "seat": answers[1]["seat"], "offer_hash": hashlib.sha256(offer).hexdigest(),
            "seated_addr": seating.body["players"][answers[1]["seat"]]["addr"],
            "seated_addrs": list(seating.body["players"][answers[1]["seat"]]["addrs"])}


def mesh_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """Check both sides' recorded handshake frames: the acceptor's certificate holds its key,
    the hellos, then each signature under its key, bound to that certificate's hash."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from p2p_chinchon.identity import certificate_key
    from p2p_chinchon.net import mesh
    from p2p_chinchon.net.framing import FrameDecoder
    from p2p_chinchon.net.tls import cert_fingerprint

    def frames(data: bytes) -> list[bytes]:
        dec = FrameDecoder()
        dec.feed(data)
        out = []
        while (f := dec.next_frame()) is not None:
            out.append(f)
        return out

    game = unblob(inp["game"])
    raw_keys = [unblob(k) for k in inp["keys"]]
    keys = [Ed25519PublicKey.from_public_bytes(k) for k in raw_keys]
    der = unblob(inp["acceptor_certificate"])
    cert = cert_fingerprint(der)
    assert cert.hex() == inp["cert_hash"]
    hello_d, sig_d = frames(unblob(inp["dialler_wrote"]))
    hello_a, sig_a, ok = frames(unblob(inp["acceptor_wrote"]))
    try:
        i, j, n_d = mesh._parse_hello(hello_d, game)
        if certificate_key(der) != raw_keys[j]:
            return {"result": "PinMismatch"}
        j2, i2, n_a = mesh._parse_hello(hello_a, game)
        if (j2, i2) != (j, i) or ok != mesh.OK:
            raise mesh.HandshakeError("seats or confirmation do not match")
        mesh._verify(keys[j], sig_a, mesh._auth_message(game, j, i, n_a, n_d, cert), j)
        mesh._verify(keys[i], sig_d, mesh._auth_message(game, i, j, n_d, n_a, cert), i)
    except mesh.HandshakeError:
        return {"result": "HandshakeError"}
    return {"result": "ok", "dialler": i, "acceptor": j}


def showdown_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """A closed hand scored by the engine (the generator's own function: the engine is the
    thing measured; the independent check is protocol/conformance's)."""
    import sys

    sys.path.insert(0, str(VECTOR_DIR.parent))
    try:
        from make_spec_vectors import showdown_verdict as verdict
    finally:
        sys.path.remove(str(VECTOR_DIR.parent))
    return verdict(inp)


def relay_verdict(inp: dict[str, Any]) -> dict[str, Any]:
    """A code-word table's relay token and handshake lines, from the product's functions."""
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.net import relay, rendezvous as rz

    if "key" in inp and "seed" not in inp:  # a lobby link: the wormhole's derived key
        token = rz.lobby_token(unblob(inp["key"]))
        return {"result": "ok", "token": token,
                "host_line": rz.relay_request(token, rz.relay_side(0, lobby_host=True)).decode(),
                "joiner_line": rz.relay_request(token, rz.relay_side(1)).decode()}
    me = Identity.from_seed(unblob(inp["seed"]))
    assert me.public_bytes == unblob(inp["key"])
    try:
        shared = relay.pair_secret(me, unblob(inp["peer_key"]))
    except ValueError:
        return {"result": "refused"}
    token = rz.mesh_token(shared, unblob(inp["game"]), inp["seat"], inp["peer"])
    return {"result": "ok", "x25519": shared.hex(), "token": token,
            "line": rz.relay_request(token, rz.relay_side(inp["seat"])).decode(),
            "peer_line": rz.relay_request(token, rz.relay_side(inp["peer"])).decode()}


VERDICTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "frame": frame_verdict,
    "chain": chain_verdict,
    "game": game_verdict,
    "shuffle": shuffle_verdict,
    "rules_hash": rules_hash_verdict,
    "seating_hash": seating_hash_verdict,
    "toss": toss_verdict,
    "hand_digest": hand_digest_verdict,
    "card_point": card_point_verdict,
    "key_share": key_share_verdict,
    "dleq": dleq_verdict,
    "lobby": lobby_verdict,
    "mesh": mesh_verdict,
    "showdown": showdown_verdict,
    "relay": relay_verdict,
}


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vector(path: Path) -> None:
    vec = json.loads(path.read_text("utf-8"))
    assert vec["name"] == path.stem
    assert vec["layer"] in VERDICTS, f"no verdict function for layer {vec['layer']!r}"
    actual = VERDICTS[vec["layer"]](vec["input"])
    expected = vec["verdict"]
    assert {k: actual.get(k) for k in expected} == expected, vec["description"]
    trace = vec.get("trace", {})
    if "hash_input" in trace and ("hash" in expected or "digest" in expected):
        # the traced bytes are the ones the document says are hashed
        want = expected.get("hash", expected.get("digest"))
        assert hashlib.sha256(unblob(trace["hash_input"])).hexdigest() == want


def test_vectors_cover_every_verdict() -> None:
    """Every layer has vectors; a valid one and one for each way a frame or a chain can be
    rejected; a rejected DLEQ share, key share, join request and handshake."""
    results = {(v["layer"], v["verdict"].get("result"), v["verdict"].get("code"))
               for v in (json.loads(p.read_text("utf-8")) for p in VECTORS)}
    layers_results = {(layer, r) for layer, r, _ in results}
    assert {layer for layer, _ in layers_results} == set(VERDICTS)
    for needed in [("frame", "ok"), ("frame", "WireError"), ("frame", "SignatureError"), ("chain", "ok"),
                   ("chain", "Equivocation"), ("chain", "ChainSignatureError"), ("chain", "ChainLinkError"),
                   ("chain", "ChainSeqError"), ("chain", "ChainGameError"), ("chain", "ChainSeatError"),
                   ("chain", "CorruptFrameError"), ("dleq", "ok"), ("dleq", "DeckError"), ("key_share", "ok"),
                   ("key_share", "DeckError"), ("lobby", "ok"), ("lobby", "BadJoinRequest"), ("mesh", "ok"),
                   ("mesh", "HandshakeError")]:
        assert needed in layers_results, needed
    codes = {c for layer, r, c in results if layer == "frame" and r == "WireError"}
    for code in ["frame_too_large", "malformed", "trailing_bytes", "float", "ext_type", "bad_key", "bad_envelope",
                 "version", "unknown_kind", "unknown_field", "missing_field", "bad_type", "out_of_range",
                 "non_canonical"]:
        assert code in codes, code


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
