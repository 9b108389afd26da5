"""The node's verdicts (p2p_chinchon/net/verdicts.py) with explicit times: no node, no trio.

A :class:`Presence` fed numbers stands for what the node heard; each test names the wait the
clocks gave and checks what the verdicts call for, as ``Node._tick`` applies it."""

from __future__ import annotations

import pytest

from p2p_chinchon import table as tbl
from p2p_chinchon.net import verdicts as vd
from p2p_chinchon.net.presence import Presence
from p2p_chinchon.net.status import Wait

T0 = 1000.0
OTHERS = [1, 2]  # seat 0 is ours


def _presence(*present: int, at: float = T0) -> Presence:
    p = Presence()
    for s in present:
        p.link_up(s, at)
    return p


def _expired(wait: Wait | None, p: Presence, removing: int | None = None, stall: float = 900.0) -> vd.Verdict:
    return vd.Verdicts.expired(wait, T0, p, OTHERS, removing, stall)


def test_a_wait_with_time_left_or_no_limit_calls_for_nothing():
    p = _presence(1, 2)
    assert _expired(None, p).act == vd.NOTHING
    assert _expired(Wait(1, "Bruno", "draw", 0.1), p).act == vd.NOTHING
    assert _expired(Wait(1, "Bruno", "draw", None), p).act == vd.NOTHING
    assert _expired(Wait(1, "Bruno", "draw", 0.0), p).act == vd.TIMEOUT, "0 s left ran out"


def test_a_connected_seat_past_its_limit_is_faulted_one_heard_only_through_another_is_not():
    assert _expired(Wait(1, "Bruno", "shuffle", -1.0), _presence(1, 2)).act == vd.TIMEOUT
    v = _expired(Wait(1, "Bruno", "shuffle", -1.0), _presence(2))
    assert (v.act, v.seat) == (vd.SPENT, 1)


def test_an_absent_seat_before_the_game_is_recorded_absent_unless_nobody_is_reached():
    v = _expired(Wait(1, "Bruno", "key_share", -1.0, absent=True), _presence(2))
    assert (v.act, v.seat) == (vd.ABSENT, 1)
    assert _expired(Wait(1, "Bruno", "key_share", -1.0, absent=True), _presence()).act == vd.CUT_OFF


def test_my_turn_clock_plays_the_bot_and_my_removal_clock_cosigns():
    p = _presence(1, 2)
    assert _expired(Wait(0, "Ana", "draw", -0.5, mine=True), p).act == vd.BOT
    v = _expired(Wait(0, "Ana", "remove", -0.5, mine=True, removing="Carla"), p, removing=2)
    assert (v.act, v.seat) == (vd.COSIGN, 2)
    assert _expired(Wait(0, "Ana", "remove", -0.5, mine=True, removing="Carla"), p).act == vd.NOTHING


@pytest.mark.parametrize("note", ["votes", "minority", "blocked", "end", "hears", "listening", "cutoff"])
def test_a_wait_only_a_return_can_end_stops_signing_nothing(note):
    w = Wait(2, "Carla", "draw", -1.0, absent=True, note=note)
    v = _expired(w, _presence(1), stall=900.0)
    assert v.act == vd.HALT and not v.nobody and "15 min" in v.reason and "signing nothing" in v.reason
    assert vd.stalled(w)
    # the signature of a removal another seat owes: also only the stall_limit
    w = Wait(1, "Bruno", "remove", -1.0, removing="Carla")
    assert vd.stalled(w) and _expired(w, _presence(1), stall=90.0).reason.count("90 s") == 1
    assert not vd.stalled(Wait(0, "Ana", "remove", -1.0, mine=True, removing="Carla"))


def test_halt_reasons_name_why():
    nobody = _expired(Wait(0, "Ana", "nobody", -1.0, note="nobody"), _presence())
    assert nobody.act == vd.HALT and nobody.nobody
    assert "majority" in vd.halt_reason(Wait(2, "Carla", "draw", 0, note="minority"), 600)
    assert "game's end could not be signed without Carla for 10 min" in vd.halt_reason(
        Wait(2, "Carla", "game_end", 0, note="end"), 600)
    assert "without Carla for 10 min (no majority" in vd.halt_reason(Wait(1, "B", "draw", 0, note="blocked",
                                                                          removing="Carla"), 600)


def test_a_late_tick_means_this_node_slept_once():
    v = vd.Verdicts()
    assert not v.woke(T0, False), "the first tick"
    assert not v.woke(T0 + vd.WAKE_AFTER, False), "exactly WAKE_AFTER is not late"
    assert v.woke(T0 + 2 * vd.WAKE_AFTER + 0.1, False) and v.last_tick == T0 + 2 * vd.WAKE_AFTER + 0.1
    assert not v.woke(T0 + 100, True), "already listening"
    assert v.last_tick == T0 + 100


def test_a_node_that_reaches_nobody_listens_first():
    p = _presence(1, 2)
    assert not vd.Verdicts.cut_off(T0 + 1, p, OTHERS, True)
    assert vd.Verdicts.cut_off(T0 + 10, p, OTHERS, True)
    assert not vd.Verdicts.cut_off(T0 + 10, p, OTHERS, False), "before the game"
    assert not vd.Verdicts.cut_off(T0 + 10, Presence(), OTHERS, True), "never heard anyone: forming"
    assert not vd.Verdicts.cut_off(T0 + 10, p, [], True)
    p.listen(T0 + 10, "cutoff")
    assert not vd.Verdicts.cut_off(T0 + 11, p, OTHERS, True), "already listening"


def test_a_seat_away_past_rejoin_wait_is_gone_and_voted_out_once_per_chain_length():
    p = _presence(1, 2)
    p.link_down(2)
    p.hear(1, T0 + 5)
    p.update(T0 + 5, OTHERS, (), 10)
    assert p.away_since == {2: T0 + 5}
    assert vd.Verdicts.gone(T0 + 5 + 119, p, 120.0, True) == []
    assert vd.Verdicts.gone(T0 + 5 + 120, p, 120.0, True) == [2]
    assert vd.Verdicts.gone(T0 + 5 + 120, p, 120.0, False) == [], "before the game"
    v = vd.Verdicts()
    step = tbl.Step("draw", 2)
    w = Wait(2, "Carla", "draw", 800.0, absent=True, note="votes")
    assert v.vote(w, step, 10) == 2 and v.vote(w, step, 10) is None
    assert v.vote(w, step, 11) == 2, "a new chain length: a new vote"
    assert v.vote(Wait(2, "Carla", "draw", 10.0, absent=True), step, 12) is None, "inside rejoin_wait"
    assert v.vote(Wait(0, "Ana", "listening", 10.0, note="listening"), step, 12) is None
    assert v.vote(w, None, 12) is None
    p.listen(T0 + 200, "listening")
    p.away_since[2] = T0  # (listening: no absence counts)
    assert vd.Verdicts.gone(T0 + 500, p, 120.0, True) == []


def test_a_listening_node_stops_when_nobody_answers_and_keeps_the_stall_limit_otherwise():
    p = _presence(1, at=T0 - 50)
    p.listen(T0, "listening")
    calls: list[int] = []

    def stall() -> float:
        calls.append(1)
        return 777.0

    w = vd.listen_wait(T0 + 5, p, OTHERS, 0, "Ana", stall)
    assert (w.note, w.left, w.seat, w.name) == ("listening", vd.NOBODY_ANSWERS - 5, 0, "Ana")
    w = vd.listen_wait(T0 + vd.NOBODY_SHOWN, p, OTHERS, 0, "Ana", stall)
    assert (w.note, w.left) == ("nobody", vd.NOBODY_ANSWERS - vd.NOBODY_SHOWN)
    assert calls == [], "the stall_limit does not start while nobody answers"
    p.hear(2, T0 + 20)  # a frame, then nothing (no link: not present)
    w = vd.listen_wait(T0 + 30, p, OTHERS, 0, "Ana", stall)
    assert (w.note, w.left) == ("nobody", vd.NOBODY_ANSWERS - 10), "counted from the last sign of life"
    p.link_up(1, T0 + 30)
    w = vd.listen_wait(T0 + 31, p, OTHERS, 0, "Ana", stall)
    assert (w.note, w.left) == ("listening", 777.0) and calls == [1]
    p.listen(T0 + 40, "cutoff")
    w = vd.listen_wait(T0 + 40 + 2 * vd.NOBODY_ANSWERS, p, OTHERS, 0, "Ana", stall)
    assert (w.note, w.left) == ("cutoff", 777.0)


def test_a_listening_node_plays_on_once_caught_up():
    s = vd.SHOWN_AFTER
    assert not vd.caught_up(T0 + 50, [], T0, T0, False, T0), "nobody back"
    assert not vd.caught_up(T0 + s - 0.1, [1], T0, T0 - 9, False, T0), "just asked"
    assert not vd.caught_up(T0 + s + 1, [1], T0, T0 + 2, False, T0), "the chain just grew"
    assert vd.caught_up(T0 + s, [1], T0, T0, False, T0)
    assert not vd.caught_up(T0 + s, [1], T0, T0, True, T0), "envelopes buffered ahead: wait for the gap"
    assert vd.caught_up(T0 + vd.LISTEN_FOR_GAPS, [1], T0, T0, True, T0), "not for ever"


def test_routine_steps_are_shown_only_once_stalled():
    step = Wait(1, "Bruno", "shuffle", 80.0)
    assert vd.shown(step, T0 + vd.SHOWN_AFTER - 0.1, T0) is None
    assert vd.shown(step, T0 + vd.SHOWN_AFTER, T0) is step
    for w in (Wait(1, "Bruno", "draw", 80.0), Wait(1, "Bruno", "shuffle", 80.0, absent=True),
              Wait(1, "Bruno", "remove", 80.0, removing="Carla"), Wait(0, "Ana", "x", 1.0, note="listening")):
        assert vd.shown(w, T0, T0) is w
    assert vd.shown(None, T0 + 100, T0) is None
