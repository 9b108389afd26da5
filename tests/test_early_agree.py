"""An agree given before this seat's turn to agree (joiners agree in seat order, but every
person reads the proposed table at once) is held by the table and signed when the turn comes,
never out of turn; a refused agree can be given again on the screen and in line mode."""

from __future__ import annotations

import pytest

from harness import Net
from p2p_chinchon import table as tbl, view as v


class Person(tbl.Table):
    """A seat whose agree is a person's decision (no auto_agree)."""

    def __init__(self, *a, **kw):
        kw["auto_agree"] = False
        super().__init__(*a, **kw)


def test_the_last_joiner_agreeing_first_is_signed_in_its_turn():
    net = Net(3, seed=41, classes={1: Person, 2: Person})
    assert net.run(net.expects("agree", 1))
    carla = net.tables[2]
    assert carla.intent(v.Agree()) == []  # held: nothing signed before Bruno's agree
    assert carla.needs_decision() is None and 2 not in carla.lobby.toss_commits
    assert all(e.kind != "agree" or e.seat != 2 for e in carla.chain.envelopes)
    with pytest.raises(tbl.IntentError, match="already agreed"):
        net.tables[0].intent(v.Agree())  # the host agreed by opening the table
    net.handle(1, net.tables[1].intent(v.Agree()))  # Bruno; Carla's agree follows his
    assert net.run(net.expects("draw"))
    for t in net.tables:
        assert t.flow.fault is None and t.flow.engine is not None
        agrees = [e.seat for e in t.chain.envelopes if e.kind == "agree"]
        assert agrees == [0, 1, 2]
    with pytest.raises(tbl.IntentError, match="already agreed"):
        carla.intent(v.Agree())


# ------------------------------------------------------------------ the screens


def test_a_refused_agree_can_be_given_again_on_the_screen():
    from harness.ui_fakes import lobby
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    sent: list = []
    s = TableScreen(Translator("en"), Faces("french", True, True), send=sent.append)
    s.set_view(lobby())
    s.key("a")
    assert "waiting for the other seats" in s.render_text()
    s.rejected("nothing to agree to now")
    assert "Refused: nothing to agree to now" in s.render_text()
    assert "Press a to agree" in s.render_text()
    s.key("a")  # not "You have already agreed."
    assert sent == [v.Agree(), v.Agree()]


async def test_a_refused_agree_can_be_given_again_in_line_mode():
    import io

    import trio

    from harness.ui_fakes import lobby
    from p2p_chinchon.ui.lines import run_line_mode_async

    async def node(bridge):
        bridge.update(lobby())
        first = await bridge.intents.receive()
        bridge.reject("nothing to agree to now")
        return first, await bridge.intents.receive()

    out = io.StringIO()
    with trio.fail_after(5):
        got = await run_line_mode_async(node, stdin=io.StringIO("agree\nagree\n"), stdout=out,
                                        lang="en", charset="unicode")
    assert got == (v.Agree(), v.Agree()), out.getvalue()
