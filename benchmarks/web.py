"""Benchmark of the browser table: a stock draw to its card image drawn on the page, and the
page's first load.

Usage: ``python benchmarks/web.py [--seed S] [--turns N] [--bots B] [--proof-rounds K] [--json]``
(or ``p2p-chinchon bench web ...``).

Starts ``p2p-chinchon play --web --no-browser --web-port 0`` with bot peers (the real protocol
on loopback, each bot its own process) and the node timing log on (``P2P_CHINCHON_TIMING``, see
``net/node.py``), opens the printed address in Debian's Chromium (Playwright's sync API,
``/usr/bin/chromium``) and measures:

* ``first_load_ms`` (``--loads`` fresh browser contexts, once the game is playing): from the
  navigation's start (the token's redirect included) to the page's first whole table state in
  the DOM (``state_in_dom``: the phase set and the hand's cards there) and to the frame after
  it (``state_drawn``: the next animation frame has run), beside the Navigation Timing marks
  (``response_end``, ``dom_content_loaded``, ``load_event_end``); medians and maxima;
* ``assets``: every response the page loads (Playwright's responses: URL path, status,
  content type, body bytes; Resource Timing's ``encodedBodySize``/``transferSize``), their total,
  and the first state message's bytes on the WebSocket;
* ``draw_to_image_ms``: for each of ``--turns`` of this seat's turns, from the click on the
  stock (``performance.now()`` at its ``pointerup``, when the page acts) to the drawn card's image
  in the hand (``to_dom``: a MutationObserver sees the new card's element with its SVG) and to the
  frame that draws it (``to_image``: the animation frame after that, once it has run); median and
  p95. ``split_ms`` cuts ``to_image`` (medians) with the node's timing log: click -> the
  intent sent on the WebSocket (``click_to_send``), -> the node accepts its own ``draw``
  (``send_to_node_draw``), -> the node accepts the last ``draw_share`` and opens the card
  (``node_draw_to_card``: the terminal's measure, for these very draws), -> the state message
  reaches the page (``card_to_message``), -> the card in the DOM (``message_to_dom``), -> the
  frame (``dom_to_frame``). The node's times are its wall clock (``time.time()``), the page's
  ``performance.timeOrigin + performance.now()``: the same clock on one machine;
* then discards a card (the highest of the deadwood, by a click on it and one on the pile) and
  waits for its next turn;
* ``terminal_draw_to_card_ms``: the terminal's figure: ``benchmarks/game.py``'s whole game at
  the same seats, k and seed, run in this invocation after the page's (skipped with
  ``--no-terminal``); and ``node_draw_to_card_ms``: the same measure over every seat's stock
  draws in the page's own game.

Targets: draw to image within 20 ms of the terminal's figure, first load under 300 ms, assets
under 1 MB. The benchmark stops itself after ``--turns`` turns (or at the game's end, or after
``--timeout`` seconds) and stops the seat and its bots.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import game as _game  # noqa: E402  (compile_package, draw_latencies, play_game, _pct, _read_logs)

CHROMIUM = "/usr/bin/chromium"
URL = re.compile(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+")
STEP_S = 60.0  # a generous bound on one step of the game (bots answer in milliseconds)

# Installed before the page's own script: times the WebSocket's messages and sends, the
# clicks, the first whole state drawn, and (once armed) the drawn card's image.
PROBE = r"""
(() => {
  const B = window.__bench = {lastMsg: null, firstBytes: null, sendAt: null, upAt: null,
                              firstDom: null, firstFrame: null, draw: null, drawn: null};
  B.state = null; B.version = 0;  // the last state the server sent, how many so far
  let waiters = [];
  // until(ok, after): the first state after the version `after` for which ok(state) holds
  B.until = (ok, after) => new Promise((resolve) => {
    // before the first state B.state is null: nothing to test yet (after may be -1)
    const w = () => B.version > after && B.state !== null && ok(B.state) && (resolve(B.state), true);
    if (!w()) waiters.push(w);
  });
  let firstDrawn;
  B.firstDrawn = new Promise((resolve) => { firstDrawn = resolve; });
  const afterFrame = (done) => requestAnimationFrame(() => {
    const ch = new MessageChannel();  // runs once the frame's rendering is done
    ch.port1.onmessage = () => done(performance.now());
    ch.port2.postMessage(0);
  });
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (ev) => {  // before the page's own listener
        B.lastMsg = performance.now();
        if (!String(ev.data).startsWith('{"type": "state"')) return;
        if (B.firstBytes === null) B.firstBytes = ev.data.length;
        setTimeout(() => {  // after the page has drawn it: the timed path stays the page's own
          B.state = JSON.parse(ev.data).state;
          B.version += 1;
          waiters = waiters.filter((w) => !w());
        }, 0);
      });
    }
    send(data) {
      if (typeof data === "string" && data.includes('"intent":"draw"')) B.sendAt = performance.now();
      return super.send(data);
    }
  };
  window.addEventListener("pointerup", () => { B.upAt = performance.now(); }, true);
  const firstState = new MutationObserver(() => {
    const phase = document.body && document.body.dataset.phase;
    if (B.firstDom !== null || !phase || phase === "connecting" || !document.querySelector("#hand .card svg")) return;
    B.firstDom = performance.now();
    firstState.disconnect();
    afterFrame((t) => { B.firstFrame = t; firstDrawn(t); });
  });
  firstState.observe(document, {subtree: true, childList: true, attributes: true});
  // arm(ids): the next card in #hand whose id is not in ids is the drawn one
  B.arm = (ids) => {
    const before = new Set(ids);
    const d = B.draw = {up: null, send: null, msg: null, dom: null, frame: null, card: null};
    B.upAt = B.sendAt = null;
    let drawn;
    B.drawn = new Promise((resolve) => { drawn = resolve; });
    const obs = new MutationObserver(() => {
      for (const c of document.querySelectorAll("#hand .card[data-id]")) {
        if (before.has(c.dataset.id) || !c.querySelector("svg")) continue;
        d.dom = performance.now();
        d.msg = B.lastMsg; d.up = B.upAt; d.send = B.sendAt; d.card = c.dataset.id;
        obs.disconnect();
        afterFrame((t) => { d.frame = t; drawn(d); });
        return;
      }
    });
    obs.observe(document.getElementById("hand"), {subtree: true, childList: true});
  };
})();
"""


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 2) if xs else None


def _stats(xs: list[float]) -> dict[str, Any]:
    return {"median": _median(xs), "p95": round(_game._pct(xs, 0.95), 2) if xs else None, "n": len(xs)}


class Seat:
    """``play --web --no-browser`` in its own process group; ``url`` the address it printed."""

    def __init__(self, args: list[str], folder: Path) -> None:
        env = {**os.environ, "XDG_CONFIG_HOME": str(folder / "config"), "XDG_DATA_HOME": str(folder / "data"),
               "PYTHONUNBUFFERED": "1", "BROWSER": "false", "P2P_CHINCHON_TIMING": str(folder / "timing"),
               "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "LANG": "C.UTF-8"}
        folder.mkdir(parents=True, exist_ok=True)
        self.timing = folder / "timing"
        self.proc = subprocess.Popen([sys.executable, "-m", "p2p_chinchon", "play", *args, "--web", "--no-browser",
                                      "--web-port", "0"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, cwd=folder,
                                     start_new_session=True)
        self.lines: list[str] = []
        found = threading.Event()
        self.url = ""

        def reader() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line)
                m = URL.search(line)
                if m and not self.url:
                    self.url = m.group(0)
                    found.set()
            found.set()

        threading.Thread(target=reader, daemon=True).start()
        if not found.wait(STEP_S) or not self.url:
            self.stop()
            raise SystemExit("the seat printed no address:\n" + "".join(self.lines[-40:]))

    def stop(self) -> None:
        """Stop the seat and its bot peers (the process group this benchmark started)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # bot peers left behind
        except ProcessLookupError:
            pass


class Tab:
    """One page on the seat. The states are read in the page (the probe keeps the last one),
    never relayed frame by frame to this process: that relay would take CPU from the nodes."""

    def __init__(self, browser: Any, url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.add_init_script(PROBE)
        self.page = self.context.new_page()
        self.responses: list[Any] = []
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("response", lambda r: self.responses.append(r))
        self.page.goto(url)

    @property
    def state(self) -> dict[str, Any]:
        """The last state the page got ({} before the first)."""
        return self.page.evaluate("() => window.__bench.state") or {}

    @property
    def version(self) -> int:
        """How many states the page got so far."""
        return int(self.page.evaluate("() => window.__bench.version"))

    def until(self, ok: str, what: str, after: int = -1, timeout: float = STEP_S) -> dict[str, Any]:
        """The first state after the ``after``-th for which ``ok`` (JS: state -> bool) holds."""
        try:
            got: dict[str, Any] = self.page.evaluate(
                f"(after) => Promise.race([window.__bench.until({ok}, after), new Promise((_, no) => "
                f"setTimeout(() => no(new Error('timeout')), {timeout * 1000}))])", after)
        except Exception as exc:  # noqa: BLE001 - Playwright's Error: a timeout or a closed page
            s = self.state
            raise SystemExit(f"waited for {what}: {exc}; last phase {s.get('phase')!r}, "
                             f"status {s.get('status')!r}") from None
        return got

    def close(self) -> None:
        self.context.close()


def wait_js(page: Any, promise: str, what: str) -> Any:
    """The value of the probe's ``promise`` (a property of ``window.__bench``) once it settles:
    one call, no polling that would take CPU from the node (``wait_for_function`` evaluates a
    string, which the page's content security policy forbids)."""
    try:
        return page.evaluate(f"() => Promise.race([window.__bench.{promise}, "
                             f"new Promise((_, no) => setTimeout(() => no(new Error('timeout')), {STEP_S * 1000}))])")
    except Exception as exc:  # noqa: BLE001 - Playwright's Error: a timeout or a closed page
        raise SystemExit(f"waited for {what}: {exc}") from None


def first_load(browser: Any, url: str) -> dict[str, Any]:
    """One first load in a fresh context (no cookie, nothing cached): timings (ms from the
    navigation's start) and the assets."""
    tab = Tab(browser, url)
    try:
        wait_js(tab.page, "firstDrawn", "the first state drawn")
        t = tab.page.evaluate("""() => {
          const n = performance.getEntriesByType("navigation")[0];
          const res = performance.getEntriesByType("resource").map((r) => ({
            name: new URL(r.name).pathname, transfer: r.transferSize, encoded: r.encodedBodySize,
            decoded: r.decodedBodySize}));
          return {response_end: n.responseEnd, dom_content_loaded: n.domContentLoadedEventEnd,
                  load_event_end: n.loadEventEnd, state_in_dom: window.__bench.firstDom,
                  state_drawn: window.__bench.firstFrame, state_message_bytes: window.__bench.firstBytes,
                  resources: res, navigation_bytes: n.encodedBodySize};
        }""")
        assets = []
        for r in tab.responses:
            path = r.url.split("//", 1)[-1].split("/", 1)[-1].split("?")[0]
            try:
                size = len(r.body())
            except Exception:  # noqa: BLE001 - a redirect has no body
                size = 0
            assets.append({"path": "/" + path, "status": r.status, "type": r.headers.get("content-type", ""),
                           "bytes": size})
        t["assets"] = assets
        t["errors"] = tab.errors
        return t
    finally:
        tab.close()


def _deadwood_card(s: dict[str, Any]) -> str:
    """The card to throw: the highest of the deadwood (else of the whole hand)."""
    dead = [s["hand"][i] for g in s["groups"] if g["kind"] != "meld" for i in g["cards"]]
    card = max(dead or s["hand"], key=lambda c: c["rank"] if 0 < c["rank"] < 10 else 10)
    return str(card["id"])


def _timed_draw(tab: Tab, s: dict[str, Any]) -> dict[str, Any]:
    """Click the stock with the probe armed; the draw's page times once its image is drawn."""
    before = [c["id"] for c in s["hand"]]
    tab.page.evaluate("(ids) => window.__bench.arm(ids)", before)
    tab.page.click("#stock")
    wait_js(tab.page, "drawn", "the drawn card's image")
    d: dict[str, Any] = tab.page.evaluate("() => ({...window.__bench.draw, origin: performance.timeOrigin})")
    tab.until(f"(x) => x.step === 'discard' && x.hand.length === {len(before) + 1}", "the discard step")
    return d


def _discard(tab: Tab, s: dict[str, Any]) -> None:
    """Throw the highest deadwood card: a click on it (the pick), one on the pile."""
    card = _deadwood_card(s)
    if s.get("picked") is None or s["hand"][s["picked"]]["id"] != card:  # a click on the picked card throws it
        tab.page.click(f'#hand .card[data-id="{card}"]')
        tab.until(f"(x) => x.picked !== null && x.hand[x.picked].id === {json.dumps(card)}", "the pick")
    n = tab.version
    tab.page.click("#discard")
    tab.until("(x) => !x.my_turn || x.step !== 'discard'", "the discard", after=n)


def play_turns(tab: Tab, turns: int, deadline: float) -> list[dict[str, Any]]:
    """Play this seat's turns by clicks until ``turns`` stock draws were timed (or the game's
    end, or ``deadline``); each draw's page times (``performance.now()`` ms) and epoch origin."""
    page = tab.page
    out: list[dict[str, Any]] = []
    seen_q: set[Any] = set()
    while len(out) < turns and time.monotonic() < deadline:
        seen = tab.version
        s = tab.state
        if s.get("ended") or s.get("phase") in ("over", "stopped"):
            break
        q = s.get("question")
        if q is not None and q["id"] not in seen_q:
            seen_q.add(q["id"])
            page.click("#btn-no")
            continue
        if s.get("lobby") and s["lobby"].get("can_agree"):
            page.click("#btn-agree")
            tab.until("(x) => !(x.lobby && x.lobby.can_agree)", "the agreement")
            continue
        if s.get("reentry_offer"):
            break  # out of the game: no more turns of its own
        if s.get("my_turn") and s.get("step") == "draw" and s["can_draw"]["stock"]:
            out.append(_timed_draw(tab, s))
            continue
        if s.get("my_turn") and s.get("step") == "draw" and s["can_draw"]["discard"]:  # no stock: not timed
            page.click("#discard")
            tab.until("(x) => !x.my_turn || x.step !== 'draw'", "the draw from the pile")
            continue
        if s.get("my_turn") and s.get("step") == "discard":
            _discard(tab, s)
            continue
        tab.until("(x) => true", "the next state", after=seen, timeout=max(1.0, deadline - time.monotonic()))
    return out


def split_draws(draws: list[dict[str, Any]], timing: Path, pid: int) -> dict[str, Any]:
    """Each draw's parts (ms), matched with the seat's own ``draw``/``draw_share`` rows in its
    timing log (``node-PID.log``)."""
    rows: list[tuple[float, int, int, str, str]] = []
    me = None
    log_file = timing / f"node-{pid}.log"
    if log_file.exists():
        for line in log_file.read_text().splitlines():
            p = line.split()
            if len(p) >= 5:
                me = int(p[1])
                rows.append((float(p[0]), int(p[2]), int(p[3]), p[4], p[5] if len(p) > 5 else ""))
    rows.sort(key=lambda r: r[1])
    mine = []  # (own stock draw accepted, last draw_share accepted) epoch seconds
    for i, (t, _seq, sender, kind, src) in enumerate(rows):
        if kind == "draw" and sender == me and src == "stock":
            last = None
            for r in rows[i + 1:]:
                if r[3] != "draw_share":
                    break
                last = r[0]
            if last is not None:
                mine.append((t, last))
    parts: dict[str, list[float]] = {k: [] for k in ("click_to_send", "send_to_node_draw", "node_draw_to_card",
                                                     "card_to_message", "message_to_dom", "dom_to_frame")}
    used = 0
    for d in draws:
        up = (d["origin"] + d["up"]) / 1e3
        while used < len(mine) and mine[used][0] < up:
            used += 1  # a draw before this click (not timed on the page)
        parts["message_to_dom"].append(d["dom"] - d["msg"])
        parts["dom_to_frame"].append(d["frame"] - d["dom"])
        if d["send"] is not None:
            parts["click_to_send"].append(d["send"] - d["up"])
        if used >= len(mine):
            continue
        node_draw, node_card = mine[used]
        used += 1
        send = (d["origin"] + (d["send"] if d["send"] is not None else d["up"])) / 1e3
        parts["send_to_node_draw"].append((node_draw - send) * 1e3)
        parts["node_draw_to_card"].append((node_card - node_draw) * 1e3)
        parts["card_to_message"].append(d["origin"] + d["msg"] - node_card * 1e3)
    return {k: _median(v) for k, v in parts.items()} | {"n_matched": len(parts["node_draw_to_card"])}


def run_page(args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    _game.compile_package()
    bench_args = ["--bots", str(args.bots), "--seed", str(args.seed), "--proof-rounds", str(args.k),
                  "--name", "Ana", "--lang", "en", "--option", "showdown_time=0", "--bot-level", "easy"]
    seat = Seat(bench_args, folder)
    deadline = time.monotonic() + args.timeout
    # Chromium's profile (made by Playwright's driver in its TMPDIR) holds a Unix socket, whose
    # path must stay under 108 bytes: a long TMPDIR (a test's) gets a short one beside it in /tmp
    short = None
    if len(tempfile.gettempdir()) > 40:
        short = tempfile.mkdtemp(prefix="p2pc-web-", dir="/tmp")
    saved = os.environ.get("TMPDIR")
    try:
        if short is not None:
            os.environ["TMPDIR"] = short
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                tab = Tab(browser, seat.url)
                tab.until("(x) => x.phase === 'playing' && x.hand.length > 0", "the first hand",
                          timeout=max(STEP_S, args.timeout / 2))
                loads = [first_load(browser, seat.url) for _ in range(args.loads)]
                draws = play_turns(tab, args.turns, deadline)
                errors = tab.errors + [e for ld in loads for e in ld["errors"]]
                tab.close()
            finally:
                browser.close()
    finally:
        seat.stop()
        if short is not None:
            shutil.rmtree(short, ignore_errors=True)
            if saved is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = saved
    if not draws:
        raise SystemExit("no stock draw was timed:\n" + "".join(seat.lines[-40:]))
    logs = _game._read_logs(seat.timing)
    node_all = [x * 1e3 for x in _game.draw_latencies(logs)]
    last = loads[-1]
    assets = last["assets"]
    encoded = {r["name"]: r["encoded"] for r in last["resources"]}
    for a in assets:
        a["encoded"] = encoded.get(a["path"])
    keys = ("response_end", "dom_content_loaded", "load_event_end", "state_in_dom", "state_drawn")
    return {
        "draw_to_image_ms": {"to_image": _stats([d["frame"] - d["up"] for d in draws]),
                             "to_dom": _stats([d["dom"] - d["up"] for d in draws])},
        "split_ms": split_draws(draws, seat.timing, seat.proc.pid),
        "node_draw_to_card_ms": _stats(node_all),
        "first_load_ms": {k: {"median": _median([ld[k] for ld in loads]),
                              "max": round(max(ld[k] for ld in loads), 2)} for k in keys} | {"n": len(loads)},
        "assets": assets,
        "assets_bytes": sum(a["bytes"] for a in assets),
        "state_message_bytes": last["state_message_bytes"],
        "page_errors": errors,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench web", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1, help="seed the bots and the deck (default 1)")
    ap.add_argument("--turns", type=int, default=15, help="stock draws timed on the page (default 15)")
    ap.add_argument("--bots", type=int, default=3, help="bot peers besides the page's seat (default 3)")
    ap.add_argument("--proof-rounds", "--k", dest="k", type=int, default=64, metavar="K",
                    help="shadow shuffles per shuffle proof (default 64)")
    ap.add_argument("--loads", type=int, default=5, help="first loads timed, each in a fresh context (default 5)")
    ap.add_argument("--no-terminal", action="store_true", help="skip the terminal's whole game (bench game)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before the page's part gives up")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if not 1 <= args.bots <= 7 or args.turns < 1 or args.loads < 1:
        ap.error("--bots 1..7, --turns and --loads at least 1")
    if not os.path.exists(CHROMIUM):
        raise SystemExit(f"no browser: {CHROMIUM} is missing (apt-get install chromium)")
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="p2p-chinchon-bench-web-") as scratch:
        res: dict[str, Any] = {"seed": args.seed, "seats": args.bots + 1, "k": args.k, "turns": args.turns,
                               "cores": os.cpu_count()}
        res |= run_page(args, Path(scratch) / "page")
        if not args.no_terminal:
            (Path(scratch) / "terminal").mkdir()
            g = _game.play_game(args.bots + 1, args.k, str(args.seed), Path(scratch) / "terminal", "classic", 1800.0)
            res["terminal_draw_to_card_ms"] = _stats([x * 1e3 for x in g["draw_to_card_s"]])
        else:
            res["terminal_draw_to_card_ms"] = None
    res["load_average"] = [round(x, 2) for x in (*load, *os.getloadavg())]
    if args.json:
        print(json.dumps(res))
        return 0
    di, sp, fl = res["draw_to_image_ms"], res["split_ms"], res["first_load_ms"]
    print(f"web: {res['seats']} seats (the page's and {args.bots} bots), separate processes on loopback, "
          f"k = {args.k}, seed {args.seed}, {res['cores']} cores, load {res['load_average']}")
    print(f"  stock click -> card image drawn: median {di['to_image']['median']} ms, p95 {di['to_image']['p95']} ms "
          f"(in the DOM: median {di['to_dom']['median']} ms, p95 {di['to_dom']['p95']} ms; n = {di['to_image']['n']})")
    print(f"  split (medians, ms): click->send {sp['click_to_send']}, send->node draw {sp['send_to_node_draw']}, "
          f"node draw->card {sp['node_draw_to_card']}, card->page message {sp['card_to_message']}, "
          f"message->DOM {sp['message_to_dom']}, DOM->frame {sp['dom_to_frame']} (n = {sp['n_matched']})")
    nd, td = res["node_draw_to_card_ms"], res["terminal_draw_to_card_ms"]
    print(f"  node draw->card in this game, every seat: median {nd['median']} ms, p95 {nd['p95']} ms (n = {nd['n']})")
    if td is not None:
        print(f"  terminal's figure (bench game, same seats, k and seed): median {td['median']} ms, "
              f"p95 {td['p95']} ms (n = {td['n']})")
    print(f"  first load (n = {fl['n']}, medians / max ms): state drawn {fl['state_drawn']['median']} / "
          f"{fl['state_drawn']['max']}, state in DOM {fl['state_in_dom']['median']}, load event "
          f"{fl['load_event_end']['median']}, response {fl['response_end']['median']}")
    print(f"  assets: {res['assets_bytes']:,} bytes in {len(res['assets'])} responses; first state message "
          f"{res['state_message_bytes']:,} bytes")
    for a in res["assets"]:
        print(f"    {a['status']} {a['path']:24} {a['bytes']:>8,} bytes  {a['type']}")
    if res["page_errors"]:
        print(f"  page errors: {res['page_errors']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
