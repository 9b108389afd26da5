"""The table screen model: keys -> intents, and what the 80x24 screen shows."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from harness.ui_fakes import (
    DRAWN,
    HAND,
    RULES,
    SPANISH,
    discard_view,
    draw_view,
    ev,
    lobby,
    showdown_view,
    waiting_view,
)
from p2p_chinchon import view as V
from p2p_chinchon.engine import Card, parse_cards
from p2p_chinchon.i18n import Translator
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.ui.screen import CONFIRM_QUIT, HELP, TableScreen
from p2p_chinchon.ui.text import plain, width


def make(view=None, lang="en", faces=Faces("french", True, True), hint=None):
    sent: list = []
    exits: list = []
    s = TableScreen(Translator(lang), faces, send=sent.append, hint=hint,
                    exit=lambda: exits.append(1))
    if view is not None:
        s.set_view(view)
    return s, sent, exits


def press(s, *keys):
    for k in keys:
        s.key(k)


def test_draw_keys_send_draw_only_on_my_draw_step():
    s, sent, _ = make(draw_view())
    press(s, "s")
    assert sent == [V.Draw("stock")]
    s.set_view(draw_view())
    press(s, "d")
    assert sent[-1] == V.Draw("discard")
    s2, sent2, _ = make(waiting_view())
    press(s2, "s", "d")
    assert sent2 == [] and "not your turn" in s2.message
    s3, sent3, _ = make(discard_view())
    press(s3, "s")
    assert sent3 == [] and "drawn already" in s3.message


def test_double_press_sends_once_until_the_table_answers():
    s, sent, _ = make(draw_view())
    press(s, "s", "s")
    assert sent == [V.Draw("stock")]
    assert "Waiting" in s.message


def test_drawn_card_is_picked_and_enter_discards_it():
    s, sent, _ = make(draw_view())
    s.set_view(discard_view())
    assert s.picked == DRAWN
    press(s, "enter")
    assert sent == [V.Discard(DRAWN)]


def test_arrows_and_digits_pick_by_display_position():
    s, sent, _ = make(discard_view())
    cards, groups = s.display_hand()
    # melds grouped first: 5-6-7♦ and the queens, then deadwood sorted
    assert set(cards[:3]) == set(parse_cards("5d 6d 7d"))
    assert groups[:6] == [0, 0, 0, 1, 1, 1] and groups[6:] == [None, None]
    press(s, "2")
    assert s.picked == cards[1]
    press(s, "right", "right")
    assert s.picked == cards[3]
    press(s, "left")
    assert s.picked == cards[2]
    press(s, "enter")
    assert sent == [V.Discard(cards[2])]


def test_typed_card_name_discards_with_one_enter():
    s, sent, _ = make(discard_view())
    press(s, "3", "h")  # "3" picks position 3 at once, "3h" then names the 3♥
    assert s.picked == Card(3, 1)
    press(s, "enter")
    assert sent == [V.Discard(Card(3, 1))]  # one Enter, not two
    s, sent, _ = make(draw_view())
    press(s, "3", "h", "enter")  # before drawing the name only picks
    assert sent == [] and s.picked == Card(3, 1)


def test_digit_then_command_letter_is_a_command_unless_it_names_a_card():
    """The key bar says "1-8 pick ... c close": a digit picks, and a command letter after it is
    that command, unless digit+letter names a card in the hand ("3h" is the 3♥ here)."""
    opts = ((DRAWN, 3, False),)
    s, sent, _ = make(discard_view(close_options=opts, first_round=False))
    cards, _ = s.display_hand()
    i = cards.index(DRAWN) + 1  # the closing discard's display position
    press(s, str(i), "c")
    assert s.typed == "" and sent == [] and "cannot be undone" in plain(s.message_line())
    press(s, "y")  # a close is signed for good: asked first
    assert sent == [V.Close(DRAWN)]
    s, sent, _ = make(discard_view())
    press(s, "3", "h")
    assert s.typed == "3h" and s.picked == Card(3, 1)


def test_typed_unknown_card_is_a_message_not_an_intent():
    s, sent, _ = make(discard_view())
    before = s.picked
    press(s, "K", "c", "enter")  # K♣ is not in the hand
    assert sent == [] and s.picked == before
    assert "No such card" in s.message


def test_close_only_when_close_options_allow():
    s, sent, _ = make(discard_view(first_round=True))
    press(s, "c")
    assert sent == [] and "first round" in s.message
    s, sent, _ = make(discard_view(first_round=False))
    press(s, "c")
    assert sent == [] and "may not close" in s.message
    opts = ((DRAWN, 3, False),)
    s, sent, _ = make(discard_view(close_options=opts, first_round=False))
    press(s, "3", "h", "c")  # the 3♥ is not a legal closing discard
    assert sent == [] and "discard K♦" in s.message
    press(s, "K", "d", "c")  # a typed name, then c: close with it, once confirmed
    press(s, "n")
    assert sent == []
    press(s, "c", "y")
    assert sent == [V.Close(DRAWN)]


def test_close_asks_first_and_warns_over_the_limit():
    """A close is signed and cannot be undone; the question says when it puts you
    over the limit (total 12 here, limit 100 in the fake rules: 95 + 12 > 100)."""
    import dataclasses

    opts = ((DRAWN, 12, False),)
    view = discard_view(close_options=opts, first_round=False)
    seats = tuple(dataclasses.replace(x, total=95) if x.seat == 0 else x for x in view.seats)
    s, sent, _ = make(dataclasses.replace(view, seats=seats))
    press(s, "K", "d", "c")
    assert "You would have 107: over 100!" in s.render_text(80, 24)
    assert s.render_text(80, 24).endswith("y yes · n no")
    press(s, "y")
    assert sent == [V.Close(DRAWN)]


def test_a_chinchon_close_is_named_in_its_question():
    """A close that is a chinchón says so before it is signed (and that it wins the game at
    once where the rules say so): a player who pressed c must not learn it from the game over."""
    import dataclasses

    opts = ((DRAWN, -10, True),)
    view = discard_view(close_options=opts, first_round=False)
    for wins, said in ((True, "a chinchón! It wins the game at once."), (False, "a chinchón (-10 points)!")):
        s, sent, _ = make(dataclasses.replace(view, rules=dataclasses.replace(view.rules, chinchon_wins=wins)))
        press(s, "K", "d", "c")
        assert said in s.render_text(120, 24)
        press(s, "y")
        assert sent == [V.Close(DRAWN)]


def test_reorder_and_regroup():
    s, _, _ = make(discard_view())
    auto = s.display_hand()[0]
    press(s, "1", "escape")  # pick the first card, drop the typed buffer
    press(s, ">")
    moved = s.display_hand()[0]
    assert moved[0] == auto[1] and moved[1] == auto[0] and s.order is not None
    # a new view keeps the custom order
    s.set_view(discard_view(stock_size=21))
    assert s.display_hand()[0] == moved
    press(s, "g")
    assert s.display_hand()[0] == auto


def test_quit_needs_confirmation_then_sends_leave():
    s, sent, _ = make(draw_view())
    press(s, "q")
    assert s.mode == CONFIRM_QUIT and sent == []
    press(s, "n")
    assert s.mode != CONFIRM_QUIT and sent == []
    press(s, "q", "x")  # other keys are ignored while asking
    assert sent == []
    press(s, "y")
    assert sent == [V.Leave()]


@pytest.mark.parametrize("lang", ["en", "es", "fr"])
def test_no_game_key_answers_a_question(lang):
    """`q` then `s` must not leave; y is the only yes, in every language."""
    s, sent, _ = make(draw_view(), lang=lang)
    press(s, "q")
    question = s.message
    assert "y = " in question and s.mode == CONFIRM_QUIT
    for k in ("s", "d", "o", "c", "h", "a", "enter", "1", "<", "g", "l"):
        press(s, k)
        assert sent == [] and s.mode == CONFIRM_QUIT, k
    press(s, "y")
    assert sent == [V.Leave()]
    answers: list[Any] = []
    s, sent, _ = make(draw_view(), lang=lang)
    s.start_ask("Let Carla sit down?", answers.append)
    press(s, "s", "d", "o", "enter", "c")
    assert answers == [] and sent == []
    press(s, "y")
    assert answers == [True]
    s, sent, _ = make(showdown_view(reentry_offer=True), lang=lang)
    assert "y = " in s.render_text()
    press(s, "s", "o", "d", "enter")
    assert sent == []
    press(s, "y")
    assert sent == [V.Reenter(True)]


def test_yes_keys_are_no_game_keys():
    """Whole kind: the yes key is no action in any other mode, and every key bar that asks a
    question names it."""
    from p2p_chinchon.ui.screen import COMMAND_KEYS, NO_KEYS, YES_KEYS

    game = {"s", "d", "c", "h", "q", "g", "a", "l", "?", "<", ">"}
    assert not YES_KEYS & game and not NO_KEYS & game
    assert {"y", "n"} <= COMMAND_KEYS  # they never start a typed card name
    for lang in ("en", "es", "fr"):
        tr = Translator(lang)
        for key in ("confirm_quit", "reentry_question", "keys_yes_no"):
            assert "y" in tr(key).replace("y =", "y ").split() or "y = " in tr(key), (lang, key)


def test_reentry_answer_once_per_offer():
    s, sent, _ = make(showdown_view(reentry_offer=True))
    assert "Buy back in" in s.render_text()
    press(s, "n", "y")
    assert sent == [V.Reenter(False)]
    s2, sent2, _ = make(showdown_view(reentry_offer=True))
    press(s2, "y")
    assert sent2 == [V.Reenter(True)]
    s3, sent3, _ = make(showdown_view(reentry_offer=False))
    press(s3, "y")
    assert sent3 == [V.ShowdownSeen()]  # the key only put the held showdown away (the clock runs on)


def test_agree_in_lobby_once():
    s, sent, _ = make(lobby())
    screen = s.render_text()
    assert "Press a to agree" in screen
    assert "six matched and one card worth 4 or less" in screen
    press(s, "a", "a")
    assert sent == [V.Agree()]
    assert "waiting for the other seats" in s.render_text()


def test_hint_provider_is_called_with_the_view():
    seen = []

    def hint(view):
        seen.append(view)
        return "discard K♦"

    s, sent, _ = make(discard_view(), hint=hint)
    press(s, "h")
    assert seen == [s.view] and "Hint: discard K♦" in s.render_text() and sent == []
    s2, _, _ = make(discard_view(), hint=lambda v: 1 / 0)
    press(s2, "h")
    assert "No hint" in s2.message


def test_help_toggles():
    s, sent, _ = make(draw_view())
    press(s, "?")
    assert s.mode == HELP and "draw from the stock" in s.render_text()
    press(s, "s")  # closes help, does not draw
    assert s.mode != HELP and sent == []


def test_rejection_is_shown_and_unblocks():
    s, sent, _ = make(draw_view())
    press(s, "s")
    s.rejected("not your turn (seat 1 plays)")
    assert "Refused: not your turn (seat 1 plays)" in s.render_text()
    press(s, "s")
    assert sent == [V.Draw("stock"), V.Draw("stock")]


# ---------------------------------------------------------------- what the screen shows

def lines_of(s, cols=80, rows=24):
    out = s.render(cols, rows)
    assert len(out) == rows
    assert all(width(line) <= cols for line in out), [width(l) for l in out]
    return s.render_text(cols, rows)


def test_playing_screen_shows_everything_at_80x24():
    s, _, _ = make(discard_view(close_options=((DRAWN, 3, False),), first_round=False))
    text = lines_of(s)
    assert "your turn: discard or close" in text
    assert "[5♦ 6♦ 7♦]" in text and "3♥" in text and "K♦" in text  # hand with melds
    assert "Discard pile: K♠ (4)" in text and "Stock: 22" in text
    for name, total in (("Ana", 12), ("Ben", 30), ("Carla", 46)):
        line = next(l for l in text.splitlines() if name in l)
        assert f"total {total}" in line
    assert "▶ Ana" in text  # whose turn
    s.set_view(waiting_view(discard_size=4, discard_top=Card(3, 0), events=(), log_total=0))  # Ben to play
    s.set_view(discard_view(discard_size=4, last_from_discard={1: Card(4, 3)}))  # he took 4♣ (its log)
    t2 = lines_of(s)
    assert "took 4♣, threw K♠" in next(l for l in t2.splitlines() if "Ben" in l)
    s.set_view(waiting_view(discard_size=5, hand_no=1))
    log = draw_view().events + (ev("draw_stock", 1), ev("discard", 1, cards=["2♦"]))
    s.set_view(discard_view(discard_size=6, hand_no=1, discard_top=Card(2, 0), events=log, log_total=4))
    assert "drew, threw 2♦" in next(l for l in lines_of(s).splitlines() if "Ben" in l)
    assert "dealer" in next(l for l in text.splitlines() if "Carla" in l)
    assert "You may close (c): K♦ → 3" in text
    assert "Ben discards K♠" in text  # log


def test_other_players_turn_shows_who():
    s, _, _ = make(waiting_view())
    text = lines_of(s)
    assert "Ben to play" in text and "▶ Ben" in text and "You may" not in text


def test_showdown_screen_shows_hands_scores_elimination_winner():
    s, _, _ = make(showdown_view(phase=V.OVER, winner=2))
    text = lines_of(s)
    assert "Carla closed." in text
    assert "[A♥ 2♥ 3♥]" in text and "laid off 4♦" in text
    ana = next(l for l in text.splitlines() if l.startswith("Ana "))
    assert ana.rstrip().endswith("12")
    rows = [l.split() for l in text.splitlines() if l.split()[:1] in (["1"], ["2"], ["Total"])]
    assert rows == [["1", "3", "77", "46"], ["2", "12", "27", "3"],
                    ["Total", "15", "104✗", "49"]]
    assert "Ben is out (104 points)." in text
    assert "Carla wins the game!" in text


def test_progress_and_status_lines():
    s, _, _ = make(draw_view(phase=V.SHUFFLING, progress=(3, 8, "verifying shuffle proofs")))
    s.set_status("connected to 2 peers")
    text = lines_of(s)
    assert "3/8 verifying shuffle proofs" in text and "connected to 2 peers" in text
    # a message does not hide the status (presence: "waiting for Carla (1:55)")
    s, _, _ = make(draw_view())
    s.set_status("Carla disconnected: waiting for her (1:55)")
    s.key("c")  # "Draw first": a message
    rows = [plain(r) for r in s.render(80, 24)]
    assert rows[-2].startswith("Draw first") and "Carla disconnected: waiting for her (1:55)" in rows


def test_fault_is_shown():
    s, _, _ = make(draw_view(phase=V.STOPPED, fault=V.Fault(1, "bad_signature", "bad sig")))
    text = lines_of(s)
    assert "The table stopped: bad sig" in text and "Ben (bad_signature)" in text


@pytest.mark.parametrize("cols,rows", [(80, 24), (60, 12), (40, 8), (100, 40), (20, 4)])
def test_any_size_fits_without_overflow(cols, rows):
    eight = tuple(V.SeatInfo(i, f"Player{i}name", "ab" * 10, 7, 99, is_dealer=i == 0)
                  for i in range(8))
    long_log = tuple(ev("void", detail=f"event {i} " + "x" * 120) for i in range(50))
    for view in (discard_view(seats=eight, events=long_log),
                 showdown_view(seats=eight, score_history=tuple((i,) * 8 for i in range(30))),
                 lobby()):
        s, _, _ = make(view)
        lines_of(s, cols, rows)
    # the most important lines survive a small terminal: header, hand and key bar
    s, _, _ = make(discard_view(seats=eight, events=long_log))
    text = lines_of(s, 80, 12)
    assert "your turn" in text and "[5♦ 6♦ 7♦]" in text and "Enter discard" in text
    assert "event 49" in lines_of(s, 80, 24)  # the log shows its newest lines


def test_resize_rerenders_for_the_new_size():
    s, _, _ = make(discard_view())
    wide = s.render_text(120, 30)
    narrow = s.render_text(50, 24)
    assert max(len(l) for l in narrow.splitlines()) <= 50
    assert "Stock: 22" in wide and "Stock: 22" in narrow


def test_spanish_faces_and_language():
    s, _, _ = make(discard_view(rules=SPANISH, hand=tuple(parse_cards(
        "5-oros 6-oros 7-oros sota-espadas sota-copas sota-bastos 3-copas rey-oros"))),
        lang="es")
    text = lines_of(s)
    assert "5 oros" in text and "sota espadas" in text and "Tu mano" in text
    assert "Mazo: 22" in text
    press(s, "r", "e", "y", " ", "o", "enter")  # typed Spanish name picks the card
    assert s.picked == Card(12, 0)


def test_ascii_faces():
    s, _, _ = make(discard_view(), faces=Faces("french", False, False))
    text = lines_of(s)
    assert "[5d 6d 7d]" in text and "Kd" in text and "> Ana" in text
    assert text.isascii()
    s_es, _, _ = make(showdown_view(reentry_offer=True), lang="es",
                      faces=Faces("spanish", False, False))
    text = lines_of(s_es)
    assert text.isascii() and "Te reenganchas" in text


def test_observer_view_has_no_hand_and_no_turn():
    s, sent, _ = make(dataclasses.replace(waiting_view(), me=None, hand=()))
    lines_of(s)
    press(s, "s")
    assert sent == []


# ---------------------------------------------------------------- the end of a hand

class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def hand_over_view(**kw):
    kw.setdefault("seats", fakes_seats((15, 30, 49)))
    return showdown_view(phase=V.HAND_OVER, **kw)


def fakes_seats(totals, eliminated=()):
    from harness.ui_fakes import seats

    return seats(totals, eliminated)


def test_showdown_is_held_until_a_key_then_recalled_with_l():
    clock = Clock()
    s = TableScreen(Translator("en"), Faces("french", True, True), clock=clock)
    s.set_view(draw_view())
    s.set_view(hand_over_view())
    s.set_view(draw_view(hand_no=3, score_history=hand_over_view().score_history))
    text = s.render_text()
    assert s.holding() and "Hand 2, as shown:" in text
    assert "Carla closed." in text and "laid off 4♦" in text and "any key" in text
    s.key("s")  # the key only puts the showdown away: it does not draw
    assert not s.holding() and "Your hand" in s.render_text()
    s.key("l")
    assert "Hand 2, as shown:" in s.render_text() and "Total" in s.render_text()
    s.key("x")
    assert "Your hand" in s.render_text()


def test_showdown_hold_ends_when_showdown_time_passes():
    clock = Clock()
    rules = dataclasses.replace(RULES, showdown_time=5)
    s = TableScreen(Translator("en"), Faces("french", True, True), clock=clock)
    s.set_view(draw_view(rules=rules))
    s.set_view(hand_over_view(rules=rules))
    s.set_view(draw_view(rules=rules, hand_no=3))
    assert s.holding() and 4.9 < s.hold_left() <= 5
    clock.t += 5
    s.key("s")  # the hold is over: the key is the table's, not eaten by the hold
    assert s.pending == V.Draw("stock")
    assert not s.holding() and "Your hand" in s.render_text()
    quick = dataclasses.replace(RULES, showdown_time=0)
    s = TableScreen(Translator("en"), Faces("french", True, True), clock=clock)
    s.set_view(draw_view(rules=quick))
    s.set_view(hand_over_view(rules=quick))
    assert not s.holding()


def test_score_sheet_marks_out_and_reentry_so_columns_add_up():
    s = TableScreen(Translator("en"), Faces("french", True, True), clock=Clock())
    hist1 = ((3, 77, 46),)
    s.set_view(draw_view(seats=fakes_seats((3, 77, 46)), score_history=hist1))
    hist2 = hist1 + ((12, 27, 3),)
    s.set_view(hand_over_view(seats=fakes_seats((15, 104, 49), eliminated=(1,)),
                              score_history=hist2))
    back = tuple(dataclasses.replace(x, reentries_used=1) if x.seat == 1 else x
                 for x in fakes_seats((15, 49, 49)))
    s.set_view(hand_over_view(seats=back, score_history=hist2))
    s.key("z")
    text = "\n".join(plain_line for plain_line in s.render_text(80, 40).splitlines())
    rows = [l.split() for l in text.splitlines() if l.split()[:1] in (["1"], ["2"], ["re-in"])]
    assert rows == [["1", "3", "77", "46"], ["2", "12", "27✗", "3"], ["re-in", "=49"]]
    assert "Ben: out at 104 after hand 2, re-entered at 49" in text
    assert re.search(r"^Total +15 +49 +49$", text, re.M), text


def test_bell_on_my_turn_and_on_a_close():
    s = TableScreen(Translator("en"), Faces("french", True, True), clock=Clock())
    s.set_view(waiting_view())
    assert s.take_bells() == 0
    s.set_view(draw_view())
    assert s.take_bells() == 1 and s.take_bells() == 0
    s.set_view(discard_view())
    assert s.take_bells() == 0
    s.set_view(hand_over_view())
    assert s.take_bells() == 1


def test_after_taking_the_discard_enter_does_not_throw_it_back():
    taken = Card(12, 2)  # the K♠ on the pile
    s, sent, _ = make(draw_view())
    press(s, "d")
    s.set_view(discard_view(hand=HAND + (taken,), discard_size=3))
    assert s.picked is None
    press(s, "enter")
    assert sent == [V.Draw("discard")] and "Pick a card first" in s.message
    s, sent, _ = make(draw_view(), hint=lambda v: V.Discard(Card(3, 1)))
    press(s, "d")
    s.set_view(discard_view(hand=HAND + (taken,), discard_size=3))
    assert s.picked == Card(3, 1)  # the hint's card
    press(s, "enter")
    assert sent[-1] == V.Discard(Card(3, 1))
    s, sent, _ = make(draw_view(), hint=lambda v: V.Discard(taken))  # a hint to throw it back
    press(s, "d")
    s.set_view(discard_view(hand=HAND + (taken,), discard_size=3))
    assert s.picked is None  # Enter still does not throw the taken card back by itself


@pytest.mark.parametrize("lang, want", [("en", "Hint: discard 3 oros"),
                                        ("es", "Pista: descarta 3 oros"),
                                        ("fr", "Conseil : défaussez 3 oros")])
def test_hint_is_worded_in_the_language_and_the_decks_notation_and_picks(lang, want):
    view = discard_view(rules=SPANISH, hand=tuple(parse_cards("5d 6d 7d Qs Qh Qc 3d Kd")))
    s, sent, _ = make(view, lang=lang, hint=lambda v: V.Discard(Card(3, 0)))
    press(s, "h")
    assert s.message == want and s.picked == Card(3, 0) and sent == []


def test_eight_cards_show_the_deadwood_after_the_best_discard():
    s, _, _ = make(discard_view())  # 5-6-7♦, three queens, 3♥ and the drawn K♦
    assert s.best_discard() == (3, DRAWN)
    assert "Your hand: deadwood 3 after discarding K♦" in s.render_text()
    s, _, _ = make(draw_view())
    assert "Your hand: deadwood 3 ·" in s.render_text()


def test_showdown_says_onto_whose_meld_a_card_was_laid_off():
    sd = showdown_view().showdown
    # 4♥ extends Carla's A-2-3♥; J♦ fits Carla's jacks and Ana's 5-6-7♦ (7 and J are
    # neighbours in 40 cards): two owners, so no arrow rather than a guess
    ben = dataclasses.replace(sd[2], laid_off=(Card(4, 1), Card(10, 0)),
                              deadwood=tuple(parse_cards("Kd 7c")))
    s, _, _ = make(showdown_view(showdown=(sd[0], sd[1], ben)))
    s.key("x")
    line = next(l for l in s.render_text().splitlines() if l.startswith("Ben "))
    assert "laid off 4♥→Carla J♦ deadwood K♦ 7♣" in line, line


def test_a_draw_from_the_stock_that_reshuffled_the_pile_says_drew():
    """Ben's turn begins with 9 cards on the pile; he draws the last card of the stock, the
    pile is reshuffled into a new stock (one card left on it), and he throws the 2♦: the pile
    is smaller than when his turn began, which must not read as a take ("took 4♣", a discard
    he had taken hands ago). His turn's own log event says what he did."""
    s, _, _ = make(discard_view())
    old = draw_view().events
    s.set_view(waiting_view(discard_size=9, log_total=2))  # Ben to play
    log = old + (ev("draw_stock", 1), ev("reshuffle", numbers=(8,)), ev("discard", 1, cards=["2♦"]))
    s.set_view(discard_view(discard_size=2, discard_top=Card(2, 0), events=log, log_total=5))
    assert "drew, threw 2♦" in next(l for l in lines_of(s).splitlines() if "Ben" in l)


def test_rules_cut_at_80x24_scroll_so_every_rule_can_be_read_before_agreeing():
    """At 80x24 the lobby's rules list was cut with "…" and nothing could show the rest, yet
    the screen asked to agree to them: ↓ and ↑ scroll the cut block, every rule is reachable."""
    from p2p_chinchon.ui.lobby import rules_in_words

    s, sent, _ = make(lobby())
    every = rules_in_words(lobby().rules, Translator("en"))
    rows = 16  # short enough that the rules do not fit
    seen = set()
    first = s.render_text(80, rows)
    assert "↓ more" in first and "Press a to agree" in first
    for _ in range(len(every) + 5):
        text = s.render_text(80, rows)
        seen |= {r for r in every if r[:60] in text.replace("\n", " ")}
        press(s, "down")
    assert "↑ back" in s.render_text(80, rows)
    assert seen == set(every)  # the last rule (rejoin wait) included
    press(s, *["up"] * (len(every) + 5))
    assert s.render_text(80, rows) == first
    assert sent == []  # scrolling agrees to nothing


def test_a_seat_question_refuses_a_whole_address_with_b_and_can_be_withdrawn():
    """The host's seat question takes ``b`` (refuse everyone from that address)
    where the asker allows it, and nowhere else; a question its asker withdrew (the joiner
    left) leaves the screen and takes no answer."""
    answers: list = []
    s, sent, _ = make(draw_view())
    s.start_ask("Carla asks to sit down", answers.append)
    press(s, "b")
    assert answers == [] and s.mode == "ask"
    s.end_ask()
    assert s.mode != "ask"
    press(s, "y")
    assert answers == []
    s.start_ask("Carla asks to sit down", answers.append, block=True)
    press(s, "b")
    assert answers == ["block"] and s.mode != "ask" and sent == []


def test_a_long_wait_and_a_long_seat_question_are_read_whole_at_80_columns():
    """A newcomer at 80x24 saw "(your fingerprint YVY7-…" and "(b: ref…": the node's status
    and a question wrap instead of being cut, so whom we wait for, how long, and which key
    does what stay on screen."""
    s, _, _ = make(lobby())
    wait = ("waiting for the host to let you sit down (your fingerprint ABCD-EFGH-IJKL-MNOP: the host "
            "checks it on their screen; up to 120 s; q leaves)")
    s.set_status(wait)
    text = " ".join(lines_of(s).split())
    assert wait in text, lines_of(s)
    question = ("Bruno [WXYZ-1234-ABCD-5678] from 192.168.1.23 asks to sit down. Seat them? "
                "(b: refuse everyone from 192.168.1.23) 3 more waiting.")
    s.start_ask(question, lambda answer: None, block=True)
    text = " ".join(lines_of(s).split())
    assert question in text, lines_of(s)


def test_a_new_code_word_replaces_the_last_ones_news_and_other_notices_stand():
    """The host shows one code word at a time: once the next is out, the used one and "a friend
    used code word ...: they are on their way in" (a friend refused meanwhile) are gone; a
    notice of no topic (a seat nobody reaches) stays beside it."""
    from p2p_chinchon.ui.bridge import notice_topic

    tr = Translator("en")
    s, _, _ = make(lobby())
    for key, fields in (("code_word", {"code": "7-ab-cd", "join": "7-ab-cd"}), ("rematch_declined", {"name": "Carla"}),
                        ("code_met", {"code": "7-ab-cd"}), ("code_word", {"code": "8-ef-gh", "join": "8-ef-gh"})):
        s.noticed(tr(key, **fields), notice_topic(key))
    text = "\n".join(plain(line) for line in s.message_lines(200, most=10))
    assert "8-ef-gh" in text and tr("rematch_declined", name="Carla") in text, text
    assert "7-ab-cd" not in text and "on their way in" not in text, text


@pytest.mark.parametrize("lang", ["en", "es", "fr"])
def test_game_over_at_80x24_keeps_the_total_row_and_the_last_hands(lang):
    """Five players, twelve hands: the score sheet does not fit 80x24 under the showdown. Its
    names' row, its Total row (the winner's total) and the last hands stay; the first hands go."""
    names, totals = ("Ana", "Ben", "Carla", "Dani", "Eva"), (61, 104, 112, 99, 120)
    five = tuple(V.SeatInfo(i, names[i], f"{i}f3a9c21d07b", 7, totals[i], eliminated=totals[i] > 100)
                 for i in range(5))
    hist = tuple(tuple((h * (i + 1)) % 13 for i in range(5)) for h in range(1, 13))
    shown = showdown_view().showdown + (V.ShownHand(3, (), (), (), 9), V.ShownHand(4, (), (), (), 8))
    s, _, _ = make(showdown_view(phase=V.OVER, winner=0, seats=five, score_history=hist, showdown=shown), lang=lang)
    s.node_done(s.tr("game_finished"))
    text = s.render_text(80, 24)
    tr = s.tr
    assert re.search(rf"^{re.escape(tr('total'))} +61 +104✗ +112✗ +99 +120✗$", text, re.M), text
    assert re.search(r"^12 +12 +11 +10 +9 +8$", text, re.M), text  # the last hand
    assert re.search(rf"^{re.escape(tr('hand'))} +Ana +Ben", text, re.M), text
    assert len(text.splitlines()) == 24


def test_a_wrong_code_word_is_news_that_stands_beside_the_next_code():
    from p2p_chinchon.ui.bridge import notice_topic

    tr = Translator("en")
    s, _, _ = make(lobby())
    for key, fields in (("code_word", {"code": "7-ab-cd", "join": "7-ab-cd"}), ("code_wrong", {}),
                        ("code_word", {"code": "8-ef-gh", "join": "8-ef-gh"})):
        s.noticed(tr(key, **fields), notice_topic(key))
    text = "\n".join(plain(line) for line in s.message_lines(200, most=10))
    assert tr("code_wrong") in text and "8-ef-gh" in text and "7-ab-cd" not in text, text
