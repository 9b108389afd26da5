"""Cards (names, parsing) and Rules (presets, options, wire, deck)."""

import pytest

from p2p_chinchon.engine import (
    JOKER,
    PRESETS,
    TEN,
    Card,
    CardError,
    Rules,
    RulesError,
    make_rules,
    parse_card,
    parse_cards,
)


@pytest.mark.parametrize(
    "text, card",
    [
        ("5♦", Card(5, 0)), ("5d", Card(5, 0)), ("5D", Card(5, 0)), ("A♠", Card(1, 2)),
        ("as", Card(1, 2)), ("K♣", Card(12, 3)), ("J♥", Card(10, 1)), ("Qs", Card(11, 2)),
        ("T♣", Card(TEN, 3)), ("10♣", Card(TEN, 3)), ("5-oros", Card(5, 0)),
        ("5 de oros", Card(5, 0)), ("sota-copas", Card(10, 1)), ("rey-espadas", Card(12, 2)),
        ("caballo-bastos", Card(11, 3)), ("1-bastos", Card(1, 3)), ("10-copas", Card(10, 1)),
        ("12 de oros", Card(12, 0)), ("JK", Card(JOKER, 0)), ("joker", Card(JOKER, 0)),
        ("comodín", Card(JOKER, 0)), ("comodin", Card(JOKER, 0)), (" 7♥\ufe0f ", Card(7, 1)),
    ],
)
def test_parse_card_notations(text, card):
    assert parse_card(text) == card


@pytest.mark.parametrize("text", ["", "5x", "0♦", "14♦", "11♦", "Z", "5-oro-s", "sota", "JK3", "♦"])
def test_parse_card_rejects(text):
    with pytest.raises(CardError) as err:
        parse_card(text)
    assert "\n" not in str(err.value)


def test_names_in_three_styles():
    c = Card(10, 2)
    assert (c.name("french"), c.name("spanish"), c.name("ascii")) == ("J♠", "sota-espadas", "Js")
    assert str(Card(7, 0)) == "7♦" and Card(7, 0).name("spanish") == "7-oros"
    assert Card(JOKER, 1).name("spanish") == "comodín" and str(Card(JOKER, 0)) == "JK"
    for card in PRESETS["classic"].deck(5) + make_rules("classic", {"jokers": 2}).deck(2):
        for style in ("french", "spanish", "ascii"):
            back = parse_card(card.name(style))
            assert back.same_face(card)
    with pytest.raises(ValueError):
        c.name("klingon")


def test_card_validation_and_order():
    with pytest.raises(CardError):
        Card(14, 0)
    with pytest.raises(CardError):
        Card(1, 4)
    with pytest.raises(CardError):
        Card(JOKER, 2)
    assert sorted([Card(3, 1), Card(1, 2), Card(3, 0)]) == [Card(1, 2), Card(3, 0), Card(3, 1)]
    assert len({Card(3, 1), Card(3, 1), Card(3, 1, 1)}) == 2


def test_parse_cards_duplicates_become_copies():
    cs = parse_cards("5♦ 5d, JK JK 4 de oros")
    assert cs[0] == Card(5, 0, 0) and cs[1] == Card(5, 0, 1)
    assert cs[2] == Card(JOKER, 0) and cs[3] == Card(JOKER, 1)
    assert len(cs) == 5 and len(set(cs)) == 5
    with pytest.raises(CardError):
        parse_cards("5♦ 5♦ 5♦")


def test_presets_and_decks():
    assert set(PRESETS) == {"classic", "online", "fournier", "cardgames"}
    classic = PRESETS["classic"]
    d4 = classic.deck(4)
    assert len(d4) == 40 and len(set(d4)) == 40
    assert [c.rank for c in d4[:10]] == [1, 2, 3, 4, 5, 6, 7, 10, 11, 12]
    d5 = classic.deck(5)  # 000: two packs for 5-8 players
    assert len(d5) == 80 and len(set(d5)) == 80 and d5[:40] == d4
    assert len(PRESETS["cardgames"].deck(4)) == 42
    assert len(make_rules("fournier", {"deck": 48}).deck(3)) == 48
    assert len(make_rules("fournier", {"deck": 52, "jokers": 2}).deck(3)) == 54
    with pytest.raises(RulesError):
        classic.deck(9)
    assert len(PRESETS["online"].deck(5)) == 40  # one pack deals five: 001 plays one deck
    with pytest.raises(RulesError):
        PRESETS["online"].deck(6)
    with pytest.raises(RulesError):  # one 40-card pack cannot deal 6 hands + upcard + stock
        make_rules("fournier", {"decks": 1}).deck(6)


def test_values():
    classic, r48 = PRESETS["classic"], make_rules("classic", {"deck": 48})
    assert [classic.value(Card(r, 0)) for r in (1, 7, 10, 11, 12)] == [1, 7, 10, 10, 10]
    # 000 Variants: in the 48-card deck J, Q, K count 10, 11, 12.
    assert [r48.value(Card(r, 0)) for r in (8, 9, 10, 11, 12)] == [8, 9, 10, 11, 12]
    online = PRESETS["online"]
    assert online.value(Card(1, 0)) == 25 and online.is_wild(Card(1, 0))  # 001: 1 of oros
    assert online.value(Card(1, 1)) == 1 and not online.is_wild(Card(1, 1))
    assert PRESETS["cardgames"].value(Card(JOKER, 1)) == 25
    f52 = make_rules("fournier", {"deck": 52, "jokers": 2})
    assert f52.value(Card(TEN, 0)) == 10 and f52.value(Card(12, 0)) == 10  # 002: figuras 10


def test_make_rules_options_and_errors():
    r = make_rules("classic", {"limit": "70", "jokers": "2", "first_round_ban": "no",
                               "wild_card": "1-oros", "deck": "48"})
    assert r.limit == 70 and r.jokers == 2 and r.first_round_ban is False
    assert r.wild_card == "Ad" and r.deck_size == 48
    for bad in ({"nonsense": 1}, {"limit": "many"}, {"deck": 41}, {"jokers": 3},
                {"lay_off": "sometimes"}, {"wild_card": "JK"}, {"first_round_ban": "perhaps"},
                {"preset": "online"}):
        with pytest.raises(RulesError):
            make_rules("classic", bad)
    with pytest.raises(RulesError):
        make_rules("poker")


def test_wire_roundtrip_and_strictness():
    for r in PRESETS.values():
        w = r.to_wire()
        assert all(type(v) in (int, bool, str) for v in w.values())
        assert Rules.from_wire(w) == r
    w = PRESETS["classic"].to_wire()
    with pytest.raises(RulesError):
        Rules.from_wire({**w, "extra": 1})
    missing = dict(w)
    del missing["limit"]
    with pytest.raises(RulesError):
        Rules.from_wire(missing)
    with pytest.raises(RulesError):
        Rules.from_wire({**w, "limit": "100"})
    with pytest.raises(RulesError):
        Rules.from_wire({**w, "first_round_ban": 1})
    with pytest.raises(RulesError):
        Rules.from_wire({**w, "limit": True})
    with pytest.raises(RulesError):
        Rules.from_wire([1, 2])  # type: ignore[arg-type]  # not a map: the check under test
