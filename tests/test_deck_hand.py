"""Whole hands through the deck API: 4 seats x 40 cards end to end, and property tests that
honest runs always verify and deal every card exactly once."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from p2p_chinchon.cli import main as cli_main
from p2p_chinchon.deck import (
    Context,
    DeckError,
    KeyPair,
    card_points,
    decode_deck,
    decrypt_deck,
    decryption_share,
    encode_deck,
    initial_deck,
    joint_key,
    make_key_share,
    open_card,
    own_share,
    prepare_shuffle,
    shuffle,
    verify_decryption_share,
    verify_key_share,
    verify_secret,
    verify_shuffle,
)
from p2p_chinchon.rng import SeededRng

GAME = b"hand-test"


def key_setup(seats, rng, hand=1):
    ctx = [Context(GAME, hand, s) for s in range(seats)]
    kps = [KeyPair.generate(rng) for _ in range(seats)]
    commits = [kp.commitment(c) for kp, c in zip(kps, ctx, strict=True)]  # published first
    shares = [make_key_share(c, kp, rng) for kp, c in zip(kps, ctx, strict=True)]
    joints = set()
    for v in range(seats):  # every seat checks every other seat's key share
        publics = [kps[v].public if s == v else
                   verify_key_share(ctx[s], shares[s], commits[s], kps[s].nonce)
                   for s in range(seats)]
        joints.add(joint_key(publics))
    assert len(joints) == 1
    return ctx, kps, joints.pop()


def shuffle_chain(ctx, kps, y, deck, k, rng, rnd=0, preps=None):
    """Seats shuffle in order; every other seat decodes and verifies each proof."""
    seats, n = len(kps), len(deck)
    for s in range(seats):
        out, proof = shuffle(ctx[s], y, deck, rng, k, rnd,
                             prep=preps[s] if preps else None)
        wire = encode_deck(out)
        for v in range(seats):
            if v != s:
                verify_shuffle(ctx[s], y, deck, decode_deck(wire, n), proof, k, rnd)
        deck = decode_deck(wire, n)
    return deck


def reveal_privately(ctx, kps, deck, slot, owner, rng):
    """Every other seat publishes its share; all seats verify; the owner opens the slot."""
    seats = len(kps)
    shares = {s: decryption_share(ctx[s], kps[s], deck[slot], slot, rng)
              for s in range(seats) if s != owner}
    ds = {}
    for v in range(seats):
        for s, sh in shares.items():
            if s != v:
                ds[s] = verify_decryption_share(ctx[s], kps[s].public, deck[slot], slot, sh)
    return shares, ds


def test_full_hand_4_seats_40_cards():
    rng = SeededRng(2024)
    seats, n, k = 4, 40, 16  # k = 64 is covered in test_deck_shuffle; 16 keeps this fast
    pts = card_points(n)
    ctx, kps, y = key_setup(seats, rng)
    # Seats precompute their shuffles once the joint key is known (as a node would).
    preps = [prepare_shuffle(y, n, rng, k) for _ in range(seats)]
    deck = shuffle_chain(ctx, kps, y, initial_deck(n), k, rng, preps=preps)

    # Deal 7 cards each by private reveals: slot i goes to seat i % 4.
    hands: dict[int, dict] = {s: {} for s in range(seats)}
    published = {}
    for slot in range(7 * seats):
        owner = slot % seats
        shares, ds = reveal_privately(ctx, kps, deck, slot, owner, rng)
        published[slot] = shares
        others = [ds[s] for s in range(seats) if s != owner]
        try:  # nobody but the owner can open it from the public shares
            open_card(deck[slot], others, pts)
            raise AssertionError("public shares alone opened a card")
        except DeckError:
            pass
        hands[owner][slot] = open_card(deck[slot], others + [own_share(kps[owner], deck[slot])],
                                       pts)
    dealt = [c for h in hands.values() for c in h.values()]
    assert len(dealt) == 28 and len(set(dealt)) == 28

    # Public reveal: seat 2 discards the card in slot 6; everybody learns it.
    slot = 6
    mine = decryption_share(ctx[2], kps[2], deck[slot], slot, rng)
    for _viewer in range(seats):
        d2 = verify_decryption_share(ctx[2], kps[2].public, deck[slot], slot, mine)
        ds = [d2] + [verify_decryption_share(ctx[s], kps[s].public, deck[slot], slot,
                                             published[slot][s]) for s in (0, 1, 3)]
        assert open_card(deck[slot], ds, pts) == hands[2][slot]

    # Stock draw: slot 28 to seat 0.
    _, ds = reveal_privately(ctx, kps, deck, 28, 0, rng)
    drawn = open_card(deck[28], [ds[s] for s in (1, 2, 3)] + [own_share(kps[0], deck[28])], pts)
    assert drawn not in dealt

    # Stock exhausted: the discard pile minus its top card (here slots 29..35) is re-shuffled.
    pile = deck[29:36]
    new_pile = shuffle_chain(ctx, kps, y, pile, 8, rng, rnd=1)

    # End of hand: every seat reveals its secret; everyone checks them and opens everything.
    secrets = [kp.secret_bytes() for kp in kps]
    for _viewer in range(seats):
        for s in range(seats):
            verify_secret(ctx[s], secrets[s], kps[s].public)
    order = decrypt_deck(deck, secrets, pts)
    assert sorted(order) == list(range(n))
    assert all(order[sl] == c for h in hands.values() for sl, c in h.items())
    assert order[28] == drawn
    assert sorted(decrypt_deck(new_pile, secrets, pts)) == sorted(order[29:36])


@settings(max_examples=12, deadline=None)
@given(seats=st.integers(2, 4), n=st.integers(2, 10), k=st.integers(1, 3),
       seed=st.integers(0, 2**32), hand=st.integers(0, 5))
def test_honest_runs_verify_and_deal_every_card_once(seats, n, k, seed, hand):
    rng = SeededRng(seed)
    ctx, kps, y = key_setup(seats, rng, hand)
    deck = shuffle_chain(ctx, kps, y, initial_deck(n), k, rng)  # raises if any proof fails
    pts = card_points(n)
    seen = []
    for slot in range(n):
        owner = slot % seats
        _, ds = reveal_privately(ctx, kps, deck, slot, owner, rng)
        others = [ds[s] for s in range(seats) if s != owner]
        seen.append(open_card(deck[slot], others + [own_share(kps[owner], deck[slot])], pts))
    assert sorted(seen) == list(range(n))
    assert decrypt_deck(deck, [kp.secret_bytes() for kp in kps], pts) == seen


@pytest.mark.parametrize("proof,k", [("terelius-wikstrom", None), ("cut-and-choose", 2)])
def test_bench_command_runs_the_deck_benchmark(capsys, proof, k):
    assert cli_main(["bench", "deck", "--seats", "2", "--cards", "15", "--k", "2",
                     "--proof", proof, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    for key in ("wall_s", "cpu_s_per_seat", "floor_s", "ratio", "proof_bytes",
                "open_card_s", "audit_s"):
        assert res[key] > 0, key
    assert res["wall_s"] <= sum(res["cpu_s_each_seat"]) + 1e-9
    assert res["seats"] == 2 and res["cards"] == 15 and res["k"] == k
    assert res["proof_system"] == proof
    for key in ("precompute_ms", "prove_online_ms", "verify_ms"):
        assert len(res[key]) == 2 and all(x > 0 for x in res[key]), key
    assert all(res["mults_per_seat"][kind] > 0 for kind in ("base", "var", "add", "validate"))
    if proof == "terelius-wikstrom":
        assert res["proof_bytes_each"] == [128 * 15 + 160] * 2
    assert cli_main(["bench", "no-such-benchmark"]) == 2
    assert "no benchmark" in capsys.readouterr().err
