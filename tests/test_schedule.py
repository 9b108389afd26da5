"""The schedule's tables (p2p_chinchon/schedule.py) and the Flow that applies them.

Every message kind of the wire schema has one registry row, each part checks and makes what its
rows say, and Flow refuses every step and phase change the tables do not list (exhaustively over
phases and kinds). That every game the tests play keeps to the tables is checked live: Flow
raises on the first step outside them, and the seeded games and the whole suite run through it.
"""

from __future__ import annotations

import itertools
from types import MethodType

import pytest

from p2p_chinchon import schedule, view as v, wire
from p2p_chinchon.table import Table
from p2p_chinchon.table.common import Step
from p2p_chinchon.table.state import Flow

PHASES = tuple(schedule.PHASE_EDGES)


def test_every_wire_kind_has_one_registry_row() -> None:
    assert set(schedule.KINDS) == set(wire.KINDS)
    assert set(PHASES) == set(schedule.PHASE_STEPS)
    for steps in schedule.PHASE_STEPS.values():
        assert set(steps) <= schedule.STEP_KINDS
    assert set(schedule.TERMINAL_KINDS) == {"fault", "leave"}
    assert set(schedule.SHARE_KINDS) == {"deal_shares", "draw_share", "show"}


def test_every_part_checks_and_makes_what_its_rows_say() -> None:
    """The table's checks are ``on_<kind>`` of the part each row names (the offer's and the
    terminal kinds' by name); its makers are ``auto_<kind>`` of that part, for exactly the
    kinds the node signs by itself (a table that agrees in advance signs ``agree`` through
    the lobby's ``auto_agree_body``)."""
    t = Table.observer()
    named = {"offer": "handle_offer", "fault": "handle_terminal", "leave": "handle_terminal"}
    assert set(t.checks) == set(schedule.KINDS) - {"away"}  # away: a removal vote, unchained
    for kind, check in t.checks.items():
        row = schedule.KINDS[kind]
        assert check.__name__ == named.get(kind, f"on_{kind}"), kind
        if row.part is not None:
            assert isinstance(check, MethodType) and check.__self__ is getattr(t, row.part), kind
    assert set(t.makers) == {k for k, row in schedule.KINDS.items() if row.step and not row.decided}
    for kind, make in t.makers.items():
        assert make.__name__ == f"auto_{kind}" and isinstance(make, MethodType), kind
        part = schedule.KINDS[kind].part
        assert part is not None and make.__self__ is getattr(t, part), kind


def test_a_phase_change_outside_the_table_is_refused() -> None:
    for old, new in itertools.product(PHASES, PHASES):
        f = Flow()
        f.phase = old
        if new in schedule.PHASE_EDGES[old]:
            f.to(new)
            assert f.phase == new
        else:
            with pytest.raises(schedule.ScheduleError):
                f.to(new)
            assert f.phase == old


def test_a_step_outside_its_phase_or_before_its_block_is_refused() -> None:
    for phase in PHASES:
        steps = schedule.PHASE_STEPS[phase]
        for last, kind in itertools.product((None, *steps), sorted(schedule.KINDS)):
            f = Flow()
            f.phase = phase
            if last is not None:
                f.queue.append(Step(last, 0))
            allowed = kind in steps and (last is None or steps.index(kind) >= steps.index(last))
            if allowed:
                f.expect(kind, (0, 1))
                assert list(f.queue)[-2:] == [Step(kind, 0), Step(kind, 1)]
            else:
                with pytest.raises(schedule.ScheduleError):
                    f.expect(kind, (0,))


def test_done_pops_only_the_expected_kind_and_says_when_its_block_ends() -> None:
    f = Flow()
    f.expect("seating", (0,))
    with pytest.raises(schedule.ScheduleError):
        f.done("agree")
    assert f.done("seating") is True
    f.expect("agree", (0, 1))
    f.expect("toss", (0, 1))
    assert f.block_ends() is False
    assert f.done("agree") is False
    assert f.block_ends() is True
    assert f.done("agree") is True
    assert f.expected() == Step("toss", 0)
    f.drop(lambda st: st.seat != 0)
    assert list(f.queue) == [Step("toss", 1)]
    with pytest.raises(schedule.ScheduleError):
        Flow().done("toss")


def test_removes_go_first_only_once_a_game_is_played() -> None:
    f = Flow()
    f.expect("seating", (0,))
    with pytest.raises(schedule.ScheduleError):
        f.expect_first("remove", (1,))
    with pytest.raises(schedule.ScheduleError):
        f.expect_first("draw_share", (1,))


def test_the_game_finishes_once_and_never_after_a_stop() -> None:
    f = Flow()
    f.winner = 1
    assert f.finish().winner == 1 and f.finished and f.over
    with pytest.raises(schedule.ScheduleError):
        f.finish()
    g = Flow()
    g.stop(v.Fault(0, "timeout", "seat 0 ran out of time"))
    assert g.phase == v.STOPPED
    with pytest.raises(schedule.ScheduleError):
        g.finish()
