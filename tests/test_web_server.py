"""The browser table's server side without a browser: the page state (web/model.py), the front end
(web/frontend.py: page messages -> intents, questions, bad frames) and the hub (web/server.py)."""

from __future__ import annotations

import json
from typing import Any, cast

import pytest
import trio

from harness.ui_fakes import HAND, discard_view, draw_view, lobby, showdown_view, waiting_view
from p2p_chinchon import view as V
from p2p_chinchon.engine import PRESETS, Card
from p2p_chinchon.i18n import Translator
from p2p_chinchon.web.model import PAGE_TEXTS, card_id, card_json
from p2p_chinchon.web.server import MAX_FRAME, Hub
from web_fixtures import BUILDERS, STATES, build, make_front, text


def answered(reply: dict[str, Any] | None) -> dict[str, Any]:
    """the reply the test knows comes back"""
    assert reply is not None
    return reply


CARD_KEYS = {"id", "rank", "suit", "label", "alt", "joker", "wild"}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_sample_states_regenerate_identically(name):
    """tests/web_states/*.json are what the model makes now (python tests/web_fixtures.py)."""
    assert (STATES / f"{name}.json").read_text(encoding="utf-8") == text(build(name))


def test_no_stray_sample_state_files():
    assert {p.stem for p in STATES.glob("*.json")} == set(BUILDERS)


def _cards_in(obj):
    """Every CARD object inside a state."""
    if isinstance(obj, dict):
        if CARD_KEYS <= set(obj):
            yield obj
        for v in obj.values():
            yield from _cards_in(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _cards_in(v)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_sample_states_hold_the_contract(name):
    state = build(name)
    json.dumps(state)  # plain JSON values only
    assert set(state["texts"]) == set(PAGE_TEXTS) and all(state["texts"].values())
    suits = {"french": set("dhsc"), "spanish": set("oceb")}[state["deck"]]
    for card in _cards_in(state):
        assert set(card) == CARD_KEYS
        assert card["suit"] in suits and card["alt"] and card["label"]
    for g in state["groups"]:
        assert all(0 <= i < len(state["hand"]) for i in g["cards"])
    assert sorted(i for g in state["groups"] for i in g["cards"]) == list(range(len(state["hand"])))
    if state["picked"] is not None:
        assert 0 <= state["picked"] < len(state["hand"])


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_card_ids_are_unique_and_words_follow_the_language(preset):
    from p2p_chinchon.engine import make_rules

    rules = make_rules(preset)
    cards = rules.deck(rules.max_players)  # two packs where the rules use two: copies differ
    assert len({card_id(c) for c in cards}) == len(cards)
    es = card_json(Card(11, 1), "spanish", Translator("es"))
    assert (es["label"], es["alt"], es["suit"]) == ("caballo copas", "caballo de copas", "c")
    fr = card_json(Card(11, 1), "french", Translator("fr"), courts="VDR")
    assert (fr["label"], fr["alt"], fr["suit"]) == ("D♥", "dame de cœur", "h")
    joker = card_json(Card(0, 1), "french", Translator("en"))
    assert joker["joker"] and joker["id"] == "0h0" and joker["alt"] == "joker"


def test_wild_card_is_marked():
    from p2p_chinchon.engine import make_rules

    rules = make_rules("classic", {"wild_card": "Ad"})
    front, bridge = make_front()
    bridge.update(draw_view(rules=rules, hand=HAND + (Card(1, 0),)))
    wild = [c for c in front.state()["hand"] if c["wild"]]
    assert [c["id"] for c in wild] == ["1d0"]


def test_lay_off_lands_on_its_meld():
    state = build("showdown")
    ben = next(h for h in state["showdown"]["hands"] if h["seat"] == 1)
    assert ben["laid_off"][0]["onto_seat"] == 2 and ben["laid_off"][0]["onto_meld"] == 0
    assert state["showdown_held"] is True and state["showdown"]["said"] == "Carla closed."


def test_page_messages_become_intents():
    front, bridge = make_front()
    bridge.update(draw_view())
    assert front.handle({"type": "intent", "intent": "draw", "source": "discard"}) is None
    assert bridge.sent == [V.Draw("discard")]
    front.handle({"type": "intent", "intent": "draw", "source": "stock"})  # pending: the table has not answered
    assert bridge.sent == [V.Draw("discard")]
    bridge.update(discard_view())
    card = front.state()["hand"][0]["id"]
    front.handle({"type": "intent", "intent": "discard", "card": card})
    assert bridge.sent[-1] == V.Discard(front.screen.display_hand()[0][0])


def test_refusals_come_back_in_words_not_as_intents():
    front, bridge = make_front()
    bridge.update(waiting_view())
    front.handle({"type": "intent", "intent": "draw", "source": "stock"})
    state = front.state()
    assert bridge.sent == [] and state["message_kind"] == "error" and state["message"]
    bridge.update(discard_view(close_options=()))
    front.handle({"type": "intent", "intent": "close", "card": front.state()["hand"][0]["id"]})
    assert bridge.sent == [] and "first round" in front.state()["message"]


def test_close_asks_first_and_a_stale_answer_is_refused():
    front, bridge = make_front()
    bridge.update(discard_view(close_options=((Card(12, 0), 3, False),), first_round=False))
    front.handle({"type": "intent", "intent": "close", "card": "12d0"})
    q = front.state()["question"]
    assert q["kind"] == "ask" and "K♦" in q["text"] and bridge.sent == []
    assert answered(front.handle({"type": "answer", "id": q["id"] + 1, "value": True}))["type"] == "rejected"
    assert answered(front.handle({"type": "answer", "id": q["id"], "value": "block"}))["type"] == "rejected"
    front.handle({"type": "answer", "id": q["id"], "value": True})
    assert bridge.sent == [V.Close(Card(12, 0))] and front.state()["question"] is None


def test_leave_asks_first_then_sends_leave_once():
    front, bridge = make_front()
    bridge.update(waiting_view())
    front.handle({"type": "intent", "intent": "leave"})
    q = front.state()["question"]
    assert q["kind"] == "leave" and bridge.sent == []
    front.handle({"type": "answer", "id": q["id"], "value": False})
    assert bridge.sent == [] and front.state()["question"] is None
    front.handle({"type": "intent", "intent": "leave"})
    front.handle({"type": "answer", "id": front.state()["question"]["id"], "value": True})
    assert bridge.sent == [V.Leave()]
    assert answered(front.handle({"type": "intent", "intent": "leave"}))["type"] == "rejected"


def test_node_questions_with_block_and_their_ids():
    front, bridge = make_front()
    bridge.update(lobby())
    answers: list[Any] = []
    front.start_ask("seat Diego?", answers.append, block=True)
    first = front.state()["question"]
    assert first["block"] and first["kind"] == "ask"
    front.handle({"type": "answer", "id": first["id"], "value": "block"})
    front.start_ask("seat Elena?", answers.append)
    second = front.state()["question"]
    assert second["id"] == first["id"] + 1 and not second["block"]
    front.handle({"type": "answer", "id": second["id"], "value": True})
    assert answers == ["block", True]
    front.start_ask("seat Fermín?", answers.append)
    front.end_ask()  # the joiner left: the question is withdrawn
    assert front.state()["question"] is None


def test_pick_order_regroup_and_hint():
    def hint(view):
        return V.Discard(view.hand[0])

    front, bridge = make_front(hint=hint)
    bridge.update(discard_view())
    state = front.state()
    ids = [c["id"] for c in state["hand"]]
    front.handle({"type": "pick", "card": ids[2]})
    assert front.state()["picked"] == 2
    front.handle({"type": "order", "cards": ids[::-1]})
    state = front.state()
    assert [c["id"] for c in state["hand"]] == ids[::-1] and state["custom_order"]
    assert state["groups"] == [{"kind": "custom", "cards": list(range(len(ids)))}]
    assert answered(front.handle({"type": "order", "cards": ids[1:]}))["type"] == "rejected"
    assert answered(front.handle({"type": "order", "cards": [ids[0]] * len(ids)}))["type"] == "rejected"
    front.handle({"type": "regroup"})
    assert not front.state()["custom_order"]
    front.handle({"type": "hint"})
    state = front.state()
    assert state["hint"]["card"]["id"] == card_id(HAND[0]) and state["hand"][state["picked"]]["id"] == card_id(HAND[0])


def test_agree_reentry_and_showdown_seen():
    front, bridge = make_front()
    bridge.update(lobby())
    assert front.state()["lobby"]["can_agree"]
    front.handle({"type": "intent", "intent": "agree"})
    assert bridge.sent == [V.Agree()] and not front.state()["lobby"]["can_agree"]
    front2, bridge2 = make_front()
    bridge2.update(draw_view())
    bridge2.update(showdown_view(phase=V.REENTRY, reentry_offer=True))
    assert front2.state()["reentry_offer"]
    front2.handle({"type": "intent", "intent": "reenter", "accept": True})
    assert V.Reenter(True) in bridge2.sent and not front2.state()["reentry_offer"]
    front3, bridge3 = make_front()
    bridge3.update(draw_view())
    bridge3.update(showdown_view(phase=V.SHOWDOWN))
    assert front3.state()["showdown_held"]
    front3.handle({"type": "intent", "intent": "showdown_seen"})
    assert bridge3.sent == [V.ShowdownSeen()] and not front3.state()["showdown_held"]
    assert front3.state()["showdown"] is not None  # still readable after


@pytest.mark.parametrize("message", [
    [], "text", None, 5, {"type": 3}, {"type": "nope"}, {"no": "type"},
    {"type": "intent"}, {"type": "intent", "intent": "fly"},
    {"type": "intent", "intent": "draw", "source": "sky"},
    {"type": "intent", "intent": "discard", "card": "99z9"},
    {"type": "intent", "intent": "discard", "card": ["7d0"]},
    {"type": "intent", "intent": "reenter", "accept": "yes"},
    {"type": "answer", "id": 1, "value": True},
    {"type": "pick", "card": 7}, {"type": "order", "cards": "all"},
    {"type": "pick_table", "index": 0},
])
def test_malformed_messages_are_rejected_and_change_nothing(message):
    front, bridge = make_front()
    bridge.update(discard_view())
    before = front.state()
    reply = front.handle(message)
    assert reply is not None and reply["type"] == "rejected" and reply["reason"]
    assert bridge.sent == [] and front.state() == before


def test_hub_frames_bad_json_binary_and_oversized():
    front, bridge = make_front()
    bridge.update(draw_view())
    hub = front.hub
    assert answered(hub.handle(None))["type"] == "rejected"
    assert answered(hub.handle("{not json"))["type"] == "rejected"
    assert answered(hub.handle("x" * (MAX_FRAME + 1)))["type"] == "rejected"
    big = json.dumps({"type": "pick", "card": "1d0", "pad": "x" * MAX_FRAME})
    assert "over" in answered(hub.handle(big))["reason"] and bridge.sent == []
    assert hub.handle(json.dumps({"type": "intent", "intent": "draw", "source": "stock"})) is None
    assert bridge.sent == [V.Draw("stock")]


def test_hub_survives_a_raising_handler():
    def boom(obj):
        raise RuntimeError("bug")

    hub = Hub(lambda: {}, boom)
    assert hub.handle("{}") == {"type": "rejected", "reason": "message not understood"}


def test_picker_choice():
    front = BUILDERS["picker"]()
    chosen: list[Any] = []
    assert front.screen.picker is not None
    front.screen.picker._choose = chosen.append
    assert [t["name"] for t in front.state()["picker"]["tables"]] == ["kitchen", "garden"]
    assert answered(front.handle({"type": "pick_table", "index": 5}))["type"] == "rejected"
    assert answered(front.handle({"type": "pick_table", "index": True}))["type"] == "rejected"
    front.handle({"type": "pick_table", "index": 1})
    assert chosen[0].name == "garden"


def test_ended_and_state_before_any_view():
    front, _ = make_front()
    state = front.state()
    assert state["phase"] == "connecting" and state["ended"] is None and state["hand"] == []
    front.node_done("you left the table", transcript="/tmp/x.chn", exit_code=0)
    assert front.state()["ended"] == {"how": "you left the table", "transcript": "/tmp/x.chn", "exit_code": 0,
                                      "error": False}


async def test_hub_coalesces_and_delivers():
    """Changes made while a connection is busy are sent as one state (the latest)."""
    hub = Hub(lambda: {"n": hub.version}, lambda obj: None)
    sent = []

    class FakeSocket:
        async def send_text(self, text):
            sent.append(json.loads(text))
            await trio.sleep(0)

    from collections import deque

    from starlette.websockets import WebSocket

    queue: deque[str] = deque()
    hub._queues.append(queue)
    hub._sent[id(queue)] = -1
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hub._writer, cast(WebSocket, FakeSocket()), queue)  # a stand-in: send_text only
        await hub.delivered()
        for _ in range(5):
            hub.changed()
        hub.tell({"type": "rejected", "reason": "x"})
        await hub.delivered()
        nursery.cancel_scope.cancel()
    assert sent[0] == {"type": "state", "state": {"n": 0}}
    assert sent[-1] == {"type": "state", "state": {"n": 5}} and len(sent) <= 3
    assert {"type": "rejected", "reason": "x"} in sent


def test_spanish_state_in_spanish():
    state = build("spanish_discard")
    assert state["lang"] == "es" and state["deck"] == "spanish"
    assert state["texts"]["web_discard"] == "Descartar"
    assert all(c["suit"] in "oceb" for c in state["hand"])


async def test_run_with_web_tells_the_page_how_it_ended():
    """In one trio run: the page connects, the node ends, the page is told how; the server
    stops as soon as the open tab has it (the linger is an upper bound, not a wait)."""
    from functools import partial
    from types import SimpleNamespace

    from trio_websocket import open_websocket_url

    from p2p_chinchon.web.frontend import run_with_web_async
    from p2p_chinchon.web.server import cookie_name

    gate, said = trio.Event(), list[str]()

    async def node(bridge):
        bridge.update(draw_view())
        await gate.wait()
        return SimpleNamespace(transcript="/tmp/me.chn", error=None, fault=None, winner=0,
                               names=["Ana", "Ben", "Carla"], seat=0)

    with trio.fail_after(600):  # a hang guard: the linger below is an hour
        async with trio.open_nursery() as nursery:
            served = await nursery.start(partial(run_with_web_async, node, open_browser=False, linger=3600,
                                                 announce=said.append))
            headers = [(b"Cookie", f"{cookie_name(served.port)}={served.token}".encode()),
                       (b"Origin", f"http://127.0.0.1:{served.port}".encode())]
            async with open_websocket_url(f"ws://127.0.0.1:{served.port}/ws", extra_headers=headers) as ws:
                first = json.loads(await ws.get_message())
                assert first["state"]["phase"] == "playing" and first["state"]["ended"] is None
                gate.set()
                state = first["state"]
                while state["ended"] is None:
                    state = json.loads(await ws.get_message())["state"]
    assert state["ended"] == {"how": "You win the game!", "transcript": "/tmp/me.chn", "exit_code": 0,
                              "error": False}
    assert said[0].startswith("the table is in your browser: http://127.0.0.1:") and "token=" in said[0]
    assert "stays up" in said[-1]


async def test_run_with_web_error_before_any_page_is_not_held():
    """A node that fails at the start (a wrong code word): no page was ever open, so the error
    is not held back for one (the command says it in one line)."""

    from p2p_chinchon.web.frontend import run_with_web_async

    async def node(bridge):
        raise RuntimeError("no table")

    said: list[str] = []
    with trio.fail_after(600), pytest.RaisesGroup(pytest.RaisesExc(RuntimeError, match="no table"), flatten_subgroups=True):
        await run_with_web_async(node, open_browser=False, linger=3600, announce=said.append)
    assert len(said) == 1  # the address; no "stays up"


def test_docs_name_every_state_key():
    """docs/web.md's STATE and SEAT tables are the state's keys, no more, no less."""
    import re
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "web.md").read_text(encoding="utf-8")
    table = doc[doc.index("### STATE"):doc.index("SEAT = ")]
    keys = set()
    for line in table.splitlines():
        m = re.match(r"\| (.*?) \|", line)
        if m:
            keys |= set(re.findall(r"`(\w+)`", m.group(1)))
    state = build("my_turn_draw")
    assert keys == set(state)
    seat_doc = set(re.findall(r'"(\w+)"', doc[doc.index("SEAT = "):doc.index("SHOWDOWN = ")]))
    assert set(state["seats"][0]) | {"took", "threw", "text"} == seat_doc


def test_a_move_puts_the_held_showdown_away_first():
    front, bridge = make_front()
    bridge.update(draw_view())
    bridge.update(showdown_view(phase=V.SHOWDOWN))
    bridge.update(draw_view(hand_no=2))  # the next hand reached this seat while the showdown is held
    assert front.state()["showdown_held"]
    front.handle({"type": "intent", "intent": "draw", "source": "stock"})
    assert bridge.sent == [V.ShowdownSeen(), V.Draw("stock")] and not front.state()["showdown_held"]


def test_status_clock_presence_and_code_word_reach_the_state():
    draw = build("my_turn_draw")
    assert draw["clock"] == {"seat": 0, "name": "Ana", "mine": True, "seconds_left": 27.0}
    assert draw["waiting"]["what"] == "draw" and draw["status"] == "your turn to draw (0:27); Carla disconnected"
    carla = draw["seats"][2]
    assert carla["away"] and carla["connected"] and not draw["seats"][1]["away"]  # the node hears her not
    assert draw["seats"][0]["to_play"] and not draw["seats"][1]["to_play"]
    other = build("other_turn")
    ben, carla = other["seats"][1], other["seats"][2]
    assert ben["relayed"] and not carla["relayed"] and carla["back"] and ben["to_play"]
    assert other["clock"]["mine"] is False and other["clock"]["name"] == "Ben"
    lobby_state = build("lobby_host")
    assert lobby_state["lobby"]["code_word"] == "7-guitarist-revenge" and lobby_state["lobby"]["free_seats"] == 2
    assert lobby_state["question"]["block"] and "Diego" in lobby_state["question"]["text"]
    joiner = build("lobby_joiner")
    assert joiner["lobby"]["can_agree"] and joiner["rules_lines"] and joiner["my_fingerprint"] == "1f3a9c21d07b"
