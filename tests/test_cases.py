"""Every rule case in tests/data/cases/cases.json (the repository's copy of the shared rule
cases), with exactly its numbers."""

import json
from pathlib import Path

import pytest

from harness.engine import bust_scenario, restock_scenario
from p2p_chinchon.commands.melds import analyse
from p2p_chinchon.engine import (
    DrawDiscard,
    Eliminated,
    GameOver,
    Phase,
    Reenter,
    ReentryOffered,
    Restock,
    RestockNeeded,
    make_meld,
    make_rules,
    parse_card,
    parse_cards,
    score_showdown,
)

CASES_DIR = Path(__file__).resolve().parent / "data" / "cases"
CASES = json.loads((CASES_DIR / "cases.json").read_text(encoding="utf-8"))


def _rules(case):
    return make_rules(case["preset"], case["options"])


def check_melds(case):
    rules = _rules(case)
    got = analyse(parse_cards(case["hand"]), rules)
    exp = case["expect"]
    assert got["points"] == exp["points"]
    assert got["can_close"] == exp["can_close"]
    if "discard" in exp:
        assert got["discard"] is not None and got["discard"].same_face(parse_card(exp["discard"]))


def check_run(case):
    rules = _rules(case)
    for text, ok in case["runs"].items():
        m = make_meld(parse_cards(text), rules)
        assert (m is not None and m.kind == "run") == ok, text


def check_score(case):
    rules = _rules(case)
    closer = parse_cards(case["closer"])
    hands = [parse_cards(h) for h in case["hands"]]
    sd = score_showdown(rules, closer, hands)
    assert list(sd.penalties) == case["expect"]["penalties"]
    assert sd.game_won == case["expect"]["game_won"]


def game_G7(case):
    last4 = parse_cards("3♣ J♥ 6♠ 2♦")
    g, events, seat = restock_scenario(last4)
    assert isinstance(events[-1], RestockNeeded) and g.phase is Phase.RESTOCK
    top = g.discard_pile[-1]
    assert g.faces[top] == parse_card("2♦")
    assert [g.faces[s] for s in events[-1].slots[-3:]] == last4[:3]
    assert events[-1].slots == tuple(g.discard_pile[:-1])
    n_new = len(events[-1].slots)
    g.apply(Restock(tuple(range(1000, 1000 + n_new))))
    assert len(g.stock) == n_new and g.discard_pile == [top]
    held = sum(len(h) for h in g.hands.values())
    assert held + len(g.stock) + len(g.discard_pile) == 40
    assert g.apply(DrawDiscard(seat))[0].card == parse_card("2♦")


def game_G8(case):
    g, ev = bust_scenario(_rules(case), [95, 92, 60, 30])
    assert g.totals == [108, 103, 71, 31]
    assert [e for e in ev if isinstance(e, ReentryOffered)] == [ReentryOffered(0, 71),
                                                               ReentryOffered(1, 71)]
    g.apply(Reenter(0, True))
    g.apply(Reenter(1, True))
    assert g.totals[:2] == [71, 71] and g.reentries_used[:2] == [1, 1]
    # A second bust is final: no offer once the single re-entry is used.
    g2, ev2 = bust_scenario(_rules(case), [95, 92, 60, 30], reentries_used=[1, 0, 0, 0])
    assert [e for e in ev2 if isinstance(e, ReentryOffered)] == [ReentryOffered(1, 71)]
    assert Eliminated(0, 108, "over_limit") in ev2
    assert 0 in g2.eliminated


def game_G8b(case):
    g, ev = bust_scenario(_rules(case), [95, 92, 60, 30])
    assert g.totals == [108, 103, 71, 31]
    assert not [e for e in ev if isinstance(e, ReentryOffered)]
    assert sorted(e.seat for e in ev if isinstance(e, Eliminated)) == [0, 1]
    assert not [e for e in ev if isinstance(e, GameOver)]
    assert g.active == (2, 3) and g.phase is Phase.DEAL


GAME_CHECKS = {"G7": game_G7, "G8": game_G8, "G8b": game_G8b}
KIND_CHECKS = {"melds": check_melds, "run": check_run, "score": check_score}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    if case["kind"] == "game":
        assert case["id"] in GAME_CHECKS, f"no test written for game case {case['id']}"
        GAME_CHECKS[case["id"]](case)
    else:
        KIND_CHECKS[case["kind"]](case)


def test_every_case_is_covered():
    assert len(CASES) >= 13
    assert {c["kind"] for c in CASES} <= {"melds", "run", "score", "game"}
