"""Card faces and typed card names."""

from __future__ import annotations

import pytest

from p2p_chinchon.engine import PRESETS, Card, parse_cards
from p2p_chinchon.ui.render import (
    CardTextError,
    Faces,
    card_style,
    card_text,
    deck_style,
    detect_charset,
    find_card,
    parse_card_text,
    resolve_faces,
)

FR = Faces("french", True, True)
FR_ASCII = Faces("french", False, False)
ES = Faces("spanish", True, True)


@pytest.mark.parametrize("card,fr,ascii_,es,es_compact", [
    (Card(7, 0), "7♦", "7d", "7 oros", "7o"),
    (Card(11, 2), "Q♠", "Qs", "caballo espadas", "Ce"),
    (Card(10, 2), "J♠", "Js", "sota espadas", "Se"),
    (Card(12, 3), "K♣", "Kc", "rey bastos", "Rb"),
    (Card(1, 1), "A♥", "Ah", "1 copas", "1c"),
    (Card(13, 1), "10♥", "10h", "diez copas", "Tc"),
    (Card(0, 1), "JK", "JK", "comodín", "*"),
])
def test_faces(card, fr, ascii_, es, es_compact):
    assert card_text(card, FR) == fr
    assert card_text(card, FR_ASCII) == ascii_
    assert card_text(card, ES) == es
    assert card_text(card, ES, compact=True) == es_compact


def test_colours():
    assert card_style(Card(7, 0), FR) == card_style(Card(7, 1), FR) == "class:card.red"
    assert card_style(Card(7, 2), FR) == "class:card.black"
    assert card_style(Card(7, 3), ES) == "class:card.bastos"
    assert card_style(Card(7, 0), FR_ASCII) == ""


@pytest.mark.parametrize("text,deck,expected", [
    ("7d", "french", (7, 0)), ("7♦", "french", (7, 0)), ("7D", "french", (7, 0)),
    ("Qs", "french", (11, 2)), ("K♠", "french", (12, 2)), ("Ad", "french", (1, 0)),
    ("1d", "french", (1, 0)), ("10h", "french", (13, 1)), ("Th", "french", (13, 1)),
    ("Jc", "french", (10, 3)), ("7c", "french", (7, 3)),
    ("7 oros", "spanish", (7, 0)), ("7-oros", "spanish", (7, 0)),
    ("7 de oros", "spanish", (7, 0)), ("sota esp.", "spanish", (10, 2)),
    ("Se", "spanish", (10, 2)), ("rey bast.", "spanish", (12, 3)),
    ("12 bastos", "spanish", (12, 3)), ("10 copas", "spanish", (10, 1)),
    ("7c", "spanish", (7, 1)), ("caballo de copas", "spanish", (11, 1)),
    ("JK", "french", (0, None)), ("comodín", "spanish", (0, None)),
])
def test_parse_card_text(text, deck, expected):
    assert parse_card_text(text, deck) == expected


@pytest.mark.parametrize("text", ["", "7", "7x", "zz", "K", "oros", "77d"])
def test_parse_card_text_rejects(text):
    with pytest.raises(CardTextError):
        parse_card_text(text)


def test_faces_round_trip_through_parsing():
    for rules in PRESETS.values():
        deck = deck_style(rules)
        for faces in (Faces(deck, True, True), Faces(deck, False, False)):
            for card in rules.deck(4):
                for compact in (False, True):
                    text = card_text(card, faces, compact)
                    rank, suit = parse_card_text(text, deck)
                    assert rank == card.rank and suit in (card.suit, None), (text, card)


def test_find_card_in_hand_and_copies():
    hand = parse_cards("7d 7d 3h")  # two packs: two 7♦
    assert find_card("7d", hand) == hand[0]
    assert find_card("3♥", hand) == Card(3, 1)
    with pytest.raises(CardTextError, match="not in your hand"):
        find_card("Ks", hand)


def test_deck_style_and_charset():
    assert deck_style(PRESETS["classic"]) == "french"
    assert deck_style(PRESETS["fournier"]) == "spanish"
    assert deck_style(None) == "french"
    assert detect_charset("auto", encoding="utf-8", env={"TERM": "xterm"}) == (True, True)
    assert detect_charset("auto", encoding="utf-8",
                          env={"TERM": "xterm", "NO_COLOR": "1"}) == (True, False)
    assert detect_charset("auto", encoding="ascii", env={"TERM": "xterm"}) == (False, False)
    assert detect_charset("auto", encoding="utf-8", env={"TERM": "dumb"}) == (False, False)
    assert detect_charset("ascii") == (False, False)
    assert detect_charset("mono") == (True, False)
    with pytest.raises(ValueError, match="charset"):
        detect_charset("ebcdic")
    assert resolve_faces(PRESETS["online"], "unicode") == Faces("spanish", True, True)
