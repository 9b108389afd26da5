"""Showdown: lay-offs and penalties, with the rule documents' worked examples."""

import pytest

from p2p_chinchon.engine import (
    PRESETS,
    Card,
    ShowdownError,
    best_arrangement,
    close_options,
    make_meld,
    make_rules,
    parse_cards,
    score_showdown,
)

P = parse_cards
CLASSIC = PRESETS["classic"]


def test_classic_anna_ben_carla():
    """000 "Scoring" example. Anna 3 and Ben 13 as stated. Carla's cards
    2♠ 3♣ 6♥ 7♣ J♠ K♥ K♣ add up to 2+3+6+7+10+10+10 = 48, not the document's 46: with
    J = Q = K = 10 (the document's own "a King costs 10", and cases G5/G6, which need J = Q = 10)
    no value table gives 46, so the engine scores 48 and this test says so."""
    anna = P("Q♥ Q♠ Q♣ 5♦ 6♦ 7♦ 3♥ K♠")
    opt = close_options(anna, CLASSIC)[0]
    assert opt.discard == Card(12, 2) and opt.score == 3
    sd = score_showdown(CLASSIC, opt.kept, [P("5♣ 5♥ 5♠ 4♦ K♦ 2♥ A♥"),
                                            P("2♠ 3♣ 6♥ 7♣ J♠ K♥ K♣")])
    anna_r, ben, carla = sd.players
    assert anna_r.penalty == 3
    assert ben.penalty == 13 and [lo.card for lo in ben.laid_off] == [Card(4, 0)]
    assert ben.laid_off[0].onto_player == 0
    assert anna_r.melds[ben.laid_off[0].onto_meld].kind == "run"
    assert sorted(ben.deadwood) == sorted(P("K♦ 2♥ A♥"))
    assert carla.melds == () and carla.laid_off == ()
    assert carla.penalty == sum(CLASSIC.value(c) for c in P("2♠ 3♣ 6♥ 7♣ J♠ K♥ K♣")) == 48
    assert sd.game_won is False


def test_classic_carla_46_with_position_values():
    """000's "Scoring" example states Carla = 46, which holds when J Q K count their place in
    the 40-card order (8 9 10): the value table that 000 announces ("Each card has a point
    value:") is missing from the text. The classic preset keeps J = Q = K = 10 because the
    cases from real play (G5, G6) require it; ``court_points=position`` plays 000's example."""
    rules = make_rules("classic", {"court_points": "position"})
    anna = P("Q♥ Q♠ Q♣ 5♦ 6♦ 7♦ 3♥ K♠")
    opt = close_options(anna, rules)[0]
    assert opt.score == 3
    sd = score_showdown(rules, opt.kept, [P("5♣ 5♥ 5♠ 4♦ K♦ 2♥ A♥"), P("2♠ 3♣ 6♥ 7♣ J♠ K♥ K♣")])
    assert sd.penalties == (3, 13, 46)


def test_classic_lay_off_4_or_j_on_5_6_7():
    # 000: "To the closer's 5♦ 6♦ 7♦ you could add the 4♦ or the J♦."
    for card in ("4♦", "J♦"):
        assert make_meld(P(f"5♦ 6♦ 7♦ {card}"), CLASSIC) is not None
    sd = score_showdown(CLASSIC, P("5♦ 6♦ 7♦ K♣ K♥ K♠ A♣"), [P("4♦ J♦ 2♣ 2♥ 2♠ 3♣ 3♥")])
    assert sd.penalties == (1, 6)  # 4♦ and J♦ laid off, 2-set kept, 3♣ 3♥ left


def test_no_lay_off_on_clean_closer_but_on_others():
    # 000: after a clean close nobody lays off on the closer's melds; other players' melds are
    # still open.
    sd = score_showdown(CLASSIC, P("5♦ 6♦ 7♦ K♣ K♥ K♠ K♦"),
                        [P("2♣ 2♥ 2♠ 4♦ A♣ A♥ Q♣"), P("2♦ 4♥ 6♣ 6♥ 6♠ Q♦ Q♥")])
    assert sd.penalties[0] == -10
    assert sd.players[1].laid_off == ()  # 4♦ may not go on 5-6-7♦
    assert sd.players[1].penalty == 4 + 1 + 1 + 10
    assert [lo.card for lo in sd.players[2].laid_off] == [Card(2, 0)]
    assert sd.players[2].laid_off[0].onto_player == 1
    assert sd.players[2].penalty == 4 + 10 + 10


def test_online_lay_off_chain_across_players_and_clean_close():
    online = PRESETS["online"]
    # 001: closer shows 4 4 4 and 10 11 12 of coins; one player lays off a 4 and the 7 of
    # coins, another then the 6 of coins.
    closer = P("4-oros 4-copas 4-espadas sota-oros caballo-oros rey-oros 2-copas")
    sd = score_showdown(online, closer, [
        P("4-bastos 7-oros 3-espadas 3-copas 3-bastos 5-espadas 5-copas"),
        P("6-oros 2-bastos 2-espadas 7-copas 7-espadas 7-bastos 5-bastos"),
    ])
    assert sd.penalties[0] == 2
    assert sorted(lo.card for lo in sd.players[1].laid_off) == sorted(P("4-bastos 7-oros"))
    assert [lo.card for lo in sd.players[2].laid_off] == P("6-oros")
    assert sd.penalties[1:] == (10, 2 + 2 + 5)
    # -10 and then the others cannot throw any cards.
    clean = P("4-oros 4-copas 4-espadas 4-bastos sota-oros caballo-oros rey-oros")
    sd = score_showdown(online, clean, [P("7-oros 2-copas 3-copas 5-copas 5-espadas 6-bastos "
                                          "7-bastos")])
    assert sd.penalties == (-10, 7 + 2 + 3 + 5 + 5 + 6 + 7)


def test_cardgames_lay_off_only_on_closer():
    """003 "Exemple avec les joueurs 1 à 4": player 1 closes with 3 (2 copas + 1 espadas),
    player 3 lays off the 6 of oros on the oros run and keeps 14. (The document's player 1
    holds eight cards before drawing; here the 1 of espadas is left out, so player 1 keeps
    seven cards and closes with 2.)"""
    cg = PRESETS["cardgames"]
    drawn8 = P("3-oros 4-oros 5-oros rey-copas rey-espadas rey-bastos 2-copas 7-bastos")
    assert close_options(drawn8, cg)[0].discard == Card(7, 3)
    closer = P("3-oros 4-oros 5-oros rey-copas rey-espadas rey-bastos 2-copas")
    others = [
        P("sota-oros sota-copas sota-espadas 4-copas 3-copas 1-bastos 3-espadas"),
        P("6-oros 5-copas 5-espadas 5-bastos 7-copas 4-espadas 3-bastos"),
        P("caballo-oros caballo-copas caballo-espadas 7-espadas 2-bastos 1-espadas sota-bastos"),
    ]
    sd = score_showdown(cg, closer, others)
    assert sd.penalties[0] == 2
    assert [lo.card for lo in sd.players[2].laid_off] == P("6-oros")
    assert sd.players[2].penalty == 14
    # Lay-off only onto the closer's melds.
    assert all(lo.onto_player == 0 for p in sd.players for lo in p.laid_off)
    assert sd.players[1].penalty == 4 + 3 + 1 + 3
    assert sd.players[3].penalty == 7 + 2 + 1 + 10  # sota-bastos may not join player 2's sotas
    anywhere = score_showdown(make_rules("cardgames", {"lay_off": "all"}), closer, others)
    assert anywhere.players[3].penalty == 7 + 2 + 1
    assert anywhere.players[3].laid_off[0].onto_player == 1


def test_cardgames_two_unmatched_close_and_lay_off_chain():
    cg = PRESETS["cardgames"]
    sd = score_showdown(cg, P("3-oros 4-oros 5-oros rey-copas rey-espadas rey-bastos 1-espadas"),
                        [P("6-oros 7-oros 2-copas 2-espadas 2-bastos 4-copas rey-oros")])
    assert sd.penalties == (1, 4)  # 6 then 7 of oros chain, rey-oros onto the kings


def test_fournier_no_lay_off_and_sample_game():
    """002 sample game (52 cards with two jokers, French suits)."""
    f = make_rules("fournier", {"deck": 52, "jokers": 2, "suits": "french"})
    dealt = P("5♥ 6♥ 7♥ K♣ K♦ K♠ 8♣")
    arr = best_arrangement(dealt, f)
    assert arr.points == 8 and arr.deadwood == (Card(8, 3),)
    opts = close_options(dealt + P("2♠"), f)  # take the 2♠ from the pile
    assert opts[0].discard == Card(8, 3) and opts[0].score == 2
    # Waiting for the 4♥ or 8♥, or a fourth king, would have closed clean for -10.
    for extra in ("4♥", "8♥", "K♥"):
        best = close_options(P("5♥ 6♥ 7♥ K♣ K♦ K♠ 2♠") + P(extra), f)[0]
        assert best.score == -10 and best.discard == Card(2, 2)
    # You 2; Ada one meld and a 9, a 4 and an ace: 14; Bo an unplaced joker and a jack: 35.
    sd = score_showdown(f, opts[0].kept, [P("Q♠ Q♥ Q♦ Q♣ 9♣ 4♠ A♥")])
    assert sd.penalties == (2, 14)
    assert best_arrangement(P("JK J♥"), f).points == 35
    # Fournier: nobody lays off (Ada's 4♠ or 9♣ could not go anywhere anyway; a 4♥ could).
    sd = score_showdown(f, opts[0].kept, [P("Q♠ Q♥ Q♦ Q♣ 9♣ 4♥ A♥")])
    assert sd.penalties == (2, 14) and sd.players[1].laid_off == ()
    # A clean close: 3♣ 4♣ 5♣ 6♣, 9♦ 9♠ and a joker as the third nine.
    clean = close_options(P("3♣ 4♣ 5♣ 6♣ 9♦ 9♠ JK K♥"), f)[0]
    assert clean.score == -10 and clean.discard == Card(12, 1)


def test_chinchon_wins_and_is_reported():
    sd = score_showdown(CLASSIC, P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣"), [P("A♥ 2♥ 3♥ 4♥ 5♥ 6♥ K♥")])
    assert sd.game_won and sd.closer is not None and sd.closer.chinchon
    players = sd.to_dict()["players"]
    assert isinstance(players, list) and players[0]["game_won"] is True


def test_showdown_errors():
    with pytest.raises(ShowdownError):
        score_showdown(CLASSIC, P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣"), [])
    with pytest.raises(ShowdownError):
        score_showdown(CLASSIC, P("A♣ 5♥ 3♣ 4♣ J♥ 6♣ K♠"), [])  # cannot close
    with pytest.raises(ShowdownError):
        score_showdown(CLASSIC, P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣"), [P("A♣ 2♥ 3♥")])  # A♣ twice


def test_each_player_minimises_own_penalty():
    # 3♦ can only be laid off after 4♦ (chaining); keeping 2♦ 3♦ 4♦ as a meld of his own is
    # also possible; the engine picks the cheaper, whatever the card order.
    a = score_showdown(CLASSIC, P("5♦ 6♦ 7♦ K♣ K♥ K♠ A♣"), [P("2♦ 3♦ 4♦ Q♣ Q♥ Q♠ 6♣")])
    b = score_showdown(CLASSIC, P("A♣ K♠ K♥ K♣ 7♦ 6♦ 5♦"), [P("6♣ Q♠ Q♥ Q♣ 4♦ 3♦ 2♦")])
    assert a.penalties == b.penalties == (1, 6)
