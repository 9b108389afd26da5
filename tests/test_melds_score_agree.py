"""`melds` and `score` agree: the points `melds` gives a hand are what `score` charges it when
another player closes (nobody laying off), and the close `melds` offers scores what `score`
gives the closer. Also the lay-off onto a meld of one real card and wild cards."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter

import pytest
from hypothesis import assume, given, settings, strategies as st

from p2p_chinchon.cli import main
from p2p_chinchon.engine import Card, Rules, close_result, make_rules
from p2p_chinchon.engine.options import parse_hands

TABLES = [
    ("classic", {}), ("classic", {"jokers": 2}), ("classic", {"wild_card": "Ad"}),
    ("classic", {"wild_card": "Ad", "close_max_points": 5}), ("online", {}), ("fournier", {}),
    ("fournier", {"deck": 52, "jokers": 2}), ("fournier", {"deck": 48, "wild_card": "Ad"}),
    ("cardgames", {}),
]


def _cli(*argv: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(argv)) == 0
    return json.loads(out.getvalue())


def _argv(preset: str, options: dict, *extra: str) -> list[str]:
    opts = [x for k, v in options.items() for x in ("--option", f"{k}={v}")]
    return ["--rules", preset, *opts, "--option", "lay_off=none", "--style", "ascii", *extra]


def _closer(rules: Rules, free: list[Card]) -> list[Card] | None:
    """Seven of ``free`` that close: two natural sets and a fourth card or a low loose card."""
    by_rank: dict[int, dict[int, Card]] = {}
    for c in free:
        if not rules.is_wild(c):
            by_rank.setdefault(c.rank, {}).setdefault(c.suit, c)
    ranks = [r for r, suits in sorted(by_rank.items()) if len(suits) >= 3]
    if len(ranks) < 2:
        return None
    hand = [*list(by_rank[ranks[0]].values())[:3], *list(by_rank[ranks[1]].values())[:3]]
    spare = [c for c in free if c not in hand and not rules.is_wild(c)]
    for c in sorted(spare, key=rules.value):
        if close_result([*hand, c], rules) is not None:
            return [*hand, c]
    return None


def _names(rules: Rules, cards: list[Card]) -> str:
    style = "ascii-spanish" if rules.suits == "spanish" else "ascii"
    return " ".join(c.name(style) for c in cards)


def _agree(preset: str, options: dict, hand: list[Card]) -> bool:
    """Check the hand both ways; False when no other seven cards close to test it against."""
    rules = make_rules(preset, {**options, "lay_off": "none"})
    deck = list(rules.deck(2))
    m = _cli("melds", *_argv(preset, options, "--players", "2", "--json", _names(rules, hand)))
    names = [_names(rules, [c]) for c in hand]
    kept = list(hand)
    if m["discard"] is not None:  # the discard melds chose (jokers are alike: any one)
        del kept[names.index(m["discard"])]
    assert len(kept) == 7
    free = [c for c in deck if c not in hand]
    closer = _closer(rules, free)
    if closer is None:
        return False
    # the hand as another player's: charged the least deadwood, which melds prints as points
    s = _cli("score", *_argv(preset, options, "--json", "--closer", _names(rules, closer),
                             "--hand", _names(rules, kept)))
    assert s["players"][1]["penalty"] == m["points"]
    assert Counter(s["players"][1]["deadwood"]) == Counter(m["deadwood"])
    # the hand closing (melds given 8 cards: score picks the same discard)
    if m["can_close"]:
        other = [c for c in free if c not in closer][:7]
        s = _cli("score", *_argv(preset, options, "--json", "--closer", _names(rules, hand),
                                 "--hand", _names(rules, other)))
        assert s["discard"] == m["discard"]
        assert s["players"][0]["penalty"] == m["score"] or (m["chinchon"] and s["game_won"])
        assert Counter(s["players"][0]["deadwood"]) == Counter(m["close_deadwood"])
    return True


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(TABLES), st.integers(7, 8), st.booleans(), st.randoms(use_true_random=False))
def test_melds_points_are_what_score_charges(table, size, low, rnd):
    preset, options = table
    rules = make_rules(preset, options)
    deck = list(rules.deck(2))
    if low:  # wild and low cards, where a close and the least deadwood part ways
        deck = [c for c in deck if rules.is_wild(c) or rules.value(c) <= 4 or c.suit == 0]
    assume(_agree(preset, options, rnd.sample(deck, size)))


@pytest.mark.parametrize("preset,options,hand", [
    ("classic", {"wild_card": "Ad"}, "A♣ 6♦ 5♦ 3♦ 7♦ A♥ A♦"),
    ("online", {}, "1-bastos 6-oros 5-oros 3-oros 7-oros 1-copas 1-oros"),
    ("classic", {"jokers": 2}, "4♣ A♣ JK A♠ 7♦ 3♦ JK 6♦"),
    ("classic", {"wild_card": "Ad", "close_max_points": 5}, "J♦ A♥ 3♥ 7♦ 5♦ A♦ Q♦"),
])
def test_melds_and_score_agree_where_close_and_least_deadwood_differ(preset, options, hand):
    rules = make_rules(preset, options)
    cards = parse_hands([hand], rules)[0]
    assert close_result(cards[:7], rules) is not None or len(cards) == 8
    assert _agree(preset, options, cards)


def test_melds_points_are_the_least_deadwood_not_the_close():
    # the close must leave one card (3♦ with A♠ A♣ JK and 6♦ 7♦ JK: 3 points), but the least
    # deadwood keeps both aces loose (2 points): score charges 2 when another player closes
    d = _cli("melds", "--option", "jokers=2", "--json", "4♣ A♣ JK A♠ 7♦ 3♦ JK 6♦")
    assert d["discard"] == "4♣" and d["points"] == 2 and sorted(d["deadwood"]) == ["A♠", "A♣"]
    assert d["can_close"] and d["score"] == 3 and d["close_deadwood"] == ["3♦"]
    s = _cli("score", "--option", "jokers=2", "--json", "--closer", "2♥ 2♠ 2♦ 5♥ 5♠ 5♣ A♥",
             "--hand", "A♣ JK A♠ 7♦ 3♦ JK 6♦")
    assert s["players"][1]["penalty"] == 2


def test_lay_off_turns_a_wild_set_into_a_run():
    # K♥ JK JK was shown as a set of kings; T♥ makes it the run 10 J Q K, a meld: it goes on
    s = _cli("score", "--rules", "fournier", "--option", "deck=52", "--option", "jokers=2",
             "--option", "lay_off=all", "--style", "french", "--json",
             "--closer", "K♥ JK JK 7♣ 7♠ 7♦ 2♥", "--hand", "10♥ Q♠ Q♣ 4♣ 5♠ 6♣ 3♦")
    assert s["penalties"] == [2, 38]
    assert s["players"][1]["laid_off"][0]["card"] == "10♥"
    m = _cli("melds", "--rules", "fournier", "--option", "deck=52", "--option", "jokers=2",
             "--style", "french", "--json", "10♥ JK JK K♥")
    assert m["points"] == 0 and len(m["melds"]) == 1
