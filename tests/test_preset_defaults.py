"""Every preset's defaults follow docs/rules.md's principle: a preset never adds a limit its
document does not state (002 and 003 state no first-round ban, 001 no least number of real
cards per meld nor of players below what its one deck deals, 003 no exception to laying off
after a clean close)."""

from __future__ import annotations

import pytest

from harness.engine import scripted_hand
from p2p_chinchon.engine import PRESETS, Close, DrawStock, Game, make_rules, parse_cards, score_showdown

P = parse_cards


@pytest.mark.parametrize("preset,ban", [("classic", True), ("online", True), ("fournier", False),
                                        ("cardgames", False)])
def test_first_round_ban_only_where_the_document_states_it(preset, ban):
    rules = PRESETS[preset]
    assert rules.first_round_ban is ban
    g = Game(rules, 3, first_dealer=2)  # seat 0 plays first
    scripted_hand(g, {
        0: P("A♣ 2♣ 3♣ 5♥ 5♠ 5♦ 2♥"),
        1: P("4♥ 6♣ 7♥ K♦ Q♠ J♦ 3♠"),
        2: P("4♠ 6♠ 7♠ K♥ Q♦ 3♥ 2♦"),
    }, upcard=P("K♠")[0], stock=P("J♣ Q♣ J♥ Q♥ J♠ K♣ 7♣ 6♦"))
    g.apply(DrawStock(0))
    may_close = any(isinstance(a, Close) for a in g.legal_actions(0))
    assert may_close is not ban  # 2♥ loose: within every preset's close limit


def test_cardgames_lays_off_on_the_closer_after_a_clean_close():
    # 003 "Après une fermeture, les autres peuvent poser ... sur les combinaisons de celui qui a
    # fermé": after any close, clean or not
    rules = PRESETS["cardgames"]
    assert rules.lay_off_after_clean == "same"
    closer = P("1-oros 2-oros 3-oros 4-oros 5-copas 5-espadas 5-bastos")
    other = P("5-oros 6-copas 7-copas sota-bastos caballo-bastos rey-copas 1-copas")
    sd = score_showdown(rules, closer, [other])
    assert sd.closer is not None and sd.closer.clean
    assert [lo.card for lo in sd.players[1].laid_off] == P("5-oros")
    assert sd.penalties == (-10, 6 + 7 + 10 + 10 + 10 + 1)
    old = make_rules("cardgames", {"lay_off_after_clean": "none"})  # the 000/001 tradition
    assert score_showdown(old, closer, [other]).penalties == (-10, 5 + 6 + 7 + 10 + 10 + 10 + 1)


def test_online_states_no_least_number_of_real_cards_and_deals_five():
    online = PRESETS["online"]
    assert online.min_real_per_meld == 1 and online.max_players == 5
    assert len(online.deck(5)) == 40 >= 7 * 5 + 2
