"""Melds, the exact best-arrangement search (against the brute-force reference) and closing."""

import pytest
from hypothesis import given, settings, strategies as st

from p2p_chinchon.engine import (
    JOKER,
    PRESETS,
    Card,
    CardError,
    ClosedHand,
    Meld,
    Rules,
    best_arrangement,
    best_arrangement_bruteforce,
    can_close,
    close_options,
    close_result,
    is_chinchon,
    make_meld,
    make_rules,
    parse_cards,
)

P = parse_cards
CLASSIC = PRESETS["classic"]
JOKERS = make_rules("classic", {"jokers": 2})


def meld(cards: list[Card], rules: Rules) -> Meld:
    """the meld the cards make, which the test knows they do"""
    m = make_meld(cards, rules)
    assert m is not None
    return m


def closed(cards: list[Card], rules: Rules) -> ClosedHand:
    """the close of a hand the test knows can close"""
    r = close_result(cards, rules)
    assert r is not None
    return r


def kind(text, rules=CLASSIC):
    m = make_meld(P(text), rules)
    return None if m is None else m.kind


def test_runs_and_sets_classic():
    # 000 "The cards": 7 and J adjacent; ace only low, king only high.
    assert kind("6♥ 7♥ J♥") == "run"
    assert kind("5♦ 6♦ 7♦ J♦") == "run"
    assert kind("K♦ A♦ 2♦") is None and kind("Q♦ K♦ A♦") is None
    assert kind("5♦ 6♦ 8♦") is None  # no 8 in the 40-card deck -> not in this deck at all
    assert kind("5♦ 7♦ J♦") is None  # gap
    assert kind("Q♠ Q♥ Q♣") == "set" and kind("Q♠ Q♥ Q♣ Q♦") == "set"
    assert kind("Q♠ Q♥") is None
    # In the 48-card deck 7 and J are no longer neighbours.
    r48 = make_rules("classic", {"deck": 48})
    assert kind("6♦ 7♦ J♦", r48) is None and kind("7♦ 8♦ 9♦ J♦", r48) == "run"


def test_two_packs_set_needs_different_suits():
    two = make_rules("classic", {"decks": 2})
    cards = P("5♦ 5♦ 5♥")  # the two packs' 5♦
    assert cards[0] != cards[1]
    assert make_meld(cards, two) is None
    assert meld(P("5♦ 5♦ 5♥ 5♠")[1:], two).kind == "set"
    assert make_meld(P("5♦ 6♦ 6♦ 7♦"), two) is None  # a run cannot hold the same card twice
    arr = best_arrangement(P("5♦ 5♦ 5♥ 5♠ 6♦ 7♦ 4♦"), two)
    assert arr.points == 0  # 5♦ 5♥ 5♠ + 4♦ 5♦ 6♦ 7♦


def test_wild_rules():
    # 000 Variants: each meld needs at least two real cards.
    assert make_meld(P("JK JK 5♦"), JOKERS) is None
    m = meld(P("5♦ JK 7♦"), JOKERS)
    assert m.kind == "run" and m.stands_for == (None, Card(6, 0), None)
    m = meld(P("5♦ 6♦ JK"), JOKERS)
    assert m.faces() == (Card(5, 0), Card(6, 0), Card(7, 0))
    m = meld(P("Q♥ JK K♥"), JOKERS)  # cannot extend above the king: stands for J
    assert m.kind == "run" and m.cards[0].is_joker and m.stands_for[0] == Card(10, 1)
    m = meld(P("2♠ 2♣ JK"), JOKERS)
    assert m.kind == "set" and m.wilds == 1 and Card(2, 0) in m.stands_for
    # 003: at most one joker per meld.
    cg = PRESETS["cardgames"]
    assert make_meld(P("5-oros JK JK sota-oros"), cg) is None
    assert meld(P("5-oros JK 7-oros"), cg).kind == "run"
    # 001: the 1 of oros is the only wild card.
    online = PRESETS["online"]
    assert meld(P("1-oros 5-copas 5-espadas"), online).kind == "set"
    assert make_meld(P("1-copas 5-copas 5-espadas"), online) is None
    # Some tables use the A♦ as the only wild card.
    ad = make_rules("classic", {"wild_card": "A♦"})
    assert meld(P("A♦ 5♣ 5♠"), ad).kind == "set"


def test_card_placed_where_it_saves_most():
    # 7♦ fits the 7s and the diamond run: in the set it leaves 5+6+K+K = 31, in the run
    # 7+7+K+K = 34, so it goes to the set.
    arr = best_arrangement(P("5♦ 6♦ 7♦ 7♥ 7♠ K♣ K♥"), CLASSIC)
    assert arr.points == 31 and [m.kind for m in arr.melds] == ["set"]
    # With 4♦ too, both melds exist: 4-5-6♦ and 7♦ 7♥ 7♠.
    arr = best_arrangement(P("4♦ 5♦ 6♦ 7♦ 7♥ 7♠ K♣"), CLASSIC)
    assert arr.points == 10 and sorted(m.kind for m in arr.melds) == ["run", "set"]
    # With a fourth 7 the set keeps its three 7s and the run takes 7♦.
    arr = best_arrangement(P("5♦ 6♦ 7♦ 7♥ 7♠ 7♣ K♣"), CLASSIC)
    assert arr.points == 10


def test_arrangement_bad_input():
    with pytest.raises(ValueError):
        best_arrangement(P("A♦ 2♦ 3♦ 4♦ 5♦ 6♦ 7♦ J♦ Q♦"), CLASSIC)
    c = Card(5, 0)
    with pytest.raises(ValueError):
        best_arrangement([c, c], CLASSIC)
    with pytest.raises(CardError):
        best_arrangement([Card(8, 0)], CLASSIC)  # no 8s in the 40-card deck
    with pytest.raises(CardError):
        best_arrangement([Card(JOKER, 0)], CLASSIC)  # no jokers at this table
    assert best_arrangement([], CLASSIC).points == 0


# -- exact search == brute force ------------------------------------------------------------

TABLES = {
    "classic": CLASSIC,
    "jokers": JOKERS,
    "two_packs_jokers": make_rules("classic", {"jokers": 2, "decks": 2}),
    "online": PRESETS["online"],
    "fournier52": make_rules("fournier", {"deck": 52, "jokers": 2}),
    "cardgames": PRESETS["cardgames"],
    "deck48": make_rules("classic", {"deck": 48}),
}


@st.composite
def hands(draw):
    name = draw(st.sampled_from(sorted(TABLES)))
    rules = TABLES[name]
    deck = rules.deck(5 if rules.decks == 2 else 2)
    n = draw(st.integers(min_value=0, max_value=8))
    idx = draw(st.lists(st.integers(0, len(deck) - 1), min_size=n, max_size=n, unique=True))
    return rules, [deck[i] for i in idx]


def _check_valid(arr, cards, rules):
    used = [c for m in arr.melds for c in m.cards] + list(arr.deadwood)
    assert sorted(used) == sorted(cards)
    for m in arr.melds:
        assert make_meld(m.cards, rules) is not None
    assert arr.points == sum(rules.value(c) for c in arr.deadwood)


@settings(max_examples=300, deadline=None)
@given(hands())
def test_fast_search_matches_bruteforce(case):
    rules, cards = case
    fast = best_arrangement(cards, rules)
    slow = best_arrangement_bruteforce(cards, rules)
    _check_valid(fast, cards, rules)
    _check_valid(slow, cards, rules)
    assert (fast.points, len(fast.deadwood)) == (slow.points, len(slow.deadwood))


@st.composite
def wild_heavy(draw):
    rules = TABLES[draw(st.sampled_from(["jokers", "two_packs_jokers", "fournier52"]))]
    deck = rules.deck(5 if rules.decks == 2 else 2)
    wilds = [c for c in deck if rules.is_wild(c)]
    k = draw(st.integers(1, min(len(wilds), 4)))
    rest = [c for c in deck if not rules.is_wild(c)]
    idx = draw(st.lists(st.integers(0, len(rest) - 1), min_size=8 - k, max_size=8 - k, unique=True))
    return rules, wilds[:k] + [rest[i] for i in idx]


@settings(max_examples=150, deadline=None)
@given(wild_heavy())
def test_fast_search_matches_bruteforce_with_wilds(case):
    rules, cards = case
    fast = best_arrangement(cards, rules)
    slow = best_arrangement_bruteforce(cards, rules)
    _check_valid(fast, cards, rules)
    assert (fast.points, len(fast.deadwood)) == (slow.points, len(slow.deadwood))


# -- closing ----------------------------------------------------------------------------------


def test_classic_close_rules():
    # 000 "Closing": Anna's example, closes with 3.
    opts = close_options(P("Q♥ Q♠ Q♣ 5♦ 6♦ 7♦ 3♥ K♠"), CLASSIC)
    assert opts[0].discard == Card(12, 2) and opts[0].score == 3
    assert can_close(P("A♣ 2♣ 3♣ 4♣ 6♥ 6♠ 6♦"), CLASSIC)  # run of 4 + set of 3 = clean
    assert closed(P("A♣ 2♣ 3♣ 4♣ 6♥ 6♠ 6♦"), CLASSIC).score == -10
    assert not can_close(P("A♣ 2♣ 3♣ 6♥ 6♠ 6♦ 5♥"), CLASSIC)  # 5 > 4
    assert not can_close(P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ A♥")[:6] + P("Q♦"), CLASSIC)
    # six matched as a run of 6 plus a card of 4 or less
    assert closed(P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 4♥"), CLASSIC).score == 4
    # two unmatched cards never close under classic, even worth 2
    assert not can_close(P("5♦ 6♦ 7♦ J♦ Q♦ A♥ A♠"), CLASSIC)
    # Five points variant (Fournier)
    assert can_close(P("A♣ 2♣ 3♣ 6♥ 6♠ 6♦ 5♥"), make_rules("classic", {"close_max_points": 5}))


def test_chinchon_detection():
    # 000 "Chinchón": both examples.
    for text in ("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣", "4♥ 5♥ 6♥ 7♥ J♥ Q♥ K♥"):
        assert is_chinchon(P(text), CLASSIC)
        r = closed(P(text), CLASSIC)
        assert r.chinchon and r.wins_game
    assert not is_chinchon(P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♥"), CLASSIC)
    opts = close_options(P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣ K♠"), CLASSIC)
    assert opts[0].chinchon and opts[0].discard == Card(12, 2)


def test_wild_seven_runs():
    # 000 Variants: a seven-run with a joker is no chinchón: -50 with one joker, -25 with two.
    one = closed(P("A♣ 2♣ JK 4♣ 5♣ 6♣ 7♣"), JOKERS)
    two = closed(P("A♣ 2♣ JK 4♣ JK 6♣ 7♣"), JOKERS)
    assert (one.score, one.chinchon, one.wild_chinchon) == (-50, False, True)
    assert (two.score, two.chinchon) == (-25, False)
    # 001: with the wild card -25; without it the match is won.
    online = PRESETS["online"]
    r = closed(P("1-oros 2-copas 3-copas 4-copas 5-copas 6-copas 7-copas"), online)
    assert (r.score, r.chinchon) == (-25, False)
    assert closed(P("1-copas 2-copas 3-copas 4-copas 5-copas 6-copas 7-copas"), online).chinchon
    # 002 / 003: a chinchón must be authentic; with a joker it is only a -10 close.
    for rules in (PRESETS["cardgames"], make_rules("fournier", {"jokers": 2})):
        r = closed(P("1-copas JK 3-copas 4-copas 5-copas 6-copas 7-copas"), rules)
        assert (r.score, r.chinchon) == (-10, False)


def test_online_close_examples():
    online = PRESETS["online"]
    # 001: "6 7 10 11" straights; 4 4 4 + 10 11 12 + a card 1-3 closes.
    assert meld(P("6-oros 7-oros 10-oros 11-oros"), online).kind == "run"
    assert can_close(P("4-oros 4-copas 4-espadas 10-bastos 11-bastos 12-bastos 3-copas"), online)
    assert not can_close(P("4-oros 4-copas 4-espadas 10-bastos 11-bastos 12-bastos 4-bastos")[:6]
                         + P("5-copas"), online)


def test_cardgames_close():
    cg = PRESETS["cardgames"]
    # 003 "Fermer": unmatched cards up to 5 points, however many: a 5-run + 2 copas + 1 espadas.
    hand = P("1-oros 2-oros 3-oros 4-oros 5-oros 2-copas 1-espadas")
    assert closed(hand, cg).score == 3
    assert not can_close(hand, CLASSIC)  # classic allows one unmatched card only
    assert not can_close(P("1-oros 2-oros 3-oros 4-oros 5-oros 2-copas 4-espadas"), cg)
    four = P("1-oros 2-oros 3-oros 4-oros 5-oros 1-copas 3-espadas")
    assert can_close(four, cg)
    assert not can_close(four, make_rules("cardgames", {"close_max_points": 3}))  # 003 option
    # 003 example (made consistent: the document's player 1 holds eight cards before drawing).
    opts = close_options(P("3-oros 4-oros 5-oros rey-copas rey-espadas rey-bastos 2-copas "
                           "7-bastos"), cg)
    assert opts[0].discard == Card(7, 3) and opts[0].score == 2
    # No joker among the unmatched cards, even when the points would allow it.
    # (Both melds already hold their one joker, so the wild 1-copas has nowhere to go.)
    lenient = make_rules("cardgames", {"close_max_points": 30, "wild_card": "1-copas"})
    hand = P("3-oros JK 5-oros rey-oros rey-copas JK 1-copas")
    dead = best_arrangement(hand, lenient).deadwood
    assert len(dead) == 1 and lenient.is_wild(dead[0])
    assert not can_close(hand, lenient)
    assert can_close(hand, make_rules("cardgames", {"close_max_points": 30, "wild_card": "1-copas",
                                                   "close_wild_unmatched": True}))


def test_fournier_close_five_points():
    f = PRESETS["fournier"]
    assert can_close(P("1-bastos 2-bastos 3-bastos 6-copas 6-espadas 6-oros 5-copas"), f)
    assert not can_close(P("1-bastos 2-bastos 3-bastos 6-copas 6-espadas 6-oros 6-bastos")[:6]
                         + P("7-copas"), f)


def test_close_options_needs_eight():
    with pytest.raises(ValueError):
        close_options(P("A♣ 2♣ 3♣"), CLASSIC)
    with pytest.raises(ValueError):
        close_result(P("A♣ 2♣ 3♣"), CLASSIC)
