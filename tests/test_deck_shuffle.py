"""Verifiable shuffle with the cut-and-choose proof system (``shuffle_proof=cut-and-choose``):
honest proofs verify; dropped, duplicated, injected cards, replays and tampered bytes are caught
and blamed on the shuffling seat. The Terelius-Wikström default is in test_deck_tw.py."""

from __future__ import annotations

import pytest

from p2p_chinchon import deck as _deck
from p2p_chinchon.deck import (
    GROUP,
    Ciphertext,
    Context,
    CutAndChoose,
    DeckError,
    KeyPair,
    L,
    card_points,
    decode_deck,
    decrypt_deck,
    encode_deck,
    initial_deck,
    joint_key,
    remask,
)
from p2p_chinchon.deck.context import transcript_hash
from p2p_chinchon.deck.shuffle import _bits, _shadow_from_scalars, _statement_hash, expand_seed
from p2p_chinchon.rng import SeededRng

GAME = b"game-s"
K = 32
N = 8


# The module-level functions with the cut-and-choose system of k rounds (the default is TW).
def shuffle(ctx, y, d_in, rng, k=64, round=0, *, prep=None):
    return _deck.shuffle(ctx, y, d_in, rng, k, round, prep=prep, system=CutAndChoose(k))


def verify_shuffle(ctx, y, d_in, d_out, proof, k=64, round=0):
    _deck.verify_shuffle(ctx, y, d_in, d_out, proof, k, round, system=CutAndChoose(k))


def prepare_shuffle(y, n, rng, k=64):
    return _deck.prepare_shuffle(y, n, rng, k, system=CutAndChoose(k))


def proof_length(proof, n, k):
    return _deck.proof_length(proof, n, system=CutAndChoose(k))


def keys(n_seats=3, seed=11):
    rng = SeededRng(seed)
    kps = [KeyPair.generate(rng) for _ in range(n_seats)]
    return rng, kps, joint_key([kp.public for kp in kps])


def secrets_of(kps):
    return [kp.secret_bytes() for kp in kps]


def test_default_k_shuffle_of_40_cards_verifies_and_permutes():
    rng, kps, y = keys()
    ctx = Context(GAME, 1, 0)
    deck_in = initial_deck(40)
    out, proof = shuffle(ctx, y, deck_in, rng)
    verify_shuffle(ctx, y, deck_in, decode_deck(encode_deck(out), 40), proof)
    assert len(proof) == proof_length(proof, 40, 64)
    order = decrypt_deck(out, secrets_of(kps), card_points(40))
    assert sorted(order) == list(range(40)) and order != list(range(40))


def honest(seat=1, hand=1, rnd=0, seed=11, n=N, k=K):
    rng, kps, y = keys(seed=seed)
    ctx = Context(GAME, hand, seat)
    start = initial_deck(n)
    d_in, _ = shuffle(ctx.for_seat(0), y, start, rng, k)  # a masked input deck
    out, proof = shuffle(ctx, y, d_in, rng, k, rnd)
    return rng, kps, y, ctx, d_in, out, proof


def expect_blame(ctx, y, d_in, d_out, proof, k=K, rnd=0, match=None):
    with pytest.raises(DeckError, match=match) as ei:
        verify_shuffle(ctx, y, d_in, d_out, proof, k, rnd)
    assert (ei.value.seat, ei.value.step) == (ctx.seat, "shuffle")
    return ei.value


def reprove(ctx, y, d_in, tampered, rng, k=K):
    """A cheater's proof for a tampered output, made with its real (pi, r) and fresh shadows."""
    prep = prepare_shuffle(y, len(d_in), rng, k)
    out = [Ciphertext(GROUP.add(d_in[p].c1, prep.rg[i]), GROUP.add(d_in[p].c2, prep.ry[i]))
           for i, p in enumerate(prep.perm)]
    tampered_out = tampered(out)
    return tampered_out, CutAndChoose(k).prove(ctx, y, d_in, tampered_out, prep, 0)


def test_honest_shuffle_verifies_and_is_a_remasked_permutation():
    rng, kps, y, ctx, d_in, out, proof = honest()
    verify_shuffle(ctx, y, d_in, out, proof, K)
    a = decrypt_deck(d_in, secrets_of(kps), card_points(N))
    b = decrypt_deck(out, secrets_of(kps), card_points(N))
    assert sorted(a) == sorted(b) == list(range(N))
    assert not set(d_in) & set(out)  # every slot re-masked


def test_duplicated_card_is_caught():
    rng, kps, y, ctx, d_in, _, _ = honest()

    def dup(out):  # slot 3 becomes a re-masked copy of slot 5: one card dropped, one doubled
        out = list(out)
        out[3] = remask(out[5], 12345, y)
        return out

    bad, proof = reprove(ctx, y, d_in, dup, rng)
    with pytest.raises(DeckError, match="two slots"):
        decrypt_deck(bad, secrets_of(kps), card_points(N))  # the cheat is real
    expect_blame(ctx, y, d_in, bad, proof, match="does not verify")


@pytest.mark.parametrize("what", ["foreign point", "fresh card", "swap for input slot"])
def test_injected_card_is_caught(what):
    rng, kps, y, ctx, d_in, _, _ = honest()
    if what == "foreign point":
        m = GROUP.hash_to_point(b"a joker that is not in the deck")
    else:
        m = card_points(N)[0]

    def inject(out):
        out = list(out)
        if what == "swap for input slot":
            out[2] = d_in[2]  # not re-masked
        else:
            out[2] = remask(Ciphertext(GROUP.identity, m), 777, y)
        return out

    bad, proof = reprove(ctx, y, d_in, inject, rng)
    expect_blame(ctx, y, d_in, bad, proof)


def test_dropped_card_shorter_deck_is_caught():
    rng, kps, y, ctx, d_in, out, proof = honest()
    expect_blame(ctx, y, d_in, out[:-1], proof, match="output deck")
    bad, proof2 = reprove(ctx, y, d_in, lambda o: o, rng)
    expect_blame(ctx, y, d_in[:-1], bad[:-1], proof2)


def test_guessing_cheater_succeeds_only_with_probability_2_to_minus_k():
    """A cheater who prepares each shadow for a guessed challenge bit (from the input for 0,
    from its bad output for 1) passes only if the hash happens to match all k guesses."""
    rng, kps, y = keys(seed=5)
    n = 6

    def attempt(ctx, k, attempt_no):
        r2 = SeededRng(attempt_no)
        d_in = initial_deck(n)
        bad = [remask(d_in[0 if i == 1 else i], GROUP.random_scalar(r2), y) for i in range(n)]
        guesses = [r2.randbelow(2) for _ in range(k)]
        h = _statement_hash(ctx, 0, k, n, y, d_in, bad)
        openings = []
        for g in guesses:
            if g == 0:
                seed = r2.token_bytes(32)
                perm, scal = expand_seed(seed, n)
                s = _shadow_from_scalars(d_in, perm, scal, y)
                openings.append(seed)
            else:
                rho = list(range(n))
                scal = [GROUP.scalar_to_bytes(GROUP.random_scalar(r2)) for _ in range(n)]
                s = _shadow_from_scalars(bad, rho, scal, y)
                openings.append(bytes(rho) + b"".join(scal))
            h.update(len(s).to_bytes(4, "big") + s)
        c = h.digest()[:32]
        proof = c + b"".join(openings)
        try:
            verify_shuffle(ctx, y, d_in, bad, proof, k)
        except DeckError as exc:
            assert exc.seat == ctx.seat
            return False
        assert _bits(c, k) == guesses
        return True

    ctx = Context(GAME, 1, 2)
    # k = 1: about half the attempts pass, which is why k must be large ...
    assert 3 <= sum(attempt(ctx, 1, i) for i in range(20)) <= 17
    # ... and at k = 24 none of 20 do.
    assert not any(attempt(ctx, 24, i) for i in range(20))


@pytest.mark.parametrize("change", ["hand", "seat", "game", "round", "joint key", "decks"])
def test_replayed_proof_is_rejected(change):
    rng, kps, y, ctx, d_in, out, proof = honest(seat=1, hand=1, rnd=0)
    c2, y2, rnd, din2, dout2 = ctx, y, 0, d_in, out
    if change == "hand":
        c2 = Context(GAME, 2, 1)
    elif change == "seat":
        c2 = Context(GAME, 1, 2)  # seat 2 re-publishes seat 1's shuffle as its own
    elif change == "game":
        c2 = Context(b"another game", 1, 1)
    elif change == "round":
        rnd = 1
    elif change == "joint key":
        y2 = GROUP.add(y, GROUP.generator)
    else:  # the same proof for the next shuffle in the chain
        din2, dout2 = out, d_in
    expect_blame(c2, y2, din2, dout2, proof, rnd=rnd)


def test_reshuffle_round_must_match():
    rng, kps, y, ctx, d_in, out, proof = honest(rnd=3)
    verify_shuffle(ctx, y, d_in, out, proof, K, 3)
    expect_blame(ctx, y, d_in, out, proof, rnd=0)
    expect_blame(ctx, y, d_in, out, proof, k=K + 1)


def test_every_sampled_tampered_byte_is_caught():
    rng, kps, y, ctx, d_in, out, proof = honest(k=12, n=6)
    positions = sorted({0, 1, 31, 32, 33, 63, 64, len(proof) // 2, len(proof) - 33,
                        len(proof) - 1, *range(0, len(proof), max(1, len(proof) // 25))})
    for pos in positions:
        bad = bytearray(proof)
        bad[pos] ^= 0x40
        expect_blame(ctx, y, d_in, out, bytes(bad), k=12)
    expect_blame(ctx, y, d_in, out, proof[:-1], k=12, match="bytes")
    expect_blame(ctx, y, d_in, out, proof + b"\x00", k=12, match="bytes")
    expect_blame(ctx, y, d_in, out, b"", k=12, match="short")
    expect_blame(ctx, y, d_in, out, None, k=12)


def _first_open_one(proof, n, k):
    """Offset of the first bit-1 opening (rho || t) in a proof."""
    pos = 32
    for b in _bits(proof[:32], k):
        if b:
            return pos
        pos += 32
    raise AssertionError("no bit-1 opening")


def test_opening_with_scalar_at_or_above_l_is_rejected():
    rng, kps, y, ctx, d_in, out, proof = honest()
    pos = _first_open_one(proof, N, K) + N  # first t scalar
    t = int.from_bytes(proof[pos:pos + 32], "little")
    bad = proof[:pos] + (t + L).to_bytes(32, "little") + proof[pos + 32:]
    expect_blame(ctx, y, d_in, out, bad, match=">= L")


def test_opening_that_is_not_a_permutation_is_rejected():
    rng, kps, y, ctx, d_in, out, proof = honest()
    pos = _first_open_one(proof, N, K)
    rho = bytearray(proof[pos:pos + N])
    rho[0] = rho[1]
    expect_blame(ctx, y, d_in, out, proof[:pos] + bytes(rho) + proof[pos + N:],
                 match="permutation")


def test_malformed_decks_give_deck_errors_not_crashes():
    rng, kps, y, ctx, d_in, out, proof = honest()
    garbage = list(out)
    garbage[0] = Ciphertext(b"short", out[0].c2)
    expect_blame(ctx, y, d_in, garbage, proof)
    expect_blame(ctx, b"\x00" * 32, d_in, out, proof, match="joint key")
    with pytest.raises(DeckError):
        shuffle(ctx, y, [Ciphertext(b"x", b"y")] * 3, rng, 2)
    with pytest.raises(DeckError):
        shuffle(ctx, y, [], rng, 2)


def test_prep_is_single_use_and_bound_to_its_parameters():
    rng, kps, y = keys()
    ctx = Context(GAME, 1, 0)
    prep = prepare_shuffle(y, N, rng, 4)
    assert str(prep.r[0]) not in repr(prep)  # secrets stay out of logs
    out, proof = shuffle(ctx, y, initial_deck(N), rng, 4, prep=prep)
    verify_shuffle(ctx, y, initial_deck(N), out, proof, 4)
    with pytest.raises(ValueError, match="already used"):
        shuffle(ctx, y, initial_deck(N), rng, 4, prep=prep)
    for kwargs in [dict(n=N + 1, k=4), dict(n=N, k=5)]:
        p2 = prepare_shuffle(y, kwargs["n"], rng, kwargs["k"])
        with pytest.raises(ValueError, match="another"):
            shuffle(ctx, y, initial_deck(N), rng, 4, prep=p2)
    with pytest.raises(ValueError):
        CutAndChoose(0)
    with pytest.raises(ValueError):
        CutAndChoose(257)


class RecordingRng(SeededRng):
    def __init__(self, seed):
        super().__init__(seed)
        self.bounds = []

    def randbelow(self, n):
        self.bounds.append(n)
        return super().randbelow(n)


def test_permutation_is_fisher_yates_from_the_injected_rng():
    rng = RecordingRng(1)
    _, _, y = keys()
    prep = prepare_shuffle(y, 10, rng, 2)
    assert rng.bounds == list(range(10, 1, -1))
    assert sorted(prep.perm) == list(range(10))
    # the same seed gives the same permutation; another seed (almost surely) another
    assert prepare_shuffle(y, 10, RecordingRng(1), 2).perm == prep.perm
    assert prepare_shuffle(y, 10, RecordingRng(2), 2).perm != prep.perm


def test_seed_expansion_is_deterministic_and_a_permutation():
    for n in (1, 2, 40, 80, 256):
        perm, scal = expand_seed(b"s" * 32, n)
        assert sorted(perm) == list(range(n)) and len(scal) == n
        assert all(int.from_bytes(s, "little") < L for s in scal)
        assert expand_seed(b"s" * 32, n) == (perm, scal)
    assert expand_seed(b"t" * 32, 40)[0] != expand_seed(b"s" * 32, 40)[0]


def test_reshuffle_of_a_subdeck_round_1():
    rng, kps, y, ctx, d_in, out, proof = honest(n=12)
    sub = out[3:9]  # e.g. the discard pile minus its top card
    for seat in range(3):
        c = Context(GAME, 1, seat)
        new, pr = shuffle(c, y, sub, rng, 8, round=1)
        verify_shuffle(c, y, sub, new, pr, 8, 1)
        expect_blame(c, y, sub, new, pr, k=8, rnd=2)
        sub = new
    pts = card_points(12)
    before = decrypt_deck(out[3:9], secrets_of(kps), pts)
    after = decrypt_deck(sub, secrets_of(kps), pts)
    assert sorted(before) == sorted(after)


def test_challenge_hash_covers_the_statement():
    _, _, y = keys()
    ctx = Context(GAME, 1, 0)
    d = initial_deck(3)
    base = _statement_hash(ctx, 0, 4, 3, y, d, d).digest()
    assert transcript_hash(b"shuffle/cut-and-choose", ctx).digest() != base
    assert _statement_hash(ctx, 1, 4, 3, y, d, d).digest() != base
    assert _statement_hash(ctx, 0, 5, 3, y, d, d).digest() != base
    assert _statement_hash(ctx, 0, 4, 3, GROUP.generator, d, d).digest() != base
    assert _statement_hash(ctx, 0, 4, 3, y, d[::-1], d).digest() != base
    assert _statement_hash(ctx, 0, 4, 3, y, d, d[::-1]).digest() != base
    assert _statement_hash(ctx.for_seat(1), 0, 4, 3, y, d, d).digest() != base
