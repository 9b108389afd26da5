"""Every deck the rules build can be played: two packs of 48 or 52 cards with their jokers (up
to 108 cards) travel in a ``shuffle`` envelope with either proof system's largest proof, and
every preset opens at every player count its range names."""

from __future__ import annotations

import itertools

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2p_chinchon import wire
from p2p_chinchon.deck.tw import tw_proof_length
from p2p_chinchon.engine import PRESETS, make_rules
from p2p_chinchon.table.lobby import deck_too_big

BIGGEST = make_rules("classic", {"deck": 52, "jokers": 2, "decks": 2})


def test_the_wire_carries_the_largest_deck_the_rules_build():
    n = len(BIGGEST.deck(8))
    assert n == 108 == wire.MAX_CARDS
    worst_cut_and_choose = 32 + 128 * 33 * n  # k = 128 (the wire's most), every challenge bit 1
    for proof in (worst_cut_and_choose, tw_proof_length(n)):
        assert proof <= wire.MAX_PROOF_BYTES
        env = wire.make_envelope(
            Ed25519PrivateKey.generate(), game=bytes(16), seq=9, seat=7, prev=bytes(32),
            kind="shuffle", body={"hand": 65535, "round": 7, "deck": bytes(64 * n), "proof": bytes(proof)})
        assert len(env.encode()) <= wire.MAX_FRAME
        assert wire.decode_envelope(env.encode()).body["deck"] == bytes(64 * n)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_opens_at_every_player_count(preset):
    for deck, jokers, decks in itertools.product((40, 48, 52), (0, 1, 2), (0, 1, 2)):
        rules = make_rules(preset, {"deck": deck, "jokers": jokers, "decks": decks})
        for seats in range(rules.min_players, rules.max_players + 1):
            try:
                n = len(rules.deck(seats))
            except ValueError:  # one pack too small for so many hands: the rules refuse it
                continue
            assert deck_too_big(rules, seats) is None, (preset, deck, jokers, decks, seats, n)


def test_the_issue_tables():
    # cardgames at 5-8 (two packs with jokers: 84 cards), fournier deck=48 at 6, classic deck=52
    # with jokers at 8 (108)
    assert len(PRESETS["cardgames"].deck(5)) == 84 and deck_too_big(PRESETS["cardgames"], 8) is None
    assert deck_too_big(make_rules("fournier", {"deck": 48}), 6) is None
    assert deck_too_big(BIGGEST, 8) is None
