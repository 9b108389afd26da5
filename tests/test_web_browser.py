"""The browser table in a real browser: Playwright driving Debian's Chromium.

Two kinds of test:

* **The page alone** (fast): the page's files are served to the browser by Playwright's router
  (with the server's content security policy) and its WebSocket is answered by the test, which
  feeds it the sample states of ``tests/web_states/`` and reads what the page sends back. Every
  state must draw without a script error or a CSP violation, every card must have a text
  alternative, and clicks, drags and keys must send the messages of docs/web.md.
* **A real seat** (slow): ``p2p-chinchon play --web --no-browser --web-port 0`` in a subprocess
  against bot peers, its page opened from the printed address, a whole game played by clicks
  and drags, a reload and a second tab mid-hand, a close with its confirmation, a rematch; and
  ``host --web`` with a joiner for the lobby's approval and agree.

Playwright's sync API cannot run inside trio's loop, so these are plain sync tests. Skipped when
``/usr/bin/chromium`` or Playwright is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from harness import free_port

# every test here drives a real Chromium (a process of its own): the full suite, not the fast lane
pytestmark = pytest.mark.slow

CHROMIUM = "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip(f"no browser: {CHROMIUM} is missing (apt-get install chromium)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "p2p_chinchon" / "web" / "static"
STATES = Path(__file__).resolve().parent / "web_states"
ORIGIN = "http://127.0.0.1:8765"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}
WAIT_S = 60.0  # a generous bound on one step of a real game (bots answer in milliseconds)


def fixture_states() -> dict[str, dict[str, Any]]:
    """name -> STATE of every sample state in tests/web_states/."""
    out = {}
    for path in sorted(STATES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = data.get("state", data) if isinstance(data, dict) else data
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


# ---------------------------------------------------------------- the page alone


def _serve_static(route: Any) -> None:
    path = route.request.url.removeprefix(ORIGIN).split("?")[0]
    name = "index.html" if path == "/" else path.removeprefix("/static/")
    file = (STATIC / name).resolve()
    if STATIC.resolve() not in file.parents or not file.is_file():
        route.fulfill(status=404, body="not found")
        return
    route.fulfill(status=200, body=file.read_bytes(),
                  headers={"content-type": TYPES.get(file.suffix, "application/octet-stream"),
                           "content-security-policy": CSP})


@dataclass
class FakeTable:
    """One page whose WebSocket is the test: ``show(state)`` sends a state, ``sent`` is what the
    page sent back (parsed), ``errors`` every script error and console error (a CSP violation
    is one)."""

    page: Any
    sent: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    socket: Any = None

    def show(self, state: dict[str, Any]) -> None:
        assert self.socket is not None
        self.socket.send(json.dumps({"type": "state", "state": state}))
        self.page.wait_for_function(f"document.body.dataset.phase === {json.dumps(state['phase'])}")

    def wait_sent(self, count: int) -> list[dict[str, Any]]:
        deadline = time.monotonic() + 10
        while len(self.sent) < count and time.monotonic() < deadline:
            self.page.wait_for_timeout(20)
        return self.sent


def open_fake(browser: Any, viewport: str = "desktop") -> FakeTable:
    page = browser.new_page(viewport=VIEWPORTS[viewport])
    table = FakeTable(page)
    page.on("pageerror", lambda e: table.errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: table.errors.append(f"console: {m.text}") if m.type == "error" else None)

    def on_socket(ws: Any) -> None:
        table.socket = ws
        ws.on_message(lambda m: table.sent.append(json.loads(m)))

    page.route_web_socket("**/ws", on_socket)
    page.route(f"{ORIGIN}/**", _serve_static)
    page.goto(f"{ORIGIN}/")
    page.wait_for_function("true")
    deadline = time.monotonic() + 10
    while table.socket is None and time.monotonic() < deadline:
        page.wait_for_timeout(20)
    assert table.socket is not None, "the page never opened its WebSocket"
    return table


STATE_NAMES = sorted(p.stem for p in STATES.glob("*.json"))


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
@pytest.mark.parametrize("name", STATE_NAMES)
def test_every_sample_state_draws(browser: Any, name: str, viewport: str, tmp_path: Path) -> None:
    state = fixture_states()[name]
    table = open_fake(browser, viewport)
    try:
        table.show(state)
        page = table.page
        page.screenshot(path=str(tmp_path / f"{name}-{viewport}.png"))
        assert table.errors == []
        labels = page.eval_on_selector_all("svg.card-svg", "els => els.map(e => e.getAttribute('aria-label'))")
        assert all(label and label.strip() for label in labels), labels
        assert page.locator("#hand .card").count() == len(state["hand"])
        for card in state["hand"]:  # each card of the hand, named as the server words it
            assert page.locator(f'#hand .card[data-id="{card["id"]}"]').get_attribute("aria-label").startswith(card["alt"])
        if state.get("question"):
            assert page.locator("#question-text").inner_text() == state["question"]["text"]
            assert page.locator("#btn-block").count() == (1 if state["question"]["block"] else 0)
        if state.get("lobby") and state["lobby"].get("code_word"):
            assert page.locator(".code").inner_text() == state["lobby"]["code_word"]
        if state.get("ended"):
            assert state["ended"]["how"] in page.locator("#ended").inner_text()
        # nothing wider than the window: no sideways scrolling at 390 px
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    finally:
        table.page.close()


def test_every_card_face_has_words(browser: Any) -> None:
    """Every rank of both decks, the jokers and the backs draw as labelled SVG."""
    table = open_fake(browser)
    try:
        found = table.page.evaluate("""async () => {
          const m = await import('/static/cards.js');
          const out = [];
          for (const [deck, suits] of [['french', 'dhsc'], ['spanish', 'oceb']]) {
            for (const s of suits) for (const r of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]) {
              const e = m.cardElement({id: r + s + '0', rank: r, suit: s, alt: `${r} ${s}`, joker: false,
                                       wild: r === 1}, deck, {wildWord: 'wild'});
              out.push([e.getAttribute('aria-label'), e.getAttribute('role'), e.querySelectorAll('path,circle').length]);
            }
          }
          const j = m.cardElement({id: '0d0', rank: 0, suit: 'd', alt: 'joker', joker: true, wild: false}, 'french');
          out.push([j.getAttribute('aria-label'), j.getAttribute('role'), 1]);
          const b = m.cardBack('spanish', 'card back');
          out.push([b.getAttribute('aria-label'), b.getAttribute('role'), 1]);
          return out;
        }""")
        assert len(found) == 2 * 4 * 13 + 2
        assert all(role == "img" and label and shapes > 0 for label, role, shapes in found)
        assert found[0][0] == "1 d, wild"  # the wild card says so
        assert table.errors == []
    finally:
        table.page.close()


def _intents(sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in sent if m.get("type") in ("intent", "answer", "pick", "order", "hint", "regroup", "pick_table")]


def test_draw_by_click_drag_and_key(browser: Any) -> None:
    state = fixture_states()["my_turn_draw"]
    table = open_fake(browser)
    try:
        table.show(state)
        page = table.page
        page.click("#stock")
        page.drag_and_drop("#discard", "#hand")
        page.keyboard.press("s")
        page.keyboard.press("d")
        sent = table.wait_sent(4)
        assert _intents(sent) == [
            {"type": "intent", "intent": "draw", "source": "stock"},
            {"type": "intent", "intent": "draw", "source": "discard"},
            {"type": "intent", "intent": "draw", "source": "stock"},
            {"type": "intent", "intent": "draw", "source": "discard"},
        ]
        assert table.errors == []
    finally:
        page.close()


def test_pick_discard_reorder_and_close(browser: Any) -> None:
    state = fixture_states()["my_turn_discard"]
    hand = state["hand"]
    table = open_fake(browser)
    page = table.page
    try:
        table.show(state)
        first, second, last = hand[0]["id"], hand[1]["id"], hand[-1]["id"]
        page.click(f'#hand .card[data-id="{first}"]')  # pick
        page.drag_and_drop(f'#hand .card[data-id="{last}"]', "#discard")  # throw by dragging
        # drag the first card onto the right half of the second: it moves after it
        box = page.locator(f'#hand .card[data-id="{second}"]').bounding_box()
        src = page.locator(f'#hand .card[data-id="{first}"]').bounding_box()
        page.mouse.move(src["x"] + 10, src["y"] + 30)
        page.mouse.down()
        page.mouse.move(src["x"] + 30, src["y"] + 40, steps=4)
        page.mouse.move(box["x"] + box["width"] - 4, box["y"] + 40, steps=6)
        page.mouse.up()
        option = state["close_options"][0]["card"]["id"]
        page.locator("#actions button.close").first.click()
        sent = _intents(table.wait_sent(4))
        assert sent[0] == {"type": "pick", "card": first}
        assert sent[1] == {"type": "intent", "intent": "discard", "card": last}
        order = [c["id"] for c in hand]
        display = [hand[i]["id"] for g in state["groups"] for i in g["cards"]]
        assert set(display) == set(order)
        display.remove(first)
        display.insert(display.index(second) + 1, first)
        assert sent[2] == {"type": "order", "cards": display}
        assert sent[3] == {"type": "intent", "intent": "close", "card": option}
        assert table.errors == []
    finally:
        page.close()


def test_keys_as_in_the_terminal(browser: Any) -> None:
    state = fixture_states()["my_turn_discard"]
    table = open_fake(browser)
    page = table.page
    try:
        table.show(state)
        order = [state["hand"][i]["id"] for g in state["groups"] for i in g["cards"]]
        page.keyboard.press("2")  # the second card as shown
        page.keyboard.press("h")
        page.keyboard.press("Enter")  # throw the picked card
        page.keyboard.press("g")
        page.keyboard.press("q")
        sent = _intents(table.wait_sent(5))
        assert sent[:5] == [
            {"type": "pick", "card": order[1]},
            {"type": "hint"},
            {"type": "intent", "intent": "discard", "card": order[1]},
            {"type": "regroup"},
            {"type": "intent", "intent": "leave"},
        ]
        page.keyboard.press("p")  # the pile's history opens beside the table
        assert page.locator("#panel").is_visible()
        assert page.locator("#panel .card").count() == sum(1 for p in state["pile"] if p.get("card"))
        page.keyboard.press("?")  # one panel at a time: the help replaces the pile
        assert page.locator("#panel h1").inner_text() == state["texts"]["web_keys"]
        assert page.locator("#panel .card").count() == 0
        assert table.errors == []
    finally:
        page.close()


def test_questions_answer_yes_no_and_block(browser: Any) -> None:
    states = fixture_states()
    table = open_fake(browser)
    page = table.page
    try:
        lobby = states["lobby_host"]
        table.show(lobby)
        qid = lobby["question"]["id"]
        page.click("#btn-block")
        close = states["close_confirm"]
        table.show(close)
        page.keyboard.press("y")
        sent = _intents(table.wait_sent(2))
        assert sent == [{"type": "answer", "id": qid, "value": "block"},
                        {"type": "answer", "id": close["question"]["id"], "value": True}]
        assert page.locator("#question").is_hidden()
        assert table.errors == []
    finally:
        page.close()


def test_the_lobby_agrees_and_the_picker_picks(browser: Any) -> None:
    states = fixture_states()
    joiner = dict(states["lobby_joiner"])
    table = open_fake(browser)
    page = table.page
    try:
        joiner["question"] = None
        joiner["lobby"] = {**joiner["lobby"], "can_agree": True, "agreed": False}
        table.show(joiner)
        page.click("#btn-agree")
        picker = states["picker"]
        table.show(picker)
        page.locator(".table-choice").first.click()
        sent = _intents(table.wait_sent(2))
        assert sent == [{"type": "intent", "intent": "agree"},
                        {"type": "pick_table", "index": picker["picker"]["tables"][0]["index"]}]
        assert table.errors == []
    finally:
        page.close()


def test_showdown_lay_offs_land_on_their_meld(browser: Any) -> None:
    state = fixture_states()["showdown"]
    table = open_fake(browser)
    page = table.page
    try:
        table.show({**state, "showdown_held": True})
        sd = state["showdown"]
        for hand in sd["hands"]:
            box = page.locator(f'.sd-hand[data-seat="{hand["seat"]}"]')
            assert box.locator(".meld-row").count() == len(hand["melds"])
            for lo in hand["laid_off"]:
                if lo["onto_seat"] is None or lo["onto_meld"] is None:
                    continue
                target = page.locator(f'.sd-hand[data-seat="{lo["onto_seat"]}"] .meld-row').nth(lo["onto_meld"])
                assert target.locator(f'.laid-off svg[data-card="{lo["card"]["id"]}"]').count() == 1
        page.click("#btn-continue")
        assert _intents(table.wait_sent(1)) == [{"type": "intent", "intent": "showdown_seen"}]
        assert page.locator("#showdown").is_hidden()
        page.keyboard.press("l")  # the last showdown again, from the keyboard
        assert page.locator("#showdown").is_visible()
        assert table.errors == []
    finally:
        page.close()


def test_the_buy_back_offer_stands_on_the_showdown_sheet(browser: Any) -> None:
    """A seat that went out is asked to buy back in while the showdown sheet covers the action
    bar: the offer is on the sheet itself, or the turn clock answers it unseen."""
    state = fixture_states()["showdown"]
    table = open_fake(browser)
    page = table.page
    try:
        table.show({**state, "showdown_held": True, "reentry_offer": True})
        sheet = page.locator("#showdown")
        assert sheet.is_visible()
        sheet.get_by_role("button", name=state["texts"].get("web_reenter_yes") or "Buy back in").click()
        assert _intents(table.wait_sent(1)) == [{"type": "intent", "intent": "reenter", "accept": True}]
        assert table.errors == []
    finally:
        page.close()


def test_the_game_over_sheet_says_what_the_seat_waits_for(browser: Any) -> None:
    """Between the game's end and the rematch question the seat waits (the others' records,
    their votes): the sheet says for what, never a silent wait."""
    state = fixture_states()["game_over"]
    table = open_fake(browser)
    page = table.page
    try:
        waiting = "waiting for Bruno to confirm it holds the whole record (0:25)"
        table.show({**state, "status": waiting, "question": None})
        page.locator("#showdown").get_by_text(waiting).wait_for()
        assert table.errors == []
    finally:
        page.close()


def test_assets_are_small_and_local() -> None:
    files = [p for p in STATIC.iterdir() if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 1_000_000
    for p in files:
        text = p.read_text(encoding="utf-8")
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text), p.name  # nothing from elsewhere
        if p.suffix == ".html":
            assert not re.search(r"<script(?![^>]*\bsrc=)", text), p.name  # no inline script
            assert " style=" not in text and not re.search(r"\son[a-z]+=", text), p.name


# ---------------------------------------------------------------- a real seat


@dataclass
class Seat:
    """A ``p2p-chinchon`` process serving its page; ``url`` the address it printed."""

    proc: subprocess.Popen[str]
    url: str
    lines: list[str]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_seat(args: list[str], tmp_path: Path, name: str = "seat") -> Seat:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / f"{name}-config"),
           "XDG_DATA_HOME": str(tmp_path / f"{name}-data"), "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PYTHONUNBUFFERED": "1", "BROWSER": "false"}
    proc = subprocess.Popen([sys.executable, "-m", "p2p_chinchon", *args, "--web", "--no-browser",
                             "--web-port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path)
    lines: list[str] = []
    found: list[str] = []
    got = threading.Event()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            m = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
            if m and not found:
                found.append(m.group(0))
                got.set()
        got.set()

    threading.Thread(target=reader, daemon=True).start()
    if not got.wait(WAIT_S) or not found:
        proc.kill()
        raise AssertionError("the seat printed no address:\n" + "".join(lines))
    return Seat(proc, found[0], lines)


class LivePage:
    """A page on a real seat; ``state`` is the last state the server sent (read off the
    WebSocket's frames, as the page got them)."""

    def __init__(self, browser: Any, url: str, viewport: str = "desktop", context: Any = None) -> None:
        self.context = context or browser.new_context(viewport=VIEWPORTS[viewport])
        self.page = self.context.new_page()
        self.states: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("websocket", self._socket)
        self.page.goto(url)
        self.until(lambda s: True, "a first state")

    def _socket(self, ws: Any) -> None:
        def frame(payload: Any) -> None:
            msg = json.loads(payload)
            if msg.get("type") == "state":
                self.states.append(msg["state"])
            elif msg.get("type") == "rejected":
                self.rejected.append(msg["reason"])
        ws.on("framereceived", frame)

    @property
    def state(self) -> dict[str, Any]:
        return self.states[-1]

    def until(self, ok: Callable[[dict[str, Any]], bool], what: str, timeout: float = WAIT_S) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.states and ok(self.states[-1]):
                return self.states[-1]
            self.page.wait_for_timeout(25)
        last = self.states[-1] if self.states else None
        raise AssertionError(f"waited for {what}; last state: phase={last and last.get('phase')} "
                             f"status={last and last.get('status')!r} message={last and last.get('message')!r}")

    def after(self, act: Callable[[], None], what: str) -> dict[str, Any]:
        n = len(self.states)
        act()
        return self.until(lambda s: len(self.states) > n, what)


def _display(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [state["hand"][i] for g in state["groups"] for i in g["cards"]]


RETRY = "retry"  # the page did not yet offer what its last state asks: read the state again
# a click waits 1 s for its target, then the state is read again: up to 30 times (30 s in all),
# so a target drawn late (an overlay going away) costs about a second, not a 5 s timeout
ACT_MS, RETRIES = 1000, 30


def _act(act: Callable[[], None]) -> bool:
    """Do one click or drag; False when the page did not offer its target within 1 s (the
    state frame is read off the socket before the page has drawn it, or an overlay covers it)."""
    try:
        act()
    except sync_api.TimeoutError:
        return False
    return True


def play_step(lp: LivePage, turn: int, close: bool = True) -> str:
    """Do what the page's state asks once, as a person would (clicks and drags); the kind of
    step done, "" when there was nothing to do, or :data:`RETRY` when the page did not offer
    it yet."""
    s, page = lp.state, lp.page
    t = {"timeout": ACT_MS}
    if s.get("ended"):
        return "ended"
    if s.get("question"):
        return "answer" if _act(lambda: page.click("#btn-yes", **t)) else RETRY
    if s.get("lobby") and s["lobby"].get("can_agree"):
        return "agree" if _act(lambda: page.click("#btn-agree", **t)) else RETRY
    if page.locator("#btn-continue").is_visible():
        if not _act(lambda: page.click("#btn-continue", **t)):  # the hold ran out meanwhile
            assert not page.locator("#btn-continue").is_visible()
            return ""
        return "continue"
    if s.get("reentry_offer"):
        return "reenter" if _act(lambda: page.locator("#actions button.primary").first.click(**t)) else RETRY
    if s.get("my_turn") and s.get("step") == "draw":
        if turn % 3 == 0:
            done = _act(lambda: page.drag_and_drop("#stock", "#hand", **t))
        elif turn % 3 == 1 or not s["can_draw"]["discard"]:
            done = _act(lambda: page.click("#stock", **t))
        else:
            done = _act(lambda: page.drag_and_drop("#discard", "#hand", **t))
        return "draw" if done else RETRY
    if s.get("can_discard"):
        if close and s["close_options"] and not s["close_options"][0]["over_limit"]:
            return "close" if _act(lambda: page.locator("#actions button.close").first.click(**t)) else RETRY
        dead = [c for g in s["groups"] if g["kind"] != "meld" for c in (s["hand"][i] for i in g["cards"])]
        card = max(dead or _display(s), key=lambda c: (c["rank"] if 0 < c["rank"] < 10 else 10))
        target = f'#hand .card[data-id="{card["id"]}"]'
        if turn % 2:
            return "discard" if _act(lambda: page.drag_and_drop(target, "#discard", **t)) else RETRY
        if s["picked"] is None or s["hand"][s["picked"]]["id"] != card["id"]:
            if not _act(lambda: page.click(target, **t)):  # pick (a second click would throw)
                return RETRY
        return "discard" if _act(lambda: page.click("#discard", **t)) else RETRY
    return ""


def moment(s: dict[str, Any]) -> tuple[Any, ...]:
    """What a step changes (a pick or a hint does not): the phase, whose turn and step, the
    hand, the open question, the held showdown, the lobby's agreement, the end."""
    q = s.get("question")
    return (s["phase"], s.get("hand_no"), s.get("my_turn"), s.get("step"), tuple(c["id"] for c in s["hand"]),
            q and q["id"], s.get("showdown_held"), bool(s.get("lobby") and s["lobby"]["agreed"]),
            s.get("reentry_offer"), bool(s.get("ended")), s.get("stock_size"), s.get("can_discard"))


def _moved_on(before: tuple[Any, ...]) -> Callable[[dict[str, Any]], bool]:
    return lambda s: moment(s) != before


def play_until(lp: LivePage, done: Callable[[dict[str, Any]], bool], what: str, *,
               close: bool = True, limit: int = 2000) -> list[str]:
    steps: list[str] = []
    retries = 0
    for turn in range(limit):
        if done(lp.state):
            return steps
        before = moment(lp.state)
        step = play_step(lp, turn, close)
        if step == "ended":
            break
        if step == RETRY:
            retries += 1
            assert retries < RETRIES, f"{what}: the page never offered what its state asks: {moment(lp.state)}"
            lp.page.wait_for_timeout(100)
            continue
        retries = 0
        steps.append(step)
        lp.until(_moved_on(before), f"{what}: an answer to {step or 'waiting'}")
    assert done(lp.state), f"never reached {what}: {steps[-20:]}"
    return steps


# a showdown stays 3 s, not 30: these games play through showdowns, and one the page has not
# yet offered to put away is waited out (the hold and its button: the fake-table tests above)
GAME = ["play", "--bots", "1", "--seed", "11", "--proof-rounds", "4", "--name", "Ana",
        "--lang", "en", "--option", "limit=25", "--option", "showdown_time=3", "--bot-level", "easy"]


@pytest.mark.slow
def test_a_whole_game_by_clicks_and_drags_then_a_rematch(browser: Any, tmp_path: Path) -> None:
    seat = start_seat([*GAME, "--option", "limit=10"], tmp_path)  # a whole game, not a long one
    try:
        lp = LivePage(browser, seat.url)
        steps = play_until(lp, lambda s: s["phase"] == "over", "the game's end")
        assert {"draw", "discard"} <= set(steps)
        over = lp.state
        assert over["winner"] is not None and over["scores"]["totals"]
        assert lp.page.locator("#showdown .score-sheet").is_visible()
        lp.until(lambda s: s.get("question") is not None, "the rematch question")
        lp.page.click("#btn-yes")
        lp.until(lambda s: s["phase"] not in ("over",) and s["hand_no"] == 1 and not s.get("question"),
                 "the rematch's first hand")
        assert lp.errors == []
    finally:
        seat.stop()


@pytest.mark.slow
def test_a_reload_and_a_second_tab_see_the_same_hand(browser: Any, tmp_path: Path) -> None:
    seat = start_seat(GAME, tmp_path)
    try:
        lp = LivePage(browser, seat.url)
        play_until(lp, lambda s: bool(s.get("my_turn") and s.get("step") == "discard"), "my discard",
                   close=False)
        before = [c["id"] for c in lp.state["hand"]]
        # a second tab in the same browser (the cookie) sees the same hand at once
        tab = LivePage(browser, seat.url.split("?")[0], context=lp.context)
        assert [c["id"] for c in tab.state["hand"]] == before
        # a move made in one tab shows in the other
        card = _display(lp.state)[-1]["id"]
        lp.page.drag_and_drop(f'#hand .card[data-id="{card}"]', "#discard")
        lp.until(lambda s: card not in [c["id"] for c in s["hand"]], "the discard")
        tab.until(lambda s: card not in [c["id"] for c in s["hand"]], "the discard in the second tab")
        # a reload mid-hand: the same state, nothing lost
        hand = [c["id"] for c in lp.state["hand"]]
        lp.states.clear()
        lp.page.reload()
        lp.until(lambda s: s["phase"] in ("playing", "showdown", "hand_over", "restocking"), "the state again")
        assert [c["id"] for c in lp.state["hand"]] == hand or lp.state["hand_no"] > 1
        assert lp.page.locator("#hand .card").count() == len(lp.state["hand"])
        assert lp.errors == [] and tab.errors == []
    finally:
        seat.stop()


@pytest.mark.slow
def test_a_close_asks_first(browser: Any, tmp_path: Path) -> None:
    seat = start_seat(GAME, tmp_path)
    try:
        lp = LivePage(browser, seat.url)
        play_until(lp, lambda s: bool(s.get("my_turn") and s.get("close_options")), "a hand I may close",
                   close=False)
        option = lp.state["close_options"][0]
        lp.page.locator("#actions button.close").first.click()
        asked = lp.until(lambda s: s.get("question") is not None, "the close confirmation")
        assert lp.page.locator("#question").is_visible()
        assert lp.page.locator("#question-text").inner_text() == asked["question"]["text"]
        lp.page.click("#btn-yes")
        shown = lp.until(lambda s: s.get("showdown") is not None and s["showdown"]["closer"] == s["me"],
                         "my close's showdown")
        assert option["card"]["id"] not in [c["id"] for c in shown["hand"]]
        assert lp.errors == []
    finally:
        seat.stop()


@pytest.mark.slow
def test_the_lobby_approval_and_agree(browser: Any, tmp_path: Path) -> None:
    """A host and a joiner, both in the browser: the host's page shows its fingerprint and asks
    to seat the joiner (with refuse-the-address); the joiner's page agrees; the game starts."""
    port = free_port()
    host = start_seat(["host", "--name", "Ana", "--table-name", "webtest", "--lang", "en", "--seats", "2",
                       "--port", str(port), "--bind", "127.0.0.1", "--no-mdns", "--proof-rounds", "4"],
                      tmp_path, "host")
    joiner = None
    try:
        ana = LivePage(browser, host.url)
        ana.until(lambda s: s["phase"] == "lobby", "the lobby")
        assert ana.page.locator("#lobby").is_visible()
        assert ana.state["my_fingerprint"] in ana.page.locator("#lobby").inner_text()
        joiner = start_seat(["join", "--name", "Ben", "--lang", "en", "--connect", f"127.0.0.1:{port}",
                             "--bind", "127.0.0.1"], tmp_path, "ben")
        ben = LivePage(browser, joiner.url)
        asked = ana.until(lambda s: s.get("question") is not None, "the seat approval question")
        assert asked["question"]["block"] and ana.page.locator("#btn-block").is_visible()
        assert "Ben" in ana.page.locator("#question-text").inner_text()
        ana.page.click("#btn-yes")
        for lp in (ben, ana):  # whoever is asked to agree agrees, by the button
            lp.until(lambda s: bool(s["phase"] != "lobby" or (s.get("lobby") and (s["lobby"]["can_agree"]
                                                                                 or s["lobby"]["agreed"]))),
                     "the agree button")
            if lp.state.get("lobby") and lp.state["lobby"]["can_agree"]:
                lp.page.click("#btn-agree")
        seats = ben.until(lambda s: s["phase"] != "lobby", "the game after everyone agreed")["seats"]
        assert sorted(x["name"] for x in seats) == ["Ana", "Ben"]
        ana.until(lambda s: s["phase"] != "lobby", "the host's game")
        assert ana.errors == [] and ben.errors == []
    finally:
        if joiner is not None:
            joiner.stop()
        host.stop()


SHOTS = {"table": ("my_turn_discard", {}), "showdown": ("showdown", {"showdown_held": True}),
         "lobby": ("lobby_host", {})}


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_screenshots(browser: Any, viewport: str, tmp_path: Path) -> None:
    """The table, the showdown and the lobby as PNG, each under 150 KB: into docs/images/ when
    P2PC_SCREENSHOTS names that folder (how the README's pictures are made), else a temporary one."""
    folder = Path(os.environ.get("P2PC_SCREENSHOTS") or tmp_path)
    size = VIEWPORTS[viewport]
    for shot, (name, extra) in SHOTS.items():
        table = open_fake(browser, viewport)
        try:
            table.show({**fixture_states()[name], **extra})
            path = folder / f"{shot}-{size['width']}x{size['height']}.png"
            table.page.screenshot(path=str(path))
            assert path.stat().st_size < 150_000, path
            assert table.errors == []
        finally:
            table.page.close()
