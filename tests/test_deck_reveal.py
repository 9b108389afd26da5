"""Decryption shares with DLEQ proofs: wrong shares, shares for another slot, bad encodings."""

from __future__ import annotations

from typing import Any

import pytest

from p2p_chinchon.deck import (
    GROUP,
    Ciphertext,
    Context,
    DeckError,
    KeyPair,
    L,
    card_points,
    decrypt_deck,
    decrypt_with_secrets,
    decryption_share,
    decryption_shares,
    initial_deck,
    joint_key,
    open_card,
    own_share,
    remask,
    verify_decryption_share,
    verify_decryption_shares,
)
from p2p_chinchon.rng import SeededRng
from ristretto_cases import INVALID

GAME = b"game-r"


@pytest.fixture
def table():
    rng = SeededRng(21)
    kps = [KeyPair.generate(rng) for _ in range(3)]
    y = joint_key([kp.public for kp in kps])
    deck = [remask(ct, GROUP.random_scalar(rng), y) for ct in initial_deck(10)]
    ctxs = [Context(GAME, 4, s) for s in range(3)]
    return rng, kps, y, deck, ctxs


def test_private_reveal_needs_every_share(table):
    rng, kps, y, deck, ctxs = table
    slot = 6
    shares = [decryption_share(ctxs[s], kps[s], deck[slot], slot, rng) for s in (1, 2)]
    assert all(len(s) == 96 for s in shares)
    ds = [verify_decryption_share(ctxs[s], kps[s].public, deck[slot], slot, sh)
          for s, sh in zip((1, 2), shares, strict=True)]
    pts = card_points(10)
    with pytest.raises(DeckError) as ei:  # the others' shares alone open nothing
        open_card(deck[slot], ds, pts)
    assert ei.value.step == "open"
    assert open_card(deck[slot], ds + [own_share(kps[0], deck[slot])], pts) == slot
    assert decrypt_with_secrets(deck[slot], [kp.secret_bytes() for kp in kps], pts) == slot


def test_wrong_decryption_share_is_caught(table):
    rng, kps, y, deck, ctxs = table
    slot = 2
    # Seat 1 answers with a share made with some other key (its proof is valid for that key).
    other = KeyPair.generate(rng)
    wrong = decryption_share(ctxs[1], other, deck[slot], slot, rng)
    # Or shifts d so that the drawer opens a different point.
    good = decryption_share(ctxs[1], kps[1], deck[slot], slot, rng)
    shifted = GROUP.add(good[:32], GROUP.generator) + good[32:]
    for bad in (wrong, shifted):
        with pytest.raises(DeckError, match="DLEQ") as ei:
            verify_decryption_share(ctxs[1], kps[1].public, deck[slot], slot, bad)
        assert (ei.value.seat, ei.value.step) == (1, "share")


def test_share_with_a_proof_for_another_slot_is_caught(table):
    rng, kps, y, deck, ctxs = table
    share = decryption_share(ctxs[2], kps[2], deck[3], 3, rng)
    with pytest.raises(DeckError, match="slot 4") as ei:
        verify_decryption_share(ctxs[2], kps[2].public, deck[3], 4, share)
    assert (ei.value.seat, ei.value.step) == (2, "share")
    # and for another ciphertext, hand or seat
    for c, ct in [(ctxs[2], deck[4]), (Context(GAME, 5, 2), deck[3]),
                  (Context(b"g2", 4, 2), deck[3])]:
        with pytest.raises(DeckError) as ei:
            verify_decryption_share(c, kps[2].public, ct, 3, share)
        assert ei.value.seat == 2
    with pytest.raises(DeckError) as ei:  # seat 1 replays seat 2's share as its own
        verify_decryption_share(ctxs[1], kps[1].public, deck[3], 3, share)
    assert ei.value.seat == 1


@pytest.mark.parametrize("part", ["e", "z"])
def test_share_scalars_at_or_above_l_are_rejected(table, part):
    rng, kps, y, deck, ctxs = table
    share = decryption_share(ctxs[0], kps[0], deck[1], 1, rng)
    lo, hi = (32, 64) if part == "e" else (64, 96)
    v = int.from_bytes(share[lo:hi], "little") + L
    bad = share[:lo] + v.to_bytes(32, "little") + share[hi:]
    with pytest.raises(DeckError, match=">= L") as ei:
        verify_decryption_share(ctxs[0], kps[0].public, deck[1], 1, bad)
    assert (ei.value.seat, ei.value.step) == (0, "share")


@pytest.mark.parametrize("d", INVALID)
def test_share_with_invalid_point_is_rejected(table, d):
    rng, kps, y, deck, ctxs = table
    share = decryption_share(ctxs[0], kps[0], deck[1], 1, rng)
    with pytest.raises(DeckError, match="invalid point") as ei:
        verify_decryption_share(ctxs[0], kps[0].public, deck[1], 1, d + share[32:])
    assert ei.value.seat == 0


@pytest.mark.parametrize("pos", [0, 17, 31, 32, 50, 63, 64, 80, 95])
def test_tampered_share_byte_is_caught(table, pos):
    rng, kps, y, deck, ctxs = table
    share = bytearray(decryption_share(ctxs[0], kps[0], deck[1], 1, rng))
    share[pos] ^= 0x02
    with pytest.raises(DeckError) as ei:
        verify_decryption_share(ctxs[0], kps[0].public, deck[1], 1, bytes(share))
    assert (ei.value.seat, ei.value.step) == (0, "share")


def test_malformed_share_inputs(table):
    rng, kps, y, deck, ctxs = table
    share = decryption_share(ctxs[0], kps[0], deck[1], 1, rng)
    bads: tuple[Any, ...] = (share[:95], share + b"\x00", None)  # None too: the check under test
    for bad in bads:
        with pytest.raises(DeckError, match="96 bytes"):
            verify_decryption_share(ctxs[0], kps[0].public, deck[1], 1, bad)
    with pytest.raises(ValueError):
        decryption_share(ctxs[0], kps[0], deck[1], -1, rng)
    with pytest.raises(DeckError, match="unmasked"):  # the public starting deck
        decryption_share(ctxs[0], kps[0], initial_deck(3)[0], 0, rng)


def test_batch_helpers(table):
    rng, kps, y, deck, ctxs = table
    items = [(i, deck[i]) for i in (0, 5, 9)]
    shares = decryption_shares(ctxs[1], kps[1], items, rng)
    ds = verify_decryption_shares(ctxs[1], kps[1].public, items, shares)
    assert ds == [own_share(kps[1], ct) for _, ct in items]
    with pytest.raises(DeckError) as ei:
        verify_decryption_shares(ctxs[1], kps[1].public, items, shares[::-1])
    assert ei.value.seat == 1
    with pytest.raises(DeckError):
        verify_decryption_shares(ctxs[1], kps[1].public, items, shares[:2])


def test_opening_a_non_card_and_duplicate_slots(table):
    rng, kps, y, deck, ctxs = table
    secrets = [kp.secret_bytes() for kp in kps]
    pts = card_points(10)
    joker = remask(Ciphertext(GROUP.identity, GROUP.hash_to_point(b"joker")), 5, y)
    with pytest.raises(DeckError, match="not a card") as ei:
        decrypt_with_secrets(joker, secrets, pts)
    assert ei.value.step == "open"
    with pytest.raises(DeckError, match="slot 1 holds no card"):
        decrypt_deck([deck[0], joker], secrets, pts)
    with pytest.raises(DeckError, match="two slots"):
        decrypt_deck([deck[0], remask(deck[0], 9, y)], secrets, pts)
    with pytest.raises(DeckError):
        decrypt_with_secrets(deck[0], secrets[:2] + [b"\xff" * 32], pts)
    with pytest.raises(DeckError):
        open_card(deck[0], [b"short"], pts)
    assert decrypt_deck(deck, secrets, pts) == list(range(10))
