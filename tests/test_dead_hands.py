"""Hands that never end. The table option ``max_reshuffles`` (off by
default: every rule document lets the stock be re-made) voids a hand whose stock runs out once
more after that many re-shuffles; the bots and the hint see a dead hand (court cards going
round) and break it by collecting them."""

from __future__ import annotations

import dataclasses

import pytest

from harness.engine import pass_turn, phase, restock_scenario
from p2p_chinchon.engine import Game, HandVoid, Phase, Restock, RestockNeeded, make_rules, parse_cards
from p2p_chinchon.engine.rules import Rules, RulesError


def _run_out_again(limit: int, end: str = "void") -> tuple[Game, list]:
    """Two players pass until the stock is empty, it is re-made once, and they pass until it is
    empty again; returns the game and the events of that last turn's end."""
    last4 = parse_cards("3♣ J♥ 6♠ 2♦")
    g, events, seat = restock_scenario(last4)
    g.rules = dataclasses.replace(g.rules, max_reshuffles=limit, reshuffle_end=end)
    cards = [g.faces[s] for s in g.discard_pile[:-1]]
    new = tuple(range(100, 100 + len(cards)))
    g.apply(Restock(new))
    for slot, card in zip(new, cards, strict=True):
        g.learn(slot, card)
    assert g.reshuffles == 1
    while g.stock:
        events = pass_turn(g, seat)
        seat = 1 - seat
    return g, events


def test_a_hand_is_void_when_its_stock_runs_out_past_the_limit():
    g, events = _run_out_again(1)
    assert events[-1] == HandVoid(0, "reshuffles")  # hand_no counts from 0
    assert g.phase is Phase.DEAL and g.hand_no == 1


def test_a_dead_hand_can_instead_score_as_it_stands():
    """reshuffle_end="score": when the stock runs out past the limit every hand is shown, from
    the seat whose turn it was, and scores its best arrangement's deadwood; nobody closed, so
    nobody lays off and no close bonus is given; the totals grow and the deal passes."""
    from p2p_chinchon.engine import HandScored, StockDead
    from p2p_chinchon.engine.melds import best_arrangement

    g, events = _run_out_again(1, "score")
    dead = events[-1]
    assert isinstance(dead, StockDead) and g.phase is Phase.SHOWDOWN and g.to_play is None
    order = g.showdown_order()
    assert order[0] == dead.seat and sorted(order) == [0, 1]
    for s in order:  # every face must be known before the score
        for slot in g.hands[s]:
            assert slot in g.faces
    before = list(g.totals)
    scored = g.score_hand()
    hs = next(e for e in scored if isinstance(e, HandScored))
    assert hs.closer is None and [s for s, _ in hs.penalties] == order
    for s, pen in hs.penalties:
        want = best_arrangement([g.faces[x] for x in g.hands[s]], g.rules).points
        assert pen == want and g.totals[s] == before[s] + want
    assert all(not p.laid_off for p in hs.showdown.players) and hs.showdown.closer is None
    assert hs.showdown.to_dict()["clean"] is False
    assert phase(g) is Phase.DEAL and g.hand_no == 1 and g.standing is None


def test_reshuffle_end_is_an_optional_field_with_two_values():
    plain = make_rules("classic")
    assert plain.reshuffle_end == "void" and "reshuffle_end" not in plain.to_wire()
    scored = make_rules("classic", {"max_reshuffles": "2", "reshuffle_end": "score"})
    assert scored.to_wire()["reshuffle_end"] == "score" and Rules.from_wire(scored.to_wire()) == scored
    with pytest.raises(RulesError):
        make_rules("classic", {"reshuffle_end": "replay"})


def test_without_the_option_the_stock_is_made_again():
    g, events = _run_out_again(0)
    assert isinstance(events[-1], RestockNeeded) and g.phase is Phase.RESTOCK
    g, events = _run_out_again(2)
    assert isinstance(events[-1], RestockNeeded)


def test_max_reshuffles_is_an_optional_rules_field():
    plain = make_rules("classic")
    assert plain.max_reshuffles == 0 and "max_reshuffles" not in plain.to_wire()
    limited = make_rules("classic", {"max_reshuffles": "3"})
    assert limited.to_wire()["max_reshuffles"] == 3
    assert Rules.from_wire(limited.to_wire()) == limited
    with pytest.raises(RulesError):
        make_rules("classic", {"max_reshuffles": "-1"})


# ---------------------------------------------------------------- bots and the hint

from harness.ui_fakes import draw_view, ev  # noqa: E402
from p2p_chinchon import view as V  # noqa: E402
from p2p_chinchon.autoplay import bot_decider, suggest  # noqa: E402
from p2p_chinchon.local import make_bot  # noqa: E402
from p2p_chinchon.rng import SeededRng  # noqa: E402

HAND = tuple(parse_cards("A♦ 2♦ 3♦ 5♠ 6♣ K♠ J♥"))
TOP = parse_cards("K♦")[0]


def _events(reshuffles: int) -> tuple:
    out = [ev("deal", 2, numbers=(1,))]
    for _ in range(reshuffles):
        out += [ev("draw_stock", 1), ev("discard", 1, cards=["Q♣"]), ev("reshuffle", numbers=(20,))]
    return tuple(out + [ev("discard", 1, cards=["K♦"])])


def _views(reshuffles: int):
    draw = draw_view(hand=HAND, discard_top=TOP, events=_events(reshuffles))
    took = _events(reshuffles) + (ev("draw_discard", 0, cards=["K♦"]),)
    discard = dataclasses.replace(draw, step="discard", hand=HAND + (TOP,), events=took)
    return draw, discard


@pytest.mark.parametrize(("level", "reshuffles"), [("easy", 2), ("normal", 3), ("hard", 3)])
def test_bots_and_hint_collect_court_cards_in_a_dead_hand(level, reshuffles):
    """easy collects from DEAD_AFTER re-makings; normal and hard, which judge every card
    themselves, once the hand is stuck (BREAK_AFTER)."""
    draw, discard = _views(reshuffles=reshuffles)
    bot = make_bot(draw.rules, SeededRng(1), level)
    decide = bot_decider(bot)
    assert decide(draw, "draw") == V.Draw("discard")  # K♦ pairs with K♠
    assert suggest(bot, draw) == V.Draw("discard")
    thrown = decide(discard, "discard")
    assert thrown == V.Discard(parse_cards("J♥")[0]), thrown  # the pair of kings stays
    assert suggest(bot, discard) == thrown


@pytest.mark.parametrize("level", ["normal", "hard"])
def test_a_slow_hand_is_judged_by_the_stronger_bots(level):
    """After DEAD_AFTER but before BREAK_AFTER re-makings, normal and hard take no court card
    just because it pairs (their own judgement: K♦ joins no meld, and deadwood rises)."""
    draw, _ = _views(reshuffles=2)
    assert bot_decider(make_bot(draw.rules, SeededRng(1), level))(draw, "draw") == V.Draw("stock")


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_a_live_hand_is_played_as_before(level):
    draw, _ = _views(reshuffles=0)
    bot = make_bot(draw.rules, SeededRng(1), level)
    assert bot_decider(bot)(draw, "draw") == V.Draw("stock")


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_the_card_just_taken_is_never_thrown_back(level):
    """Legal, but never the bot's move nor the hint."""
    _, discard = _views(reshuffles=0)
    bot = make_bot(discard.rules, SeededRng(1), level)
    for _ in range(5):
        assert bot_decider(bot)(discard, "discard") != V.Discard(TOP)
        assert suggest(bot, discard) != V.Discard(TOP)


def test_a_table_option_forbids_throwing_back_the_taken_card():
    """Legal by default (the documents are silent); ``discard_taken=no``
    forbids it, in legal_actions and in apply."""
    from p2p_chinchon.engine import Discard, DrawDiscard, IllegalAction

    for allowed in (True, False):
        g, _, seat = restock_scenario(parse_cards("3♣ J♥ 6♠ 2♦"))
        g.rules = dataclasses.replace(g.rules, discard_taken=allowed)
        g.apply(Restock(tuple(range(100, 100 + len(g.discard_pile) - 1))))
        g.apply(DrawDiscard(seat))
        taken = g.hands[seat][-1]
        assert (Discard(seat, taken) in g.legal_actions(seat)) is allowed
        if allowed:
            g.apply(Discard(seat, taken))
        else:
            with pytest.raises(IllegalAction) as err:
                g.apply(Discard(seat, taken))
            assert err.value.rule == "discard_taken"
    assert "discard_taken" not in make_rules("classic").to_wire()
    assert make_rules("classic", {"discard_taken": "no"}).to_wire()["discard_taken"] is False


def test_the_options_are_told_in_the_lobby_and_the_void_in_the_log():
    from harness.ui_fakes import ev as event
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.lobby import rules_in_words
    from p2p_chinchon.ui.logtext import log_line
    from p2p_chinchon.ui.render import resolve_faces
    from p2p_chinchon.ui.text import plain

    tr = Translator("es")
    said = rules_in_words(make_rules("classic", {"max_reshuffles": "3", "discard_taken": "no"}), tr)
    assert "Una mano cuyo mazo se agota tras 3 rebarajadas queda nula." in said
    assert any("no se puede descartar en el mismo turno" in s for s in said)
    plain_rules = rules_in_words(make_rules("classic"), tr)
    assert not any("rebarajadas" in s or "reshuffles" in s or "discard taken" in s for s in plain_rules)
    line = log_line(event("void", detail="reshuffles"), tr, resolve_faces(None, "unicode"))
    assert plain(line) == "Mano nula: el mazo se agotó demasiadas veces"


def test_preset_defaults_add_no_limit_their_document_does_not_state():
    """000 asks only for two real cards per meld and 001 states no cap: no
    cap on the wild cards of one meld (it was 2 and 1); 003 says one per meld."""
    from p2p_chinchon.engine import PRESETS
    from p2p_chinchon.engine.melds import make_meld

    assert PRESETS["classic"].max_wild_per_meld == 8 and PRESETS["classic"].min_real_per_meld == 2
    assert PRESETS["online"].max_wild_per_meld == 8
    assert PRESETS["cardgames"].max_wild_per_meld == 1
    two_packs = make_rules("classic", {"jokers": "2", "decks": "2"})
    assert make_meld(parse_cards("3♦ 4♦ joker joker joker"), two_packs) is not None
    assert make_meld(parse_cards("3♦ joker joker joker"), two_packs) is None  # two real cards
    for name in ("classic", "online", "fournier", "cardgames"):  # the options off by default
        assert PRESETS[name].max_reshuffles == 0 and PRESETS[name].discard_taken


async def test_a_table_plays_a_dead_hand_to_its_score(tmp_path):
    """The whole protocol, two live seats that never close (draw from the stock, throw the card
    drawn): with max_reshuffles=1 and reshuffle_end=score the stock runs out a second time, every
    seat signs a `show`, the hand is scored as it stands, and the transcript audits."""
    from p2p_chinchon import view as V
    from p2p_chinchon.audit import audit_file
    from p2p_chinchon.local import SeatSpec, play_local

    def passing(view, need):
        if need == "agree":
            return V.Agree()
        if need == "reenter":
            return V.Reenter(False)
        if need == "draw":
            return V.Draw("stock")
        new = [c for c in view.hand if c not in before.get(view.me, ())]
        return V.Discard(new[0] if new else view.hand[-1])

    before: dict[int, tuple] = {}  # seat -> its hand before its draw

    logs = []

    def watch(view):
        if view.step == "draw" and view.my_turn:
            before[view.me] = tuple(view.hand)
        logs.append(view)

    specs = [SeatSpec(n, decide=passing, on_update=watch) for n in ("Ana", "Bruno")]
    rules = make_rules("classic", {"limit": "5", "max_reshuffles": "1", "reshuffle_end": "score",
                                   "showdown_time": "0", "first_round_ban": "no"})
    results = await play_local(rules, specs, seed=5, proof_rounds=3, transcript_dir=tmp_path)
    assert all(r.fault is None and r.error is None for r in results), [(r.fault, r.error) for r in results]
    kinds = {e.kind for view in logs for e in view.events}
    assert {"dead_hand", "reshuffle", "score"} <= kinds
    assert "close" not in kinds and "void" not in kinds
    from p2p_chinchon.transcript import load_transcript

    envs = load_transcript(tmp_path / "seat0.chn").envelopes
    assert sum(e.kind == "show" for e in envs) == 2 and not any(e.kind == "close" for e in envs)
    assert audit_file(tmp_path / "seat0.chn").verdict == "ok"
