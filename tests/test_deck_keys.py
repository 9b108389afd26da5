"""Key shares: commitments, Schnorr proofs bound to the context, rogue keys, secrets."""

from __future__ import annotations

import hashlib
import struct

import pytest
import rbcl

from p2p_chinchon.deck import (
    DOMAIN,
    GROUP,
    Context,
    DeckError,
    KeyPair,
    L,
    card_points,
    joint_key,
    key_commitment,
    make_key_share,
    verify_key_share,
    verify_secret,
)
from p2p_chinchon.deck.elgamal import Ciphertext
from p2p_chinchon.rng import SeededRng
from ristretto_cases import INVALID, NON_SQUARE

GAME = b"game-1"


def setup(n=4, seed=7):
    rng = SeededRng(seed)
    ctxs = [Context(GAME, 1, s) for s in range(n)]
    kps = [KeyPair.generate(rng) for _ in range(n)]
    commits = [kp.commitment(c) for kp, c in zip(kps, ctxs, strict=True)]
    shares = [make_key_share(c, kp, rng) for kp, c in zip(kps, ctxs, strict=True)]
    return rng, ctxs, kps, commits, shares


def test_honest_key_shares_verify_and_sum():
    rng, ctxs, kps, commits, shares = setup()
    ys = [verify_key_share(c, s, cm, kp.nonce)
          for c, s, cm, kp in zip(ctxs, shares, commits, kps, strict=True)]
    assert ys == [kp.public for kp in kps]
    assert all(len(s) == 96 and s[:32] == kp.public for s, kp in zip(shares, kps, strict=True))
    assert joint_key(ys) == GROUP.mul_base(sum(kp.x for kp in kps))
    assert commits[0] == key_commitment(ctxs[0], kps[0].public, kps[0].nonce)
    assert len(commits[0]) == 32


@pytest.mark.parametrize("pos", range(96))
def test_any_tampered_byte_of_a_key_share_is_caught(pos):
    _, ctxs, kps, commits, shares = setup()
    bad = bytearray(shares[2])
    bad[pos] ^= 0x01
    with pytest.raises(DeckError) as ei:
        verify_key_share(ctxs[2], bytes(bad), commits[2], kps[2].nonce)
    assert (ei.value.seat, ei.value.step) == (2, "key_share")


def test_share_must_match_its_commitment():
    _, ctxs, kps, commits, shares = setup()
    for commit, nonce in [(commits[1], kps[2].nonce), (commits[2], kps[1].nonce),
                          (key_commitment(ctxs[1], kps[2].public, kps[2].nonce), kps[2].nonce)]:
        with pytest.raises(DeckError, match="commitment") as ei:
            verify_key_share(ctxs[2], shares[2], commit, nonce)
        assert ei.value.seat == 2


def test_rogue_key_is_stopped_by_commitment_and_proof_of_knowledge():
    rng, ctxs, kps, commits, shares = setup()
    # Seat 3 waits for the others' shares and picks Y3 = Y* - (Y0 + Y1 + Y2) for an x* it
    # knows, so that the joint key would be Y* and seat 3 alone could open every card.
    x_star = GROUP.random_scalar(rng)
    others = joint_key([kp.public for kp in kps[:3]])
    y_rogue = GROUP.sub(GROUP.mul_base(x_star), others)
    y_joint = joint_key([kp.public for kp in kps[:3]] + [y_rogue])
    assert y_joint == GROUP.mul_base(x_star)
    # ... which would really let seat 3 decrypt alone:
    m = card_points(40)[9]
    r = GROUP.random_scalar(rng)
    ct = Ciphertext(GROUP.mul_base(r), GROUP.add(m, GROUP.mul(r, y_joint)))
    assert GROUP.sub(ct.c2, GROUP.mul(x_star, ct.c1)) == m

    nonce = rng.token_bytes(32)
    # 1. It cannot match the commitment it published before seeing the others.
    forged = y_rogue + shares[3][32:]
    with pytest.raises(DeckError, match="commitment") as ei:
        verify_key_share(ctxs[3], forged, commits[3], kps[3].nonce)
    assert ei.value.seat == 3
    # 2. Even committing late (if the table let it), it has no proof of knowledge of log Y3:
    late = key_commitment(ctxs[3], y_rogue, nonce)
    fake_proofs = [
        shares[3][32:],                                            # another key's proof
        make_key_share(ctxs[3], KeyPair(x_star, GROUP.mul_base(x_star), nonce), rng)[32:],
        GROUP.scalar_to_bytes(5) + GROUP.scalar_to_bytes(7),   # arbitrary (e, z)
    ]
    for fp in fake_proofs:
        with pytest.raises(DeckError, match="Schnorr") as ei:
            verify_key_share(ctxs[3], y_rogue + fp, late, nonce)
        assert (ei.value.seat, ei.value.step) == (3, "key_share")


def _challenge_without_context(y: bytes, a: bytes) -> int:
    h = hashlib.sha512(DOMAIN + b"key-share\x00")
    for part in (y, a):
        h.update(struct.pack(">I", len(part)) + part)
    return int.from_bytes(h.digest(), "little") % L


def _schnorr_without_context(kp: KeyPair, w: int) -> bytes:
    """A Schnorr proof whose challenge hash omits the context (the pitfall)."""
    e = _challenge_without_context(kp.public, GROUP.mul_base(w))
    return kp.public + GROUP.scalar_to_bytes(e) + GROUP.scalar_to_bytes((w + e * kp.x) % L)


def test_key_share_whose_proof_omits_the_context_is_rejected():
    rng, ctxs, kps, commits, _ = setup()
    data = _schnorr_without_context(kps[1], GROUP.random_scalar(rng))
    # It is a valid Schnorr proof of knowledge of x1 for a verifier whose hash omits the
    # context (so it could be replayed in any game, hand or seat) ...
    e = GROUP.scalar_from_bytes(data[32:64])
    a = GROUP.sub(GROUP.mul_base(GROUP.scalar_from_bytes(data[64:])),
                    GROUP.mul(e, kps[1].public))
    assert _challenge_without_context(kps[1].public, a) == e
    # ... and ours refuses it because its hash covers the context.
    with pytest.raises(DeckError, match="Schnorr") as ei:
        verify_key_share(ctxs[1], data, commits[1], kps[1].nonce)
    assert ei.value.seat == 1


@pytest.mark.parametrize("other", [Context(b"game-2", 1, 1), Context(GAME, 2, 1),
                                   Context(GAME, 1, 0)])
def test_key_share_replayed_under_another_context_is_rejected(other):
    _, ctxs, kps, _, shares = setup()
    # Re-commit under the other context so only the proof's binding is tested.
    commit = key_commitment(other, kps[1].public, kps[1].nonce)
    with pytest.raises(DeckError, match="Schnorr") as ei:
        verify_key_share(other, shares[1], commit, kps[1].nonce)
    assert ei.value.seat == other.seat


def test_scalars_at_or_above_l_are_rejected_in_key_shares():
    _, ctxs, kps, commits, shares = setup()
    e = int.from_bytes(shares[0][32:64], "little")
    z = int.from_bytes(shares[0][64:], "little")
    for bad in [shares[0][:32] + (e + L).to_bytes(32, "little") + shares[0][64:],
                shares[0][:64] + (z + L).to_bytes(32, "little")]:
        with pytest.raises(DeckError, match=">= L") as ei:
            verify_key_share(ctxs[0], bad, commits[0], kps[0].nonce)
        assert (ei.value.seat, ei.value.step) == (0, "key_share")


@pytest.mark.parametrize("y", INVALID)
def test_identity_or_invalid_encoding_key_is_rejected(y):
    rng, ctxs, kps, _, shares = setup()
    nonce = rng.token_bytes(32)
    with pytest.raises(DeckError, match="invalid point") as ei:
        verify_key_share(ctxs[2], y + shares[2][32:], key_commitment(ctxs[2], y, nonce), nonce)
    assert ei.value.seat == 2


@pytest.mark.parametrize("data,commit,nonce", [(b"x" * 95, b"c" * 32, b"n" * 32),
                                               (b"x" * 96, b"c" * 31, b"n" * 32),
                                               (b"x" * 96, b"c" * 32, b"n" * 33),
                                               (None, b"c" * 32, b"n" * 32)])
def test_malformed_key_share_messages(data, commit, nonce):
    with pytest.raises(DeckError) as ei:
        verify_key_share(Context(GAME, 1, 3), data, commit, nonce)
    assert (ei.value.seat, ei.value.step) == (3, "key_share")


def test_joint_key_rejects_identity_and_names_bad_seat():
    _, _, kps, _, _ = setup()
    y = kps[0].public
    neg = GROUP.sub(GROUP.identity, y)
    with pytest.raises(DeckError, match="identity") as ei:
        joint_key([y, neg])
    assert ei.value.step == "joint_key"
    with pytest.raises(DeckError) as ei:
        joint_key([y, kps[1].public, NON_SQUARE[0]])
    assert (ei.value.seat, ei.value.step) == (2, "joint_key")
    with pytest.raises(DeckError):
        joint_key([])


def test_verify_secret():
    _, ctxs, kps, _, _ = setup()
    verify_secret(ctxs[1], kps[1].secret_bytes(), kps[1].public)
    bads = [kps[2].secret_bytes(), (kps[1].x + L).to_bytes(32, "little"), bytes(32),
            kps[1].secret_bytes()[:31], b"\xff" * 32]
    for bad in bads:
        with pytest.raises(DeckError) as ei:
            verify_secret(ctxs[1], bad, kps[1].public)
        assert (ei.value.seat, ei.value.step) == (1, "secret")
    # x + L passes libsodium's check (same point) but is refused as non-canonical:
    assert rbcl.crypto_scalarmult_ristretto255_base((kps[1].x + L).to_bytes(32, "little")) \
        == kps[1].public


def test_keypair_repr_hides_the_secret():
    kp = KeyPair.generate(SeededRng(3))
    assert str(kp.x) not in repr(kp) and kp.nonce.hex() not in repr(kp)
