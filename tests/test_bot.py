"""SimpleBot: draws only when the discard helps, cuts deadwood, closes, sees only its seat."""

import inspect

from p2p_chinchon.bots.simple import SimpleBot
from p2p_chinchon.engine import PRESETS, Card, best_arrangement, make_rules, parse_cards
from p2p_chinchon.rng import SeededRng

P = parse_cards
CLASSIC = PRESETS["classic"]


def bot(rules=CLASSIC, seed=1):
    return SimpleBot(rules, SeededRng(seed))


def test_choose_draw():
    hand = P("5♦ 6♦ 7♦ K♣ K♥ 2♠ J♣")
    assert bot().choose_draw(hand, P("K♠")[0]) == "discard"  # completes the kings
    assert bot().choose_draw(hand, P("Q♥")[0]) == "stock"  # no use
    assert bot().choose_draw(hand, None) == "stock"
    # Taking a low card to swap for a high one is an improvement too.
    assert bot().choose_draw(P("5♦ 6♦ 7♦ K♣ K♥ K♠ J♣"), P("A♥")[0]) == "discard"


def test_choose_discard_cuts_deadwood():
    kind, card = bot().choose_discard(P("5♦ 6♦ 7♦ K♣ K♥ K♠ J♣ 2♥"), may_close=False)
    assert (kind, card) == ("discard", Card(10, 3))
    kept = [c for c in P("5♦ 6♦ 7♦ K♣ K♥ K♠ J♣ 2♥") if c != card]
    assert best_arrangement(kept, CLASSIC).points == 2


def test_closes_when_allowed_and_prefers_clean():
    hand = P("5♦ 6♦ 7♦ K♣ K♥ K♠ 2♥ K♦")
    assert bot().choose_discard(hand, may_close=True) == ("close", Card(2, 1))  # clean -10
    assert bot().choose_discard(hand, may_close=False)[0] == "discard"
    assert bot().choose_discard(P("5♦ 6♦ 7♦ K♣ K♥ K♠ 2♥ Q♣"), True) == ("close", Card(11, 3))


def test_reproducible_with_seeded_rng_and_wild_kept():
    rules = make_rules("classic", {"jokers": 2})
    hand = P("JK 5♦ 6♦ K♣ Q♥ J♠ 7♣ 4♥")
    a = [bot(rules, 7).choose_discard(hand, False) for _ in range(3)]
    b = [bot(rules, 7).choose_discard(hand, False) for _ in range(3)]
    assert a == b
    assert all(not c.is_joker for _, c in a)


def test_bot_sees_only_its_seat():
    # The decision API takes the seat's own cards and the public discard top, nothing else.
    sig = inspect.signature(SimpleBot.choose_draw)
    assert list(sig.parameters)[:3] == ["self", "hand", "discard_top"]
    sig = inspect.signature(SimpleBot.choose_discard)
    assert list(sig.parameters)[:3] == ["self", "hand8", "may_close"]
