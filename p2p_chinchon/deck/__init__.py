"""Mental-poker deck (Barnett and Smart, "Mental Poker Revisited", 2003). No game knowledge.

The deck deals in card *indices* 0..C-1 (C <= 256; 40..80 in Chinchón) and slot positions.
Sans-I/O: randomness comes from an injected ``rng`` (``secrets`` in production).

Protocol for one hand (N seats, Context(game_id, hand, seat) names the *author* of a message):

1. Each seat: ``kp = KeyPair.generate(rng)``; publish ``kp.commitment(ctx)``.
2. When all have committed: publish ``make_key_share(ctx, kp, rng)`` and ``kp.nonce``;
   everyone runs ``verify_key_share`` on each, then ``joint_key([Y_0, ..., Y_N-1])``.
3. Seats 0..N-1 in turn: ``deck, proof = shuffle(ctx, Y, deck, rng, round=0, system=...)``
   starting from ``initial_deck(C)``; everyone runs ``verify_shuffle`` on each (may lag
   behind, in a process pool; a bad proof voids the hand). ``prepare_shuffle`` precomputes a
   seat's re-masking and proof commitments as soon as the joint key is known. The proof system
   is Terelius-Wikström by default (``proof_system(name, k)``; cut-and-choose selectable).
4. Private reveal of slot s to seat o: every other seat sends ``decryption_share``; o checks
   them (``verify_decryption_share``), adds ``own_share`` and calls ``open_card``.
   Public reveal: the owner's share too; anyone opens.
5. Stock re-shuffle: ``shuffle`` on the sub-deck with round 1, 2, ...
6. End of hand: each seat reveals ``kp.secret_bytes()``; ``verify_secret`` each; then
   ``decrypt_deck`` / ``decrypt_with_secrets`` opens every slot for the audit.

Byte layouts (everything a peer sends; decoders reject wrong lengths and non-canonical input)
------------------------------------------------------------------------------------------
point        32 bytes: canonical ristretto255 encoding (RFC 9496 4.3.2), must pass
             ``crypto_core_ristretto255_is_valid_point`` (canonical, decodes) and not be the
             identity (32 zero bytes).
scalar       32 bytes little-endian, value < L = 2^252 + 27742317777372353535851937790883648493.
ciphertext   64 bytes: c1 (point) || c2 (point).
deck         64*n bytes: ciphertexts in slot order (``encode_deck`` / ``decode_deck``).
nonce        32 random bytes (key commitment opening).
key commit   32 bytes: SHA-512(T("key-commit", ctx, Y, nonce))[:32].
key share    96 bytes: Y (point) || e (scalar) || z (scalar); Schnorr proof
             A = z*G - e*Y, e == SHA-512(T("key-share", ctx, Y, A)) mod L.
dec. share   96 bytes: d (point) || e (scalar) || z (scalar); DLEQ (Chaum-Pedersen) proof
             A = z*G - e*Y_i, B = z*c1 - e*d,
             e == SHA-512(T("dec-share", ctx, u32be slot, c1, c2, Y_i, d, A, B)) mod L.
secret       32 bytes: the seat's per-hand scalar x, nonzero, x*G == Y_i.
shuffle      Terelius-Wikström (default): n commitments || n chain points || 2n + 5
proof        scalars, 128n + 160 bytes (5,280 for n=40); see ``p2p_chinchon.deck.tw``.
             Cut-and-choose: c (32) || k openings: 32-byte seed if bit j of c is 0, else
             rho (n bytes, a permutation) || n scalars; see ``p2p_chinchon.deck.shuffle``.
             Length 32 + sum over j of (32 or 33n); for n=40, k=64 about 43 KB.

T(label, ctx, parts...) = "p2p-chinchon/deck/v2/" || label || 00 || frame(ctx) || frame(part)...,
frame(x) = u32be len(x) || x, ctx = u8 len(game_id) || game_id || u32be hand || u8 seat.
Card points: M_i = crypto_core_ristretto255_from_hash(SHA-512("p2p-chinchon/deck/v2/card" 00
|| u16be i)). Initial deck slot i = (identity, M_i) (never sent).

Errors: every verifier returns normally or raises :class:`DeckError` naming ``seat`` (the
author, ``ctx.seat``) and ``step``.
"""

from p2p_chinchon.deck.context import DOMAIN, Context, transcript_hash
from p2p_chinchon.deck.elgamal import (
    MAX_CARDS,
    Ciphertext,
    card_index,
    card_points,
    decode_deck,
    decrypt_deck,
    decrypt_with_secrets,
    encode_deck,
    initial_deck,
    open_card,
    remask,
)
from p2p_chinchon.deck.errors import DeckError
from p2p_chinchon.deck.group import GROUP, RISTRETTO255, Group, L, Ristretto255Group
from p2p_chinchon.deck.keys import (
    COMMITMENT_LEN,
    KEY_SHARE_LEN,
    NONCE_LEN,
    KeyPair,
    joint_key,
    key_commitment,
    make_key_share,
    verify_key_share,
    verify_secret,
)
from p2p_chinchon.deck.reveal import (
    SHARE_LEN,
    decryption_share,
    decryption_shares,
    own_share,
    verify_decryption_share,
    verify_decryption_shares,
)
from p2p_chinchon.deck.shuffle import (
    DEFAULT_K,
    MAX_K,
    PROOF_SYSTEMS,
    CutAndChoose,
    ShufflePrep,
    ShuffleProofSystem,
    TereliusWikstrom,
    prepare_shuffle,
    proof_length,
    proof_system,
    shuffle,
    verify_shuffle,
)

__all__ = [
    "DOMAIN", "Context", "transcript_hash",
    "MAX_CARDS", "Ciphertext", "card_index", "card_points", "decode_deck", "decrypt_deck",
    "decrypt_with_secrets", "encode_deck", "initial_deck", "open_card", "remask",
    "DeckError", "GROUP", "RISTRETTO255", "L", "Ristretto255Group", "Group",
    "COMMITMENT_LEN", "KEY_SHARE_LEN", "NONCE_LEN", "KeyPair", "joint_key", "key_commitment",
    "make_key_share", "verify_key_share", "verify_secret",
    "SHARE_LEN", "decryption_share", "decryption_shares", "own_share",
    "verify_decryption_share", "verify_decryption_shares",
    "DEFAULT_K", "MAX_K", "PROOF_SYSTEMS", "CutAndChoose", "ShufflePrep", "ShuffleProofSystem",
    "TereliusWikstrom", "prepare_shuffle", "proof_length", "proof_system", "shuffle",
    "verify_shuffle",
]
