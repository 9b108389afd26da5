"""The browser page's sample states (tests/web_states/*.json), made by the real front end.

Each state is a :class:`~p2p_chinchon.web.frontend.WebFrontend` fed :class:`SeatView`s (the UI
tests' three-seat table, tests/test_ui_fakes.py), node statuses, notices and questions, then read
as the page reads it (``WebFrontend.state()``). ``python tests/web_fixtures.py`` writes them again;
tests/test_web_server.py checks the files are what this makes, so they stay true to the model.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.ui_fakes import (
    NAMES,
    RULES,
    SPANISH,
    discard_view,
    draw_view,
    ev,
    lobby,
    seats,
    showdown_view,
    waiting_view,
)
from p2p_chinchon import view as V
from p2p_chinchon.engine import Card, parse_cards
from p2p_chinchon.i18n import Translator
from p2p_chinchon.net.discovery import TableInfo
from p2p_chinchon.net.presence import SeatPresence
from p2p_chinchon.net.status import NodeStatus, Wait
from p2p_chinchon.ui.bridge import UiBridge
from p2p_chinchon.ui.lobby import seat_request
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.web.frontend import WebFrontend

STATES = Path(__file__).parent / "web_states"


class RecordingBridge(UiBridge):
    """A bridge with no trio run: intents are kept in ``sent``."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Any] = []

    def submit(self, intent: Any) -> None:
        self.sent.append(intent)


def make_front(lang: str = "en", deck: str = "french", hint: Any = None) -> tuple[WebFrontend, RecordingBridge]:
    """A front end on a recording bridge, its clock stopped at 0 (a held showdown stays held)."""
    bridge = RecordingBridge()
    front = WebFrontend(bridge, Translator(lang), Faces(deck, True, True), hint=hint, clock=lambda: 0.0)
    bridge.attach(front)
    return front, bridge


def status(front: WebFrontend, bridge: RecordingBridge, wait: Wait | None, *presence: SeatPresence) -> None:
    """The node's status, as the seat's glue hands it over (commands/_common.py)."""
    st = NodeStatus(tuple(presence), wait)
    bridge.node_status = st
    bridge.set_status(st.text(front.screen.tr))


def _answers(_: bool | str) -> None:
    """A question's answer callback (the sample states never answer)."""


def lobby_host() -> WebFrontend:
    front, bridge = make_front()
    view = dataclasses.replace(lobby(), seats=seats((0, 0))[:2], provisional=True, max_seats=4)
    bridge.update(view)
    bridge.notify("code word: 7-guitarist-revenge", "code_word",
                  {"code": "7-guitarist-revenge", "join": "7-guitarist-revenge"})
    front.start_ask(seat_request("Diego", "d1e90c27aa5", "192.168.1.23", front.screen.tr), _answers, block=True)
    return front


def lobby_joiner() -> WebFrontend:
    front, bridge = make_front()
    view = dataclasses.replace(lobby(), me=1, max_seats=3,
                               seats=tuple(dataclasses.replace(s, agreed=s.seat == 0) for s in seats((0, 0, 0))))
    bridge.update(view)
    status(front, bridge, Wait(1, NAMES[1], "agree", 52.0, mine=True), SeatPresence(0, NAMES[0], True),
           SeatPresence(2, NAMES[2], True))
    return front


def _pile_events() -> tuple[V.LogEvent, ...]:
    return (ev("deal", 2, numbers=(1,)), ev("upcard", None, cards=["9c"]), ev("draw_stock", 0),
            ev("discard", 0, cards=["3c"]), ev("draw_discard", 1, cards=["3c"]), ev("discard", 1, cards=["Ks"]))


def my_turn_draw() -> WebFrontend:
    front, bridge = make_front()
    bridge.update(draw_view(to_play=1, events=_pile_events()[:-2], log_total=4))  # Ben's turn first
    bridge.update(draw_view(events=_pile_events(), log_total=6))
    status(front, bridge, Wait(0, NAMES[0], "draw", 27.0, mine=True), SeatPresence(1, NAMES[1], True),
           SeatPresence(2, NAMES[2], False, away=12.0))
    return front


def my_turn_discard() -> WebFrontend:
    def hint(view: V.SeatView) -> Any:
        return V.Discard(view.hand[-1])

    front, bridge = make_front(hint=hint)
    bridge.update(draw_view(events=_pile_events(), log_total=6))
    options = ((Card(12, 0), 3, False), (Card(3, 1), 5, False))
    bridge.update(discard_view(close_options=options, first_round=False, events=_pile_events(), log_total=6))
    front.handle({"type": "hint"})
    return front


def close_confirm() -> WebFrontend:
    front, bridge = make_front()
    options = ((Card(12, 0), 3, False),)
    bridge.update(discard_view(close_options=options, first_round=False,
                               seats=seats(totals=(98, 30, 46))))
    front.handle({"type": "intent", "intent": "close", "card": "12d0"})
    return front


def other_turn() -> WebFrontend:
    front, bridge = make_front()
    bridge.update(waiting_view(events=_pile_events()[:-2], log_total=4))
    status(front, bridge, Wait(1, NAMES[1], "draw", 41.0), SeatPresence(1, NAMES[1], True, relayed=True),
           SeatPresence(2, NAMES[2], True, back=True))
    return front


def leave_question() -> WebFrontend:
    front, bridge = make_front()
    bridge.update(waiting_view())
    front.handle({"type": "intent", "intent": "leave"})
    return front


def showdown() -> WebFrontend:
    front, bridge = make_front()
    bridge.update(draw_view())
    bridge.update(showdown_view(seats=seats((15, 104, 49)), phase=V.SHOWDOWN,
                                showdown=showdown_view().showdown[:2] + (
                                    V.ShownHand(1, (), tuple(parse_cards("4h")), tuple(parse_cards("Kd Ks 7c")), 27),)))
    return front


def game_over() -> WebFrontend:
    front, bridge = make_front()
    bridge.update(draw_view())
    bridge.update(showdown_view(phase=V.OVER, winner=0, seats=seats((15, 104, 110), eliminated=(1, 2)),
                                score_history=((3, 77, 46), (12, 27, 64))))
    front.start_ask(front.screen.tr("rematch_ask"), _answers)
    return front


def stopped() -> WebFrontend:
    front, bridge = make_front()
    bridge.update(draw_view())
    bridge.update(draw_view(to_play=1, phase=V.STOPPED,
                            fault=V.Fault(1, "bad_signature", "the signature of a discard does not verify")))
    front.node_done("table stopped: Ben: the signature of a discard does not verify",
                    transcript="/home/ana/.local/share/p2p-chinchon/transcripts/20261203-play/seat-host.chn",
                    exit_code=1)
    return front


def spanish_discard() -> WebFrontend:
    front, bridge = make_front(lang="es", deck="spanish")
    hand = tuple(parse_cards("5d 6d 7d Qs Qh Qc 3h Kd"))
    bridge.update(discard_view(rules=SPANISH, hand=hand, close_options=((Card(12, 0), 3, False),),
                               first_round=False))
    return front


def picker() -> WebFrontend:
    from p2p_chinchon.ui.lobby import TablePicker

    front, _ = make_front()
    chooser = TablePicker(choose=lambda info: None)
    chooser.set_tables([TableInfo("kitchen", "192.168.1.20", 47001, "classic", 2, 4, "8c1f2a9e0b7", 1),
                        TableInfo("garden", "192.168.1.31", 47002, "fournier", 1, 3, "51aa0c9d3e2", 1)])
    front.start_picker(chooser)
    return front


BUILDERS: dict[str, Callable[[], WebFrontend]] = {
    "lobby_host": lobby_host, "lobby_joiner": lobby_joiner, "my_turn_draw": my_turn_draw,
    "my_turn_discard": my_turn_discard, "close_confirm": close_confirm, "other_turn": other_turn,
    "leave_question": leave_question, "showdown": showdown, "game_over": game_over, "stopped": stopped,
    "spanish_discard": spanish_discard, "picker": picker,
}
assert RULES is not None


def build(name: str) -> dict[str, Any]:
    """The sample state ``name`` (a key of :data:`BUILDERS`)."""
    return BUILDERS[name]().state()


def text(state: dict[str, Any]) -> str:
    """A state as its file holds it."""
    return json.dumps(state, ensure_ascii=False, indent=1) + "\n"


def main() -> None:
    STATES.mkdir(exist_ok=True)
    for name in BUILDERS:
        (STATES / f"{name}.json").write_text(text(build(name)), encoding="utf-8")
        print(f"wrote {STATES / name}.json")


if __name__ == "__main__":
    main()
