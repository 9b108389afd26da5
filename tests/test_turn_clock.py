"""The turn clock starts at its full value every turn, counted from when the
turn reaches the player (it started at 1:26, 1:12, 1:02 on successive turns: every decision
within showdown_time of a score counted from the end of that showdown), driven on trio's
MockClock through the node's own clock tick."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import trio
import trio.testing

from p2p_chinchon import table as tbl, view as V
from p2p_chinchon.engine import make_rules
from p2p_chinchon.net.node import Events, Node

TURN = 60
SHOWDOWN = 30


class StubTable(SimpleNamespace):
    """What the node's clock reads of a table's parts: two seats, this one seat 0, a step per move."""

    def __init__(self) -> None:
        super().__init__(
            lobby=SimpleNamespace(me=0, rules=make_rules("classic", {"turn_time": str(TURN), "showdown_time": str(SHOWDOWN)}),
                                  players=[SimpleNamespace(name="Ana"), SimpleNamespace(name="Bruno")]),
            flow=SimpleNamespace(engine=object(), left=set(), catching_up=False),
            chain=SimpleNamespace(frames=[], buffer={}), turns=SimpleNamespace(score_history=[]),
            removal=SimpleNamespace(removing_seat=None, removal_step=lambda: None, removed={}), step=None)

    def as_table(self) -> tbl.Table:
        return cast(tbl.Table, self)             # a stand-in: what the node's clock reads

    def expected(self):
        return self.step

    def move(self, seat: int, kind: str = "draw") -> None:
        self.chain.frames.append(b"x")
        self.step = tbl.Step(kind, seat)


class Seen(Events):
    def __init__(self) -> None:
        self.waits: list[Any] = []

    def status(self, status) -> None:
        self.waits.append(status.wait)


def _mine_left(node: Node) -> float:
    step = node.table.expected()
    assert step is not None
    wait = node._deadline(step, trio.current_time())
    assert wait.mine and wait.left is not None
    return wait.left


def test_each_turn_starts_at_the_full_clock_from_when_it_reaches_the_player():
    clock = trio.testing.MockClock()

    async def main():
        start = trio.current_time()
        t = StubTable()
        events = Seen()
        node = Node(t.as_table(), events)
        node.presence.heard = {1: trio.current_time()}
        node.presence.up = {1}

        async def tick(after: float) -> None:
            """Let ``after`` seconds pass as the node's clock loop sees them (a tick each 0.5 s,
            Bruno heard all along)."""
            while True:
                step = min(0.5, after)
                clock.jump(step)
                after -= step
                node.presence.heard[1] = trio.current_time()
                await node._tick()
                if after <= 0:
                    return

        t.move(1)  # Bruno's turn; a hand was just scored
        t.turns.score_history.append((0, 0))
        await tick(0)
        lefts = []
        # the person keeps the showdown up: turns of theirs come 4 s, 18 s and 28 s after the
        # score (the bug: 1:26, 1:12, 1:02); each shows the full 60 s, no more
        for at in (4, 18, 28):
            t.move(0)
            await tick(at - (trio.current_time() - start))
            lefts.append(_mine_left(node))
            t.move(1)
            await tick(0.5)
        assert lefts == [TURN, TURN, TURN]
        assert all(w.left <= TURN for w in events.waits if w is not None and w.mine)
        # still held: the clock waits at its full value until the showdown goes (30 s), then runs
        t.move(0)
        await tick(0.5)
        assert _mine_left(node) == TURN
        await tick(start + SHOWDOWN + 10 - trio.current_time())
        assert _mine_left(node) == TURN - 10
        # a turn long after the showdown: the whole clock from its own start
        t.move(1)
        await tick(5)
        t.move(0)
        await tick(0.5)  # the clock loop's next tick sees the turn reach us
        assert _mine_left(node) == TURN
        await tick(15)
        assert _mine_left(node) == TURN - 15

    trio.run(main, clock=clock)


def test_putting_the_showdown_away_starts_the_turn_clock_at_once():
    clock = trio.testing.MockClock()

    async def main():
        t = StubTable()
        node = Node(t.as_table(), Seen())
        node.presence.heard, node.presence.up = {1: 0.0}, {1}
        t.turns.score_history.append((0, 0))
        t.move(0)
        await node._tick()  # our turn, with the showdown still up

        async def tick(after: float) -> None:
            for _ in range(int(after * 2)):
                clock.jump(0.5)
                node.presence.heard[1] = trio.current_time()
                await node._tick()

        await tick(3)
        assert _mine_left(node) == TURN  # nothing runs while the showdown is up...
        node.showdown_seen()  # ...the person presses a key (V.ShowdownSeen through the node)
        await tick(7)
        assert _mine_left(node) == TURN - 7  # ...and the clock runs from that key, not from 30 s

    trio.run(main, clock=clock)


def test_the_key_that_puts_the_showdown_away_tells_the_node():
    """The full screen sends ShowdownSeen (a local note, never a move) when a key puts a held
    showdown away, and nothing while no showdown is held."""
    from harness.ui_fakes import draw_view, showdown_view
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    sent: list[Any] = []
    s = TableScreen(Translator("en"), Faces("french", True, True), send=sent.append)
    s.set_view(draw_view())
    s.set_view(showdown_view(phase=V.HAND_OVER))
    s.set_view(draw_view(hand_no=3, score_history=showdown_view().score_history))
    assert s.holding() and sent == []
    s.key("x")
    assert sent == [V.ShowdownSeen()] and not s.holding()
    s.key("s")
    assert sent == [V.ShowdownSeen(), V.Draw("stock")]


def test_help_tells_this_tables_turn_clock():
    import dataclasses

    from harness.ui_fakes import RULES, draw_view
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    for lang, words in (("en", "Turn clock here: 45 s"), ("es", "Reloj de turno en esta mesa: 45 s"),
                        ("fr", "Horloge de tour ici : 45 s")):
        s = TableScreen(Translator(lang), Faces("french", True, True))
        s.set_view(draw_view(rules=dataclasses.replace(RULES, turn_time=45)))
        s.key("?")
        assert words in s.render_text(), s.render_text()
        shown = " ".join(s.render_text(80, 24).split())  # read whole at 80 columns, not cut with …
        whole = Translator(lang)("help_clock", s=45)
        assert " ".join(whole.split()) in shown, s.render_text(80, 24)
    s = TableScreen(Translator("en"), Faces("french", True, True))
    s.set_view(draw_view(rules=dataclasses.replace(RULES, turn_time=0)))
    s.key("?")
    assert "no turn clock" in s.render_text()


def test_a_node_back_from_suspend_restarts_its_own_turn_clock():
    """Stopped (a lid, SIGSTOP) for longer than its turn clock while the turn is its own: the
    node sees its clock jump, catches up, and then gives its person the whole turn clock from
    that moment; it never plays for them for the time it was away."""
    clock = trio.testing.MockClock()

    async def main():
        t = StubTable()
        t.poll = list
        t.view = lambda: None
        t.needs_decision = lambda: "draw"
        events = Seen()
        node = Node(t.as_table(), events)
        node.presence.heard, node.presence.up = {1: trio.current_time()}, {1}
        played = []

        async def act(intent):
            played.append(intent)
            return True

        # the node's moves replaced: the test plays them
        node._act = act  # type: ignore[method-assign]
        node._bot_intent = lambda need: need  # type: ignore[method-assign]
        node._decide = _nothing  # type: ignore[method-assign]

        async def tick(after: float) -> None:
            for _ in range(int(after * 2)):
                clock.jump(0.5)
                node.presence.heard[1] = trio.current_time()
                await node._tick()

        t.move(0)
        await tick(10)
        assert _mine_left(node) < TURN - 9
        clock.jump(TURN + 30)  # asleep: no tick, nobody heard
        node.presence.heard[1] = trio.current_time()  # Bruno's heartbeat is the first thing it gets back
        await tick(0.5)
        await tick(10)
        assert not played, "the turn clock played for the person while the node was asleep"
        assert not t.flow.catching_up
        assert TURN - 11 <= _mine_left(node) <= TURN  # counted from the wake, not from the turn's start

    trio.run(main, clock=clock)


async def _nothing() -> None:
    return None
