"""Whole games of ``play --web --no-browser`` played over the page's WebSocket by a plain client
(trio-websocket): the same node, transcript, exit code and summary as the terminal's; the record
audits; a reconnect mid-hand shows the same state and loses no move."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from trio_websocket import open_websocket_url

from harness import free_port

GAME = ["--bots", "2", "--proof-rounds", "4", "--seed", "3", "--option", "limit=30", "--timeout", "30"]
URL = re.compile(r"(http://127\.0\.0\.1:(\d+)/\?token=[\w-]+)")


def env_for(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"),
                LANG="C.UTF-8", LC_ALL="C.UTF-8")


def cookie_for(url: str, port: int) -> str:
    """The first load: the token buys the cookie (and a redirect to /)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", url[url.index("/?"):])
    try:
        resp = conn.getresponse()
        assert resp.status == 303 and resp.getheader("location") == "/"
        cookie = resp.getheader("set-cookie")
        assert cookie is not None
        return cookie.split(";")[0]
    finally:
        conn.close()


class Seat:
    """The command with its page: its stderr read as it comes, the page's address found in it."""

    def __init__(self, proc: trio.Process) -> None:
        self.proc = proc
        self.err = ""
        self.url: str | None = None
        self.port = 0
        self.cookie = ""
        self._found = trio.Event()

    async def read_stderr(self) -> None:
        assert self.proc.stderr is not None
        async for chunk in self.proc.stderr:
            self.err += chunk.decode(errors="replace")
            m = URL.search(self.err)
            if m and self.url is None:
                self.url, self.port = m.group(1), int(m.group(2))
                self._found.set()

    async def page(self) -> tuple[str, int]:
        await self._found.wait()
        assert self.url is not None
        return self.url, self.port


class Page:
    """One tab: the WebSocket, the latest state, what was refused."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.state: dict[str, Any] = {}
        self.rejected: list[str] = []

    async def next_state(self) -> dict[str, Any]:
        while True:
            msg = json.loads(await self.ws.get_message())
            if msg["type"] == "state":
                self.state = msg["state"]
                return self.state
            self.rejected.append(msg["reason"])

    async def send(self, **msg: Any) -> None:
        await self.ws.send_message(json.dumps(msg))


def move_for(state: dict[str, Any], seen: set[Any], rematch: bool = False) -> dict[str, Any] | None:
    """What a player clicks in this state (each question, turn or offer once): yes to every
    question but the rematch, which gets ``rematch``."""
    key: tuple[Any, ...]
    q = state["question"]
    if q is not None:
        key = ("q", q["id"])
        if key not in seen:
            seen.add(key)
            return {"type": "answer", "id": q["id"], "value": rematch if "Rematch" in q["text"] else True}
        return None
    if state["showdown_held"]:
        key = ("held", state["hand_no"], state["showdown"]["closer"] if state["showdown"] else None)
        if key not in seen:
            seen.add(key)
            return {"type": "intent", "intent": "showdown_seen"}
    if state["lobby"] is not None and state["lobby"]["can_agree"] and "agree" not in seen:
        seen.add("agree")
        return {"type": "intent", "intent": "agree"}
    if state["reentry_offer"] and ("re", state["hand_no"]) not in seen:
        seen.add(("re", state["hand_no"]))
        return {"type": "intent", "intent": "reenter", "accept": False}
    if not state["my_turn"]:
        return None
    # a turn is told apart by the piles too: drawing a card and throwing it back keeps the hand
    key = (state["hand_no"], state["step"], state["stock_size"], state["discard_size"],
           tuple(c["id"] for c in state["hand"]))
    if key in seen:
        return None
    seen.add(key)
    if state["step"] == "draw":
        return {"type": "intent", "intent": "draw", "source": "stock"}
    if state["step"] == "discard":
        if state["close_options"]:
            return {"type": "intent", "intent": "close", "card": state["close_options"][0]["card"]["id"]}
        deadwood = [g for g in state["groups"] if g["kind"] == "deadwood"]
        i = deadwood[0]["cards"][-1] if deadwood else len(state["hand"]) - 1
        return {"type": "intent", "intent": "discard", "card": state["hand"][i]["id"]}
    return None


async def connect(url: str | None, port: int, cookie: str, origin: str | None = None):
    headers = [(b"Cookie", cookie.encode())] if cookie else []
    headers.append((b"Origin", (origin or f"http://127.0.0.1:{port}").encode()))
    return open_websocket_url(f"ws://127.0.0.1:{port}/ws", extra_headers=headers)


async def start(nursery: trio.Nursery, tmp_path: Path, *command: str) -> Seat:
    """``command`` (default: ``play`` against two bots) with ``--web --no-browser``, its
    transcript ``tmp_path/me.chn``; returns once its page's address and cookie are known."""
    transcript = tmp_path / "me.chn"
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "p2p_chinchon", *(command or ("play", *GAME)), "--web", "--no-browser",
         "--transcript", str(transcript)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env_for(tmp_path))
    seat = Seat(proc)
    nursery.start_soon(seat.read_stderr)
    seat.url, seat.port = await seat.page()
    seat.cookie = await trio.to_thread.run_sync(cookie_for, seat.url, seat.port)
    return seat


def audit(path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "p2p_chinchon", "audit", str(path)],
                          capture_output=True, text=True, timeout=120, env=env_for(tmp_path))


async def play_to_the_end(page: Page, *, reconnect_at: int | None = None, rematches: int = 0,
                          lobbies: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Click through the game (and ``rematches`` more: yes to that many rematch questions); return
    the last state (``ended`` set). ``lobbies``: each new game's first lobby state is added."""
    seen: set[Any] = set()
    turns = 0
    state = page.state or await page.next_state()  # the state already read, if any, first
    phase = state["phase"]
    while state["ended"] is None:
        if state["phase"] == "lobby" and phase not in ("lobby", "connecting"):  # a rematch's lobby
            seen = {k for k in seen if k[0] == "q"}  # question ids go on counting; turns start again
            rematches -= 1
            if lobbies is not None:
                lobbies.append(state)
        phase = state["phase"]
        move = move_for(state, seen, rematch=rematches > 0)
        if move is not None:
            if move.get("intent") == "draw":
                turns += 1
                if reconnect_at is not None and turns == reconnect_at:
                    return state  # the caller closes this tab mid-hand
            await page.send(**move)
        state = await page.next_state()
    return state


@pytest.mark.slow
async def test_a_whole_game_in_the_page_audits(tmp_path):
    async with trio.open_nursery() as nursery:
        with trio.fail_after(240):
            seat = await start(nursery, tmp_path)
            url, port, cookie = seat.url, seat.port, seat.cookie
            async with await connect(url, port, cookie) as ws:
                page = Page(ws)
                last = await play_to_the_end(page)
            code = await seat.proc.wait()
    out = seat.proc.stdout
    assert out is not None
    printed = (await out.receive_some(1 << 20) or b"").decode()
    ended = last["ended"]
    assert code == 0, seat.err + printed
    assert ended["exit_code"] == 0 and not ended["error"] and ended["transcript"] == str(tmp_path / "me.chn")
    assert last["phase"] == "over" and last["winner"] is not None and last["winner_text"] in ended["how"]
    assert "Transcript" in printed or str(tmp_path / "me.chn") in printed  # the exit summary, as ever
    assert "the page stays up" in seat.err and "Traceback" not in seat.err
    assert page.rejected == []
    audited = audit(tmp_path / "me.chn", tmp_path)
    assert audited.returncode == 0, audited.stdout + audited.stderr


@pytest.mark.slow
async def test_reconnect_mid_hand_keeps_the_state_and_every_move(tmp_path):
    async with trio.open_nursery() as nursery:
        with trio.fail_after(240):
            seat = await start(nursery, tmp_path)
            url, port, cookie = seat.url, seat.port, seat.cookie
            async with await connect(url, port, cookie) as ws:
                first = Page(ws)
                before = await play_to_the_end(first, reconnect_at=1)
                assert before["my_turn"] and before["step"] == "draw"
                ids = [c["id"] for c in before["hand"]]
                await first.send(type="order", cards=ids[::-1])  # kept on the server for every tab
                await first.send(type="intent", intent="draw", source="stock")
                while len(first.state["hand"]) != len(ids) + 1:
                    await first.next_state()
                drawn = first.state["hand"]
            # the tab is closed: the table plays on; a new tab sees the same hand, the draw made
            async with await connect(url, port, cookie) as ws2:
                again = Page(ws2)
                state = await again.next_state()
                assert [c["id"] for c in state["hand"]] == [c["id"] for c in drawn]
                assert state["custom_order"] and state["step"] == "discard" and state["my_turn"]
                async with await connect(url, port, cookie) as ws3:  # a second tab at once
                    third = Page(ws3)
                    assert (await third.next_state())["hand"] == state["hand"]
                last = await play_to_the_end(again)
            code = await seat.proc.wait()
    assert code == 0 and last["ended"]["exit_code"] == 0, seat.err
    audited = audit(tmp_path / "me.chn", tmp_path)
    assert audited.returncode == 0, audited.stdout + audited.stderr


@pytest.mark.slow
async def test_host_approves_a_joiner_on_the_page_and_plays(tmp_path):
    """``host --web``: the seat question (with its refuse-the-address choice) is asked on the
    page; answered yes, the joiner (a bot) sits down and the game is played to the end."""
    port = free_port()
    async with trio.open_nursery() as nursery:
        with trio.fail_after(240):
            seat = await start(nursery, tmp_path, "host", "--name", "Ana", "--seats", "2", "--port", str(port),
                               "--bind", "127.0.0.1", "--no-mdns", "--proof-rounds", "4", "--option", "limit=30")
            async with await connect(seat.url, seat.port, seat.cookie) as ws:
                page = Page(ws)
                state = await page.next_state()
                assert state["phase"] == "lobby" and state["lobby"]["provisional"]
                joiner = await trio.lowlevel.open_process(
                    [sys.executable, "-m", "p2p_chinchon", "join", "--connect", f"127.0.0.1:{port}", "--bot",
                     "--quiet", "--name", "Bruno", "--bind", "127.0.0.1", "--min-proof-rounds", "4",
                     "--transcript", str(tmp_path / "bruno.chn")],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    env=env_for(tmp_path))
                while state["question"] is None:
                    state = await page.next_state()
                asked = state["question"]
                assert asked["block"] and "Bruno" in asked["text"] and asked["kind"] == "ask"
                last = await play_to_the_end(page)  # answers it yes, then plays
            code = await seat.proc.wait()
            assert await joiner.wait() == 0
    assert code == 0 and last["ended"]["exit_code"] == 0, seat.err
    assert [s["name"] for s in last["seats"]] == ["Ana", "Bruno"] and page.rejected == []
    audited = audit(tmp_path / "me.chn", tmp_path)
    assert audited.returncode == 0, audited.stdout + audited.stderr


@pytest.mark.slow
async def test_a_rematch_in_the_page(tmp_path):
    """Yes to the rematch: the page shows the next game's lobby with nothing of the last game's
    hand, then that game to its end; both records audit."""
    lobbies: list[dict[str, Any]] = []
    async with trio.open_nursery() as nursery:
        with trio.fail_after(400):
            seat = await start(nursery, tmp_path)
            async with await connect(seat.url, seat.port, seat.cookie) as ws:
                page = Page(ws)
                last = await play_to_the_end(page, rematches=1, lobbies=lobbies)
            code = await seat.proc.wait()
    assert code == 0 and last["ended"]["exit_code"] == 0, seat.err
    [lobby] = lobbies
    assert lobby["hand"] == [] and lobby["pile"] == [] and lobby["showdown"] is None
    assert last["ended"]["transcript"] == str(tmp_path / "me-2.chn") and last["phase"] == "over"
    for path in (tmp_path / "me.chn", tmp_path / "me-2.chn"):
        audited = audit(path, tmp_path)
        assert audited.returncode == 0, audited.stdout + audited.stderr
