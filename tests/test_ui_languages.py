"""Languages. French readers see court cards as V/D/R; "1 punto", not
"1 puntos"; a table's name is quoted in the Spanish and French log; ``play`` signs the
person's name, never the UI word for "you"."""

from __future__ import annotations

from typing import Any

import pytest

from harness.ui_fakes import draw_view
from p2p_chinchon import view as V
from p2p_chinchon.commands.play import _own_name
from p2p_chinchon.engine import parse_cards
from p2p_chinchon.i18n import LANGS, Translator
from p2p_chinchon.ui.render import Faces
from p2p_chinchon.ui.screen import TableScreen


def _screen(lang: str) -> str:
    s = TableScreen(Translator(lang), Faces())
    s.set_view(draw_view(hand=tuple(parse_cards("J♦ Q♦ K♦ A♥ 2♥ 3♥ 7♣"))))
    return s.render_text(80, 24)


def test_french_courts_are_valet_dame_roi():
    fr = _screen("fr")
    assert "V♦" in fr and "D♦" in fr and "R♦" in fr and "K♦" not in fr and "Q♦" not in fr
    en = _screen("en")
    assert "J♦" in en and "Q♦" in en and "K♦" in en


NUMBERS = {"n", "m", "k", "s", "p", "total", "points", "wins", "seconds", "limit", "lo", "hi", "need", "have",
           "taken", "max"}  # the fields that hold a count
PLURAL_NOUNS = {
    "en": r"points|cards|games|times|jokers|wild cards|rounds|seconds|re-shuffles|discards",
    "es": r"puntos|cartas|partidas|veces|comodines|rondas|segundos|rebarajadas|descartes|sentados|ganadas",
    "fr": r"points|cartes|parties|jokers|cartes libres|tours|secondes|remélanges|autres|gagnées",
}


@pytest.mark.parametrize("lang", LANGS)
def test_no_message_puts_a_plural_after_one(lang):
    """Every message, every number in it set to 1 (the others 2): never "1 points", "1 cards",
    "1 partidas"; and 2 keeps the plural (French says 0 in the singular too)."""
    import re

    from p2p_chinchon.i18n import EN, fields_of

    tr = Translator(lang)
    after_one = re.compile(rf"(?<![\d.,])[-−]?[01] (?:{PLURAL_NOUNS[lang]})\b" if lang == "fr"
                           else rf"(?<![\d.,])[-−]?1 (?:{PLURAL_NOUNS[lang]})\b")
    checked = 0
    for key in set(EN) - {"rule_close_many"}:  # said for two cards or more (one: rule_close_one)
        names = fields_of(EN[key])
        for count in names & NUMBERS:
            for one in (1, -1, 0) if lang == "fr" else (1, -1):
                text = tr(key, **{name: one if name == count else 2 for name in names})
                assert not after_one.search(text), (lang, key, count, text)
                checked += 1
    assert checked > 100
    assert tr("n_cards", n=2) == {"en": "2 cards", "es": "2 cartas", "fr": "2 cartes"}[lang]
    assert tr("n_cards", n=1) == {"en": "1 card", "es": "1 carta", "fr": "1 carte"}[lang]


def test_a_plural_follows_each_language_and_nests_for_a_second_number():
    assert Translator("es")("sheet_near", name="Ana", n=1, limit=50).startswith("A Ana le falta 1 punto para")
    assert Translator("es")("sheet_near", name="Ana", n=3, limit=50).startswith("A Ana le faltan 3 puntos para")
    assert Translator("fr")("n_cards", n=0) == "0 carte" and Translator("en")("n_cards", n=0) == "0 cards"
    assert Translator("es")("exit_tally_row", name="Ana", wins=1, points=12) == "Ana 1 ganada (12 puntos)"
    assert Translator("fr")("exit_tally_row", name="Ana", wins=2, points=1) == "Ana 2 gagnées (1 point)"


def test_one_point_is_singular():
    assert Translator("es")("hint_close", card="3♦", points=1).endswith("(1 punto)")
    assert Translator("en")("hint_close", card="3♦", points=1).endswith("(1 point)")
    assert Translator("fr")("hint_close", card="3♦", points=1).endswith("(1 point)")
    assert Translator("es")("hint_close", card="3♦", points=11).endswith("(11 puntos)")
    assert Translator("es")("rule_limit", n=100) == "Con más de 100 puntos quedas fuera."


def test_table_name_is_quoted_in_the_log():
    assert Translator("es")("log_opened", table="Ana's table") == "Mesa «Ana's table» abierta"
    assert Translator("fr")("log_opened", table="Ana's table") == "Table « Ana's table » ouverte"


def test_play_signs_a_name_not_the_word_for_you(monkeypatch):
    import getpass

    monkeypatch.setattr(getpass, "getuser", lambda: "root")
    assert _own_name() == "Ana"
    monkeypatch.setattr(getpass, "getuser", lambda: "bruno")
    assert _own_name() == "Bruno"
    for lang in LANGS:
        assert _own_name() != Translator(lang)("you_name")


def test_help_tells_the_clock_and_ctrl_l_and_fits_80x24():
    """? mentions the turn clock and Ctrl-L, in every language."""
    from harness.ui_fakes import draw_view as view

    for lang in LANGS:
        s = TableScreen(Translator(lang), Faces())
        s.set_view(view())
        s.key("?")
        text = s.render_text(80, 24)
        assert "Ctrl-L" in text and "0:42" in text, text
        assert all(len(row) <= 80 for row in text.splitlines())


def test_a_new_hand_is_grouped_again_after_a_custom_order():
    """A hand reordered with < or > does not carry into the next hand."""
    import dataclasses

    from harness.ui_fakes import discard_view

    s = TableScreen(Translator("en"), Faces())
    s.set_view(discard_view())
    s.key("1")
    s.key("escape")
    s.key(">")
    assert s.order is not None
    s.set_view(dataclasses.replace(draw_view(), hand_no=2))
    assert s.order is None


def test_help_lists_every_benchmark():
    from p2p_chinchon.cli import COMMANDS

    for name in ("bots", "soak"):
        assert name in COMMANDS["bench"]


def test_what_enter_discards_is_never_cut_at_80_columns():
    """"Enter discards X" is never cut off at 80 columns, in every language."""
    from harness.ui_fakes import DRAWN, discard_view

    for lang, word in (("en", "Enter discards"), ("es", "Intro descarta"), ("fr", "Entrée défausse")):
        s = TableScreen(Translator(lang), Faces())
        s.set_view(discard_view(close_options=((DRAWN, 3, False),), first_round=False))
        s.key("8")
        row = next(r for r in s.render_text(80, 24).splitlines() if word in r)
        assert row.endswith(word + " 3♥"), row


def test_equal_cards_get_one_suggestion():
    """Two equal cards that leave the same deadwood get one suggestion: the hint and
    "Enter discards" name the same, picked card."""
    from harness.ui_fakes import discard_view

    hand = tuple(parse_cards("5d 6d 7d Qs Qh Qc Kd Ks"))  # K♦ or K♠: either leaves 10
    s = TableScreen(Translator("en"), Faces())
    s.set_view(discard_view(hand=hand))
    for i in (7, 8):
        s.key(str(i))
        s.key("escape")
        text = s.render_text(100, 24)
        row = next(r for r in text.splitlines() if r.startswith("Your hand"))
        face = row.split("Enter discards ")[1]
        assert f"after discarding {face}" in row, row


def test_the_wild_card_is_named_as_its_deck_names_it():
    """The wild card is named as its deck names it: "el 1 de oros", never "Ad"."""
    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.ui.lobby import rules_in_words

    said = rules_in_words(make_rules("online"), Translator("es"))
    assert "El 1 de oros hace de comodín." in said, said
    said = rules_in_words(make_rules("classic", {"wild_card": "Ad"}), Translator("en"))
    assert "A♦ is wild." in said, said


def test_spanish_faces_are_offered_for_a_french_deck():
    """--lang es at the default (French-deck) preset shows French suits;
    --faces spanish shows every card with Spanish faces (♦ oros, ♥ copas, ♠ espadas,
    ♣ bastos; J Q K sota, caballo, rey)."""
    from p2p_chinchon.cli import build_parser
    from p2p_chinchon.commands._common import chosen_deck
    from p2p_chinchon.ui.render import resolve_faces

    args = build_parser(["play"]).parse_args(["play", "--faces", "spanish", "--lang", "es"])
    assert chosen_deck(args) == "spanish"
    assert chosen_deck(build_parser(["play"]).parse_args(["play"])) is None
    s = TableScreen(Translator("es"), resolve_faces(None, "unicode", deck="spanish"))
    s.set_view(draw_view(hand=tuple(parse_cards("J♦ Q♥ K♠ A♣ 2♥ 3♥ 7♣"))))  # the classic rules
    text = s.render_text(100, 24)
    assert "sota oros" in text and "caballo copas" in text and "rey espadas" in text, text
    assert "♦" not in text.split("Tu mano")[1], text


def test_french_readers_type_valet_dame_roi():
    """With French faces a card is typed as it is shown, V/D/R for J/Q/K
    (the full screen and line mode's card reader), and the engine's notation reads them too."""
    from harness.ui_fakes import discard_view
    from p2p_chinchon.engine import Card, parse_card
    from p2p_chinchon.ui.render import parse_card_text

    hand = tuple(parse_cards("J♦ Q♦ K♦ A♥ 2♥ 3♥ 7♣ Q♥"))
    # (a lowercase d is the key that takes the discard: the dame is typed D)
    for typed, want in (("vd", "J♦"), ("Dh", "Q♥"), ("Rd", "K♦"), ("rd", "K♦"), ("Dd", "Q♦")):
        s = TableScreen(Translator("fr"), Faces())
        sent: list[Any] = []
        s.send = sent.append
        s.set_view(discard_view(hand=hand))
        for k in typed:
            s.key(k)
        s.key("enter")
        assert sent and sent[-1] == V.Discard(parse_cards(want)[0]), (typed, sent)
    assert parse_card_text("Vd") == (10, 0) and parse_card_text("R♠") == (12, 2)
    assert parse_card("Vd") == Card(10, 0) and parse_card("D♥") == Card(11, 1) and parse_card("rs") == Card(12, 2)
    assert parse_card("5c", "spanish") == Card(5, 1) and parse_card("5c") == Card(5, 3)
    assert parse_card("1o", "spanish") == Card(1, 0) and parse_card("10o", "spanish") == Card(10, 0)
    assert parse_card("Cb", "spanish") == Card(11, 3)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("cols", [80, 60])
def test_the_key_line_keeps_help_and_quit_at_every_width(lang, cols):
    """At 80 columns (and narrower) the key line of every step keeps "? help" and "q quit" in
    every language: keys that do not fit are left out, the step's own first and ? / q never."""
    from harness.ui_fakes import discard_view, lobby, waiting_view

    tr = Translator(lang)
    helps, quits = tr("keys_idle").split(" · ")
    for view in (draw_view(), discard_view(), waiting_view(), lobby()):
        s = TableScreen(tr, Faces())
        s.set_view(view)
        last = s.render_text(cols, 24).splitlines()[-1]
        assert helps in last and quits in last and len(last) <= cols, (view.step, last)
        assert last.split(" · ")[0] == s.keybar()[0][1].split(" · ")[0]


def test_a_spanish_deck_names_its_courts_sota_caballo_rey_in_every_language():
    """`rules fournier` (a Spanish deck) names the courts as its cards show them, in English and
    French too; a French deck says J, Q, K (V, D, R in French) in Spanish too."""
    from p2p_chinchon.engine.options import rules_from_args
    from p2p_chinchon.ui.lobby import rules_in_words

    for lang in LANGS:
        spanish = " ".join(rules_in_words(rules_from_args("fournier", []), Translator(lang)))
        assert "sota" in spanish.lower() and "J, Q" not in spanish and "V, D" not in spanish, (lang, spanish)
        french = " ".join(rules_in_words(rules_from_args("classic", []), Translator(lang)))
        assert "sota" not in french.lower(), (lang, french)
