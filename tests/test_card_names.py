"""Card names read as printed: every name the product prints (the commands' ``--style`` and
the table's faces) parses back to the same card, on every deck."""

from __future__ import annotations

import itertools
import json
from collections import Counter

from hypothesis import given, settings, strategies as st

from p2p_chinchon.cli import main
from p2p_chinchon.engine import TEN, Card, Rules, check_hands, make_rules
from p2p_chinchon.engine.options import output_style, parse_hands
from p2p_chinchon.ui.render import Faces, card_text, parse_card_text

STYLES = ("french", "spanish", "ascii")


def _tables() -> list[tuple[Rules, int]]:
    """(rules, seats) for every deck: 40/48/52 cards, French and Spanish names, 0-2 jokers per
    pack, one pack and two."""
    out = []
    for preset, size, suits, jokers in itertools.product(
            ("classic", "fournier"), (40, 48, 52), ("french", "spanish"), (0, 1, 2)):
        rules = make_rules(preset, {"deck": size, "suits": suits, "jokers": jokers})
        for seats in sorted({rules.min_players, rules.max_players}):
            out.append((rules, seats))
    return out


TABLES = _tables()


def _face(card: Card) -> tuple[int, int]:
    return (0, 0) if card.is_joker else (card.rank, card.suit)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(TABLES), st.sampled_from(STYLES), st.data())
def test_printed_hand_parses_back(table, style, data):
    rules, seats = table
    deck = rules.deck(seats)
    hand = data.draw(st.lists(st.sampled_from(deck), min_size=1, max_size=8, unique=True))
    names = [c.name(output_style(rules, style)) for c in hand]
    (back,) = parse_hands([" ".join(names)], rules)
    assert Counter(map(_face, back)) == Counter(map(_face, hand)), (names, back)
    check_hands(rules, [back], seats)  # the read cards lie on that table


def test_every_card_of_every_deck_in_every_style():
    for rules, seats in TABLES:
        for style in STYLES:
            for card in rules.deck(seats):
                text = card.name(output_style(rules, style))
                (back,) = parse_hands([text], rules)
                assert back[0].same_face(card), (rules.deck_size, rules.suits, style, text)


def test_pip_ten_on_a_spanish_52_card_table(capsys):
    # 002's French pack on the fournier preset: the pip ten prints as 10♦ and reads as the ten
    main(["melds", "--rules", "fournier", "--option", "deck=52", "--option", "jokers=2",
          "--json", "--style", "french", "8♦ 9♦ 10♦ 5♠ 5♣ 5♥ A♣"])
    d = json.loads(capsys.readouterr().out)
    assert d["can_close"] and d["points"] == 1 and ["8♦", "9♦", "10♦"] in d["melds"]
    rules = make_rules("fournier", {"deck": 52})
    ranks = [parse_hands([t], rules)[0][0].rank for t in ("10♦", "10d", "To", "diez-oros", "10o", "10-oros")]
    assert ranks == [TEN, TEN, TEN, TEN, 10, 10]


def test_spanish_ascii_output_reads_back(capsys):
    argv = ["melds", "--rules", "online", "--style", "ascii"]
    main([*argv, "--json", "1-bastos 2-bastos 3-bastos 5-oros sota-copas caballo-espadas"])
    d = json.loads(capsys.readouterr().out)
    assert d["melds"] == [["1b", "2b", "3b"]] and d["deadwood"] == ["5o", "Sc", "Ce"]
    printed = " ".join(d["melds"][0] + d["deadwood"])
    main([*argv, "--json", printed])
    assert json.loads(capsys.readouterr().out) == d


def test_table_faces_read_back_for_every_deck_and_option():
    for rules, seats in TABLES:
        for deck, uni, color, courts, fixed, compact in itertools.product(
                ("french", "spanish"), (True, False), (True, False), ("JQK", "VDR"),
                (True, False), (True, False)):
            faces = Faces(deck, uni, color, courts, fixed)
            for card in rules.deck(seats):
                text = card_text(card, faces, compact)
                rank, suit = parse_card_text(text, faces.deck)
                assert rank == card.rank and suit in (card.suit, None), (faces, compact, text)
                assert (suit is None) == card.is_joker
