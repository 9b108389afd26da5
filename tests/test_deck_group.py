"""Group, encodings and contexts of the mental-poker deck: every bad byte string is refused."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import rbcl

from p2p_chinchon.deck import (
    GROUP,
    Ciphertext,
    Context,
    DeckError,
    L,
    card_points,
    decode_deck,
    encode_deck,
    initial_deck,
)
from p2p_chinchon.deck.context import transcript_hash
from p2p_chinchon.deck.group import RISTRETTO255
from p2p_chinchon.rng import SeededRng
from ristretto_cases import INVALID, NEGATIVE, NON_CANONICAL, NON_SQUARE

G = GROUP.generator


def test_card_points_are_distinct_valid_and_stable():
    pts = card_points(80)
    assert len(pts) == 80 and len(set(pts)) == 80
    assert all(GROUP.is_valid_point(p) for p in pts)
    assert card_points(40) == pts[:40]
    assert G not in pts
    with pytest.raises(ValueError):
        card_points(0)
    with pytest.raises(ValueError):
        card_points(257)


@pytest.mark.parametrize("bad", INVALID)
def test_non_canonical_undecodable_and_identity_points_are_invalid(bad):
    assert not GROUP.is_valid_point(bad)
    with pytest.raises(DeckError) as ei:
        GROUP.check_point(bad)
    assert ei.value.step == "group"


def test_libsodium_alone_refuses_the_bad_encodings_but_accepts_the_identity():
    assert not any(rbcl.crypto_core_ristretto255_is_valid_point(b)
                   for b in NON_CANONICAL + NEGATIVE + NON_SQUARE)
    assert rbcl.crypto_core_ristretto255_is_valid_point(bytes(32))  # hence our own check


def test_add_refuses_an_invalid_encoding_that_rbcl_would_turn_into_the_identity():
    bad = NON_CANONICAL[1]
    assert rbcl.crypto_core_ristretto255_add(G, bad) == bytes(32)  # rbcl drops the error code
    with pytest.raises(DeckError):
        GROUP.add(G, bad)
    with pytest.raises(DeckError):
        GROUP.sub(bad, G)


@pytest.mark.parametrize("bad", [b"", G[:31], G + b"\x00", bytearray(G), "x" * 32])
def test_wrong_types_and_lengths_are_invalid(bad):
    assert not GROUP.is_valid_point(bad)


def test_libsodium_maps_s_and_s_plus_l_to_the_same_point_so_we_check_scalars():
    s = 123456789
    assert rbcl.crypto_scalarmult_ristretto255_base((s + L).to_bytes(32, "little")) == \
        GROUP.mul_base(s)
    assert GROUP.scalar_from_bytes(s.to_bytes(32, "little")) == s
    for bad in [(s + L).to_bytes(32, "little"), L.to_bytes(32, "little"), b"\xff" * 32]:
        with pytest.raises(DeckError, match=r">= L"):
            GROUP.scalar_from_bytes(bad)
    with pytest.raises(DeckError):
        GROUP.scalar_from_bytes(b"\x01" * 31)


def test_zero_scalar_and_identity_do_not_crash():
    assert GROUP.mul_base(0) == GROUP.identity
    assert GROUP.mul(0, G) == GROUP.identity
    assert GROUP.mul(5, GROUP.identity) == GROUP.identity
    assert GROUP.mul(L, G) == GROUP.identity
    assert GROUP.add(G, GROUP.identity) == G
    with pytest.raises(DeckError):
        GROUP.mul(3, NON_SQUARE[0])  # libsodium's failure becomes a DeckError


def test_group_arithmetic_is_consistent():
    a, b = 1234567, 7654321
    assert GROUP.add(GROUP.mul_base(a), GROUP.mul_base(b)) == GROUP.mul_base(a + b)
    assert GROUP.sub(GROUP.mul_base(a), GROUP.mul_base(b)) == GROUP.mul_base(a - b)
    assert GROUP.mul(b, GROUP.mul_base(a)) == GROUP.mul_base(a * b)
    r = SeededRng(1)
    s = GROUP.random_scalar(r)
    assert 0 < s < L
    assert GROUP.scalar_from_bytes(GROUP.scalar_to_bytes(s)) == s


def _deck(n: int, seed: int = 1) -> list[Ciphertext]:
    rng = SeededRng(seed)
    y = GROUP.mul_base(GROUP.random_scalar(rng))
    out = []
    for m in card_points(n):
        r = GROUP.random_scalar(rng)
        out.append(Ciphertext(GROUP.mul_base(r), GROUP.add(m, GROUP.mul(r, y))))
    return out


def test_deck_round_trip_and_layout():
    deck = _deck(5)
    b = encode_deck(deck)
    assert len(b) == 5 * 64
    assert b[:64] == deck[0].to_bytes() == deck[0].c1 + deck[0].c2
    assert decode_deck(b, 5) == deck
    assert Ciphertext.from_bytes(deck[2].to_bytes()) == deck[2]


@pytest.mark.parametrize("bad", INVALID)
@pytest.mark.parametrize("where", [0, 32, 64 * 3 + 32])
def test_decode_deck_rejects_any_bad_point(bad, where):
    b = bytearray(encode_deck(_deck(4)))
    b[where:where + 32] = bad
    with pytest.raises(DeckError) as ei:
        decode_deck(bytes(b), 4)
    assert ei.value.step == "decode" and ei.value.seat is None
    if where % 64 == 0 and where < 64:
        with pytest.raises(DeckError):
            Ciphertext.from_bytes(bytes(b[:64]))


@pytest.mark.parametrize("n,delta", [(4, -1), (4, 1), (4, -64), (0, 0), (257, 0)])
def test_decode_deck_rejects_wrong_lengths(n, delta):
    b = encode_deck(_deck(4))
    b = b[:len(b) + delta] if delta < 0 else b + b"\x00" * delta
    with pytest.raises(DeckError):
        decode_deck(b, n)
    with pytest.raises(DeckError):
        Ciphertext.from_bytes(b[:63])


def test_initial_deck_is_public_and_unmasked():
    d = initial_deck(40)
    assert [c.c2 for c in d] == list(card_points(40))
    assert all(c.c1 == GROUP.identity for c in d)


def test_context_is_validated_and_every_field_is_hashed():
    base = Context(b"game", 3, 2)
    variants = [Context(b"gamf", 3, 2), Context(b"game", 4, 2), Context(b"game", 3, 1)]
    h0 = transcript_hash(b"x", base, b"stmt").digest()
    assert all(transcript_hash(b"x", v, b"stmt").digest() != h0 for v in variants)
    assert transcript_hash(b"y", base, b"stmt").digest() != h0
    # framing: moving a byte between parts changes the hash
    assert transcript_hash(b"x", base, b"ab", b"c").digest() != \
        transcript_hash(b"x", base, b"a", b"bc").digest()
    assert base.encode() == b"\x04game" + (3).to_bytes(4, "big") + b"\x02"
    assert base.for_seat(5) == Context(b"game", 3, 5)
    wrong: list[tuple[Any, ...]] = [(b"", 0, 0), ("game", 0, 0), (b"g" * 256, 0, 0)]  # a str among them
    for args in wrong:
        with pytest.raises(TypeError):
            Context(*args)
    for args in [(b"g", -1, 0), (b"g", 2**32, 0), (b"g", 0, 256), (b"g", 0, True)]:
        with pytest.raises(ValueError):
            Context(*args)


FORBIDDEN = {"trio", "socket", "asyncio", "prompt_toolkit", "zeroconf", "time", "random"}


def test_deck_package_is_sans_io():
    root = Path(__file__).resolve().parent.parent / "p2p_chinchon" / "deck"
    files = sorted(root.rglob("*.py"))
    assert files
    for f in files:
        for node in ast.walk(ast.parse(f.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN, f"{f.name} imports {name}"


_PROBE = ("import sys; from p2p_chinchon.deck import group; "
          "print(group.RISTRETTO255.hash_to_point(b'probe').hex(), 'rbcl' in sys.modules, "
          "getattr(sys.modules.get('rbcl._sodium'), 'lib_path', ''))")


def _load_in_a_process(cache: str) -> tuple[str, bool, str]:
    """Load the group in a new process whose libsodium copy lives in ``cache`` ("" = none):
    (a hash-to-group result, whether rbcl was imported, the file rbcl extracted)."""
    import subprocess

    env = dict(os.environ, P2P_CHINCHON_SODIUM_CACHE=cache)
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True)
    point, through_rbcl, extracted = (out.stdout.split() + [""])[:3]
    return point, through_rbcl == "True", extracted


@pytest.mark.skipif(os.name != "posix", reason="Windows keeps a loaded library's file locked")
def test_the_library_rbcl_extracts_is_not_left_in_the_temporary_folder():
    """rbcl writes its bundled libsodium to a new temporary file at each import (2.8 MB a
    process, never removed): the group removes it once loaded, and the group still works."""
    point, through_rbcl, extracted = _load_in_a_process("")
    assert through_rbcl and extracted.endswith(".so")
    assert not os.path.exists(extracted)
    assert point == RISTRETTO255.hash_to_point(b"probe").hex()


def test_only_rbcls_own_temporary_copy_is_ever_removed(tmp_path, monkeypatch):
    """Were rbcl to load a library that lives elsewhere (a system libsodium, a copy in the
    package), the group must leave it alone: only a tmp*.so directly in the temporary folder
    is rbcl's throwaway copy."""
    from p2p_chinchon.deck import sodium

    elsewhere = tmp_path / "tmpsodium.so"  # in a folder below the temporary one, not in it
    elsewhere.write_bytes(b"\x7fELF")
    monkeypatch.setattr(sys.modules["rbcl._sodium"], "lib_path", str(elsewhere), raising=False)
    sodium.remove_extracted_library()
    assert elsewhere.exists()


@pytest.mark.skipif(os.name != "posix", reason="the copy is kept on POSIX systems only")
def test_later_processes_load_the_copy_of_rbcls_library(tmp_path):
    """The first process goes through rbcl and keeps a private copy of the library it loaded;
    the next loads that copy without importing rbcl, and computes the same points."""
    cache = tmp_path / "cache"
    first = _load_in_a_process(str(cache))
    [copy] = cache.iterdir()
    assert first[1] and copy.read_bytes() == sys.modules["rbcl._sodium"].sodium_bs
    assert (copy.stat().st_mode & 0o777) == 0o500 and (cache.stat().st_mode & 0o777) == 0o700
    second = _load_in_a_process(str(cache))
    assert not second[1] and second[0] == first[0] == RISTRETTO255.hash_to_point(b"probe").hex()


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.parametrize("damage", ["folder others may write", "copy others may write", "not a library"])
def test_a_copy_that_is_not_private_or_not_a_library_is_not_loaded(tmp_path, damage):
    """rbcl again (and a fresh copy) when the copy could have been written by someone else, or
    does not load."""
    cache = tmp_path / "cache"
    _load_in_a_process(str(cache))
    [copy] = cache.iterdir()
    if damage == "folder others may write":
        cache.chmod(0o777)
    elif damage == "copy others may write":
        copy.chmod(0o722)
    else:
        copy.chmod(0o700)
        copy.write_bytes(b"\x7fELF not a library")
        copy.chmod(0o500)
    point, through_rbcl, _ = _load_in_a_process(str(cache))
    assert through_rbcl and point == RISTRETTO255.hash_to_point(b"probe").hex()


@pytest.mark.skipif(os.name != "posix", reason="the copy is kept on POSIX systems only")
def test_old_copies_of_other_installs_are_pruned(tmp_path):
    """Each install names its copy after its own rbcl file, so every new venv made another
    2.8 MB copy: a new copy keeps only the newest ``KEPT_COPIES``."""
    from p2p_chinchon.deck import sodium

    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    for i in range(5):  # copies left by five older installs, oldest first
        old = cache / f"libsodium-rbcl-{i}-0.so"
        old.write_bytes(b"old")
        os.utime(old, (1000 + i, 1000 + i))
    _load_in_a_process(str(cache))
    left = sorted(p.name for p in cache.iterdir())
    assert len(left) == sodium.KEPT_COPIES
    assert "libsodium-rbcl-4-0.so" in left and "libsodium-rbcl-3-0.so" in left
    assert not any(n.startswith("libsodium-rbcl-0-") for n in left)
