"""``p2p-chinchon replay``: the replay model of a recorded game (web/replay.py) and its page.

The records are the protocol's game vectors (protocol/vectors: whole games audited ``ok``, and
games with a validly signed illegal move), and copies of them with a byte flipped or cut short.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from p2p_chinchon import audit
from p2p_chinchon.transcript import parse_transcript
from p2p_chinchon.web.replay import replay_model
from vector_blobs import unblob

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"


def _record(tmp_path: Path, name: str) -> Path:
    """The transcript of vector ``name`` as a file."""
    vec = json.loads((VECTORS / f"{name}.json").read_text("utf-8"))
    path = tmp_path / f"{name}.chn"
    path.write_bytes(unblob(vec["input"]["transcript"]))
    return path


def _frames(path: Path) -> list[bytes]:
    return parse_transcript(path.read_bytes()).frames


def _flipped(tmp_path: Path, name: str, index: int, at: int) -> Path:
    """Vector ``name`` with one byte of envelope ``index`` flipped (``at`` bytes from its end:
    inside the body or the signature, never a msgpack header)."""
    frames = _frames(_record(tmp_path, name))
    frame = bytearray(frames[index])
    frame[-at] ^= 0x01
    frames[index] = bytes(frame)
    path = tmp_path / f"{name}-flipped.chn"
    path.write_bytes(b"".join(frames))
    return path


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = _record(tmp_path_factory.mktemp("replay"), "game-ok-3-seats")
    return path, replay_model(path)


def test_model_is_json_and_holds_the_audit_verdict_and_scores(game):
    path, model = game
    report = audit.audit_file(path)
    assert report.verdict == "ok"
    assert json.loads(json.dumps(model)) == model
    assert model["verdict"]["verdict"] == "ok" and model["verdict"]["winner"] == report.winner
    assert model["failed"] is None
    assert model["scores"]["rows"] == report.scores
    assert model["scores"]["totals"][-1] == report.totals
    assert [h["penalties"] for h in model["hands"]] == report.scores
    assert [p["name"] for p in model["players"]] == [p["name"] for p in report.players]
    assert len(model["steps"]) == report.envelopes
    assert [s["index"] for s in model["steps"]] == list(range(report.envelopes))
    # the CARD objects of the live page's contract
    card = model["cards"][0]
    assert set(card) >= {"id", "rank", "suit", "label", "alt", "joker", "wild"}
    assert len({c["id"] for c in model["cards"]}) == len(model["cards"])


def test_every_hand_is_revealed_by_its_own_secrets_after_its_moves(game):
    path, model = game
    envs = parse_transcript(path.read_bytes()).envelopes
    assert len(model["hands"]) == 3
    for hand in model["hands"]:
        assert hand["revealed"]
        at = hand["revealed_at"]
        assert envs[at].kind == "secret"
        steps = model["steps"][hand["first_step"]: hand["last_step"] + 1]
        assert all(s["index"] < at for s in steps if s["kind"] in ("draw", "discard", "close", "show"))
        # every card of the hand: 7 per seat dealt, the upcard, the stock; one deck, each card once
        dealt = [c for cards in hand["dealt"].values() for c in cards]
        everything = dealt + [hand["upcard"]] + hand["stock"]
        assert None not in everything
        assert sorted(everything) == list(range(len(model["cards"])))
        # during the hand the other seats' cards were hidden: known here only from the secrets
        first = next(s for s in steps if any(seat["cards"] for seat in s["seats"]))
        assert all(public == 0 for seat in first["seats"] for _, public in seat["cards"])
        assert [c for seat in first["seats"] for c, _ in seat["cards"]] == dealt
        assert first["pile"] == [[hand["upcard"], 0]]  # the upcard opens with the last deal shares


def test_the_showdown_lays_out_every_shown_hand(game):
    _, model = game
    for hand in model["hands"]:
        sd = hand["showdown"]
        assert sd is not None and sd["hands"][0]["seat"] == sd["closer"]
        assert [h["penalty"] for h in sorted(sd["hands"], key=lambda h: h["seat"])] == hand["penalties"]
        shown = next(s for s in model["steps"][hand["first_step"]:] if s["phase"] == "hand_over" or s["kind"] == "secret")
        for h in sd["hands"]:
            # melds, lay-offs and deadwood are the seat's cards, every one face up by then
            laid = [x["card"] for x in h["laid_off"]]
            cards = sorted(c for m in h["melds"] for c in m) + laid + h["deadwood"]
            held = [c for c, public in shown["seats"][h["seat"]]["cards"]]
            assert sorted(cards) == sorted(held)
            for x in h["laid_off"]:
                onto = next(o for o in sd["hands"] if o["seat"] == x["onto_seat"])
                assert 0 <= x["onto_meld"] < len(onto["melds"])


def test_a_hand_cut_before_its_secrets_keeps_its_hidden_cards_hidden(tmp_path):
    full = _record(tmp_path, "game-ok-3-seats")
    envs = parse_transcript(full.read_bytes()).envelopes
    frames = _frames(full)
    last_secret = max(i for i, e in enumerate(envs) if e.kind == "secret" and e.body["hand"] == 1)
    cut = tmp_path / "cut.chn"
    cut.write_bytes(b"".join(frames[:last_secret]))  # hand 2 (index 1) lacks its last secret
    model = replay_model(cut)
    assert model["verdict"]["verdict"] == "incomplete" and model["failed"] is None
    first, second = model["hands"]
    assert first["revealed"] and not second["revealed"] and second["revealed_at"] is None
    # a closed hand opens every dealt card by its end (discarded or shown); the stock left and
    # the card the closer put face down stay hidden
    public = _public_cards(model, second)
    assert all(c in public for cards in second["dealt"].values() for c in cards if c is not None)
    assert None in second["stock"] and all(c in public for c in second["stock"] if c is not None)
    shown = {c for h in second["showdown"]["hands"] for c in _all_cards(h)}
    assert shown <= public and len(public) < len(model["cards"])
    # a card hidden at a step is there only if the record opens it later in the hand
    hidden = 0
    for s in model["steps"][second["first_step"]:]:
        for c, _public in [x for seat in s["seats"] for x in seat["cards"]] + s["pile"]:
            assert c is None or c in public
            hidden += c is None
    assert hidden


def _all_cards(shown: dict[str, Any]) -> set[int]:
    return {c for m in shown["melds"] for c in m} | {x["card"] for x in shown["laid_off"]} | set(shown["deadwood"])


def _public_cards(model: dict[str, Any], hand: dict[str, Any]) -> set[int]:
    steps = model["steps"][hand["first_step"]: hand["last_step"] + 1]
    return {c for s in steps for c, p in s["pile"] if p} | {c for s in steps for seat in s["seats"] for c, p in seat["cards"] if p}


@pytest.mark.parametrize(("at", "kind"), [(70, None), (10, "discard")], ids=["body", "signature"])
def test_a_flipped_byte_stops_the_replay_at_its_envelope(tmp_path, at, kind):
    """A byte of the body (the frame no longer decodes: no kind to name) or of the signature
    (it decodes, the signature fails)."""
    envs = parse_transcript(_record(tmp_path, "game-ok-3-seats").read_bytes()).envelopes
    index = next(i for i, e in enumerate(envs) if e.kind == "discard" and e.body["hand"] == 1)
    path = _flipped(tmp_path, "game-ok-3-seats", index, at)
    report = audit.audit_file(path)
    assert report.verdict == "corrupt" and report.index == index
    model = replay_model(path)
    assert model["verdict"]["verdict"] == "corrupt" and model["verdict"]["index"] == index
    assert model["failed"]["index"] == index and model["failed"]["reason"] == report.detail
    assert model["failed"]["kind"] == kind
    assert [s["index"] for s in model["steps"]] == list(range(index))
    assert len(model["hands"]) == 2 and not model["hands"][1]["revealed"]
    assert model["scores"]["rows"] == report.scores == [model["hands"][0]["penalties"]]


def test_a_signed_illegal_move_shows_the_cheat_at_its_envelope(tmp_path):
    """game-discard-not-held: a seat discards a card it does not hold, validly signed."""
    path = _record(tmp_path, "game-discard-not-held")
    report = audit.audit_file(path)
    model = replay_model(path)
    assert model["verdict"]["verdict"] == "cheat" == report.verdict
    failed = model["failed"]
    assert (failed["index"], failed["seat"], failed["rule"]) == (report.index, report.seat, report.rule)
    assert failed["kind"] == "discard"
    assert model["steps"][-1]["index"] == report.index - 1
    assert model["hands"] and not model["hands"][0]["revealed"]
