"""Plain line mode: command parsing, validation against the view, and a scripted session."""

from __future__ import annotations

import dataclasses
import io
from dataclasses import dataclass

import pytest
import trio

from harness.ui_fakes import DRAWN, SPANISH, discard_view, draw_view, ev, lobby, showdown_view, waiting_view
from p2p_chinchon import view as V
from p2p_chinchon.engine import Card
from p2p_chinchon.ui.lines import Command, CommandError, parse_command, run_line_mode, run_line_mode_async, to_intent


@pytest.mark.parametrize("text,expected", [
    ("draw stock", Command("draw", "stock")),
    ("s", Command("draw", "stock")),
    ("  DRAW   discard ", Command("draw", "discard")),
    ("d", Command("draw", "discard")),
    ("discard 7♦", Command("discard", "7♦")),
    ("discard 7 de oros", Command("discard", "7 de oros")),
    ("close K♠", Command("close", "K♠")),
    ("reenter yes", Command("reenter", True)),
    ("reenter no", Command("reenter", False)),
    ("reenter sí", Command("reenter", True)),
    ("agree", Command("agree")),
    ("quit", Command("quit")),
    ("help", Command("help")),
    ("hint", Command("hint")),
    ("h", Command("hint")),  # as on the full screen
    ("?", Command("help")),
    ("l", Command("showdown")),
    ("Kd", Command("discard", "Kd")),  # a bare card name discards it
    ("7 oros", Command("discard", "7 oros")),
    ("2", Command("number", 2)),
    ("", None),
])
def test_parse_good_commands(text, expected):
    assert parse_command(text) == expected


@pytest.mark.parametrize("text,key", [
    ("draw", "need_source"),
    ("draw sideways", "need_source"),
    ("discard", "need_card"),
    ("close", "need_card"),
    ("reenter maybe", "reentry_yes_no"),
    ("fold", "unknown_command"),
    ("s now", "unknown_command"),
])
def test_parse_bad_commands(text, key):
    with pytest.raises(CommandError) as err:
        parse_command(text)
    assert err.value.key == key


def test_to_intent_checks_the_moment_and_the_card():
    assert to_intent(Command("draw", "stock"), draw_view()) == V.Draw("stock")
    assert to_intent(Command("discard", "3h"), discard_view()) == V.Discard(Card(3, 1))
    assert to_intent(Command("discard", "K♦"), discard_view()) == V.Discard(DRAWN)
    cases = [
        (Command("draw", "stock"), waiting_view(), "not_your_turn"),
        (Command("draw", "stock"), discard_view(), "already_drew"),
        (Command("discard", "3h"), draw_view(), "draw_first"),
        (Command("discard", "9h"), discard_view(), "bad_card_name"),
        (Command("discard", "zz"), discard_view(), "bad_card_name"),
        (Command("close", "K♦"), discard_view(first_round=True), "no_close_first_round"),
        (Command("close", "K♦"), discard_view(first_round=False), "no_close"),
        (Command("close", "3h"), discard_view(close_options=((DRAWN, 3, False),),
                                               first_round=False), "close_with_other"),
        (Command("agree"), draw_view(), "not_in_lobby"),
        (Command("reenter", True), draw_view(), "not_offered_reentry"),
    ]
    for cmd, view, key in cases:
        with pytest.raises(CommandError) as err:
            to_intent(cmd, view)
        assert err.value.key == key, (cmd, key)
    opts = ((DRAWN, 3, False),)
    assert to_intent(Command("close", "Kd"), discard_view(close_options=opts,
                                                          first_round=False)) == V.Close(DRAWN)
    assert to_intent(Command("agree"), lobby()) == V.Agree()
    assert to_intent(Command("reenter", False),
                     showdown_view(reentry_offer=True)) == V.Reenter(False)


async def session(script_text, node, lang="en", hint=None):
    out = io.StringIO()
    with trio.fail_after(10):
        result = await run_line_mode_async(node, stdin=io.StringIO(script_text), stdout=out,
                                           lang=lang, charset="unicode", hint=hint)
    return result, out.getvalue()


async def test_scripted_hand_waits_for_each_move():
    async def node(bridge):
        got = []
        bridge.update(lobby())
        got.append(await bridge.intents.receive())
        bridge.update(waiting_view())  # someone else plays first: commands wait
        await trio.sleep(0.05)
        bridge.update(draw_view())
        got.append(await bridge.intents.receive())
        bridge.update(discard_view())
        got.append(await bridge.intents.receive())
        bridge.update(waiting_view(hand=tuple(c for c in discard_view().hand if c != DRAWN)))
        got.append(await bridge.intents.receive())
        return got

    got, out = await session("agree\ndraw stock\nbogus\ndiscard 9h\ndiscard Kd\nquit\n", node)
    assert got == [V.Agree(), V.Draw("stock"), V.Discard(DRAWN), V.Leave()]
    assert "Unknown command: bogus" in out
    assert "No such card in your hand: 9h" in out
    assert "Type agree to accept" in out and "six matched and one card worth 4" in out
    assert "Your turn: draw stock or draw discard." in out
    assert "Stock: 23" in out and "K♠" in out  # the state is printed when asked to play
    assert "[5♦ 6♦ 7♦]" in out
    assert out.count("Ben discards K♠") == 1  # log lines are printed once


async def test_rejection_reprompts_and_next_line_is_used():
    async def node(bridge):
        bridge.update(discard_view(close_options=((DRAWN, 3, False),), first_round=False))
        first = await bridge.intents.receive()
        bridge.reject("close refused by the table")
        second = await bridge.intents.receive()
        return first, second

    (first, second), out = await session("close Kd\ndiscard 3h\n", node)
    assert first == V.Close(DRAWN) and second == V.Discard(Card(3, 1))
    assert "Refused: close refused by the table" in out
    assert "You may close: K♦ (3)" in out


async def test_end_of_input_leaves_the_table():
    async def node(bridge):
        bridge.update(draw_view())
        return await bridge.intents.receive()

    intent, _ = await session("", node)
    # the others read the plain reason, not our internal one
    assert intent == V.Leave() and intent.reason == "left the table"


async def test_showdown_and_winner_printed_in_spanish():
    async def node(bridge):
        bridge.update(showdown_view(reentry_offer=True, rules=showdown_view().rules))
        seen = await bridge.intents.receive()  # printed: the node's turn clock need not wait for it
        assert seen == V.ShowdownSeen()
        first = await bridge.intents.receive()
        bridge.update(showdown_view(phase=V.OVER, winner=2))
        return first

    first, out = await session("reenter no\n", node, lang="es")
    assert first == V.Reenter(False)
    assert "Carla ha cerrado." in out and "Total" in out
    assert "¡Carla gana la partida!" in out
    assert "Estás fuera: ¿reenter yes o reenter no?" in out


@dataclass
class Info:
    name: str
    host: str = "10.0.0.9"
    port: int = 7000
    preset: str = "classic"
    seats_taken: int = 1
    max_seats: int = 4
    fingerprint: str = "ab12"
    version: int = 1


async def test_picker_and_ask_in_line_mode():
    async def node(bridge):
        async def heard():
            yield [Info("kitchen"), Info("garden")]

        table = await bridge.pick_table(heard())
        ok = await bridge.ask("Trust it?")
        return table, ok

    (table, ok), out = await session("7\n2\nyes\n", node)
    assert table == Info("garden") and ok is True
    assert "No table number 7." in out and "kitchen" in out and "Trust it? (yes/no)" in out


def test_sync_entry_point_runs_trio():
    async def node(bridge):
        bridge.update(lobby())
        return await bridge.intents.receive()

    out = io.StringIO()
    assert run_line_mode(node, stdin=io.StringIO("help\nagree\n"), stdout=out,
                         lang="fr") == V.Agree()
    assert "commandes" in out.getvalue()


async def test_end_of_input_before_a_picker_and_a_question():
    async def node(bridge):
        async def heard():
            yield [Info("kitchen")]

        await trio.sleep(0.05)  # the reader sees the end of input first
        table = await bridge.pick_table(heard())
        ok = await bridge.ask("Trust it?")
        bridge.update(lobby())
        return table, ok, await bridge.intents.receive()

    (table, ok, intent), _ = await session("", node)
    assert table is None and ok is False and isinstance(intent, V.Leave)


def test_discard_by_position_in_the_printed_hand():
    view = discard_view()
    shown = list(reversed(view.hand))  # whatever order was printed
    assert to_intent(Command("discard", "1"), view, shown=shown) == V.Discard(shown[0])
    assert to_intent(Command("discard", "8"), view, shown=shown) == V.Discard(shown[7])
    for bad in ("0", "9"):
        with pytest.raises(CommandError) as err:
            to_intent(Command("discard", bad), view, shown=shown)
        assert err.value.key == "bad_card_name"


async def test_host_already_agreed_so_moves_typed_in_the_lobby_wait():
    import dataclasses

    opened = dataclasses.replace(lobby(), seats=())  # the table is open, nobody seated yet
    host = lobby()
    host = dataclasses.replace(host, seats=tuple(
        dataclasses.replace(s, agreed=s.seat == 0) for s in host.seats))

    async def node(bridge):
        bridge.update(opened)
        await trio.sleep(0.05)
        bridge.update(host)
        await trio.sleep(0.05)
        bridge.update(draw_view())
        first = await bridge.intents.receive()
        bridge.update(discard_view())
        second = await bridge.intents.receive()
        return first, second

    (first, second), out = await session("s\ndiscard 8\n", node)
    assert first == V.Draw("stock")
    # printed: [5♦ 6♦ 7♦] [Q♠ Q♥ Q♣] K♦ 3♥ (melds first, then deadwood by suit): 8th is 3♥
    assert second == V.Discard(Card(3, 1))
    assert "K♦ 3♥" in out
    assert "It is not your turn" not in out and "Type agree" not in out


async def test_bare_digit_and_card_name_discard_like_the_full_screen():
    async def node(bridge):
        got = []
        bridge.update(discard_view())
        got.append(await bridge.intents.receive())
        bridge.update(waiting_view())
        await trio.sleep(0.01)
        bridge.update(discard_view())
        got.append(await bridge.intents.receive())
        return got

    (first, second), out = await session("8\nKd\n", node)
    assert isinstance(first, V.Discard) and second == V.Discard(DRAWN)
    assert "Unknown command" not in out


async def test_hint_in_line_mode_is_worded_in_spanish_with_spanish_cards():
    async def node(bridge):
        bridge.update(discard_view(rules=SPANISH))
        # lines are handled in order: the end of input's Leave comes after the hint's line
        return await bridge.intents.receive()

    left, out = await session("h\n", node, lang="es",
                              hint=lambda v: V.Discard(Card(12, 0)))
    assert isinstance(left, V.Leave)
    assert "Pista: descarta rey oros" in out


async def test_log_lines_printed_once_each_by_their_count():
    """The log is a window of the last lines; log_total says how many are new, so a line that
    repeats ("Bruno draws from the stock") is neither dropped nor printed twice."""
    async def node(bridge):
        w = waiting_view()
        sat, threw = ev("seated", 1, numbers=(3, 3)), ev("discard", 1, cards=["K♠"])
        bridge.update(dataclasses.replace(w, events=(sat,), log_total=1))
        bridge.update(dataclasses.replace(w, events=(sat,), log_total=1))
        bridge.update(dataclasses.replace(w, events=(sat, threw, threw), log_total=3))
        bridge.update(dataclasses.replace(w, events=(threw, threw), log_total=4))  # the window slid by one
        await trio.sleep(0.01)

    _, out = await session("", node)
    assert out.count("Ben sat down (3/3)") == 1 and out.count("Ben discards K♠") == 3, out


async def test_a_seat_question_in_line_mode_takes_block_and_can_be_withdrawn():
    """``b`` answers a seat question "refuse everyone from there"; a question the
    node withdrew (the joiner left) is not answered by the next line."""
    async def node(bridge):
        with trio.CancelScope() as scope:  # asked, then withdrawn before anyone answers
            scope.cancel()
            await bridge.ask("First?", block=True)
        return await bridge.ask("Second?", block=True)

    answer, out = await session("b\n", node)
    assert answer == "block" and "Second? (yes/no)" in out
