"""``audit --jobs N``: shuffle proofs checked by worker processes beside
the replay give the report a serial replay gives, byte for byte, on every transcript of the
vectors and on mutated ones (a bad proof followed by more damage, two bad proofs, damage
before a bad proof): the first violation is still the one named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2p_chinchon import audit, cli, wire
from p2p_chinchon.identity import Identity
from p2p_chinchon.local import seat_rng
from p2p_chinchon.transcript import parse_transcript
from vector_blobs import unblob

pytestmark = pytest.mark.slow  # the audit's worker processes

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
GAMES = sorted(VECTORS.glob("game-*.json"))
CHAINS = sorted(VECTORS.glob("chain-*.json"))
SEED = 2026  # protocol/make_game_vectors.py: game-ok-2-seats, its seats' keys from seat_rng(SEED, seat)


def _same(frames: list[bytes]) -> dict:
    serial = audit.audit_frames(frames).to_json()
    parallel = audit.audit_frames(frames, jobs=2).to_json()
    assert json.dumps(parallel, sort_keys=True) == json.dumps(serial, sort_keys=True)
    return serial


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_every_game_vector_gets_the_serial_report(path):
    loaded = parse_transcript(unblob(json.loads(path.read_text("utf-8"))["input"]["transcript"]))
    _same(loaded.frames)


def test_every_chain_vector_transcript_gets_the_serial_report():
    for path in CHAINS:
        for t in json.loads(path.read_text("utf-8"))["input"]["transcripts"]:
            _same(parse_transcript(unblob(t)).frames)


@pytest.fixture(scope="module")
def game() -> tuple[list[wire.Envelope], list[Identity]]:
    vec = json.loads((VECTORS / "game-ok-2-seats.json").read_text("utf-8"))
    envs = parse_transcript(unblob(vec["input"]["transcript"])).envelopes
    ids = [Identity.generate(seat_rng(SEED, i)) for i in range(2)]
    for e in envs[2:4]:
        wire.verify_envelope(e, ids[e.seat].public_bytes)  # raises on a bad signature
    return envs, ids


def _bad_proof(envs, ids, index) -> list[wire.Envelope]:
    """``envs`` with the proof of shuffle ``index`` changed, re-signed, and every later
    envelope re-signed on top (a validly chained record whose hand digests then disagree)."""
    proof = bytearray(envs[index].body["proof"])
    proof[40] ^= 1
    return _changed(envs, ids, index, {"proof": bytes(proof)})


def _bad_share(envs, ids, index) -> list[wire.Envelope]:
    """The same with the DLEQ proof of the first share of ``deal_shares`` envelope ``index``."""
    shares = list(envs[index].body["shares"])
    shares[0] = shares[0][:-1] + bytes([shares[0][-1] ^ 1])
    return _changed(envs, ids, index, {"shares": shares})


def _bad_share_point(envs, ids, index) -> list[wire.Envelope]:
    """The same with the share's point d itself changed (no longer a valid point, or another one)."""
    shares = list(envs[index].body["shares"])
    shares[0] = bytes([shares[0][0] ^ 0x40]) + shares[0][1:]
    return _changed(envs, ids, index, {"shares": shares})


def _changed(envs, ids, index, change) -> list[wire.Envelope]:
    e = envs[index]
    out = list(envs[:index])
    body = {**e.body, **change}
    for x in [wire.Envelope(e.v, e.game, e.seq, e.seat, e.prev, e.kind, body, e.sig)] + list(envs[index + 1:]):
        prev = out[-1].hash()
        out.append(wire.make_envelope(ids[x.seat].private_key, game=x.game, seq=x.seq, seat=x.seat, prev=prev,
                                      kind=x.kind, body=x.body))
    return out


def _shuffles(envs) -> list[int]:
    return [i for i, e in enumerate(envs) if e.kind == "shuffle"]


def test_mutated_records_get_the_serial_report(game):
    envs, ids = game
    sh = _shuffles(envs)
    first, later = sh[1], sh[len(sh) // 2]
    deal = next(i for i, e in enumerate(envs) if e.kind == "deal_shares" and i > first)
    last_deal = max(i for i, e in enumerate(envs) if e.kind == "deal_shares" and i < later)  # it opens the upcard
    frames = [e.encode() for e in envs]
    cases = {
        "bad proof, rest re-signed": [e.encode() for e in _bad_proof(envs, ids, later)],
        "bad proof, rest left as it was": [e.encode() for e in _bad_proof(envs, ids, later)[: later + 1]] + frames[later + 1:],
        "two bad proofs": [e.encode() for e in _bad_proof(_bad_proof(envs, ids, later), ids, first)],
        "damage before a bad proof": [e.encode() for e in _bad_proof(envs, ids, later)],
        "honest": frames,
        "bad share, rest re-signed": [e.encode() for e in _bad_share(envs, ids, deal)],
        "bad share after a bad proof": [e.encode() for e in _bad_share(_bad_proof(envs, ids, later), ids, deal)],
        "bad share point": [e.encode() for e in _bad_share_point(envs, ids, last_deal)],
    }
    damaged = bytearray(cases["damage before a bad proof"][first + 3])
    damaged[-5] ^= 1
    cases["damage before a bad proof"][first + 3] = bytes(damaged)
    got = {name: _same(f) for name, f in cases.items()}
    assert (got["bad proof, rest re-signed"]["verdict"], got["bad proof, rest re-signed"]["index"]) == ("cheat", later)
    assert got["bad proof, rest left as it was"]["index"] == later
    assert (got["two bad proofs"]["index"], got["two bad proofs"]["rule"]) == (first, "shuffle")
    assert (got["damage before a bad proof"]["verdict"], got["damage before a bad proof"]["index"]) == ("corrupt", first + 3)
    assert got["honest"]["verdict"] == "ok"
    assert (got["bad share, rest re-signed"]["index"], got["bad share, rest re-signed"]["rule"]) == (deal, "share")
    assert got["bad share after a bad proof"]["index"] == min(deal, later)
    assert (got["bad share point"]["verdict"], got["bad share point"]["index"]) == ("cheat", last_deal)


def test_the_command_takes_jobs(tmp_path, capsys):
    vec = json.loads((VECTORS / "game-wrong-shuffle-proof.json").read_text("utf-8"))
    path = tmp_path / "t.chn"
    path.write_bytes(unblob(vec["input"]["transcript"]))
    outs = []
    for jobs in ("1", "2"):
        assert cli.main(["audit", "--json", "--jobs", jobs, str(path)]) == 1
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and json.loads(outs[0])["rule"] == "shuffle"
    assert cli.main(["audit", "--jobs", "0", str(path)]) == 2
