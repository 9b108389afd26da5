"""A whole game against real bot peers, played through key presses on the full-screen table.

The real :class:`~p2p_chinchon.ui.app.TableApp` runs headless (prompt_toolkit pipe input, a
dummy 80x24 output); its node is a real seat of :func:`p2p_chinchon.local.play_local` (every
peer on loopback, the full protocol) whose decisions come from the person's keys. The
"person" below reads only the rendered screen (header, hand, hint and close lines) and types
keys, as someone at the terminal would.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
import trio
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2p_chinchon import view as V
from p2p_chinchon.audit import audit_file
from p2p_chinchon.autoplay import hint as bot_hint
from p2p_chinchon.engine import make_rules
from p2p_chinchon.local import SeatSpec, make_bot, play_local
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.ui.app import run_with_ui_async
from p2p_chinchon.ui.logtext import log_line
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.ui.screen import FINAL
from p2p_chinchon.ui.text import plain

pytestmark = pytest.mark.slow  # whole games against bot peers in one process

FAIL_AFTER = 45
ASCII_SUIT = {"♦": "d", "♥": "h", "♠": "s", "♣": "c"}


class Output80x24(DummyOutput):
    def get_size(self) -> Size:
        return Size(rows=24, columns=80)


def typed_name(face: str) -> str:
    """What a person types for a card shown as ``face`` ("10♣" -> "10c", "J♦" -> "Jd")."""
    return face[:-1] + ASCII_SUIT[face[-1]] if face[-1] in ASCII_SUIT else face


async def wait_for(cond, timeout=10.0):
    with trio.fail_after(timeout):
        while not cond():
            await trio.sleep(0.005)


class Person:
    """Plays seat 0 by reading ``ui.screen.render_text()`` and typing keys."""

    def __init__(self, ui, keys, poor=False):
        self.ui, self.keys, self.poor = ui, keys, poor
        self.seen: dict[str, str] = {}  # what the screen showed at notable moments
        self.turns = 0
        self.closes = 0
        self.reentries = 0

    def text(self) -> str:
        return self.ui.screen.render_text(80, 24)

    async def play(self) -> None:
        scr = self.ui.screen
        done = None  # the view state last acted on
        while True:
            await trio.sleep(0.005)
            view = scr.view
            if view is None or scr.pending is not None or scr.typed:
                continue
            if scr.holding():  # the end of a hand waits for a key
                self.seen.setdefault("held", self.text())
                self.keys("x")
                await wait_for(lambda: not scr.holding())
                continue
            state = (view.phase, view.hand_no, view.to_play, view.step, view.reentry_offer,
                     len(view.hand), view.log_total)
            text = self.text()
            head = text.splitlines()[0]
            if view.showdown and view.phase != V.PLAYING:
                self.seen.setdefault("showdown", text)
            if state[:6] == (done or (None,) * 7)[:6]:
                continue
            if "Buy back in? y = yes" in text:
                self.seen.setdefault("reentry", text)
                self.keys("y")
                self.reentries += 1
                done = state
            elif "your turn: draw a card" in head:
                self.seen.setdefault("draw", text)
                if self.poor:
                    self.keys("s")
                    done = state
                    continue
                self.keys("s" if self.turns % 3 else "h")  # now and then ask the hint first
                if self.turns % 3 == 0:
                    await wait_for(lambda: scr.message.startswith("Hint:"))
                    self.keys("d" if "from the discard pile" in scr.message else "s")
                done = state
            elif "your turn: discard or close" in head:
                await self.discard(text)
                done = state

    async def discard(self, text: str) -> None:
        scr = self.ui.screen
        self.turns += 1
        self.seen.setdefault("discard", text)
        if self.poor:  # break up a meld: discard the first card shown (a person learning)
            self.keys("1")
            await wait_for(lambda: scr.picked == scr.display_hand()[0][0])
            self.keys("\r")
            return
        self.keys("h")
        await wait_for(lambda: scr.message.startswith("Hint:"))
        hint = scr.message
        m = re.search(r"(?:discard|putting) (\S+)", hint)
        assert m, hint
        face = m.group(1)
        if self.turns % 2:
            self.keys(typed_name(face))  # type the card's name: it is picked as it is typed
        else:  # walk to it with the arrow keys
            cards = scr.display_hand()[0]
            target = next(i for i, c in enumerate(cards) if str(c) == face)
            self.keys("1" + "\x1b[C" * target)
        await wait_for(lambda: str(scr.picked) == face)
        shown = self.text()
        assert f"Enter discards {face}" in shown  # the screen says what Enter will do
        if hint.startswith("Hint: close"):
            assert re.search(r"You may close \(c\): .*" + re.escape(face) + " → ", shown), shown
            self.seen.setdefault("close", shown)
            self.closes += 1
            self.keys("c")
            self.keys("y")  # the close is asked first
        else:
            self.keys("\r")


def play_game(tmp_path, rules, seed, poor=False):
    """Seat the person (seat 0, "Ana") at the full-screen UI against bots Bruno and Carla;
    play to the end. Returns ``(results, person, ui)`` once the final screen is dismissed."""
    hint_bot = make_bot(rules, SeededRng("ui-game/hint"))
    apps: list[Any] = []
    with create_pipe_input() as inp:

        async def node_main(bridge):
            ui = apps[0]
            loop = asyncio.get_running_loop()

            def finish():  # the final screen waits for a key: press one once it is shown
                if ui.screen.mode == FINAL:
                    inp.send_text("z")
                else:
                    loop.call_later(0.01, finish)

            try:
                return await game(ui, bridge)
            finally:
                loop.call_soon(finish)

        async def game(ui, bridge):
            person = Person(ui, inp.send_text, poor=poor)
            glue_node: list[Any] = []

            async def forward():  # what commands._common.SeatGlue does for a person
                await wait_for(lambda: glue_node)
                async for intent in bridge.intents:
                    glue_node[0].submit(intent)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(forward)
                nursery.start_soon(person.play)
                with trio.fail_after(FAIL_AFTER):
                    results = await play_local(rules, [
                        SeatSpec("Ana", decide=lambda view, need: None, on_update=bridge.update,
                                 node_ready=glue_node.append),
                        SeatSpec("Bruno"), SeatSpec("Carla"),
                    ], seed=seed, proof_rounds=4, transcript_dir=tmp_path)
                nursery.cancel_scope.cancel()
            return results, person

        results, person = asyncio.run(run_with_ui_async(
            node_main, charset="unicode", pt_input=inp, pt_output=Output80x24(),
            hint=lambda view: bot_hint(hint_bot, view), on_app=apps.append))
    # the game ended with a winner, and every seat's transcript audits
    assert all(r.fault is None for r in results), [r.fault for r in results]
    winner = results[0].winner
    assert winner is not None and {r.winner for r in results} == {winner}
    for i in range(3):
        report = audit_file(tmp_path / f"seat{i}.chn")
        assert report.verdict == "ok", report.summary()
        assert report.winner == winner
    return results, person, apps[0]


def test_whole_game_against_two_bot_peers_with_keys(tmp_path):
    rules = make_rules("classic", {"limit": 20})
    results, person, ui = play_game(tmp_path, rules, seed=7)
    winner = results[0].winner

    assert person.turns >= 2, "the person played turns through keys"
    # the table while it is the person's turn: hand, discard top, stock, whose turn, totals
    draw = person.seen["draw"]
    rows = draw.splitlines()
    assert len(rows) == 24 and all(len(r) <= 80 for r in rows)
    assert "your turn: draw a card" in rows[0]
    assert re.search(r"^▶ Ana .*7 cards +total \d+ +\(you\)", draw, re.M), draw
    assert re.search(r"^  Bruno .*7 cards +total \d+", draw, re.M)
    assert re.search(r"Discard pile: \S+ \(\d+\) +Stock: \d+", draw)
    assert re.search(r"Your hand: deadwood \d+", draw)
    assert "s draw stock" in rows[-1]
    discard = person.seen["discard"]
    assert "8 cards" in discard and "your turn: discard or close" in discard
    assert re.search(r"You (draw from the stock|take \S+ from the discard pile)", discard)
    assert " draws " not in discard.replace("Bruno draws", "").replace("Carla draws", "")

    # the end: last showdown, the score table, the winner
    final = ui.screen.render_text(80, 24)
    names = ["Ana", "Bruno", "Carla"]
    win_text = "You win the game!" if winner == 0 else f"{names[winner]} wins the game!"
    assert win_text in final.splitlines()[0] and win_text in final
    totals = results[0].totals
    assert re.search(r"^Total +" + " +".join(rf"{t}✗?" for t in totals) + "$", final, re.M)
    assert "Press any key to finish." in final
    for shown in (person.seen["showdown"], final):  # the first hand's showdown, the last one
        assert re.search(r"^(You|Bruno|Carla) closed\.$", shown, re.M), shown
        hands = re.findall(r"^(Ana|Bruno|Carla) +(.*?) +(\d+)$", shown, re.M)
        assert sorted(h[0] for h in hands) == names, shown  # every hand shown, with its penalty
        assert all("[" in h[1] or "deadwood" in h[1] for h in hands)
        assert re.search(r"^Hand +Ana +Bruno +Carla$", shown, re.M)

    # every event the table logged names its seats and is said from its fields
    view = ui.screen.view
    names = [s.name for s in view.seats]
    assert view.events and all(ev.names == tuple(names[s] for s in ev.seats) for ev in view.events)
    said = [plain(log_line(ev, ui.screen.tr, Faces(), view.me)) for ev in view.events]
    assert all(said) and not any("{" in t or "?" in t for t in said), said


def test_going_out_and_buying_back_in_with_keys(tmp_path):
    """A weak player goes over the limit, is asked on screen whether to buy back in, says y."""
    rules = make_rules("classic", {"limit": 20, "reentry_min_remaining": 2})
    results, person, ui = play_game(tmp_path, rules, seed=3, poor=True)
    assert person.reentries == 1
    offer = person.seen["reentry"]
    assert "You are out. Buy back in? y = yes, n = no" in offer
    assert "y yes · n no" in offer.splitlines()[-1]
    assert re.search(r"^Total +\d+ +\d+ +-?\d+$", offer, re.M), offer  # no X yet: not out
    log = "\n".join(ui.screen.view.log)
    assert "Ana may buy back in" in log and "Ana buys back in" in log
    said = ui.screen.render_text(80, 200)
    assert "You may buy back in" in said and "You buy back in" in said
    assert results[0].winner != 0
