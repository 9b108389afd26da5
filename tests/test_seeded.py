"""The session cache of seeded tables (:mod:`harness.seeded`): a copy stands at its point, shares
nothing with the cache or another copy, and played on is the game a cold run of the same seeds
plays, whichever copy is played first."""

from __future__ import annotations

import pytest

from harness import BotSeat, Net
from harness.seeded import POINTS, seeded_net


@pytest.mark.parametrize("point", POINTS)
def test_a_copy_stands_at_its_point_and_is_its_own(point):
    net, other = seeded_net(point, 2), seeded_net(point, 2)
    assert POINTS[point](net) and POINTS[point](other)
    assert net.tables[0].chain.frames == other.tables[0].chain.frames
    assert net.tables[0] is not other.tables[0] and net.q is not other.q
    mine, theirs = net.bots[0], other.bots[0]
    assert isinstance(mine, BotSeat) and isinstance(theirs, BotSeat)
    assert mine.bot.rng is not theirs.bot.rng


def test_copies_played_on_are_the_cold_game_whatever_the_order():
    cold = Net(2, seed=1)
    assert cold.run()
    for point in ("seated", "dealt", "first_draw", "showdown", "dealt"):
        net = seeded_net(point, 2)
        assert net.run() and net.tables[0].chain.frames == cold.tables[0].chain.frames, point
