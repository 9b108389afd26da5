"""Issue 24, item 5: languages. French readers see court cards as V/D/R; "1 punto", not
"1 puntos"; a table's name is quoted in the Spanish and French log; ``play`` signs the
person's name, never the UI word for "you"."""

from __future__ import annotations

from test_ui_fakes import draw_view

from p2p_chinchon.commands.play import _own_name
from p2p_chinchon.engine import parse_cards
from p2p_chinchon.ui.i18n import LANGS, Translator
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
