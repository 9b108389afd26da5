"""The move log re-rendered for people: translated, own seat as "you", cards in the table's
faces; and the other places where the own seat is said in the second person."""

from __future__ import annotations

import dataclasses

import pytest

from harness.ui_fakes import SPANISH, discard_view, draw_view, ev, lobby, seats, showdown_view
from p2p_chinchon import view as V
from p2p_chinchon.i18n import Translator
from p2p_chinchon.ui.logtext import KIND_KEYS, LOG_KEYS, YOU_KEYS, log_line
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.ui.screen import TableScreen, must_agree
from p2p_chinchon.ui.text import plain

EN = Translator("en")


def say(event, tr=EN, faces=Faces(), me=0):
    return plain(log_line(event, tr, faces, me))


# the events table/ and net/session.py log, their English text, and how seat 0 reads them
@pytest.mark.parametrize("event, raw, shown", [
    (ev("draw_stock", 0), "Ana draws from the stock", "You draw from the stock"),
    (ev("draw_stock", 1), "Ben draws from the stock", "Ben draws from the stock"),
    (ev("draw_discard", 0, cards=["7♦"]), "Ana draws from the discard: 7♦", "You take 7♦ from the discard pile"),
    (ev("draw_discard", 2, cards=["10♣"]), "Carla draws from the discard: 10♣",
     "Carla takes 10♣ from the discard pile"),
    (ev("discard", 0, cards=["J♠"]), "Ana discards J♠", "You discard J♠"),
    (ev("discard", 1, cards=["JK"]), "Ben discards JK", "Ben discards JK"),
    (ev("close", 0), "Ana closes", "You close!"),
    (ev("close", 1), "Ben closes", "Ben closes!"),
    (ev("deal", 0, numbers=(3,)), "hand 3: Ana deals", "Hand 3: you deal"),
    (ev("deal", 1, numbers=(2,)), "hand 2: Ben deals", "Hand 2: Ben deals"),
    (ev("first_dealer", 2), "Carla deals first (coin toss)", "Carla deals first (coin toss)"),
    (ev("upcard", cards=["Q♥"]), "dealt; upcard Q♥", "Cards dealt; the upcard is Q♥"),
    (ev("agreed", 0), "Ana agreed to the table", "You agreed to the table"),
    (ev("seated", 1, numbers=(2, 3)), "Ben sat down (2/3)", "Ben sat down (2/3)"),
    (ev("unseated", names=("Ben",), numbers=(1, 3)), "Ben left (1/3)", "Ben left (1/3)"),
    (ev("opened", detail="kitchen"), "table 'kitchen' opened", "Table kitchen opened"),
    (ev("seating", 0, 1, fingerprints=("AB12", "CD34")), "seated: Ana [AB12], Ben [CD34]",
     "Seats: Ana [AB12], Ben [CD34]"),
    (ev("reshuffle", numbers=(17,)), "the stock is empty: 17 discards are re-shuffled by every seat",
     "The stock is empty: every seat reshuffles 17 discards"),
    (ev("void", detail="the stock ran out twice"), "hand void: the stock ran out twice",
     "Hand void: the stock ran out twice"),
    (ev("score", 1, 0, 2, points=(3, 12, 27)), "scores: Ben +3, Ana +12, Carla +27",
     "Points this hand: Ben +3, Ana +12, Carla +27"),
    (ev("eliminated", 0), "Ana is out", "You are out"),
    (ev("eliminated", 2), "Carla is out", "Carla is out"),
    (ev("reentry_offer", 0), "Ana may buy back in", "You may buy back in"),
    (ev("reenter", 1), "Ben buys back in", "Ben buys back in"),
    (ev("game_over", 0), "game over: Ana wins", "Game over: you win!"),
    (ev("game_over", 2), "game over: Carla wins", "Game over: Carla wins"),
    (ev("left", 0, detail="left the table"), "Ana left: left the table", "You left the table"),
    (ev("left", 1, detail="end of input"), "Ben left: end of input", "Ben left: end of input"),
    (ev("fault", 1, rule="bad_signature", detail="the signature does not verify"),
     "fault: seat 1: bad_signature: the signature does not verify",
     "Fault by Ben (bad_signature): the signature does not verify"),
    (ev("fault", None, rule="timeout", detail="nobody"), "fault: seat None: timeout: nobody",
     "Fault by - (timeout): nobody"),
    (ev("dropped", 2, rule="bad_signature", detail="forged"),
     "dropped a frame (bad_signature, claimed seat 2): forged",
     "Ignored a bad frame said to be from Carla (bad_signature): forged"),
    (ev("dropped", 7, rule="bad_signature", detail="forged"),
     "dropped a frame (bad_signature, claimed seat 7): forged",
     "Ignored a bad frame said to be from - (bad_signature): forged"),
    (ev("stopped", 1, detail="timeout: Carla did not answer"), "stopped by Ben: timeout: Carla did not answer",
     "Ben stopped the table: timeout: Carla did not answer"),
    (ev("stopped", 0, detail="left"), "stopped by Ana: left", "You stopped the table: left"),
    (ev("game_over"), "game over: nobody wins", "Game over: nobody wins"),
])
def test_log_events_in_english_and_for_the_own_seat(event, raw, shown):
    assert event.text == raw
    assert say(event) == shown


def test_every_kind_is_said():
    assert set(KIND_KEYS) == V.LOG_KINDS
    with pytest.raises(ValueError, match="unknown log event kind"):
        V.LogEvent("mystery")


def test_observer_and_other_seats_read_third_person():
    assert say(ev("discard", 0, cards=["J♠"]), me=None) == "Ana discards J♠"
    assert say(ev("discard", 0, cards=["J♠"]), me=1) == "Ana discards J♠"
    assert say(ev("discard", 1, cards=["J♠"]), me=1) == "You discard J♠"


def test_spanish_and_french_with_spanish_faces():
    es, fr = Translator("es"), Translator("fr")
    spanish = Faces("spanish", True, False)
    assert say(ev("discard", 0, cards=["7♦"]), es, spanish) == "Descartas 7 oros"
    assert say(ev("draw_discard", 1, cards=["J♠"]), es, spanish) == "Ben coge sota espadas del descarte"
    assert say(ev("draw_stock", 0), fr) == "Vous piochez dans le talon"
    assert say(ev("close", 2), fr) == "Carla ferme !"
    assert say(ev("unseated", names=("Ben",), numbers=(1, 3)), es) == "Ben se levanta (1/3)"


def test_cards_keep_their_colour_style():
    line = log_line(ev("discard", 1, cards=["7♥"]), EN, Faces("french", True, True), 0)
    assert ("class:card.red", "7♥") in line
    plain_ascii = log_line(ev("discard", 1, cards=["7♥"]), EN, Faces("french", False, False), 0)
    assert plain(plain_ascii) == "Ben discards 7h"


@pytest.mark.parametrize("lang", ["en", "es", "fr"])
def test_every_log_key_has_its_you_form(lang):
    tr = Translator(lang)
    for key in LOG_KEYS:
        assert tr(key, name="X", card="Y", n=1, k=1, table="t", names="a", reason="r",
                  scores="s", rule="u", all="a")
    for key in YOU_KEYS:
        assert tr(key + "_you", card="Y", n=1, k=1, reason="r")


def make(view, lang="en"):
    s = TableScreen(Translator(lang), Faces())
    s.set_view(view)
    return s


def test_screen_log_uses_the_second_person_and_shows_the_newest_lines():
    log = tuple(ev("discard", 1, cards=[c]) for c in ("A♠", "2♠", "3♠")) * 10 + (ev("draw_stock", 0),)
    text = make(draw_view(events=log)).render_text(80, 24)
    rows = text.splitlines()
    assert rows[-3] == "You draw from the stock"  # the newest line sits just above the footer
    assert "Ana draws" not in text


def test_own_outcomes_in_the_second_person():
    view = showdown_view(seats=seats((25, 30, 4), eliminated=(0, 1)), closer=0,
                         phase=V.OVER, winner=2)
    text = make(view).render_text(80, 24)
    assert "You closed." in text and "You are out (25 points)." in text
    assert "Ben is out (30 points)." in text and "Carla wins the game!" in text
    won = make(dataclasses.replace(view, winner=0)).render_text(80, 24)
    assert "You win the game!" in won.splitlines()[0]


def test_turn_while_the_drawn_card_is_being_opened():
    s = make(draw_view(step=None, hand=draw_view().hand))
    assert "your turn: getting your card…" in s.render_text(80, 24).splitlines()[0]


def test_enter_says_which_card_it_discards():
    s = make(draw_view())
    s.set_view(discard_view())  # the drawn K♦ is picked
    assert "Enter discards K♦" in s.render_text(80, 24)
    s.key("1")
    first = s.display_hand()[0][0]
    assert f"Enter discards {first}" in s.render_text(80, 24)
    assert "Enter discards" not in make(draw_view()).render_text(80, 24)


def test_hand_number_after_a_close_and_last_showdown_while_shuffling():
    # after a close the table may already count the next hand: the header names the hand shown
    view = showdown_view(hand_no=2, phase=V.HAND_OVER)  # two hands scored
    assert "hand 2 · hand over" in make(view).render_text(80, 24).splitlines()[0]
    shuffling = dataclasses.replace(view, phase=V.SHUFFLING, progress=(3, 9, "shuffle by Ben"))
    text = make(shuffling).render_text(80, 24)
    assert "hand 3 · shuffling and dealing" in text.splitlines()[0]
    assert "Last hand (2):" in text and "Carla closed." in text and "Shuffling: Ben (4 of 9)" in text


def test_leaving_is_not_blamed_as_a_fault():
    left = V.Fault(0, "left", "Ana left the table")
    text = make(draw_view(phase=V.STOPPED, fault=left)).render_text(80, 24)
    assert "The table stopped: you left the table" in text and "Blamed" not in text
    cheat = V.Fault(1, "bad_signature", "a forged envelope")
    text = make(draw_view(phase=V.STOPPED, fault=cheat)).render_text(80, 24)
    assert "Blamed: Ben (bad_signature)" in text


def test_must_agree_only_once_seated_and_not_agreed():
    view = lobby()
    assert must_agree(view)
    assert not must_agree(view, agreed_here=True)
    assert not must_agree(dataclasses.replace(view, seats=()))  # seating not proposed yet
    agreed = tuple(dataclasses.replace(s, agreed=s.seat == 0) for s in view.seats)
    assert not must_agree(dataclasses.replace(view, seats=agreed))  # e.g. the host
    assert not must_agree(draw_view())
    s = make(dataclasses.replace(view, seats=agreed))
    assert "You agreed; waiting for the other seats." in s.render_text(80, 24)


def test_log_in_spanish_table_faces():
    view = draw_view(rules=SPANISH, events=(ev("discard", 0, cards=["7♦"]), ev("draw_discard", 1, cards=["K♠"])))
    text = make(view, "es").render_text(80, 24)
    assert "Descartas 7 oros" in text and "Ben coge rey espadas del descarte" in text


def test_the_table_logs_events_with_its_seats_names():
    """Table.log_event (the one the table's parts and net/session.py call) names the seats it
    knows, says "-" for one it does not, and drops a None seat."""
    from p2p_chinchon import table as tbl
    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.rng import SeededRng

    host = tbl.Table.create(Identity.generate(SeededRng("log-id")), SeededRng("log"), name="kitchen",
                            rules=make_rules("classic"), max_seats=3, addr="127.0.0.1:1")
    host.lobby.set_host_name("Ana")
    opened = host.view().events
    assert [e.kind for e in opened] == ["opened"] and opened[0].text == "table 'kitchen' opened"
    sat = host.events.event("seated", (1,), names=("Ben",), numbers=(2, 3))
    fault = host.events.event("fault", (None,), rule="timeout", detail="nobody answered")
    dropped = host.events.event("dropped", (7,), rule="bad_signature", detail="forged")
    assert (sat.names, fault.seats, fault.names, dropped.names) == (("Ben",), (), (), ("-",))
    view = host.view()
    assert view.events[-3:] == (sat, fault, dropped) and view.log_total == 4
    assert view.log[-3:] == ("Ben sat down (2/3)", "fault: seat None: timeout: nobody answered",
                             "dropped a frame (bad_signature, claimed seat 7): forged")
    assert say(fault) == "Fault by - (timeout): nobody answered"
