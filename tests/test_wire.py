"""Envelope encoding, strict decoding and signatures (p2p_chinchon.wire)."""

from __future__ import annotations

import hashlib
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings, strategies as st

from p2p_chinchon import PROTOCOL_VERSION
from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.wire import (
    INT32_MAX,
    INT32_MIN,
    KINDS,
    MAX_FRAME,
    SIG_DOMAIN,
    ZERO_HASH,
    Envelope,
    SignatureError,
    WireError,
    canonical_encode,
    decode_envelope,
    make_envelope,
    new_game_id,
    validate_body,
    verify_envelope,
)

RNG = SeededRng("test_wire")
ALICE = Identity.generate(RNG)
BOB = Identity.generate(RNG)
GAME = RNG.token_bytes(16)
PREV = RNG.token_bytes(32)


def b(n: int) -> bytes:
    return RNG.token_bytes(n)


def sample_bodies() -> dict[str, dict]:
    share = b(96)
    return {
        "offer": {"name": "Mesa", "rules": {"preset": "classic", "limit": 100, "wild": False, "neg": -5},
                  "max_seats": 8, "app": "p2p-chinchon", "nonce": b(32),
                  "proof_rounds": 64, "host_key": ALICE.public_bytes},
        "seating": {"players": [{"name": "Ana", "key": ALICE.public_bytes, "addr": "10.0.0.1:7300", "addrs": []},
                                {"name": "Beto", "key": BOB.public_bytes, "addr": "10.0.0.2:7300",
                                 "addrs": ["203.0.113.2:7300"]}]},
        "agree": {"rules_hash": b(32), "seating_hash": b(32), "toss_commit": b(32)},
        "toss": {"nonce": b(32)},
        "key_commit": {"hand": 0, "commit": b(32)},
        "key_share": {"hand": 65535, "share": share, "nonce": b(32)},
        "shuffle": {"hand": 1, "round": 255, "deck": b(80 * 64), "proof": b(1000)},
        "deal_shares": {"hand": 1, "shares": [b(96) for _ in range(14)]},
        "draw": {"hand": 1, "source": "discard"},
        "draw_share": {"hand": 1, "slot": 4095, "share": share},
        "discard": {"hand": 1, "slot": 0, "share": share},
        "close": {"hand": 1, "slot": 3, "shares": [{"slot": 4, "share": share}]},
        "show": {"hand": 1, "shares": []},
        "secret": {"hand": 1, "secret": b(32)},
        "hand_digest": {"hand": 1, "digest": b(32), "totals": [INT32_MIN, 0, INT32_MAX]},
        "reenter": {"hand": 2, "accept": True},
        "game_end": {"winner": 255, "digest": b(32)},
        "fault": {"accused": 1, "rule": "equivocation", "reason": "two seq 5", "evidence": [b(200), b(10)]},
        "leave": {"reason": ""},
        "remove": {"seat": 2, "hand": 3, "reason": "left", "proof": [b(300)]},
        "away": {"seat": 2, "hand": 3},
    }


def env_of(kind: str, body: dict, *, seq: int = 3, seat: int = 0, key: Identity = ALICE) -> Envelope:
    return make_envelope(key.private_key, game=GAME, seq=seq, seat=seat, prev=PREV, kind=kind, body=body)


def test_sample_bodies_cover_every_kind() -> None:
    assert set(sample_bodies()) == KINDS


@pytest.mark.parametrize("kind", sorted(sample_bodies()))
def test_round_trip_every_kind(kind: str) -> None:
    body = sample_bodies()[kind]
    env = env_of(kind, body)
    frame = env.encode()
    assert len(frame) <= MAX_FRAME
    back = decode_envelope(frame)
    assert back == env
    assert back.body == body
    assert back.encode() == frame
    assert back.hash() == hashlib.sha256(frame).digest()
    assert env.signed_bytes().startswith(SIG_DOMAIN)
    assert msgpack.unpackb(env.signed_bytes()[len(SIG_DOMAIN):]) == [
        PROTOCOL_VERSION, GAME, 3, 0, env.prev, kind, body]
    verify_envelope(back, ALICE.public_bytes)
    with pytest.raises(SignatureError):
        verify_envelope(back, BOB.public_bytes)


def test_frame_layout_is_the_fixed_array() -> None:
    env = env_of("toss", {"nonce": bytes(32)}, seq=300, seat=5)
    assert msgpack.unpackb(env.encode()) == [PROTOCOL_VERSION, GAME, 300, 5, env.prev, "toss", {"nonce": bytes(32)}, env.sig]
    assert env.encode()[0] == 0x98  # fixarray of 8


def test_canonical_form_does_not_depend_on_input_order_or_container_types() -> None:
    key = ALICE.private_key
    body_a = {"shares": [{"share": bytes(96), "slot": 1}], "hand": 0}
    body_b = {"hand": 0, "shares": ({"slot": 1, "share": bytearray(96)},)}
    kw: dict[str, Any] = dict(game=GAME, seq=1, seat=0, prev=ZERO_HASH, kind="show")
    a = make_envelope(key, body=body_a, **kw)
    bb = make_envelope(key, body=body_b, **kw)
    assert a.encode() == bb.encode()
    assert list(a.body) == ["hand", "shares"]
    assert list(a.body["shares"][0]) == ["share", "slot"]


def test_keys_sorted_by_utf8_bytes() -> None:
    data = canonical_encode({"b": 1, "a": 2, "é": 3, "Z": 4})
    assert list(msgpack.unpackb(data)) == ["Z", "a", "b", "é"]


def test_body_is_a_private_copy() -> None:
    body = {"nonce": bytes(32)}
    env = env_of("toss", body)
    frame, digest = env.encode(), env.hash()
    body["nonce"] = b"x"
    env.body["nonce"] = b"y"  # misuse: the signed bytes and hash do not move
    assert env.encode() == frame and env.hash() == digest


def test_envelope_is_hashable_and_compares_by_content() -> None:
    e1 = env_of("toss", {"nonce": bytes(32)}, seq=1)
    e2 = decode_envelope(e1.encode())
    assert e1 == e2 and len({e1, e2}) == 1
    e3 = env_of("toss", {"nonce": bytes(32)}, seq=2)
    assert e3 != e1


@pytest.mark.parametrize(
    ("kind", "body", "code"),
    [
        ("cheat", {}, "unknown_kind"),
        ("toss", {}, "missing_field"),
        ("toss", {"nonce": bytes(32), "x": 1}, "unknown_field"),
        ("toss", {"nonce": bytes(31)}, "out_of_range"),
        ("toss", {"nonce": "00" * 32}, "bad_type"),
        ("toss", {"nonce": None}, "bad_type"),
        ("toss", {"nonce": 1.5}, "float"),
        ("toss", {1: bytes(32)}, "bad_key"),
        ("toss", {"nonce": object()}, "bad_type"),
        ("draw", {"hand": 0, "source": "deck"}, "out_of_range"),
        ("draw", {"hand": -1, "source": "stock"}, "out_of_range"),
        ("draw", {"hand": True, "source": "stock"}, "bad_type"),
        ("draw", {"hand": 0, "source": "stock\ud800"}, "bad_type"),
        ("draw_share", {"hand": 0, "slot": 4096, "share": bytes(96)}, "out_of_range"),
        ("shuffle", {"hand": 0, "round": 0, "deck": bytes(65), "proof": b""}, "out_of_range"),
        ("shuffle", {"hand": 0, "round": 0, "deck": bytes(109 * 64), "proof": b""}, "out_of_range"),
        ("shuffle", {"hand": 0, "round": 0, "deck": bytes(64), "proof": bytes(768 * 1024 + 1)}, "out_of_range"),
        ("deal_shares", {"hand": 0, "shares": [bytes(96)] * 129}, "out_of_range"),
        ("hand_digest", {"hand": 0, "digest": bytes(32), "totals": [INT32_MAX + 1]}, "out_of_range"),
        ("hand_digest", {"hand": 0, "digest": bytes(32), "totals": [0] * 9}, "out_of_range"),
        ("seating", {"players": [{"name": "a", "key": bytes(32), "addr": ""}]}, "out_of_range"),
        ("seating", {"players": [{"name": "a" * 33, "key": bytes(32), "addr": ""}] * 2}, "out_of_range"),
        ("offer", {"name": "t", "rules": {"x": 2**40}, "max_seats": 4, "app": "p2p-chinchon", "nonce": bytes(32),
                   "proof_rounds": 64, "host_key": bytes(32)},
         "out_of_range"),
        ("offer", {"name": "t", "rules": {"x": [1]}, "max_seats": 4, "app": "p2p-chinchon", "nonce": bytes(32),
                   "proof_rounds": 64, "host_key": bytes(32)},
         "bad_type"),
        ("offer", {"name": "t", "rules": {str(i): i for i in range(65)}, "max_seats": 4, "app": "p2p-chinchon",
                   "nonce": bytes(32), "proof_rounds": 64, "host_key": bytes(32)}, "out_of_range"),
        ("offer", {"name": "t", "rules": {}, "max_seats": 1, "app": "p2p-chinchon", "nonce": bytes(32),
                   "proof_rounds": 64, "host_key": bytes(32)},
         "out_of_range"),
        ("offer", {"name": "t", "rules": {}, "max_seats": 4, "app": "p2p-chinchon", "nonce": bytes(32),
                   "proof_rounds": 129, "host_key": bytes(32)}, "out_of_range"),
        ("offer", {"name": "t", "rules": {}, "max_seats": 4, "app": "p2p-chinchon", "nonce": bytes(32),
                   "proof_rounds": 64, "host_key": bytes(33)}, "out_of_range"),
        ("reenter", {"hand": 0, "accept": 1}, "bad_type"),
        ("game_end", {"winner": 256, "digest": bytes(32)}, "out_of_range"),
        ("fault", {"accused": 0, "rule": "r", "reason": "x" * 257, "evidence": []}, "out_of_range"),
    ],
)
def test_make_envelope_rejects_bad_bodies(kind: str, body: dict, code: str) -> None:
    with pytest.raises(WireError) as info:
        env_of(kind, body)
    assert info.value.code == code
    assert isinstance(info.value, ValueError)


def test_error_names_the_field() -> None:
    with pytest.raises(WireError, match=r"body\.players\[1\]\.key"):
        env_of("seating", {"players": [{"name": "a", "key": bytes(32), "addr": "", "addrs": []},
                                       {"name": "b", "key": bytes(31), "addr": "", "addrs": []}]})


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("game", bytes(15), "out_of_range"),
        ("game", "x" * 16, "bad_type"),
        ("seq", -1, "out_of_range"),
        ("seq", 2**32, "out_of_range"),
        ("seat", 8, "out_of_range"),
        ("seat", None, "bad_type"),
        ("prev", bytes(33), "out_of_range"),
    ],
)
def test_make_envelope_rejects_bad_header_fields(field: str, value: object, code: str) -> None:
    kw: dict[str, Any] = dict(game=GAME, seq=0, seat=0, prev=ZERO_HASH, kind="toss", body={"nonce": bytes(32)})
    kw[field] = value
    with pytest.raises(WireError) as info:
        make_envelope(ALICE.private_key, **kw)
    assert info.value.code == code


def test_make_envelope_needs_an_ed25519_key() -> None:
    with pytest.raises(TypeError):
        make_envelope(b"k" * 32, game=GAME,  # type: ignore[arg-type]  # raw bytes: the check under test
                      seq=0, seat=0, prev=ZERO_HASH, kind="toss", body={"nonce": bytes(32)})


def test_direct_construction_is_validated() -> None:
    good = env_of("toss", {"nonce": bytes(32)})
    with pytest.raises(WireError) as info:
        Envelope(good.v, good.game, good.seq, good.seat, good.prev, good.kind, good.body, good.sig[:63])
    assert info.value.code == "out_of_range"
    with pytest.raises(WireError) as info:
        Envelope(PROTOCOL_VERSION + 1, good.game, good.seq, good.seat, good.prev, good.kind, good.body, good.sig)
    assert info.value.code == "version"


def test_bad_signature_and_bad_key() -> None:
    env = env_of("toss", {"nonce": bytes(32)})
    forged = Envelope(env.v, env.game, env.seq, env.seat, env.prev, env.kind, {"nonce": b"\x01" * 32}, env.sig)
    with pytest.raises(SignatureError) as info:
        verify_envelope(forged, ALICE.public_bytes)
    assert info.value.code == "bad_signature"
    with pytest.raises(SignatureError) as info:
        verify_envelope(env, ALICE.public_bytes[:31])
    assert info.value.code == "bad_key_bytes"
    verify_envelope(env, ALICE.private_key.public_key())  # a key object works too


def test_signature_covers_every_field() -> None:
    env = env_of("key_commit", {"hand": 1, "commit": bytes(32)}, seq=4, seat=2)
    changes: list[dict[str, Any]] = [dict(game=b"\x00" * 16), dict(seq=5), dict(seat=3), dict(prev=bytes(32)),
                                     dict(kind="secret", body={"hand": 1, "secret": bytes(32)}),
                                     dict(body={"hand": 2, "commit": bytes(32)})]
    for change in changes:
        fields: dict[str, Any] = dict(v=env.v, game=env.game, seq=env.seq, seat=env.seat, prev=env.prev, kind=env.kind,
                                      body=env.body, sig=env.sig)
        fields.update(change)
        other = Envelope(**fields)
        with pytest.raises(SignatureError):
            verify_envelope(other, ALICE.public_bytes)


def test_decode_rejects_non_bytes() -> None:
    with pytest.raises(WireError) as info:
        decode_envelope("not bytes")  # type: ignore[arg-type]
    assert info.value.code == "bad_type"


def test_decode_checks_size_before_parsing() -> None:
    with pytest.raises(WireError) as info:
        decode_envelope(b"\xc1" * (MAX_FRAME + 1))
    assert info.value.code == "frame_too_large"


def test_frame_at_the_cap_is_accepted_and_one_more_byte_is_not() -> None:
    # a fault whose evidence fills the frame to exactly MAX_FRAME bytes
    base = env_of("fault", {"accused": 0, "rule": "r", "reason": "", "evidence": [b""]})
    room = MAX_FRAME - len(base.encode())
    # bin8 (2-byte header) -> bin32 (5-byte header): 3 more header bytes
    env = env_of("fault", {"accused": 0, "rule": "r", "reason": "", "evidence": [bytes(room - 3)]})
    assert len(env.encode()) == MAX_FRAME
    assert decode_envelope(env.encode()) == env
    with pytest.raises(WireError) as info:
        env_of("fault", {"accused": 0, "rule": "r", "reason": "", "evidence": [bytes(room - 2)]})
    assert info.value.code == "frame_too_large"


def test_deep_nesting_is_a_wire_error_not_a_crash() -> None:
    deep: object = 0
    for _ in range(900):
        deep = [deep]
    frame = msgpack.packb([1, GAME, 0, 0, PREV, "toss", {"nonce": deep}, bytes(64)])
    with pytest.raises(WireError) as info:
        decode_envelope(frame)
    assert info.value.code == "out_of_range"
    with pytest.raises(WireError) as info:
        env_of("toss", {"nonce": deep})
    assert info.value.code == "out_of_range"


def test_error_messages_stay_short() -> None:
    with pytest.raises(WireError) as info:
        env_of("toss", {"nonce": bytes(32), "k" * 100_000: 1})
    assert info.value.code == "unknown_field" and len(str(info.value)) < 200


def test_new_game_id_uses_the_injected_rng() -> None:
    assert new_game_id(SeededRng(1)) == new_game_id(SeededRng(1)) != new_game_id(SeededRng(2))
    assert len(new_game_id(SeededRng(1))) == 16


def test_validate_body_alone() -> None:
    validate_body("toss", {"nonce": bytes(32)})
    with pytest.raises(WireError):
        validate_body("toss", {"nonce": bytes(32), "more": 1})


# --- properties ------------------------------------------------------------------------------

VALID = env_of("close", {"hand": 4, "slot": 7, "shares": [{"slot": 1, "share": bytes(range(96))}]})


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes_only_ever_raise_wire_error(data: bytes) -> None:
    try:
        env = decode_envelope(data)
    except WireError:
        return
    assert env.encode() == data  # anything accepted is canonical


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_mutated_frames_are_rejected_or_canonical_and_never_verify(data: st.DataObject) -> None:
    frame = bytearray(VALID.encode())
    op = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
    i = data.draw(st.integers(0, len(frame) - 1))
    if op == "flip":
        frame[i] ^= 1 << data.draw(st.integers(0, 7))
    elif op == "cut":
        del frame[i:]
    elif op == "insert":
        frame.insert(i, data.draw(st.integers(0, 255)))
    else:
        del frame[i]
    mutated = bytes(frame)
    try:
        env = decode_envelope(mutated)
    except WireError:
        return
    assert env.encode() == mutated
    with pytest.raises(SignatureError):
        verify_envelope(env, ALICE.public_bytes)


rule_values = st.one_of(st.integers(INT32_MIN, INT32_MAX), st.booleans(), st.text(max_size=16))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=20), rule_values, max_size=20), st.randoms(use_true_random=False))
def test_rules_maps_round_trip_in_any_insertion_order(rules: dict, rnd) -> None:
    body = {"name": "t", "rules": rules, "max_seats": 4, "app": "p2p-chinchon", "nonce": bytes(32),
                   "proof_rounds": 64, "host_key": bytes(32)}
    env = env_of("offer", body, seq=0)
    items = list(rules.items())
    rnd.shuffle(items)
    again = env_of("offer", {**body, "rules": dict(items)}, seq=0)
    assert again.encode() == env.encode()
    back = decode_envelope(env.encode())
    assert back.body["rules"] == rules
    assert [k.encode() for k in back.body["rules"]] == sorted(k.encode() for k in rules)


def test_ed25519_signatures_are_deterministic() -> None:
    key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    kw: dict[str, Any] = dict(game=GAME, seq=0, seat=0, prev=ZERO_HASH, kind="toss", body={"nonce": bytes(32)})
    assert make_envelope(key, **kw).sig == make_envelope(key, **kw).sig
