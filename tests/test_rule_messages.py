"""Messages that say what a table can do: no wild-card cap the deck never reaches, no
seven-card run with two wild cards where a meld holds one, and counts in the singular."""

from __future__ import annotations

import pytest

from p2p_chinchon.cli import main
from p2p_chinchon.engine import PRESETS, make_rules
from p2p_chinchon.engine.words import counted
from p2p_chinchon.i18n import LANGS, Translator
from p2p_chinchon.ui.lobby import rules_in_words


def test_counted():
    assert [counted(n, "point") for n in (1, -1, 0, 2, -10)] == [
        "1 point", "-1 point", "0 points", "2 points", "-10 points"]
    assert counted(1, "unmatched card") == "1 unmatched card"


@pytest.mark.parametrize("preset,options,most,binds", [
    ("classic", {}, 0, False),
    ("online", {}, 1, False),  # one wild card in the deck: the cap of 8 says nothing
    ("classic", {"jokers": 2}, 4, False),  # two packs of two jokers
    ("classic", {"jokers": 2, "decks": 1}, 2, False),
    ("classic", {"jokers": 2, "max_wild_per_meld": 1}, 1, True),
    ("cardgames", {}, 1, True),
    ("fournier", {"deck": 52, "jokers": 2}, 4, False),
])
def test_most_wild_per_meld(preset, options, most, binds):
    rules = make_rules(preset, options)
    assert rules.most_wild_per_meld() == most and rules.wild_cap_binds() is binds


def _words(preset, options=None, lang="en"):
    return rules_in_words(make_rules(preset, options or {}), Translator(lang))


def test_no_cap_said_where_the_deck_cannot_reach_it():
    online = _words("online")
    assert "Any number of wild cards in a meld, with at least one real card." in online
    assert not any("At most" in w for w in online)
    assert "A seven-card run with a wild card scores -25." in online  # one wild card: no "two"
    fournier = _words("fournier", {"deck": 52, "jokers": 2})
    assert "Any number of wild cards in a meld, with at least one real card." in fournier
    assert "Any number of wild cards in a meld, with at least 2 real cards." in _words("classic", {"jokers": 2})
    capped = _words("classic", {"jokers": 2, "max_wild_per_meld": 1})
    assert any(w.startswith("At most 1 wild card") for w in capped)


def test_cardgames_never_scores_a_run_with_two_wild_cards():
    cardgames = _words("cardgames")
    assert "A seven-card run with a wild card scores -10." in cardgames
    assert not any("with two" in w for w in cardgames)
    two = _words("cardgames", {"max_wild_per_meld": 2})
    assert "A seven-card run with one wild card scores -10; with two, -10." in two


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_language_has_the_sentences(preset, lang):
    for options in ({}, {"jokers": 2}, {"jokers": 1, "min_real_per_meld": 1}):
        words = _words(preset, options, lang)
        assert not any(w.startswith(("max wild per meld:", "wild chinchon")) for w in words)


def test_melds_says_one_point(capsys):
    main(["melds", "6♦", "7♦", "J♦", "3♣", "3♥", "3♠", "A♥"])
    out = capsys.readouterr().out
    assert "(1 point)" in out and "points" not in out
    main(["melds", "6♦", "7♦", "J♦", "3♣", "3♥", "3♠", "2♥"])
    assert "(2 points)" in capsys.readouterr().out


def test_score_error_counts_in_the_singular(capsys):
    assert main(["score", "--closer", "6♦ 7♦ J♦ 3♣ 3♥ 3♠ 5♥", "--hand", "A♣ 2♣ 4♠ 5♠ 6♠ 7♠ Q♦"]) == 2
    err = capsys.readouterr().err
    assert "1 unmatched card, 5 points" in err and "card(s)" not in err
