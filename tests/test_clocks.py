"""The node's clocks (p2p_chinchon/net/clocks.py) with explicit times: no node, no trio.

A real seeded table at its first draw; the clocks of the seat to draw and of another seat are
fed numbers for ``now`` and a :class:`Seen` snapshot of presence, as the node feeds them trio's
clock and its presence once a tick."""

from __future__ import annotations

import pytest

from harness import Net, rules_of, step_of
from harness.seeded import seeded_net
from p2p_chinchon.net.clocks import Clocks, Seen, Timeouts
from p2p_chinchon.table.common import Step

T0 = 1000.0


@pytest.fixture
def at_draw() -> Net:
    return seeded_net("dealt", seed=7)


def _seen(others, heard=None, away=None, back=None) -> Seen:
    heard = set(others) if heard is None else set(heard)
    away = away or {}
    return Seen(heard=heard, away_since=away, returned_at=back or {},
                present=frozenset(s for s in heard if s not in away), others=list(others))


def _clocks(net: Net, seat: int, **timeouts: float) -> tuple[Clocks, Step, float, float, float]:
    t = net.tables[seat]
    c = Clocks(t, Timeouts(**timeouts))
    step = t.expected()
    assert step is not None                     # the game goes on
    c.tick(T0, step)
    rules = rules_of(t)
    return c, step, float(rules.turn_time), float(rules.rejoin_wait), float(rules.stall_limit)


def test_my_decision_runs_the_turn_time_from_the_step(at_draw: Net) -> None:
    drawer = step_of(at_draw.tables[0]).seat
    c, step, turn, _, _ = _clocks(at_draw, drawer)
    others = [s for s in range(3) if s != drawer]
    w = c.deadline(step, T0 + 20, _seen(others))
    assert w.mine and w.what == "draw" and w.left == turn - 20
    c.tick(T0 + 30, step)  # the same step a tick later: its clock goes on
    assert c.deadline(step, T0 + 30, _seen(others)).left == turn - 30
    c.restart(T0 + 50)  # back from away: no turn of ours counts the time away
    c.tick(T0 + 50, step)
    assert c.deadline(step, T0 + 50, _seen(others)).left == turn


def test_a_showdown_on_screen_holds_my_turn_clock_until_it_is_put_away(at_draw: Net) -> None:
    drawer = step_of(at_draw.tables[0]).seat
    c, step, turn, _, _ = _clocks(at_draw, drawer)
    others = [s for s in range(3) if s != drawer]
    c.scored = (1, T0 - 5)  # a hand was scored 5 s before the step: its showdown is up
    hold = float(rules_of(at_draw.tables[drawer]).showdown_time)
    assert c.deadline(step, T0 + 1, _seen(others)).left == turn  # shown full while it is up
    assert c.deadline(step, T0 - 5 + hold + 10, _seen(others)).left == turn - 10
    c.showdown_seen(T0 + 2)  # our person put it away: the clock runs from then
    assert c.deadline(step, T0 + 12, _seen(others)).left == turn - 10


def test_another_seats_decision_shows_its_clock_and_adds_the_grace(at_draw: Net) -> None:
    drawer = step_of(at_draw.tables[0]).seat
    me = (drawer + 1) % 3
    c, step, turn, _, _ = _clocks(at_draw, me, protocol=90)
    others = [s for s in range(3) if s != me]
    w = c.deadline(step, T0 + 15, _seen(others))
    assert not w.mine and not w.absent and w.seat == drawer
    assert w.left == turn + 90 - 15 and w.shown == turn - 15
    # back after an absence: the whole limit again, from its return
    w = c.deadline(step, T0 + 200, _seen(others, back={drawer: T0 + 150}))
    assert w.left == turn + 90 - 50


def test_an_absent_seat_has_its_rejoin_wait_then_only_the_stall_limit(at_draw: Net) -> None:
    drawer = step_of(at_draw.tables[0]).seat
    me = (drawer + 1) % 3
    third = 3 - drawer - me
    c, step, _, rejoin, stall = _clocks(at_draw, me)
    others = [s for s in range(3) if s != me]
    away = {drawer: T0 + 10}
    w = c.deadline(step, T0 + 10 + rejoin - 1, _seen(others, away=away))
    assert w.absent and w.left == 1 and not w.note
    w = c.deadline(step, T0 + 10 + rejoin + 5, _seen(others, away=away))
    assert w.note == "votes" and w.left == stall and w.need == 2  # the stall starts at its first need
    w = c.deadline(step, T0 + 10 + rejoin + 65, _seen(others, away=away))
    assert w.left == stall - 60
    both = {drawer: T0 + 10, third: T0 + 10}  # the seats out of reach are a majority with it
    assert c.deadline(step, T0 + 10 + rejoin + 70, _seen(others, away=both)).note == "minority"
    c.not_stalled()
    assert c.deadline(step, T0 + 10 + rejoin + 80, _seen(others, away=away)).left == stall
    c.tick(T0 + 500, None)  # another step: its own clock, and no stall
    assert c.step_since == T0 + 500 and c.stall_since is None


def test_a_seat_never_heard_is_connecting_for_its_rejoin_wait(at_draw: Net) -> None:
    drawer = step_of(at_draw.tables[0]).seat
    me = (drawer + 1) % 3
    c, step, _, rejoin, _ = _clocks(at_draw, me)
    others = [s for s in range(3) if s != me]
    w = c.deadline(step, T0 + 3, _seen(others, heard=[s for s in others if s != drawer]))
    assert w.absent and w.connecting and w.left == rejoin - 3
