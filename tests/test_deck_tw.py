"""Terelius-Wikström proof of shuffle: honest proofs verify; dropped, duplicated, injected or
wrongly re-masked cards, moved proofs, tampered commitments and non-canonical encodings are
refused and blamed on the shuffling seat; both proof systems agree on every case; the pitfalls
of deployed verifiers (Haines, Lewis, Pereira and Teague 2020) are each checked."""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import pytest
import rbcl

from p2p_chinchon.deck import (
    GROUP,
    Ciphertext,
    Context,
    CutAndChoose,
    DeckError,
    KeyPair,
    L,
    TereliusWikstrom,
    card_points,
    decode_deck,
    decrypt_deck,
    encode_deck,
    initial_deck,
    joint_key,
    prepare_shuffle,
    proof_system,
    remask,
    shuffle,
    verify_shuffle,
)
from p2p_chinchon.deck.context import DOMAIN, transcript_hash
from p2p_chinchon.deck.shuffle import ShufflePrep
from p2p_chinchon.deck.tw import _TWPrep, _u_seed, challenges, generators
from p2p_chinchon.rng import SeededRng
from ristretto_cases import INVALID

GAME = b"game-tw"
N = 8
TW = TereliusWikstrom()


def keys(seed=7, seats=3):
    rng = SeededRng(seed)
    kps = [KeyPair.generate(rng) for _ in range(seats)]
    return rng, kps, joint_key([kp.public for kp in kps])


def honest(n=N, seat=1, rnd=0, seed=7):
    rng, kps, y = keys(seed)
    ctx = Context(GAME, 2, seat)
    d_in, _ = shuffle(ctx.for_seat(0), y, initial_deck(n), rng)
    out, proof = shuffle(ctx, y, d_in, rng, round=rnd)
    return rng, kps, y, ctx, d_in, out, proof


def refused(ctx, y, d_in, d_out, proof, rnd=0, system=TW, match=None):
    with pytest.raises(DeckError, match=match) as ei:
        verify_shuffle(ctx, y, d_in, d_out, proof, round=rnd, system=system)
    assert (ei.value.seat, ei.value.step) == (ctx.seat, "shuffle")
    return ei.value


@pytest.mark.parametrize("n", [1, 2, 3, 8, 40])
def test_honest_shuffle_verifies_is_a_permutation_and_has_the_documented_size(n):
    rng, kps, y, ctx, d_in, out, proof = honest(n)
    assert len(proof) == 128 * n + 160
    verify_shuffle(ctx, y, d_in, decode_deck(encode_deck(out), n), proof)
    order = decrypt_deck(out, [kp.secret_bytes() for kp in kps], card_points(n))
    assert sorted(order) == list(range(n))


def test_default_system_is_tw_and_the_first_shuffle_from_the_public_deck_verifies():
    rng, kps, y = keys()
    ctx = Context(GAME, 1, 0)
    out, proof = shuffle(ctx, y, initial_deck(40), rng)
    assert len(proof) == 5280
    verify_shuffle(ctx, y, initial_deck(40), out, proof)
    verify_shuffle(ctx, y, initial_deck(40), out, proof, system=proof_system("terelius-wikstrom"))


# -- bad shuffles: each is refused by both proof systems -----------------------------------

def _bad_decks(d_in, out, y, rng):
    """Wrong outputs a cheater might publish (with the honest input)."""
    n = len(d_in)
    joker = remask(Ciphertext(GROUP.identity, GROUP.hash_to_point(b"joker")), 5, y)
    yield "duplicate", [*out[:3], remask(out[5], 99, y), *out[4:]]
    yield "inject", [*out[:2], joker, *out[3:]]
    yield "inject-known-card", [*out[:2], remask(Ciphertext(GROUP.identity,
                                                            card_points(n)[0]), 9, y), *out[3:]]
    y2 = GROUP.add(y, GROUP.generator)  # re-masked under a key the cheater knows more of
    yield "wrong-key", [remask(c, 3, y2) for c in d_in[::-1]]
    yield "swap-halves", [Ciphertext(c.c1, d.c2) for c, d in zip(out, out[1:] + out[:1], strict=True)]


def _cheat(system, ctx, y, d_in, bad, rng):
    """Best effort of a cheater: run the honest prover on the bad output with a fresh prep."""
    prep = prepare_shuffle(y, len(d_in), rng, system.k, system=system)
    return system.prove(ctx, y, d_in, bad, prep, 0)


@pytest.mark.parametrize("system", [TW, CutAndChoose(16)], ids=["tw", "cut-and-choose"])
def test_both_systems_accept_the_honest_and_refuse_the_same_bad_shuffles(system):
    rng, kps, y = keys(3)
    ctx = Context(GAME, 4, 2)
    d_in, _ = shuffle(ctx.for_seat(0), y, initial_deck(N), rng, system=system)
    out, proof = shuffle(ctx, y, d_in, rng, system=system)
    verify_shuffle(ctx, y, d_in, out, proof, system=system)
    verdicts = {}
    for name, bad in _bad_decks(d_in, out, y, rng):
        refused(ctx, y, d_in, bad, _cheat(system, ctx, y, d_in, bad, rng), system=system)
        refused(ctx, y, d_in, bad, proof, system=system)  # the honest proof of another output
        verdicts[name] = "refused"
    # dropped card: a shorter output deck is refused before any proof is read
    refused(ctx, y, d_in, out[:-1], proof, system=system, match="cards")
    # a wrong-key shuffle is consistent under its own key, but not under the joint key
    y2 = GROUP.add(y, GROUP.generator)
    o2, p2 = shuffle(ctx, y2, d_in, rng, system=system)
    verify_shuffle(ctx, y2, d_in, o2, p2, system=system)
    refused(ctx, y, d_in, o2, p2, system=system)
    assert len(verdicts) == 5


def test_a_non_permutation_commitment_is_caught_by_the_product_argument():
    """Haines et al. 2020: the linear checks (t1, t3, t4) alone accept a matrix whose columns
    sum to one but which repeats a row; only the product argument (t2 and the chain) refuses.
    The cheater commits honestly to the map m (slot 3 duplicates slot 5's source) and runs
    the real prover; the proof must not verify, while the same code with a permutation does."""
    rng, kps, y = keys(11)
    ctx = Context(GAME, 1, 1)
    d_in, _ = shuffle(ctx.for_seat(0), y, initial_deck(N), rng)

    def forged(m):
        gens = generators(N)
        r = [GROUP.random_scalar(rng) for _ in range(N)]
        out = [remask(d_in[m[i]], r[i], y) for i in range(N)]
        prep = ShufflePrep(y, N, 0, list(m), r, [], [], None, system=TW.name)
        st = TW.precompute(ShufflePrep(y, N, 0, list(range(N)), r, [], [], None), rng)
        s = [GROUP.random_scalar(rng) for _ in range(N)]
        a = []
        for j in range(N):
            p = GROUP.mul_base(s[j])
            for i in range(N):
                if m[i] == j:
                    p = GROUP.add(p, gens[i + 1])
            a.append(p)
        m_inv_free = [sum(1 for x in m if x == j) for j in range(N)]
        prep.proof_state = _TWPrep(s, b"".join(a), st.w, st.what, st.wprime, st.rh, st.t123,
                                   _t4_mask(st, r, y))
        return out, TW.prove(ctx, y, d_in, out, prep, 0), m_inv_free

    def _t4_mask(st, r, y):
        m = (sum(wp * ri for wp, ri in zip(st.wprime, r, strict=True)) - st.w[3]) % L
        return GROUP.mul_base(m), GROUP.mul(m, y)

    perm = [3, 0, 6, 1, 7, 2, 5, 4]
    out, proof, counts = forged(perm)
    verify_shuffle(ctx, y, d_in, out, proof)  # the forging code is the honest prover
    m = list(perm)
    m[3] = m[5]
    out, proof, counts = forged(m)
    assert sorted(counts) == [0] + [1] * (N - 2) + [2]  # a card dropped, another doubled
    refused(ctx, y, d_in, out, proof, match="does not verify")


# -- a proof moved to another statement ----------------------------------------------------

@pytest.mark.parametrize("change", ["hand", "seat", "game", "round", "joint key", "input",
                                    "output", "swap"])
def test_a_proof_moved_to_another_context_or_statement_is_refused(change):
    rng, kps, y, ctx, d_in, out, proof = honest()
    c, y2, rnd, din2, dout2 = ctx, y, 0, d_in, out
    if change == "hand":
        c = Context(GAME, ctx.hand + 1, ctx.seat)
    elif change == "seat":
        c = ctx.for_seat(2)
    elif change == "game":
        c = Context(b"other", ctx.hand, ctx.seat)
    elif change == "round":
        rnd = 1
    elif change == "joint key":
        y2 = GROUP.add(y, GROUP.generator)
    elif change == "input":
        din2 = [remask(x, 1, y) for x in d_in]
    elif change == "output":
        dout2 = [remask(x, 1, y) for x in out]
    else:
        din2, dout2 = out, d_in
    refused(c, y2, din2, dout2, proof, rnd=rnd)


# -- tampered or non-canonical proof bytes -------------------------------------------------

@pytest.mark.parametrize("part", ["commitment", "chain"])
def test_a_tampered_commitment_or_chain_element_is_refused(part):
    rng, kps, y, ctx, d_in, out, proof = honest()
    base = 0 if part == "commitment" else 32 * N
    for j in (0, 3, N - 1):
        at = base + 32 * j
        moved = GROUP.add(proof[at:at + 32], GROUP.generator)  # still a valid point
        refused(ctx, y, d_in, out, proof[:at] + moved + proof[at + 32:], match="does not verify")
        other = base + 32 * ((j + 1) % N)  # two commitments swapped
        swapped = bytearray(proof)
        swapped[at:at + 32], swapped[other:other + 32] = proof[other:other + 32], proof[at:at + 32]
        refused(ctx, y, d_in, out, bytes(swapped))


@pytest.mark.parametrize("bad", INVALID)
@pytest.mark.parametrize("where", [0, 32 * (N - 1), 32 * N, 32 * (2 * N - 1)])
def test_non_canonical_or_identity_points_in_a_proof_are_refused(bad, where):
    rng, kps, y, ctx, d_in, out, proof = honest()
    refused(ctx, y, d_in, out, proof[:where] + bad + proof[where + 32:],
            match="not a valid point")


@pytest.mark.parametrize("k", [0, 1, 4, 5, 5 + N, 4 + 2 * N])
def test_scalars_at_or_above_l_are_refused(k):
    """s and s + L give the same point in libsodium, so a malleable s + L must be refused."""
    rng, kps, y, ctx, d_in, out, proof = honest()
    at = 64 * N + 32 * k
    s = int.from_bytes(proof[at:at + 32], "little")
    for bad in (s + L, L, 2**256 - 1):
        refused(ctx, y, d_in, out, proof[:at] + bad.to_bytes(32, "little") + proof[at + 32:],
                match="canonical")


def test_every_sampled_tampered_byte_and_wrong_length_is_refused():
    rng, kps, y, ctx, d_in, out, proof = honest(n=3)
    for pos in range(0, len(proof), 7):
        bad = bytearray(proof)
        bad[pos] ^= 1 << (pos % 8)
        refused(ctx, y, d_in, out, bytes(bad))
    bads: tuple[Any, ...] = (proof[:-1], proof + b"\0", b"", None, bytearray(proof))  # not bytes: the check
    for bad in bads:
        refused(ctx, y, d_in, out, bad, match="bytes")


def test_malformed_decks_give_deck_errors_not_crashes():
    rng, kps, y, ctx, d_in, out, proof = honest()
    garbage = [Ciphertext(b"x" * 32, b"y" * 32)] * N
    refused(ctx, y, d_in, garbage, proof)
    refused(ctx, y, garbage, out, proof)
    with pytest.raises(DeckError):
        shuffle(ctx, y, garbage, rng)


# -- pitfalls: generators, Fiat-Shamir, challenge size -------------------------------------

def test_generators_are_hash_to_group_with_domain_separation():
    gens = generators(80)
    assert gens[:41] == generators(40)
    for i in (0, 1, 80):
        h = hashlib.sha512(DOMAIN + b"tw/generator\x00" + struct.pack(">H", i)).digest()
        assert gens[i] == rbcl.crypto_core_ristretto255_from_hash(h)
    everything = set(gens) | set(card_points(80)) | {GROUP.generator}
    assert len(everything) == 81 + 80 + 1  # no generator is G, a card or another generator
    assert DOMAIN == b"p2p-chinchon/deck/v2/"


def test_first_challenges_hash_every_public_input_including_the_commitment():
    """Weak Fiat-Shamir (challenges that skip part of the statement, or the permutation
    commitment) lets a prover pick that part after the challenge; here every input counts."""
    rng, kps, y, ctx, d_in, out, proof = honest()
    a = proof[:32 * N]
    base = _u_seed(ctx, 0, y, d_in, out, a)
    other_a = GROUP.add(a[:32], GROUP.generator) + a[32:]
    variants = [
        _u_seed(ctx.for_seat(0), 0, y, d_in, out, a),
        _u_seed(Context(GAME, 3, 1), 0, y, d_in, out, a),
        _u_seed(Context(b"x", 2, 1), 0, y, d_in, out, a),
        _u_seed(ctx, 1, y, d_in, out, a),
        _u_seed(ctx, 0, GROUP.add(y, GROUP.generator), d_in, out, a),
        _u_seed(ctx, 0, y, d_in[::-1], out, a),
        _u_seed(ctx, 0, y, d_in, out[::-1], a),
        _u_seed(ctx, 0, y, d_in, out, other_a),
    ]
    assert len({base, *variants}) == len(variants) + 1
    # the generators are hashed too: the seed is exactly the documented hash
    want = transcript_hash(b"shuffle/tw/u", ctx, struct.pack(">I", 0), struct.pack(">H", N), y,
                           b"".join(generators(N)), encode_deck(d_in), encode_deck(out), a).digest()
    assert base == want


def test_challenges_are_full_size_scalars():
    """Each u_j and c are 512-bit hash outputs reduced mod L (about 252 bits, >= 128)."""
    u = challenges(b"s" * 64, 40)
    x = hashlib.shake_256(b"s" * 64).digest(64 * 40)
    assert u == [int.from_bytes(x[64 * j:64 * j + 64], "little") % L for j in range(40)]
    assert min(v.bit_length() for v in u) > 128 and len(set(u)) == 40
    rng, kps, y, ctx, d_in, out, proof = honest()
    c = int.from_bytes(proof[64 * N:64 * N + 32], "little")
    assert 128 < c.bit_length() <= 253


def test_the_final_challenge_covers_every_first_message():
    """Changing any first message (recomputed by the verifier from the responses) changes the
    hash: tweak each response by one and the proof no longer verifies."""
    rng, kps, y, ctx, d_in, out, proof = honest(n=2)
    n = 2
    for k in range(1, 5 + 2 * n):  # z1..z4, z^_i, z'_i
        at = 64 * n + 32 * k
        z = (int.from_bytes(proof[at:at + 32], "little") + 1) % L
        refused(ctx, y, d_in, out, proof[:at] + z.to_bytes(32, "little") + proof[at + 32:])


# -- precompute split ----------------------------------------------------------------------

def test_precompute_needs_only_the_joint_key_and_is_single_use():
    rng, kps, y = keys(5)
    ctx = Context(GAME, 1, 1)
    prep = prepare_shuffle(y, N, rng)  # before any deck exists
    assert prep.system == TW.name
    out, proof = shuffle(ctx, y, initial_deck(N), rng, prep=prep)
    verify_shuffle(ctx, y, initial_deck(N), out, proof)
    with pytest.raises(ValueError, match="already used"):
        shuffle(ctx, y, initial_deck(N), rng, prep=prep)
    cc = prepare_shuffle(y, N, rng, 4, system=CutAndChoose(4))
    with pytest.raises(ValueError, match="system"):
        shuffle(ctx, y, initial_deck(N), rng, prep=cc)  # a cut-and-choose prep for TW
    with pytest.raises(ValueError):
        proof_system("bayer-groth")
