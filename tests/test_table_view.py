"""The seat's view (table/view.py): what it remembers between envelopes must never go stale."""

from __future__ import annotations

import pytest

from p2p_chinchon import table as tbl
from p2p_chinchon.audit import audit_file
from p2p_chinchon.engine import make_rules
from p2p_chinchon.local import SeatSpec, play_local


@pytest.mark.parametrize("preset, seats, seed", [("classic", 3, 4), ("online", 4, 12)])
async def test_remembered_close_options_equal_fresh_ones(tmp_path, monkeypatch, preset, seats, seed):
    """The close options and the first-round flag are remembered per hand, faces and ban:
    through whole games (the ban lifting, draws changing the hand, new hands), every view's
    remembered answer equals one computed afresh."""
    fresh = tbl.TableView._close_view
    checked = {"hits": 0, "discard_views": 0}

    def compare(self):
        got = fresh(self)
        memo, self._close_memo = self._close_memo, None
        again = fresh(self)
        assert got == again, (got, again)
        if memo is not None:
            checked["hits"] += 1
        if self.flow.engine.phase.value == "discard" and self.lobby.me == self.flow.engine.to_play:
            checked["discard_views"] += 1
        return got

    monkeypatch.setattr(tbl.TableView, "_close_view", compare)
    rules = make_rules(preset, {"limit": 30})
    results = await play_local(rules, [SeatSpec(f"P{i}") for i in range(seats)], seed=seed,
                               proof_rounds=3, transcript_dir=tmp_path)
    assert all(r.fault is None and r.error is None for r in results), [r.error for r in results]
    assert checked["discard_views"] > 0 and checked["hits"] > 0, checked
    assert audit_file(tmp_path / "seat0.chn").verdict == "ok"


def test_every_kind_has_its_check_and_the_shuffle_progress_counts_up():
    """Each kind the table dispatches resolves to ``on_<kind>`` of its part (a renamed check
    would otherwise surface as an honest signer's violation); while a hand is shuffled the
    view's progress counts the steps done of the phase's total."""
    from harness import Net

    net = Net(3, seed=43)
    t = net.tables[0]
    for kind in (*tbl.HANDLERS, "offer", "fault", "leave"):
        assert callable(t.handler(kind)), kind
    seen: list[tuple[int, int, str]] = []
    while net.q or not seen or seen[-1][0] < seen[-1][1]:
        assert net.q, "the shuffle phase ran out of messages"
        src, dst, frame = net.q.popleft()
        net.handle(dst, net.tables[dst].receive(frame, src))
        p = t.view().progress
        if p is not None and t.flow.phase == "shuffling":
            seen.append(p)
        if t.flow.hand_started:
            break
    done = [p[0] for p in seen]
    assert done == sorted(done) and done[-1] > 0, seen
    assert {p[1] for p in seen} == {t.hand.total_steps}, seen
