"""The discard pile's history (p): who threw what this hand, the cards a
player took marked +, kept across views although each view carries only its last 50 events,
started afresh at each deal."""

from __future__ import annotations

from harness.ui_fakes import draw_view, ev
from p2p_chinchon.i18n import Translator
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.ui.screen import TableScreen

RANKS = ["A", "2", "3", "4", "5", "6", "7"]


def test_p_shows_who_threw_what_this_hand():
    s = TableScreen(Translator("en"), Faces())
    log = [ev("deal", 2, numbers=(1,))]
    total = 0

    def show(events):
        nonlocal total, log
        log += events
        total += len(events)
        s.set_view(draw_view(events=tuple(log[-50:]), log_total=total + 1))

    show([])
    for i in range(40):  # 80 events: more than one view holds
        seat = 1 + i % 2
        show([ev("draw_stock", seat), ev("discard", seat, cards=[f"{RANKS[i % 7]}♠"])])
    show([ev("draw_discard", 0, cards=["7♠"]), ev("discard", 0, cards=["K♦"])])
    s.key("p")
    text = s.render_text(100, 24)
    ben = next(r for r in text.splitlines() if r.startswith("Ben"))
    assert ben.split()[1:4] == ["A♠", "3♠", "5♠"] and len(ben.split()) == 21, ben
    ana = next(r for r in text.splitlines() if r.startswith("Ana"))
    assert ana.split()[1:] == ["+7♠", "K♦"], ana
    assert "what each player threw" in text
    s.key("x")  # any key: back to the table
    assert "what each player threw" not in s.render_text(100, 24)
    show([ev("deal", 0, numbers=(2,)), ev("discard", 1, cards=["Q♣"])])  # a new hand
    s.key("p")
    ben = next(r for r in s.render_text(100, 24).splitlines() if r.startswith("Ben"))
    assert ben.split()[1:] == ["Q♣"], ben
