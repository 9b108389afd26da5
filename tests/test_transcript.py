"""In-memory transcript, chain verification and equivocation (p2p_chinchon.transcript)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.transcripts import GAME, SEATS, STRANGER, build, script
from p2p_chinchon.transcript import (
    ChainError,
    ChainGameError,
    ChainLinkError,
    ChainSeatError,
    ChainSeqError,
    ChainSignatureError,
    CorruptFrameError,
    Transcript,
    find_equivocation,
    seat_keys,
    verify_chain,
)
from p2p_chinchon.wire import ZERO_HASH, Envelope, make_envelope

CHAIN = build(script())


def test_valid_chain_info() -> None:
    info = verify_chain(CHAIN)
    assert info.length == len(CHAIN) == 8
    assert info.game == GAME
    assert info.head == CHAIN[-1].hash()
    assert info.hashes == tuple(e.hash() for e in CHAIN)
    assert info.seat_keys == tuple(s.public_bytes for s in SEATS)
    assert info.seating_index == 1
    assert info.fully_verified


def test_frames_and_envelopes_give_the_same_result() -> None:
    assert verify_chain([e.encode() for e in CHAIN]) == verify_chain(CHAIN)


def test_empty_chain() -> None:
    info = verify_chain([])
    assert info.length == 0 and info.head == ZERO_HASH and info.game is None


def test_offer_is_checked_under_its_host_key_before_any_seating() -> None:
    info = verify_chain(CHAIN[:1])
    assert info.fully_verified and info.seat_keys is None and info.seating_index is None
    forged = build([(0, "offer", CHAIN[0].body)], signer=lambda s: STRANGER)
    with pytest.raises(ChainSignatureError) as err:
        verify_chain(forged)
    assert (err.value.index, err.value.seat) == (0, 0)


def test_a_chain_starts_with_the_offer() -> None:
    """Envelope 0 must be an ``offer``: a chain of two leaves is refused, not passed with its
    signatures "unverified"."""
    chain = build([(0, "leave", {"reason": "a"}), (0, "leave", {"reason": "b"})])
    for keys in (None, [SEATS[0].public_bytes]):
        with pytest.raises(ChainSeatError) as err:
            verify_chain(chain, keys=keys)
        assert (err.value.index, err.value.seat) == (0, 0)


def test_seating_must_keep_the_host_key() -> None:
    players = [dict(p) for p in CHAIN[1].body["players"]]
    players[0], players[1] = players[1], players[0]
    chain = build([(0, "offer", CHAIN[0].body), (0, "seating", {"players": players})])
    with pytest.raises(ChainSeatError) as err:
        verify_chain(chain)
    assert (err.value.index, err.value.seat) == (1, 0)


def test_explicit_keys_override_the_seating() -> None:
    wrong = [SEATS[1].public_bytes, SEATS[0].public_bytes, SEATS[2].public_bytes]
    with pytest.raises(ChainSignatureError) as info:
        verify_chain(CHAIN, keys=wrong)
    assert (info.value.index, info.value.seat) == (0, 0)


def test_expected_game() -> None:
    with pytest.raises(ChainGameError) as info:
        verify_chain(CHAIN, game=bytes(16))
    assert info.value.index == 0


def test_seq_gap_link_break_and_signature() -> None:
    # drop envelope 4: envelope 5 (seq 5) now sits at index 4, its prev is hash(4) not hash(3)
    with pytest.raises(ChainSeqError) as info:
        verify_chain(CHAIN[:4] + CHAIN[5:])
    assert (info.value.index, info.value.seat) == (4, CHAIN[5].seat)
    # swap the order of two envelopes
    with pytest.raises(ChainSeqError):
        verify_chain(CHAIN[:3] + [CHAIN[4], CHAIN[3]] + CHAIN[5:])
    # re-sign envelope 3 over a wrong prev
    e = CHAIN[3]
    bad = make_envelope(SEATS[e.seat].private_key, game=GAME, seq=3, seat=e.seat, prev=bytes(32), kind=e.kind,
                        body=e.body)
    with pytest.raises(ChainLinkError) as link:
        verify_chain(CHAIN[:3] + [bad] + CHAIN[4:])
    assert (link.value.index, link.value.seat) == (3, e.seat)
    # seat 2's toss signed by seat 1
    e = CHAIN[4]
    forged = make_envelope(SEATS[1].private_key, game=GAME, seq=4, seat=2, prev=e.prev, kind=e.kind, body=e.body)
    forged_chain = CHAIN[:4] + [forged] + build([(x.seat, x.kind, x.body) for x in CHAIN[5:]], prev=forged.hash(), seq0=5)
    with pytest.raises(ChainSignatureError) as sig:
        verify_chain(forged_chain)
    assert (sig.value.index, sig.value.seat) == (4, 2)
    assert "envelope 4 (seat 2)" in str(sig.value)


def test_first_violation_by_index_even_before_the_seating() -> None:
    # The offer is forged (not signed by players[0].key), seen only once the seating is known.
    forged = build([(0, "offer", CHAIN[0].body)], signer=lambda s: STRANGER)
    rest = build([(e.seat, e.kind, e.body) for e in CHAIN[1:]], prev=forged[0].hash(), seq0=1)
    with pytest.raises(ChainSignatureError) as info:
        verify_chain(forged + rest)
    assert (info.value.index, info.value.seat) == (0, 0)


def test_seat_rules() -> None:
    extra = build([(3, "leave", {"reason": "x"})], prev=CHAIN[-1].hash(), seq0=len(CHAIN))
    with pytest.raises(ChainSeatError) as info:
        verify_chain(CHAIN + extra)
    assert (info.value.index, info.value.seat) == (len(CHAIN), 3)
    early = build([(0, "offer", CHAIN[0].body), (2, "toss", {"nonce": bytes(32)})] + [
        (e.seat, e.kind, e.body) for e in CHAIN[1:]])
    with pytest.raises(ChainSeatError) as info:
        verify_chain(early)
    assert (info.value.index, info.value.seat) == (1, 2)
    no_seating = build([(0, "offer", CHAIN[0].body), (1, "toss", {"nonce": bytes(32)})])
    with pytest.raises(ChainSeatError):
        verify_chain(no_seating)


def test_corrupt_frame_reported_at_its_index() -> None:
    frames = [e.encode() for e in CHAIN]
    frames[5] = frames[5][:-1]
    with pytest.raises(CorruptFrameError) as info:
        verify_chain(frames)
    assert (info.value.index, info.value.seat, info.value.code) == (5, None, "malformed")
    assert isinstance(info.value, ChainError) and isinstance(info.value, ValueError)


def test_replay_from_another_game() -> None:
    other = build(script(), game=bytes(range(16)))
    mixed = CHAIN[:5] + [other[5]] + CHAIN[6:]
    with pytest.raises(ChainGameError) as info:
        verify_chain(mixed)
    assert (info.value.index, info.value.seat) == (5, other[5].seat)


def test_seat_keys_helper() -> None:
    assert seat_keys(CHAIN[1]) == tuple(s.public_bytes for s in SEATS)
    with pytest.raises(ValueError):
        seat_keys(CHAIN[0])


# --- Transcript ------------------------------------------------------------------------------


def test_transcript_appends_and_tracks_the_head() -> None:
    t = Transcript()
    assert t.head == ZERO_HASH and t.game is None and t.next_seq == 0
    for e in CHAIN:
        assert t.append(e, public_key=SEATS[e.seat].public_bytes) == e.hash()
    assert len(t) == len(CHAIN) and t.head == CHAIN[-1].hash() and t.game == GAME
    assert list(t) == CHAIN and t[2] == CHAIN[2] and t.envelopes == tuple(CHAIN)
    assert t.frames() == [e.encode() for e in CHAIN]
    assert Transcript(CHAIN).head == t.head


@pytest.mark.parametrize(
    ("bad_index", "error"),
    [("gap", ChainSeqError), ("prev", ChainLinkError), ("game", ChainGameError), ("sig", ChainSignatureError)],
)
def test_transcript_refuses_and_stays_unchanged(bad_index: str, error: type[ChainError]) -> None:
    t = Transcript(CHAIN[:4])
    e = CHAIN[4]
    kw: dict[str, Any] = dict(game=GAME, seq=4, seat=e.seat, prev=t.head, kind=e.kind, body=e.body)
    key = SEATS[e.seat]
    if bad_index == "gap":
        kw["seq"] = 5
    elif bad_index == "prev":
        kw["prev"] = CHAIN[2].hash()
    elif bad_index == "game":
        kw["game"] = bytes(16)
    else:
        key = STRANGER
    env = make_envelope(key.private_key, **kw)
    with pytest.raises(error) as info:
        t.append(env, public_key=SEATS[e.seat].public_bytes)
    assert info.value.index == 4
    assert len(t) == 4 and t.head == CHAIN[3].hash()
    t.append(e)
    assert len(t) == 5


def test_transcript_needs_envelopes() -> None:
    with pytest.raises(TypeError):
        Transcript().append(CHAIN[0].encode())  # type: ignore[arg-type]


# --- equivocation ----------------------------------------------------------------------------


def _fork(index: int, body: dict) -> list[Envelope]:
    e = CHAIN[index]
    return CHAIN[:index] + build([(e.seat, e.kind, body)], prev=e.prev, seq0=index)


def test_equivocation_between_two_views() -> None:
    other = _fork(6, {"hand": 0, "commit": bytes(32)})
    eq = find_equivocation(CHAIN, other)
    assert eq is not None
    assert (eq.seat, eq.seq, eq.game) == (CHAIN[6].seat, 6, GAME)
    assert eq.first == CHAIN[6] and eq.second == other[6]
    assert eq.evidence == (CHAIN[6].encode(), other[6].encode())


def test_equivocation_in_one_stream_of_frames() -> None:
    other = _fork(3, {"nonce": bytes(32)})
    stream = [e.encode() for e in CHAIN] + [other[3].encode(), b"garbage"]
    eq = find_equivocation(stream)
    assert eq is not None and (eq.seat, eq.seq) == (CHAIN[3].seat, 3)


def test_no_equivocation_for_duplicates_prefixes_or_other_games() -> None:
    assert find_equivocation(CHAIN) is None
    assert find_equivocation(CHAIN, CHAIN[:5], CHAIN) is None
    other_game = build(script(), game=bytes(range(16)))
    assert find_equivocation(CHAIN, other_game) is None


def test_unsigned_pair_is_no_proof() -> None:
    e = CHAIN[6]
    fake = make_envelope(STRANGER.private_key, game=GAME, seq=6, seat=e.seat, prev=e.prev, kind=e.kind,
                         body={"hand": 0, "commit": bytes(32)})
    assert find_equivocation(CHAIN, [fake]) is None


def test_equivocation_of_the_offer_is_proven_by_its_host_key() -> None:
    a = build([(0, "offer", CHAIN[0].body)])
    b = build([(0, "offer", {**CHAIN[0].body, "name": "other"})])
    eq = find_equivocation(a, b)
    assert eq is not None and (eq.seat, eq.seq) == (0, 0)


def test_equivocation_needs_keys() -> None:
    a = build([(0, "leave", {"reason": "a"})])
    b = build([(0, "leave", {"reason": "b"})])
    assert find_equivocation(a, b) is None  # no offer, no seating: nobody's key is known
    eq = find_equivocation(a, b, keys=[SEATS[0].public_bytes])
    assert eq is not None and (eq.seat, eq.seq) == (0, 0)
