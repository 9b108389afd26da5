"""``p2p-chinchon replay``: the replay model of a recorded game (web/replay.py) and its page.

The records are the protocol's game vectors (protocol/vectors: whole games audited ``ok``, and
games with a validly signed illegal move), and copies of them with a byte flipped or cut short.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
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
        # the closer's face-down card: its last card, in no shown hand
        shown = {c for h in hand["showdown"]["hands"] for c in _all_cards(h)}
        assert hand["face_down"] is not None and hand["face_down"] not in shown
        assert hand["face_down"] not in [c for c, _ in model["steps"][hand["last_step"]]["pile"]]
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
    assert second["face_down"] is None and first["face_down"] is not None
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
    assert report.index is not None and model["steps"][-1]["index"] == report.index - 1
    assert model["hands"] and not model["hands"][0]["revealed"]


# --- the served page, in a real Chromium ------------------------------------------------------

CHROMIUM = "/usr/bin/chromium"
IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"


@contextlib.contextmanager
def _served(path: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``p2p-chinchon replay PATH --no-browser`` in a child process: (its URL with the token,
    the process), stopped with Ctrl-C afterwards."""
    proc = subprocess.Popen([sys.executable, "-m", "p2p_chinchon", "replay", str(path), "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:  # the summary, then the address
            found = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line)
            if found:
                url = found.group(0)
                break
        assert url is not None, "the replay printed no address"
        yield url, proc
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser: Any, url: str, width: int = 1280, height: int = 800) -> Any:
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")
    page.errors = errors
    return page


def _cards_of(page: Any, seat: int) -> list[str]:
    """The cards drawn in a seat's box: each face's data-card id, "back" for a back."""
    return page.eval_on_selector_all(
        f".seat[data-seat='{seat}'] .cards .card-svg",
        "els => els.map(e => e.dataset.card || 'back')")


@pytest.mark.slow
def test_the_page_steps_through_a_whole_game(tmp_path, browser):
    path = _record(tmp_path, "game-ok-3-seats")
    model = replay_model(path)
    with _served(path) as (url, proc):
        # the address without its token, and a foreign Host, get nothing
        page = browser.new_page()
        assert page.goto(url.split("?")[0]).status == 403
        page.close()
        page = _open(browser, url)
        assert "?token" not in page.url  # the cookie took over
        assert "complete, valid game" in page.inner_text("#verdict")
        assert page.is_hidden("#failed")
        assert page.inner_text("#where").startswith("Before the deal")
        assert page.is_disabled("#prev")
        # the first hand: PageDown reaches its deal; the cards are drawn as the model has them
        page.keyboard.press("PageDown")
        assert page.inner_text("#where").startswith("Hand 1 of 3")
        hand = model["hands"][0]
        step = model["steps"][int(page.inner_text("#where").split("envelope ")[1].split("/")[0]) - 1]
        assert step["hand"] == 0 and step["pile"][0] == [hand["upcard"], 1]
        for seat in range(3):
            ids = [model["cards"][c]["id"] for c in hand["dealt"][str(seat)]]
            assert _cards_of(page, seat) == ids  # revealed at the hand's end: shown, marked
            assert page.locator(f".seat[data-seat='{seat}'] .hidden-known").count() == 7
        page.uncheck("#reveal")  # as the table saw it then: backs
        assert _cards_of(page, 0) == ["back"] * 7
        page.check("#reveal")
        # move by move (→, ←, the buttons) to the hand's showdown
        before = page.inner_text("#where")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowLeft")
        assert page.inner_text("#where") == before
        page.click("#next")
        assert page.inner_text("#where") != before
        assert page.is_hidden("#showdown")
        while page.is_hidden("#showdown"):
            page.keyboard.press("ArrowRight")
        sd = hand["showdown"]
        assert f"{model['players'][sd['closer']]['name']} closed" in page.inner_text("#showdown")
        for shown in sd["hands"]:
            row = page.locator(f"#showdown .shown[data-seat='{shown['seat']}']")
            assert row.locator(".meld").count() == len(shown["melds"])
            onto = [x for o in sd["hands"] for x in o["laid_off"] if x["onto_seat"] == shown["seat"]]
            assert row.locator(".laid").count() == len(onto)
        assert page.locator("#sheet tr").count() == 3  # head, hand 1, total
        assert page.locator("#plot svg polyline").count() == 3
        page.screenshot(path=str(tmp_path / "showdown.png"))
        # the last hands, to the end: every hand in the sheet
        page.keyboard.press("End")
        assert page.is_disabled("#next")
        assert page.locator("#sheet tr").count() == 5
        totals = page.locator("#sheet tr.total td").all_inner_texts()[1:]
        assert [int(t) for t in totals] == model["scores"]["totals"][-1]
        page.keyboard.press("PageUp")
        assert page.inner_text("#where").startswith("Hand 3 of 3 · 1/")
        page.keyboard.press("PageUp")
        assert page.inner_text("#where").startswith("Hand 2 of 3 · 1/")
        assert page.errors == []
        if os.environ.get("P2P_CHINCHON_SCREENSHOTS"):
            _screenshots(browser, url, "replay")
    assert proc.returncode == 0  # Ctrl-C: the audit's exit code


def _screenshots(browser: Any, url: str, name: str) -> None:
    """docs/images/NAME-1280.png and -390.png: the game's end (the last showdown, the plot)."""
    for width, height in ((1280, 800), (390, 844)):
        page = _open(browser, url, width, height)
        page.keyboard.press("End")
        page.screenshot(path=str(IMAGES / f"{name}-{width}.png"))
        page.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tampered", "cheat"])
def test_the_page_shows_a_failing_record_up_to_its_envelope(tmp_path, browser, name):
    if name == "tampered":
        envs = parse_transcript(_record(tmp_path, "game-ok-3-seats").read_bytes()).envelopes
        index = next(i for i, e in enumerate(envs) if e.kind == "discard" and e.body["hand"] == 1)
        path = _flipped(tmp_path, "game-ok-3-seats", index, 10)
        words = "the file is damaged"
    else:
        path = _record(tmp_path, "game-discard-not-held")
        words = "CHEAT"
    report = audit.audit_file(path)
    with _served(path) as (url, proc):
        page = _open(browser, url)
        assert words in page.inner_text("#verdict")
        assert page.is_visible("#failed")
        failed = page.inner_text("#failed")
        assert f"Envelope {report.index}" in failed and report.rule in failed and "Nothing after it" in failed
        if report.seat is not None:
            assert report.players[report.seat]["name"] in failed
        page.keyboard.press("End")
        where = page.inner_text("#where")
        assert f"envelope {report.index}/{report.index}" in where  # the last step: the one before it
        page.click("#every")  # every envelope: still none past the failing one
        page.keyboard.press("End")
        assert page.inner_text("#where").endswith(f"envelope {report.index}/{report.index}")
        assert page.errors == []
    assert proc.returncode == report.exit_code == 1


GAMES = sorted(VECTORS.glob("game-*.json"))


@pytest.mark.parametrize("vector", GAMES, ids=[p.stem for p in GAMES])
def test_every_game_vector_gives_a_model_that_agrees_with_its_audit(tmp_path, vector):
    """Restocks, re-entries, removals, voids, accusations, every cheat of the vectors: the
    model holds the audit's verdict and scores, its steps stop before a failing envelope, and
    a hand's hidden cards are there only when its secrets are."""
    path = _record(tmp_path, vector.stem)
    report = audit.audit_file(path)
    model = replay_model(path)
    assert json.loads(json.dumps(model)) == model
    assert model["verdict"]["verdict"] == report.verdict
    assert model["scores"]["rows"] == report.scores
    if report.totals and model["scores"]["totals"]:
        assert model["scores"]["totals"][-1] == report.totals
    stop = report.index if model["failed"] is not None else report.envelopes
    assert stop is not None
    assert [s["index"] for s in model["steps"]] == list(range(stop))
    for hand in model["hands"]:
        hidden = [c for cards in hand["dealt"].values() for c in cards] + hand["stock"]
        assert (None not in hidden) == hand["revealed"] or not hidden


def test_an_unreadable_file_exits_2(tmp_path, capsys):
    from p2p_chinchon import cli

    assert cli.main(["replay", str(tmp_path / "missing.chn"), "--no-browser"]) == 2
    assert "p2p-chinchon replay:" in capsys.readouterr().err
