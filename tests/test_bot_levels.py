"""Bot levels: the public record read from the log, the normal and hard bots' judgement, the
engine-only tournament, and the proof that no bot reads hidden state."""

import copy
from collections import Counter
from typing import Any

import pytest

from p2p_chinchon import view as v
from p2p_chinchon.autoplay import bot_decider
from p2p_chinchon.bots import LEVELS, HardBot, NormalBot, SimpleBot, make_bot, parse_levels
from p2p_chinchon.bots.record import RecordKeeper, face, unseen_faces
from p2p_chinchon.bots.tournament import TableHarness, play_game, seat_view
from p2p_chinchon.engine import PRESETS, Card, parse_card, parse_cards
from p2p_chinchon.rng import SeededRng

P = parse_cards
CLASSIC = PRESETS["classic"]
NAMES = ("Ana", "Bruno", "Carla", "Diego")


def seats(totals=(0, 0, 0, 0)):
    return tuple(v.SeatInfo(seat=i, name=NAMES[i], fingerprint="", cards=7, total=t)
                 for i, t in enumerate(totals))


def playing_view(hand, log, *, top=None, size=1, step="discard", closes=(), totals=(0, 0, 0, 0)):
    return v.SeatView(me=0, rules=CLASSIC, seats=seats(totals), phase=v.PLAYING, to_play=0,
                      step=step, hand=tuple(hand), discard_top=top, discard_size=size,
                      stock_size=15, close_options=closes, first_round=False,
                      events=tuple(log), log_total=len(log))


def test_levels_and_parse():
    assert set(LEVELS) == {"easy", "normal", "hard"}
    assert isinstance(make_bot(CLASSIC, SeededRng(1)), SimpleBot)
    assert isinstance(make_bot(CLASSIC, SeededRng(1), "hard"), HardBot)
    assert parse_levels("hard", 3) == ["hard"] * 3
    assert parse_levels("easy, Normal,hard", 3) == ["easy", "normal", "hard"]
    with pytest.raises(ValueError, match="wizard"):
        parse_levels("wizard", 2)
    with pytest.raises(ValueError, match="2 bot levels for 3"):
        parse_levels("easy,hard", 3)
    with pytest.raises(ValueError, match="unknown bot level"):
        make_bot(CLASSIC, SeededRng(1), "expert")


def ev(kind, seat=None, card=None, **fields):
    """A log event as the table logs it (``card`` as text)."""
    seats = () if seat is None else (seat,)
    cards = () if card is None else (parse_card(card),)
    return v.log_event(kind, seats, tuple(NAMES[s] for s in seats), cards=cards, **fields)


LOG = [
    ev("deal", 0, numbers=(1,)),
    ev("upcard", card="5♦"),
    ev("draw_discard", 1, "5♦"),
    ev("discard", 1, "K♣"),
    ev("draw_stock", 2),
    ev("discard", 2, "2♥"),
    ev("draw_discard", 3, "2♥"),
    ev("discard", 3, "2♥"),
]


def test_record_reads_the_public_record_from_log_events():
    assert [e.text for e in LOG[:3]] == ["hand 1: Ana deals", "dealt; upcard 5♦",
                                         "Bruno draws from the discard: 5♦"]
    rec = RecordKeeper().update(playing_view(P("A♠ 2♠ 3♠ 4♣ 5♣ 6♣ 7♥"), LOG, top=Card(2, 1), size=2,
                                             step="draw"))
    assert rec.pile == [face(Card(12, 3)), face(Card(2, 1))]
    assert rec.holds[1] == Counter({(5, 0): 1})  # Bruno keeps the 5♦ he took
    assert +rec.holds[3] == Counter()  # Diego threw the 2♥ straight back
    assert rec.takes == Counter({1: 1, 3: 1}) and rec.turns == 3
    view = playing_view(P("A♠ 2♠ 3♠ 4♣ 5♣ 6♣ 7♥"), LOG, top=Card(2, 1), size=2, step="draw")
    unseen = unseen_faces(view, rec)
    assert sum(unseen.values()) == 40 - 7 - 2 - 1 and (5, 0) not in unseen


def test_record_keeper_reads_each_line_once_and_resets_per_hand():
    k = RecordKeeper()
    hand = P("A♠ 2♠ 3♠ 4♣ 5♣ 6♣ 7♥")
    k.update(playing_view(hand, LOG[:4], top=Card(12, 3), size=1, step="draw"))
    rec = k.update(playing_view(hand, LOG, top=Card(2, 1), size=2, step="draw"))
    assert rec.takes[1] == 1 and rec.turns == 3
    nxt = LOG + [ev("close", 0), ev("deal", 1, numbers=(2,)), ev("upcard", card="3♥")]
    view = v.SeatView(me=0, rules=CLASSIC, seats=seats(), phase=v.PLAYING, hand_no=1, to_play=0,
                      step="draw", hand=tuple(hand), discard_top=Card(3, 1), discard_size=1,
                      events=tuple(nxt), log_total=len(nxt))
    rec = k.update(view)
    assert rec.pile == [(3, 1)] and not rec.takes and rec.turns == 0


def test_normal_and_hard_do_not_feed_the_next_player():
    # Bruno (next) took the 5♦: the 6♦ would feed him; the 6♣ is as good for me.
    hand8 = P("A♠ 2♠ 3♠ J♥ Q♥ K♥ 6♦ 6♣")
    log = LOG[:4]
    for cls in (NormalBot, HardBot):
        view = playing_view(hand8, log, top=Card(12, 3), size=1)
        kind, card = cls(CLASSIC, SeededRng(2)).choose_discard(hand8, False, view=view)
        assert (kind, card) == ("discard", Card(6, 3)), cls.level


def test_normal_times_its_close():
    hand8 = P("A♠ 2♠ 3♠ 4♠ 5♦ 5♥ 5♣ K♦")
    closes = ((Card(12, 0), -10, False),)
    quiet = [ev("deal", 0, numbers=(1,)), ev("upcard", card="9♦")]
    view = playing_view(hand8, quiet, top=Card(9, 0), closes=closes)
    # clean close: always at once
    assert NormalBot(CLASSIC, SeededRng(1)).choose_discard(hand8, True, view=view)[0] == "close"
    # closing now leaves the 3♣ (3 points); A♠, 5♠, 3♦ or 7♦ would make the close clean
    hand8 = P("2♠ 3♠ 4♠ 4♦ 5♦ 6♦ 3♣ K♦")
    view = playing_view(hand8, quiet, top=Card(9, 0), closes=((Card(12, 0), 3, False),))
    assert NormalBot(CLASSIC, SeededRng(1)).choose_discard(hand8, True, view=view)[0] == "discard"
    # an opponent took two discards: close now
    busy = quiet + [ev("draw_discard", 1, "9♦"), ev("discard", 1, "2♥"),
                    ev("draw_stock", 2), ev("discard", 2, "7♦"),
                    ev("draw_stock", 3), ev("discard", 3, "4♥"),
                    ev("draw_stock", 0), ev("discard", 0, "7♥"),
                    ev("draw_discard", 1, "7♥"), ev("discard", 1, "A♦")]
    view = playing_view(hand8, busy, top=Card(1, 0), size=4, closes=((Card(12, 0), 3, False),))
    assert NormalBot(CLASSIC, SeededRng(1)).choose_discard(hand8, True, view=view) == ("close", Card(12, 0))


def test_hard_takes_a_discard_that_makes_a_meld():
    hand = P("5♦ 6♦ 7♦ K♣ K♥ 2♠ J♣")
    view = playing_view(hand, [ev("deal", 0, numbers=(1,)), ev("upcard", card="K♠")], top=Card(12, 2), step="draw")
    assert HardBot(CLASSIC, SeededRng(1)).choose_draw(hand, Card(12, 2), view=view) == "discard"
    view = playing_view(hand, [ev("deal", 0, numbers=(1,)), ev("upcard", card="Q♥")], top=Card(11, 1), step="draw")
    assert HardBot(CLASSIC, SeededRng(1)).choose_draw(hand, Card(11, 1), view=view) == "stock"


def test_hard_weighs_a_take_against_the_stock_at_the_same_horizon():
    # The 5♣ joins nothing: taking it only swaps it for the Q♥ (5 points). A stock draw can do
    # as much and may make a meld; the take's kept hand is valued a draw further ahead, so the
    # stock is credited part of that draw too (without that credit, hard takes the 5♣).
    hand = P("K♦ 4♦ 7♠ Q♥ K♣ K♠ A♥")
    view = playing_view(hand, [ev("deal", 0, numbers=(1,)), ev("upcard", card="5♣")], top=Card(5, 3), step="draw")
    assert HardBot(CLASSIC, SeededRng(1)).choose_draw(hand, Card(5, 3), view=view) == "stock"
    eager = type("Eager", (HardBot,), {"STOCK_AHEAD": 0.0})
    assert eager(CLASSIC, SeededRng(1)).choose_draw(hand, Card(5, 3), view=view) == "discard"


def test_close_chance_counts_draws_that_let_the_hand_close():
    # Two sets and a K: any draw that joins a meld, or any card worth 4 or less, lets the
    # hand close on its next discard (the K goes, at most one card of <= 4 stays unmatched).
    kept = P("A♠ 2♠ 3♠ 5♣ 5♦ 5♥ K♦")
    unseen = Counter(face(c) for c in CLASSIC.deck(4) if c not in kept)
    ev = HardBot(CLASSIC, SeededRng(1)).ev
    ok = sum(n for u, n in unseen.items()
             if ev.melds_with(u, kept) or CLASSIC.value(Card(*u)) <= CLASSIC.close_max_points)
    gain, clean, closes = ev.improvement(kept, unseen)
    assert closes == ok / sum(unseen.values())
    assert clean == sum(n for u, n in unseen.items() if ev.melds_with(u, kept)) / sum(unseen.values())
    # Two pairs and three loose cards: no single draw lets it close.
    assert ev.improvement(P("A♠ A♦ 5♣ 5♦ 7♥ J♣ K♦"), unseen)[2] == 0.0


def test_hard_keeps_a_pair_that_may_close_over_a_lower_deadwood():
    # Discarding a Q leaves less deadwood (20 points against 23), but a third Q would make
    # two sets with A and 2 left, a close; hard gives up the 7♣ instead. Valued on deadwood
    # alone (no worth for the close chance) it drops the Q.
    hand8 = P("A♥ 2♣ 6♦ 6♥ 6♠ 7♣ Q♦ Q♥")
    view = playing_view(hand8, [ev("deal", 0, numbers=(1,))])
    assert HardBot(CLASSIC, SeededRng(1)).choose_discard(hand8, False, view=view) == ("discard", Card(7, 3))
    blind = type("Blind", (HardBot,), {"CLOSE_WORTH": 0.0})
    assert blind(CLASSIC, SeededRng(1)).choose_discard(hand8, False, view=view)[1].rank == 11


def test_normal_values_the_chance_to_close_too():
    # Four 2s make a set; dropping the 7♣ leaves less deadwood (12 points against 14), but the
    # 6♣ 7♣ wait for a 5♣ (a run beside the set: a close); normal gives up the 5♥. Without a
    # worth for the close chance it drops the 7♣.
    hand8 = P("2♥ 5♥ 7♣ 2♣ 6♣ 2♠ 2♦ A♥")
    view = playing_view(hand8, [ev("deal", 0, numbers=(1,))])
    assert NormalBot(CLASSIC, SeededRng(1)).choose_discard(hand8, False, view=view) == ("discard", Card(5, 1))
    blind = type("Blind", (NormalBot,), {"CLOSE_WORTH": 0.0})
    assert blind(CLASSIC, SeededRng(1)).choose_discard(hand8, False, view=view) == ("discard", Card(7, 3))


def _scrambled(game, seat):
    """A copy of ``game`` with every face ``seat`` may not see moved to another hidden slot."""
    g = copy.deepcopy(game)
    hidden = list(g.stock) + [s for o, slots in g.hands.items() if o != seat for s in slots]
    faces = [g.faces[s] for s in hidden]
    for s, f in zip(hidden, faces[1:] + faces[:1], strict=True):
        g.faces[s] = f
    assert any(g.faces[s] != game.faces[s] for s in hidden)
    return g


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_no_bot_reads_hidden_state(level):
    """At every decision of one seat, a copy of the bot fed the view of a game whose hidden
    cards (stock, other hands) were scrambled decides exactly as the bot does."""
    checked = []
    harness: list[TableHarness] = []

    bot = make_bot(CLASSIC, SeededRng(f"hero/{level}"), level)

    def hero(view, need):
        h = harness[0]
        twin = copy.deepcopy(bot)
        other = seat_view(_scrambled(h.game, 0), 0, h.names, h.log, h.log_total, h.history)
        assert other.hand == view.hand
        mine = bot_decider(bot)(view, need)
        assert bot_decider(twin)(other, need) == mine
        checked.append(need)
        return mine

    deciders = [hero] + [bot_decider(SimpleBot(CLASSIC, SeededRng(i))) for i in range(1, 4)]
    h = TableHarness(CLASSIC, deciders, SeededRng("scramble"))
    harness.append(h)
    while h.game.hand_no < 2 and len(checked) < 120 and h.step():  # two hands are plenty
        pass
    assert "draw" in checked and "discard" in checked


def test_tournament_game_is_reproducible_and_scores_add_up():
    def game():
        ds = [bot_decider(make_bot(CLASSIC, SeededRng(f"t/{i}"), lv))
              for i, lv in enumerate(["hard", "easy", "normal", "easy"])]
        return play_game(CLASSIC, ds, SeededRng("deal"))

    a, b = game(), game()
    assert a == b
    # the winner stayed within the limit, or every seat went over at once (001 "End of the match")
    assert a.winner is not None
    assert a.totals[a.winner] <= CLASSIC.limit or all(t > CLASSIC.limit for t in a.totals)
    assert a.penalties and all(len(hand) >= 2 for hand in a.penalties)


def test_hint_uses_the_hard_bot():
    from p2p_chinchon.commands._common import human_hint

    hint = human_hint()
    hand = P("5♦ 6♦ 7♦ K♣ K♥ 2♠ J♣")
    view = playing_view(hand, [ev("deal", 0, numbers=(1,)), ev("upcard", card="K♠")], top=Card(12, 2), step="draw")
    assert hint(view) == v.Draw("discard")  # the UI words it: "take the K♠ from the discard pile"
    assert hint(playing_view(hand, [], step="draw", top=None)) == v.Draw("stock")


def test_bench_bots_json(capsys):
    import json

    from p2p_chinchon.commands.bench import bench_bots

    assert bench_bots(["--games", "1", "--levels", "normal", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["win_rate"]) == {"normal"} and out["win_rate"]["normal"] in (0.0, 1.0)
    assert set(out["mean_penalty_per_hand"]) == {"easy", "normal", "hard"}
    assert out["decide_ms_median"]["normal"] > 0 and out["decide_ms_median"]["hard"] is None
    assert out["seed"] == "bench-bots"
    # another seed set deals other games; the same one deals the same games
    runs: dict[str, Any] = {}
    for seed in ("a", "b", "a"):
        assert bench_bots(["--games", "1", "--levels", "easy", "--seed", seed, "--json"]) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["seed"] == seed
        runs.setdefault(seed, []).append((got["hands"], got["mean_penalty_per_hand"]["easy"]))
    assert runs["a"][0] == runs["a"][1] and runs["a"][0] != runs["b"][0]


@pytest.mark.parametrize("level", ["easy", "normal", "hard"])
def test_the_taken_card_is_never_thrown_back_and_the_bot_chooses_among_the_others(level):
    """Whole games: after a take from the discard pile the seat's discard is never the card
    taken, and it is the bot's own choice among the other cards (a twin bot, same seed and the
    same views, asked with ``never=``), not a plain least-deadwood substitute."""
    from p2p_chinchon.autoplay import taken_now
    from p2p_chinchon.bots import deadhand

    steps = {"taken": 0}

    def checked(seat, seed):
        bot = make_bot(CLASSIC, SeededRng(f"twin/{seed}/{seat}"), level)
        twin = make_bot(CLASSIC, SeededRng(f"twin/{seed}/{seat}"), level)
        decide = bot_decider(bot)

        def decide_checked(view, need):
            out = decide(view, need)
            if need == "draw" and view.discard_top is not None:
                twin.choose_draw(list(view.hand), view.discard_top, view=view)
            if need != "discard":
                return out
            taken = taken_now(view)
            closable = bool(view.close_options)
            action, card = twin.choose_discard(list(view.hand), closable, view=view, never=taken)
            if taken is not None:
                assert out != v.Discard(taken)
                if action == "discard" and not deadhand.is_dead(view):
                    steps["taken"] += 1
                    assert out == v.Discard(card), (view.hand, taken, out, card)
            return out
        return decide_checked

    for seed in range(2):
        play_game(CLASSIC, [checked(s, seed) for s in range(4)], SeededRng(f"twin-deal/{seed}"))
    assert steps["taken"] >= 5, steps  # the check ran on real takes
