"""A dead hand the bots never broke (a newcomer's report): in ``play`` with three ``easy`` bots
and the default rules (no ``max_reshuffles`` limit) the four hands held all 28 number cards and
only the 12 court cards went round through the stock and the discard pile: 13 re-makings and no
end, since after two a bot only took a discard pairing a rank it held, and nobody held a court
card. Now, after :data:`~p2p_chinchon.bots.deadhand.BREAK_AFTER` re-makings, a bot takes a card
that went round unwanted even without a pair and throws a card of its deadwood instead.

Engine-level (:class:`~p2p_chinchon.bots.tournament.TableHarness`, no crypto): exactly that
position, every level at every seat, played until the hand ends or a bound on re-makings."""

from __future__ import annotations

import dataclasses

import pytest

from p2p_chinchon import view as V
from p2p_chinchon.autoplay import bot_decider, hint, suggest
from p2p_chinchon.bots import make_bot
from p2p_chinchon.bots.evaluate import Evaluator
from p2p_chinchon.bots.record import face
from p2p_chinchon.bots.tournament import TableHarness
from p2p_chinchon.engine import Card, Game, Phase, make_rules
from p2p_chinchon.rng import SeededRng

RULES = make_rules("classic", {})
MAX_REMAKES = 12  # re-makings of the stuck hand's stock allowed before it must have ended
COURT = (10, 11, 12)


def stuck_deal(seed: int = 0) -> tuple[list[list], list]:
    """Four hands of number cards (all 28) with which no court card melds (no 7 beside a 6 of
    its suit), so that nobody wants one, and none of which can close, and the 12 court cards (upcard first, then the
    stock): the first such deal from ``seed``."""
    deck = Game(RULES, 4, 0).deck_cards()
    numbers = [c for c in deck if c.rank not in COURT]
    courts = [c for c in deck if c.rank in COURT]
    ev = Evaluator(RULES)
    rng = SeededRng(f"stuck/{seed}")
    while True:
        order = numbers[:]
        for i in range(len(order) - 1, 0, -1):
            j = rng.randbelow(i + 1)
            order[i], order[j] = order[j], order[i]
        hands = [order[7 * s: 7 * s + 7] for s in range(4)]
        if not any(ev.melds_with(face(c), h) or ev.close_options([*h, c]) for h in hands for c in courts):
            return hands, courts


class StuckHarness(TableHarness):
    """The first hand is dealt :func:`stuck_deal`; later hands as the harness deals them."""

    def __init__(self, *args, hands, courts, **kw):
        super().__init__(*args, **kw)
        self._stuck: tuple[list, list] | None = (hands, courts)

    def _deal(self) -> None:
        if self._stuck is None:
            return super()._deal()
        hands, courts = self._stuck
        self._stuck = None
        g = self.game
        n = len(self._cards)
        g.start_hand(n)
        faces: dict[int, Card] = {}
        for seat, slots in g.deal_plan().items():
            faces.update(zip(slots, hands[seat], strict=True))
        faces.update(zip(range(g.upcard_slot(), n), courts, strict=True))
        for slot, card in faces.items():
            g.learn(slot, card)
        self._next_slot = n
        self._say("deal", (g.dealer,), numbers=(g.hand_no + 1,))
        self._say("upcard", cards=(g.faces[g.discard_pile[-1]],))


def play_first_hand(levels, seed=0):
    """Play the stuck first hand to its end; returns (re-makings it took, turns); fails past
    :data:`MAX_REMAKES` re-makings (a bounded loop: no clock)."""
    hands, courts = stuck_deal(seed)
    deciders = [bot_decider(make_bot(RULES, SeededRng(f"stuck-bot/{seed}/{i}"), lv)) for i, lv in enumerate(levels)]
    h = StuckHarness(RULES, deciders, SeededRng(f"stuck-shuffle/{seed}"), hands=hands, courts=courts)
    g = h.game
    most = turns = 0
    while g.hand_no == 0 and g.phase is not Phase.OVER:
        most = max(most, g.reshuffles)
        assert most <= MAX_REMAKES, f"{levels}: the hand is still going round after {most} re-makings"
        turns += g.phase in (Phase.DRAW, Phase.DISCARD)
        assert h.step()
    return most, turns


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_bots_break_a_hand_where_only_court_cards_go_round(level, seed):
    """Bots break the court-card round at the seeds where it went on for ever: easy at 0,
    normal at 0-3, hard at 1 and 3."""
    play_first_hand([level] * 4, seed)


def test_mixed_levels_break_it_too():
    play_first_hand(["easy", "normal", "hard", "easy"], seed=3)  # went round for ever before


def _stuck_view():
    """Seat 0's draw in that position after four re-makings, a court card on the pile."""
    hands, courts = stuck_deal()
    deciders = [bot_decider(make_bot(RULES, SeededRng(i), "easy")) for i in range(4)]
    h = StuckHarness(RULES, deciders, SeededRng("stuck-view"), hands=hands, courts=courts)
    h.step()  # the deal
    g = h.game
    top = g.faces[g.discard_pile[-1]]
    events = list(h.log)
    for _ in range(4):  # the courts went round: discarded, re-made
        events += [V.log_event("discard", (1,), ("Bruno",), cards=(top,)),
                   V.log_event("reshuffle", (), (), numbers=(11,))]
    events.append(V.log_event("discard", (3,), ("Diego",), cards=(top,)))
    seat = g.to_play
    assert seat is not None
    return dataclasses.replace(h.view(seat), events=tuple(events)), top


def test_the_hint_takes_the_court_card_and_throws_deadwood():
    view, top = _stuck_view()
    bot = make_bot(RULES, SeededRng(3), "hard")
    assert suggest(bot, view) == V.Draw("discard"), hint(bot, view)
    assert "take the" in hint(bot, view)
    took = dataclasses.replace(view, step="discard", hand=view.hand + (top,), close_options=(),
                               events=view.events + (V.log_event("draw_discard", (view.me,), ("Ana",), cards=(top,)),))
    thrown = suggest(bot, took)
    assert isinstance(thrown, V.Discard) and thrown.card != top and thrown.card.rank not in COURT
    ev = Evaluator(RULES)  # a card of its deadwood: the melds it held stay whole
    rest = [c for c in took.hand if c != thrown.card]
    assert ev.points(rest) == ev.points(list(took.hand)) - RULES.value(thrown.card)


def test_a_live_hand_does_not_take_an_unpaired_court_card():
    view, top = _stuck_view()
    fresh = dataclasses.replace(view, events=view.events[:2] + view.events[-1:])  # no re-making yet
    for level in ("easy", "normal", "hard"):
        assert suggest(make_bot(RULES, SeededRng(3), level), fresh) == V.Draw("stock")
