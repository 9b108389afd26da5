"""Impossible hands are refused (packs, jokers, hand sizes, player counts); Fournier
closes on the sum of the left-over cards; lay-offs are listed in an order that can be played."""

import pytest

from harness.engine import pass_turn, scripted_hand, slot_of
from p2p_chinchon.bots.simple import SimpleBot
from p2p_chinchon.engine import (
    JOKER,
    PRESETS,
    Card,
    CardError,
    Close,
    Closed,
    DrawStock,
    Game,
    IllegalAction,
    RulesError,
    ShowdownError,
    best_arrangement,
    can_close,
    check_hands,
    close_options,
    make_meld,
    make_rules,
    parse_cards,
    score_showdown,
)
from p2p_chinchon.engine.options import parse_hands
from p2p_chinchon.rng import SeededRng

P = parse_cards
CLASSIC = PRESETS["classic"]
FOURNIER = PRESETS["fournier"]


# -- packs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("preset, options, packs", [
    ("classic", {}, 2),                      # two packs from five players
    ("classic", {"decks": 1}, 1),
    ("classic", {"decks": 2, "max_players": 3}, 2),
    ("classic", {"two_decks_from": 0}, 1),
    ("online", {}, 1),                       # never two packs
    ("fournier", {}, 2),                     # two packs at six players
    ("fournier", {"max_players": 5}, 1),     # max_players below two_decks_from
    ("cardgames", {}, 2),
])
def test_max_packs_per_preset(preset, options, packs):
    rules = make_rules(preset, options)
    assert rules.max_packs() == packs
    assert rules.max_packs() == max(rules.packs(n) for n in range(rules.min_players,
                                                                  rules.max_players + 1))


@pytest.mark.parametrize("rules", [make_rules("classic", {"decks": 1}), PRESETS["online"],
                                   make_rules("fournier", {"max_players": 5})])
def test_second_copy_refused_on_one_pack_rules(rules):
    hand = P("7d 7h 7s Jd Qd Kd 2c 2c")  # 2♣ twice
    with pytest.raises(CardError, match="appears twice.*one pack"):
        best_arrangement(hand[1:], rules)
    with pytest.raises(CardError, match="appears twice"):
        close_options(hand, rules)
    assert not rules.has_card(Card(2, 3, 1))


def test_second_copy_allowed_where_two_packs_can_be():
    # classic seats up to 8 and plays two packs from five: a hand seen alone may hold both 2♣
    assert can_close(P("7d 7h 7s Jd Qd Kd 2c 2c")[1:], CLASSIC) is False
    assert close_options(P("7d 7h 7s Jd Qd Kd 2c 2c"), CLASSIC)[0].score == 2


def test_exact_duplicate_and_foreign_cards():
    with pytest.raises(CardError, match="appears twice"):
        check_hands(CLASSIC, [[Card(2, 3)], [Card(2, 3)]])
    with pytest.raises(CardError, match="not in this table's deck"):
        check_hands(CLASSIC, [[Card(8, 0)]])
    with pytest.raises(CardError, match="not a card"):
        check_hands(CLASSIC, [["2c"]])  # type: ignore[list-item]  # a str where a Card belongs: the check under test


@pytest.mark.parametrize("jokers, decks, most", [(2, 1, 2), (1, 1, 1), (1, 2, 2), (2, 2, 4),
                                                 (0, 1, 0)])
def test_jokers_at_most_per_pack(jokers, decks, most):
    rules = make_rules("classic", {"jokers": jokers, "decks": decks})
    base = "2c 3c 4c 5h"
    for k in range(most + 1):
        (hand,) = parse_hands([base + " JK" * k], rules)
        best_arrangement(hand, rules)  # fine
    with pytest.raises(CardError, match=f"{most + 1} jokers?, but|at most 4 jokers"):
        (hand,) = parse_hands([base + " JK" * (most + 1)], rules)
        best_arrangement(hand, rules)


def test_parse_hands_numbers_jokers_as_the_deck_does():
    rules = make_rules("classic", {"jokers": 1, "decks": 2})
    (hand,) = parse_hands(["JK JK"], rules)
    assert hand == [Card(JOKER, 0, 0), Card(JOKER, 0, 1)]
    assert set(hand) <= set(rules.deck(2))


# -- the showdown is one table -----------------------------------------------------------------

CLOSER = P("5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠")


def test_showdown_card_in_two_hands_below_two_packs():
    # two hands: one pack; the A♠ cannot be in both
    hands = parse_hands(["5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠", "3♦ 4♦ J♦ Q♦ 6♣ 6♥ A♠"])
    with pytest.raises(ShowdownError, match="A♠ appears twice.*2 players.*one pack"):
        score_showdown(CLASSIC, hands[0], hands[1:])
    # five players play two packs: the same hands plus three are possible
    five = parse_hands(["5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠", "3♦ 4♦ J♦ Q♦ 6♣ 6♥ A♠", "A♣ 3♣ 4♣ 5♣ 7♣ J♣ Q♣",
                        "A♥ 3♥ 4♥ 5♥ 7♥ J♥ Q♥", "3♠ 4♠ 5♠ 6♠ 7♠ J♠ Q♠"])
    assert len(score_showdown(CLASSIC, five[0], five[1:]).players) == 5


def test_game_showdown_counts_the_seats_not_the_hands_left():
    # a five-seat table plays two packs even after a seat is out: four hands may share a face
    hands = parse_hands(["5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠", "3♦ 4♦ J♦ Q♦ 6♣ 6♥ A♠", "A♣ 3♣ 4♣ 5♣ 7♣ J♣ Q♣",
                         "A♥ 3♥ 4♥ 5♥ 7♥ J♥ Q♥"])
    with pytest.raises(ShowdownError, match="one pack"):
        score_showdown(CLASSIC, hands[0], hands[1:])
    assert score_showdown(CLASSIC, hands[0], hands[1:], n_players=5).penalties[0] == 1
    with pytest.raises(ShowdownError, match="5 hands shown at a table of 4"):
        score_showdown(CLASSIC, hands[0], [*hands[1:], P("K♠ K♥ K♣ Q♠ J♠ 3♠ 4♠")], n_players=4)


@pytest.mark.parametrize("size", [0, 2, 6, 8])
def test_showdown_non_closer_holds_seven(size):
    other = P("3♦ 4♦ J♦ Q♦ 6♣ 6♥ K♠ K♣")[:size]
    with pytest.raises(ShowdownError, match=f"hand 1 has {size} cards"):
        score_showdown(CLASSIC, CLOSER, [other])


@pytest.mark.parametrize("preset, n", [("classic", 9), ("online", 6), ("fournier", 7)])
def test_showdown_player_count_follows_preset(preset, n):
    rules = PRESETS[preset]
    faces = [Card(r, s, c) for c in (0, 1) for s in range(4) for r in rules.pack_ranks()]
    closer = P("5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠")
    rest = [c for c in faces if c not in closer]
    others = [rest[7 * i : 7 * i + 7] for i in range(n - 1)]
    with pytest.raises(ShowdownError, match=f"{n} players: the {preset} rules take"):
        score_showdown(rules, closer, others)
    with pytest.raises(ShowdownError, match="at least one other"):
        score_showdown(rules, closer, [])


def test_deck_refuses_player_counts_outside_the_preset():
    with pytest.raises(RulesError):
        check_hands(PRESETS["online"], [CLOSER], n_players=6)


# -- Fournier: the sum of the left-over cards --------------------------------------------------

def test_fournier_closes_on_the_sum_of_several_left_over_cards():
    # one loose card, as before
    assert can_close(P("1-bastos 2-bastos 3-bastos 6-copas 6-espadas 6-oros 5-copas"), FOURNIER)
    # 002: "las cartas que te sobran ... suman 5 puntos o menos": 2 + 2 + 1 left over
    seven = P("1-bastos 2-bastos 3-bastos 4-bastos 2-copas 2-espadas 1-oros")
    res = close_options(seven + P("rey-copas"), FOURNIER)[0]
    assert res.discard == Card(12, 1) and res.score == 5
    assert sorted(res.arrangement.deadwood) == sorted(P("2-copas 2-espadas 1-oros"))
    # 3 + 2 + 1 = 6: over five
    assert not can_close(P("1-bastos 2-bastos 3-bastos 4-bastos 3-copas 2-espadas 1-oros"),
                         FOURNIER)
    # a joker left over counts 25: never within five
    no_wild_melds = make_rules("fournier", {"deck": 52, "jokers": 2, "max_wild_per_meld": 0})
    assert not can_close(P("A♣ 2♣ 3♣ 8♥ 8♠ 8♦ JK"), no_wild_melds)
    # classic and online keep one unmatched card: 1 + 2 left over does not close there
    assert can_close(P("A♣ 2♣ 3♣ 4♣ 5♣ A♥ 2♠"), FOURNIER)
    assert not can_close(P("A♣ 2♣ 3♣ 4♣ 5♣ A♥ 2♠"), CLASSIC)
    assert not can_close(P("A♣ 2♣ 3♣ 4♣ 5♣ A♥ 2♠"), PRESETS["online"])


def _fournier_turn(rules):
    """Seat 0 holds 1-5 bastos, 1-copas and rey-oros, and on its second turn draws 2-espadas."""
    g = Game(rules, 2, first_dealer=1)
    scripted_hand(g, {
        0: P("1-bastos 2-bastos 3-bastos 4-bastos 5-bastos 1-copas rey-oros"),
        1: P("4-oros 5-copas 7-espadas sota-oros caballo-copas rey-espadas 3-copas"),
    }, upcard=P("7-bastos")[0], stock=P("sota-copas caballo-oros 2-espadas rey-bastos"))
    pass_turn(g, 0)
    pass_turn(g, 1)
    g.apply(DrawStock(0))
    return g, [g.faces[s] for s in g.hands[0]]


def test_fournier_game_and_bot_agree_on_a_two_card_close():
    # keep 1-copas + 2-espadas (3 points), rey-oros face down
    g, hand = _fournier_turn(FOURNIER)
    closes = {g.faces[a.slot] for a in g.legal_actions(0) if isinstance(a, Close)}
    bot = SimpleBot(FOURNIER, SeededRng(1))
    kind, card = bot.choose_discard(hand, may_close=bool(closes))
    assert closes and kind == "close" and card in closes
    ev = g.apply(Close(0, slot_of(g, 0, card)))
    assert card == Card(12, 0) and isinstance(ev[0], Closed) and ev[0].score == 3
    # the same hands under one unmatched card at most: neither the game nor the bot closes
    one = make_rules("fournier", {"close_max_unmatched": 1})
    g1, hand1 = _fournier_turn(one)
    assert not [a for a in g1.legal_actions(0) if isinstance(a, Close)]
    assert not close_options(hand1, one)
    with pytest.raises(IllegalAction) as err:
        g1.apply(Close(0, slot_of(g1, 0, Card(12, 0))))
    assert err.value.rule == "close_points"


# -- lay-off order -----------------------------------------------------------------------------

def _playable(sd, rules):
    """Replay every lay-off one card at a time onto the meld it names."""
    table = [[list(m.cards) for m in p.melds] for p in sd.players]
    for p in sd.players:
        for lo in p.laid_off:
            meld = table[lo.onto_player][lo.onto_meld]
            shown = make_meld(meld, rules)
            assert shown is not None and shown.cards == lo.onto_cards
            meld.append(lo.card)
            assert make_meld(meld, rules) is not None, f"{lo.card} cannot go on {meld}"
    return True


def test_lay_offs_listed_in_playable_order_with_their_meld():
    # 3♦ and 4♦ onto 5♦ 6♦ 7♦ are listed 4♦ first
    sd = score_showdown(CLASSIC, CLOSER, [P("3♦ 4♦ J♦ Q♦ 6♣ 6♥ K♠")])
    lays = sd.players[1].laid_off
    assert [lo.card for lo in lays] == P("4♦ 3♦ J♦ Q♦")
    assert lays[0].onto_cards == tuple(P("5♦ 6♦ 7♦"))
    assert lays[1].onto_cards == tuple(P("4♦ 5♦ 6♦ 7♦"))
    assert all(lo.onto_player == 0 for lo in lays)
    assert _playable(sd, CLASSIC)
    players = sd.to_dict()["players"]
    assert isinstance(players, list)
    d = players[1]["laid_off"][1]
    assert d == {"card": "3♦", "onto_player": 0, "onto_meld": 1,
                 "onto_cards": ["4♦", "5♦", "6♦", "7♦"]}


def test_lay_off_chains_across_players_stay_playable():
    # hand 1 lays 4♦ on the closer's run, hand 2 then 3♦ onto the run as it lies
    sd = score_showdown(CLASSIC, P("5♦ 6♦ 7♦ K♣ K♥ K♠ A♣"),
                        [P("4♦ 2♣ 2♥ 2♠ Q♣ Q♥ Q♠"), P("3♦ J♦ A♥ A♠ 6♠ 4♣ 4♥")])
    assert [lo.card for lo in sd.players[1].laid_off] == P("4♦")
    three = sd.players[2].laid_off[0]
    assert three.card == Card(3, 0) and three.onto_cards == tuple(P("4♦ 5♦ 6♦ 7♦"))
    assert _playable(sd, CLASSIC)


def test_lay_off_with_a_joker_is_playable():
    rules = make_rules("classic", {"jokers": 2})
    closer, other = parse_hands(["5♦ 6♦ 7♦ K♣ K♥ K♠ A♣", "JK 3♦ 2♥ 2♠ 2♣ 4♠ 6♣"], rules)
    sd = score_showdown(rules, closer, [other])
    assert {lo.card.rank for lo in sd.players[1].laid_off} == {JOKER, 3}
    assert sd.players[1].penalty == 4 + 6
    assert _playable(sd, rules)


def test_melds_command_assumes_a_one_pack_table_by_default(capsys):
    """On classic, four seats play one pack, so 2♣ twice is refused;
    with ``--players 6`` (two packs from five) the same hand is a legal close."""
    from p2p_chinchon.cli import main

    assert main(["melds", "7d", "7h", "7s", "Jd", "Qd", "Kd", "2c", "2c"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "p2p-chinchon melds: 2♣ appears twice, but a table of 4 players plays one pack"
    assert main(["melds", "--players", "6", "7d", "7h", "7s", "Jd", "Qd", "Kd", "2c", "2c"]) == 0
    assert "close:    yes, scoring 2" in capsys.readouterr().out
    assert main(["melds", "--players", "9", "7d"]) == 2
    assert "9 players: this table takes 2-8" in capsys.readouterr().err
