"""The full-screen application, headless: prompt_toolkit pipe input + a dummy 80x24 output,
trio in guest mode on the asyncio loop, a scripted fake node that pushes SeatViews and
records the intents that key presses produce."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
import trio
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from harness.ui_app import Output80x24, next_intent, play, settle, until
from harness.ui_fakes import DRAWN, discard_view, draw_view, lobby, showdown_view, waiting_view
from p2p_chinchon import view as V
from p2p_chinchon.engine import Card
from p2p_chinchon.ui.app import TableApp, run_with_ui, run_with_ui_async
from p2p_chinchon.ui.screen import CONFIRM_QUIT, FINAL


def test_a_hand_played_with_keys():
    async def script(bridge, keys, ui):
        got = []
        bridge.update(lobby())
        keys("a")
        got.append(await next_intent(bridge))
        bridge.update(draw_view())
        keys("s")
        got.append(await next_intent(bridge))
        bridge.update(discard_view())
        keys("3h\r")  # type a card name, one Enter discards it
        got.append(await next_intent(bridge))
        bridge.update(waiting_view())
        await settle()
        screen_wait = ui.snapshot(80, 24)
        bridge.update(draw_view(hand_no=1))
        keys("d")
        got.append(await next_intent(bridge))
        bridge.update(discard_view(close_options=((DRAWN, 3, False),), first_round=False))
        await settle()
        screen_close = ui.snapshot(80, 24)
        assert ui.screen.picked is None  # after taking the discard nothing is picked
        keys("Kdc")  # name the K♦, then c closes with it (once confirmed with y)
        await until(lambda: ui.screen.mode == "ask")
        keys("y")
        got.append(await next_intent(bridge))
        return got, screen_wait, screen_close

    (got, screen_wait, screen_close), _ = play(script)
    assert got == [V.Agree(), V.Draw("stock"), V.Discard(Card(3, 1)), V.Draw("discard"),
                   V.Close(DRAWN)]
    rows = screen_wait.splitlines()
    assert len(rows) == 24 and all(len(r) <= 80 for r in rows)
    assert "Ben to play" in rows[0] and "▶ Ben" in screen_wait
    assert "Discard pile: K♠ (4)" in screen_close and "Stock: 22" in screen_close
    assert "[5♦ 6♦ 7♦]" in screen_close and "You may close (c): K♦ → 3" in screen_close
    assert "total 46" in screen_close


def test_close_key_does_nothing_when_not_allowed():
    async def script(bridge, keys, ui):
        bridge.update(discard_view(first_round=True))
        keys("c")
        await until(lambda: ui.screen.message)
        msg, picked = ui.screen.message, ui.screen.picked
        keys("\r")  # the next intent is the discard: "c" sent nothing
        return await next_intent(bridge), msg, picked

    (intent, msg, picked), _ = play(script)
    assert intent == V.Discard(picked) and "first round" in msg


def test_arrow_keys_and_digits_pick():
    async def script(bridge, keys, ui):
        bridge.update(discard_view())
        keys("1")
        keys("\x1b[C")  # right arrow: second card of the display order
        keys("\r")
        return await next_intent(bridge), ui.screen.display_hand()[0]

    (intent, order), _ = play(script)
    assert intent == V.Discard(order[1])


def test_reentry_question_answered_with_y():
    async def script(bridge, keys, ui):
        bridge.update(showdown_view(reentry_offer=True))
        await settle()
        shown = ui.snapshot()
        keys("y")
        return await next_intent(bridge), shown

    (intent, shown), _ = play(script)
    assert intent == V.Reenter(True)
    assert "Buy back in?" in shown and "Carla closed." in shown


def test_quit_asks_first_then_leaves():
    async def script(bridge, keys, ui):
        bridge.update(waiting_view())
        keys("q")
        await until(lambda: ui.screen.mode == CONFIRM_QUIT)
        keys("n")
        await until(lambda: ui.screen.mode != CONFIRM_QUIT)
        early = bridge.intents.statistics().current_buffer_used
        keys("q")
        await until(lambda: ui.screen.mode == CONFIRM_QUIT)
        asking = ui.snapshot()
        keys("y")
        return early, asking, await next_intent(bridge)

    (early, asking, intent), _ = play(script)
    # three seats mid-game: leaving is for good, the two others play on
    assert early == 0 and "Leave the game for good? The others play on without you." in asking, asking
    assert isinstance(intent, V.Leave)


def test_node_result_is_returned_and_errors_reraised():
    async def ok(bridge, keys, ui):
        bridge.update(draw_view())
        return 42

    assert play(ok)[0] == 42

    async def broken(bridge, keys, ui):
        bridge.update(draw_view())
        raise RuntimeError("peer vanished")

    with pytest.raises(RuntimeError, match="peer vanished"):
        play(broken)


@pytest.mark.parametrize("shown", [None, lobby()])
def test_an_error_before_the_game_leaves_the_screen_at_once(shown):
    """A refused joiner, a wrong code word, a mailbox nobody answers at: nothing was played, so
    no final screen waits for a key; the error goes to the command, which says it in one line
    with its exit code. (Mid-game, the final screen says it: the test above.)"""
    apps: list[Any] = []

    async def refused(bridge):
        if shown is not None:
            bridge.update(shown)
        await trio.sleep(0.05)
        raise RuntimeError("the host refused to seat you")

    async def run():
        with create_pipe_input() as inp:  # no key is ever typed
            return await asyncio.wait_for(run_with_ui_async(
                refused, pt_input=inp, pt_output=Output80x24(), on_app=apps.append), 10)

    with pytest.raises(RuntimeError, match="the host refused to seat you"):
        asyncio.run(run())
    assert apps[0].screen.mode != FINAL


def test_final_screen_says_finished():
    async def script(bridge, keys, ui):
        bridge.update(showdown_view(phase=V.OVER, winner=2))
        return None

    _, ui = play(script)
    text = ui.snapshot()
    assert "Carla wins the game!" in text and "Press any key to finish." in text


@dataclass
class Info:
    name: str
    host: str
    port: int
    preset: str = "classic"
    seats_taken: int = 1
    max_seats: int = 4
    fingerprint: str = "ab12cd34"
    version: int = 1


def test_table_picker_lists_tables_live_and_returns_the_choice():
    a, b = Info("kitchen", "10.0.0.2", 7000), Info("garden", "10.0.0.3", 7001)

    async def script(bridge, keys, ui):
        shown = []

        async def heard():
            yield [a]
            await settle()
            shown.append(ui.snapshot())
            yield [a, b]
            await settle()
            shown.append(ui.snapshot())
            keys("\x1b[B\r")  # down, Enter
            await trio.sleep_forever()  # the picker stops listening once chosen

        return await bridge.pick_table(heard()), shown

    (choice, shown), ui = play(script)
    assert choice == b
    assert "kitchen" in shown[0] and "garden" not in shown[0]
    assert "kitchen" in shown[1] and "garden" in shown[1] and "10.0.0.3:7001" in shown[1]
    assert ui.screen.picker is None


def test_table_picker_quit_returns_none():
    async def script(bridge, keys, ui):
        async def heard():
            yield [Info("kitchen", "10.0.0.2", 7000)]
            keys("q")

        return await bridge.pick_table(heard())

    result, ui = play(script)
    assert result is None and ui.screen.mode != FINAL  # ends at once: no key is swallowed


def test_bridge_ask_yes_no():
    async def script(bridge, keys, ui):
        bridge.update(waiting_view())
        keys("y")
        first = await bridge.ask("Trust this fingerprint?")
        keys("n")
        second = await bridge.ask("Again?")
        return first, second

    assert play(script)[0] == (True, False)


def test_hint_key_uses_provider_and_language():
    async def script(bridge, keys, ui):
        bridge.update(discard_view())
        keys("h")
        await until(lambda: ui.screen.message)
        return ui.snapshot()

    text, _ = play(script, lang="es", hint=lambda v: f"descarta {len(v.hand)}")
    assert "Pista: descarta 8" in text and "Tu mano" in text


def test_run_with_ui_sync_entry_point(monkeypatch):
    with create_pipe_input() as inp:
        finished = TableApp.node_finished

        def then_a_key(self, outcome):
            # the final screen waits for a key: press one once it is shown (a key typed 50 ms
            # after the node returned could come before it, and the final screen waited forever)
            finished(self, outcome)
            assert self.screen.mode == FINAL
            inp.send_text("z")

        monkeypatch.setattr(TableApp, "node_finished", then_a_key)

        async def node_main(bridge):
            bridge.update(draw_view())
            inp.send_text("s")
            return await next_intent(bridge)

        assert run_with_ui(node_main, lang="fr", charset="ascii", pt_input=inp,
                           pt_output=DummyOutput()) == V.Draw("stock")
