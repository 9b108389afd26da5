"""The Game state machine: deal, turns, legality, restock, showdown, elimination, re-entry."""

import copy
import json

import pytest

from harness.engine import Driver, bust_scenario, pass_turn, phase, restock_scenario, scripted_hand, slot_of
from p2p_chinchon.engine import (
    PRESETS,
    Action,
    Card,
    Close,
    Closed,
    Dealt,
    Discard,
    DrawDiscard,
    DrawStock,
    Drew,
    Eliminated,
    Game,
    GameError,
    GameOver,
    HandScored,
    IllegalAction,
    Phase,
    Reenter,
    Reentered,
    ReentryOffered,
    Restock,
    Restocked,
    RestockNeeded,
    make_rules,
    parse_cards,
)

P = parse_cards
CLASSIC = PRESETS["classic"]
FILLER = P("J♣ Q♣ J♥ Q♥ J♠ K♣ 7♣ 6♦")


def snapshot(g):
    return copy.deepcopy({k: v for k, v in vars(g).items() if not k.startswith("_deck")})


def test_deal_turns_to_the_right():
    g = Game(CLASSIC, 4, first_dealer=2)
    assert g.phase is Phase.DEAL and g.deck_cards() == CLASSIC.deck(4)
    plan = g.deal_plan()
    assert plan[3][:2] == [0, 4] and plan[0][:2] == [1, 5] and plan[2][-1] == 27
    assert g.upcard_slot() == 28
    ev = g.start_hand(40)
    assert isinstance(ev[0], Dealt) and ev[0].dealer == 2 and ev[0].upcard_slot == 28
    assert g.to_play == 3 and phase(g) is Phase.DRAW and g.first_player == 3
    assert g.hands == plan and g.discard_pile == [28] and g.stock == list(range(29, 40))
    with pytest.raises(GameError):
        g.start_hand(40)
    with pytest.raises(GameError):
        Game(CLASSIC, 4, 2).start_hand(80)
    with pytest.raises(GameError):
        Game(CLASSIC, 9, 0)
    with pytest.raises(GameError):
        Game(CLASSIC, 4, 4)


def test_learn_checks_faces():
    g = Game(CLASSIC, 2, 0)
    g.start_hand(40)
    g.learn(0, Card(1, 0))
    g.learn(0, Card(1, 0))  # same again is fine
    with pytest.raises(GameError):
        g.learn(0, Card(2, 0))
    with pytest.raises(GameError):
        g.learn(1, Card(1, 0))  # already at slot 0
    with pytest.raises(GameError):
        g.learn(2, Card(8, 0))  # no 8s in this deck
    with pytest.raises(GameError):
        g.learn(40, Card(3, 0))


def test_turn_legality_and_unchanged_state():
    g = Game(CLASSIC, 3, 0)
    g.start_hand(40)
    assert g.legal_actions(1) == [DrawStock(1)]  # upcard face not known yet
    g.learn(g.discard_pile[-1], Card(5, 1))
    assert g.legal_actions(1) == [DrawStock(1), DrawDiscard(1)] and g.legal_actions(2) == []
    before = snapshot(g)
    bads: list[tuple[Action, str]] = [(DrawStock(2), "not_your_turn"), (Discard(1, 3), "wrong_phase"),
                                      (Reenter(1, True), "wrong_phase"), (Restock((50,)), "wrong_phase")]
    for bad, rule in bads:
        with pytest.raises(IllegalAction) as err:
            g.apply(bad)
        assert err.value.rule == rule
        assert snapshot(g) == before
    with pytest.raises(IllegalAction) as err:
        g.apply("draw")  # type: ignore[arg-type]
    assert err.value.rule == "bad_action"
    ev = g.apply(DrawDiscard(1))
    assert isinstance(ev[0], Drew) and ev[0].card == Card(5, 1) and g.last_from_discard[1] == Card(5, 1)
    assert g.phase is Phase.DISCARD and g.discard_pile == []
    before = snapshot(g)
    hidden = g.hands[1][0]
    bads = [(Discard(1, hidden), "unknown_face"), (Discard(1, 39), "not_in_hand"),
            (Discard(2, hidden), "not_your_turn"), (DrawStock(1), "wrong_phase"), (Close(1, hidden), "unknown_face")]
    for bad, rule in bads:
        with pytest.raises(IllegalAction) as err:
            g.apply(bad)
        assert err.value.rule == rule
        assert snapshot(g) == before
    taken = g.hands[1][-1]
    g.apply(Discard(1, taken))
    assert g.to_play == 2 and g.turns_taken[1] == 1


def test_first_round_ban_and_close():
    g = Game(CLASSIC, 3, first_dealer=2)  # seat 0 plays first
    scripted_hand(g, {
        0: P("A♣ 2♣ 3♣ 5♥ 5♠ 5♦ 2♥"),
        1: P("4♥ 6♣ 7♥ K♦ Q♠ J♦ 3♠"),
        2: P("4♠ 6♠ 7♠ K♥ Q♦ 3♥ 2♦"),
    }, upcard=P("K♠")[0], stock=FILLER)
    g.apply(DrawStock(0))
    drawn = g.hands[0][-1]
    assert not any(isinstance(a, Close) for a in g.legal_actions(0))
    with pytest.raises(IllegalAction) as err:
        g.apply(Close(0, drawn))
    assert err.value.rule == "first_round_close"
    g.apply(Discard(0, drawn))
    pass_turn(g, 1)
    pass_turn(g, 2)
    # Second round: seat 0 may close now (2♥ is within classic's 4).
    g.apply(DrawStock(0))
    drawn = g.hands[0][-1]
    assert Close(0, drawn) in g.legal_actions(0)
    ev = g.apply(Close(0, drawn))
    assert isinstance(ev[0], Closed) and ev[0].score == 2
    assert g.phase is Phase.SHOWDOWN and g.closer == 0 and g.showdown_order() == [1, 2]
    ev = g.score_hand()
    scored = ev[0]
    assert isinstance(scored, HandScored) and scored.penalties[0] == (0, 2)
    assert g.totals[0] == 2 and g.totals == list(scored.totals)
    # The deal passes to the right: dealer 2 -> 0.
    assert phase(g) is Phase.DEAL and g.dealer == 0 and g.hand_no == 1
    assert json.dumps([e.to_dict() for e in ev], ensure_ascii=False)


def test_close_rules_named():
    g = Game(CLASSIC, 2, first_dealer=1)
    scripted_hand(g, {0: P("A♣ 2♣ 3♣ 5♥ 5♠ 5♦ 6♥"), 1: P("4♥ 6♣ 7♥ K♦ Q♠ J♦ 3♠")},
                  upcard=P("K♠")[0], stock=FILLER)
    pass_turn(g, 0)
    pass_turn(g, 1)
    g.apply(DrawStock(0))
    before = snapshot(g)
    with pytest.raises(IllegalAction) as err:
        g.apply(Close(0, g.hands[0][-1]))
    assert err.value.rule == "close_points"
    assert snapshot(g) == before
    with pytest.raises(GameError):
        g.score_hand()


def test_wild_in_deadwood_rule():
    rules = make_rules("cardgames", {"close_max_points": 30, "wild_card": "1-copas"})
    g = Game(rules, 2, first_dealer=1)
    scripted_hand(g, {0: P("3-oros JK 5-oros rey-oros rey-copas JK 1-copas"),
                      1: P("4-copas 6-bastos 7-copas rey-bastos caballo-espadas sota-oros 3-espadas")},
                  upcard=P("caballo-oros")[0], stock=P("sota-bastos caballo-bastos 2-bastos"))
    pass_turn(g, 0)
    pass_turn(g, 1)
    g.apply(DrawStock(0))
    with pytest.raises(IllegalAction) as err:
        g.apply(Close(0, g.hands[0][-1]))
    assert err.value.rule == "wild_in_deadwood"


def test_stock_exhaustion_restock():
    """000 "Playing a turn" / case G7: the top card stays, the rest becomes the stock."""
    last4 = P("3♣ J♥ 6♠ 2♦")
    g, events, seat = restock_scenario(last4)
    assert g.phase is Phase.RESTOCK and g.to_play == seat
    need = events[-1]
    assert isinstance(need, RestockNeeded)
    assert need.slots == tuple(g.discard_pile[:-1])
    assert [g.faces[s] for s in g.discard_pile[-4:]] == last4
    assert g.legal_actions(seat) == []
    top = g.discard_pile[-1]
    with pytest.raises(IllegalAction) as err:
        g.apply(Restock((100, 101)))
    assert err.value.rule == "bad_restock"
    with pytest.raises(IllegalAction):
        g.apply(Restock(tuple(range(39 - 24, 40))))  # slots still in play
    new = tuple(range(100, 125))
    ev = g.apply(Restock(new))
    assert ev == [Restocked(new)]
    assert g.discard_pile == [top] and g.faces[top] == Card(2, 0) and g.stock == list(new)
    assert all(s not in g.faces for s in new)
    held = sum(len(h) for h in g.hands.values())
    assert held + len(g.stock) + len(g.discard_pile) == 40
    # 2♦ stays face up and may still be taken.
    assert DrawDiscard(seat) in g.legal_actions(seat)
    assert g.apply(DrawDiscard(seat))[0].card == Card(2, 0)


def test_case_g8_shape_reentry_at_highest_total_still_in():
    rules = make_rules("fournier", {"limit": 100, "reentries": 1})
    g, ev = bust_scenario(rules, [95, 92, 60, 30])
    assert isinstance(ev[0], HandScored) and ev[0].penalties == ((3, 1), (0, 13), (1, 11), (2, 11))
    assert g.totals == [108, 103, 71, 31]
    assert g.phase is Phase.REENTRY and g.pending_reentry == (0, 1)
    assert [e for e in ev if isinstance(e, ReentryOffered)] == [ReentryOffered(0, 71),
                                                               ReentryOffered(1, 71)]
    assert g.legal_actions(0) == [Reenter(0, True), Reenter(0, False)]
    assert g.legal_actions(2) == []
    with pytest.raises(IllegalAction) as err:
        g.apply(Reenter(2, True))
    assert err.value.rule == "no_offer"
    assert g.apply(Reenter(0, True)) == [Reentered(0, 71)]
    assert g.phase is Phase.REENTRY
    ev = g.apply(Reenter(1, False))
    assert ev[0] == Eliminated(1, 103, "declined")
    assert phase(g) is Phase.DEAL and g.active == (0, 2, 3) and g.totals[0] == 71
    assert g.reentries_used == [1, 0, 0, 0] and g.dealer == 0


def test_second_bust_is_final():
    rules = make_rules("fournier", {"limit": 100, "reentries": 1})
    g, _ = bust_scenario(rules, [95, 92, 60, 30])
    g.apply(Reenter(0, True))
    g.apply(Reenter(1, True))
    # Next hand: play it out with bots until seat 0 or 1 busts a second time.
    d = Driver(rules, 4, seed=5)
    d.game = g
    while g.phase is not Phase.OVER and not (g.eliminated & {0, 1}):
        assert g.phase is not Phase.REENTRY or all(
            g.reentries_used[s] < 1 for s in g.pending_reentry)
        d.step()
    gone = [e for e in d.events if isinstance(e, Eliminated)]
    assert gone and gone[0].seat in (0, 1) and gone[0].reason == "over_limit"
    assert gone[0].total > 100
    assert not [e for e in d.events if isinstance(e, ReentryOffered)]


def test_classic_no_reentry_with_two_left():
    g, ev = bust_scenario(make_rules("classic", {"limit": 100, "reentries": 1, "deck": 40}),
                        [95, 92, 60, 30])
    # (classic deck in French suits: same cards under Spanish names)
    assert not [e for e in ev if isinstance(e, ReentryOffered)]
    assert {e.seat for e in ev if isinstance(e, Eliminated)} == {0, 1}
    assert g.active == (2, 3) and g.phase is Phase.DEAL and g.winner is None


def test_last_player_wins():
    g, ev = bust_scenario(make_rules("classic", {"reentries": 0}), [95, 92, 95, 30])
    assert isinstance(ev[-1], GameOver) and ev[-1].winner == 3 and g.phase is Phase.OVER
    assert g.legal_actions(3) == []


def test_all_out_lowest_total_then_last_closer():
    # 001: all over the limit in the same hand: lowest total wins; tie: the last closer.
    online = PRESETS["online"]
    g, ev = bust_scenario(online, [45, 47, 49, 50])
    assert g.totals == [58, 58, 60, 51]
    assert ev[-1] == GameOver(3, "all_out")
    g, ev = bust_scenario(online, [38, 47, 49, 50])
    assert g.totals == [51, 58, 60, 51]
    assert ev[-1] == GameOver(3, "all_out")  # tie 51: the closer
    g, ev = bust_scenario(online, [38, 42, 49, 51])
    assert g.totals == [51, 53, 60, 52]
    assert ev[-1] == GameOver(0, "all_out")
    # tie without the closer: the hand's first player (seat after the dealer, 0) wins
    g, ev = bust_scenario(online, [40, 42, 45, 55])
    assert g.totals == [53, 53, 56, 56]
    assert ev[-1] == GameOver(0, "all_out")


def test_chinchon_ends_the_game():
    g = Game(CLASSIC, 2, first_dealer=1)
    scripted_hand(g, {0: P("A♣ 2♣ 3♣ 4♣ 5♣ 6♣ K♥"), 1: P("4♥ 6♦ 7♥ K♦ Q♠ J♦ 3♠")},
                  upcard=P("K♠")[0], stock=P("J♣ Q♦ 7♣"))
    pass_turn(g, 0)
    pass_turn(g, 1)
    g.apply(DrawStock(0))
    ev = g.apply(Close(0, slot_of(g, 0, Card(12, 1))))
    assert isinstance(ev[0], Closed) and ev[0].chinchon
    ev = g.score_hand()
    assert ev[-1] == GameOver(0, "chinchon") and g.winner == 0 and g.phase is Phase.OVER


@pytest.mark.parametrize("preset, n, seed", [("classic", 4, 1), ("online", 3, 2),
                                             ("fournier", 2, 3), ("cardgames", 5, 4),
                                             ("classic", 6, 5)])
def test_whole_games_with_bots_keep_invariants(preset, n, seed):
    d = Driver(PRESETS[preset], n, seed)
    scored_totals = [0] * n
    while d.game.phase is not Phase.OVER:
        d.step()
        g = d.game
        if g.phase in (Phase.DRAW, Phase.DISCARD, Phase.RESTOCK):
            held = sum(len(h) for h in g.hands.values())
            assert held + len(g.stock) + len(g.discard_pile) == len(g.deck_cards())
            assert all(len(g.hands[s]) == (8 if s == g.to_play and g.phase is Phase.DISCARD else 7)
                       for s in g.active)
        assert len(d.events) < 20000
    for e in d.events:
        if isinstance(e, HandScored):
            for s, p in e.penalties:
                scored_totals[s] += p
        if isinstance(e, Reentered):
            scored_totals[e.seat] = e.total
    assert scored_totals == d.game.totals
    assert d.game.winner is not None
    assert isinstance(d.events[-1], GameOver)
    json.dumps([e.to_dict() for e in d.events], ensure_ascii=False)


def test_showdown_time_is_an_optional_rules_field():
    """A table option that old transcripts lack; one wire encoding per rules."""
    import pytest

    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.engine.rules import Rules, RulesError

    plain = make_rules("classic")
    assert plain.showdown_time == 30 and "showdown_time" not in plain.to_wire()
    assert Rules.from_wire(plain.to_wire()) == plain
    slow = make_rules("classic", {"showdown_time": "90"})
    assert slow.to_wire()["showdown_time"] == 90 and Rules.from_wire(slow.to_wire()) == slow
    with pytest.raises(RulesError, match="left out"):
        Rules.from_wire({**plain.to_wire(), "showdown_time": 30})
    with pytest.raises(RulesError):
        make_rules("classic", {"showdown_time": "601"})
