"""Identity keys in the config folder (p2p_chinchon.identity)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from p2p_chinchon.identity import (
    IDENTITY_FILE,
    Identity,
    IdentityError,
    default_config_dir,
    fingerprint,
    load_or_create_identity,
)
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.wire import ZERO_HASH, make_envelope, verify_envelope

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_fingerprint_known_answer_and_shape() -> None:
    # SHA-256(32 zero bytes) = 66687aad f862bd77 ...; base32 of it starts MZUHVLPYMK6XO3EP
    assert fingerprint(bytes(32)) == "MZUH-VLPY-MK6X-O3EP"
    ident = Identity.generate(SeededRng(1))
    assert re.fullmatch(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){3}", ident.fingerprint)
    assert ident.fingerprint == fingerprint(ident.public_bytes)
    assert Identity.generate(SeededRng(2)).fingerprint != ident.fingerprint
    with pytest.raises(ValueError):
        fingerprint(bytes(31))


def test_generate_is_in_memory_and_seedable() -> None:
    a, b = Identity.generate(SeededRng(7)), Identity.generate(SeededRng(7))
    assert a == b and hash(a) == hash(b) and a.path is None
    assert len(a.public_bytes) == 32 and len(a.seed()) == 32
    assert Identity.generate() != Identity.generate()
    assert a.seed().hex() not in repr(a)


def test_identity_signs_envelopes() -> None:
    ident = Identity.generate(SeededRng(3))
    env = make_envelope(ident.private_key, game=bytes(16), seq=0, seat=0, prev=ZERO_HASH, kind="leave",
                        body={"reason": ""})
    verify_envelope(env, ident.public_bytes)


@posix_only
def test_first_run_creates_a_private_key_file(tmp_path: Path) -> None:
    folder = tmp_path / "cfg" / "p2p-chinchon"
    ident = load_or_create_identity(folder)
    path = folder / IDENTITY_FILE
    assert ident.path == path and path.is_file()
    assert mode(path) == 0o600
    assert mode(folder) == 0o700
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert [p.name for p in folder.iterdir()] == [IDENTITY_FILE]  # no temp file left
    again = load_or_create_identity(folder)
    assert again == ident and again.fingerprint == ident.fingerprint


def test_seeded_creation(tmp_path: Path) -> None:
    a = load_or_create_identity(tmp_path / "a", rng=SeededRng(9))
    assert a == Identity.generate(SeededRng(9))


@posix_only
@pytest.mark.parametrize("bad_mode", [0o644, 0o640, 0o604, 0o660])
def test_refuses_a_key_others_may_read(tmp_path: Path, bad_mode: int) -> None:
    load_or_create_identity(tmp_path)
    os.chmod(tmp_path / IDENTITY_FILE, bad_mode)
    with pytest.raises(IdentityError, match="chmod 600"):
        load_or_create_identity(tmp_path)


@posix_only
def test_existing_folder_mode_is_left_alone(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)
    load_or_create_identity(tmp_path)
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / IDENTITY_FILE) == 0o600


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def test_accepts_a_raw_seed_file(tmp_path: Path) -> None:
    seed = bytes(range(32))
    _write_private(tmp_path / IDENTITY_FILE, seed)
    assert load_or_create_identity(tmp_path) == Identity.from_seed(seed)


@pytest.mark.parametrize("content", [b"", b"hello", b"-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n",
                                     bytes(31)])
def test_refuses_garbage(tmp_path: Path, content: bytes) -> None:
    _write_private(tmp_path / IDENTITY_FILE, content)
    with pytest.raises(IdentityError):
        load_or_create_identity(tmp_path)


def test_refuses_another_key_type(tmp_path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    _write_private(tmp_path / IDENTITY_FILE, pem)
    with pytest.raises(IdentityError, match="Ed25519"):
        load_or_create_identity(tmp_path)


@posix_only
def test_refuses_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.key"
    _write_private(real, bytes(range(32)))
    (tmp_path / IDENTITY_FILE).symlink_to(real)
    with pytest.raises(IdentityError):
        load_or_create_identity(tmp_path)


def test_concurrent_creation_keeps_the_first_key(tmp_path: Path, monkeypatch) -> None:
    """Another process writes identity.key between our check and our link: we load theirs."""
    theirs = Identity.generate(SeededRng("theirs"))
    real_link = os.link

    def racing_link(src, dst) -> None:
        _write_private(Path(dst), theirs.to_pem())
        real_link(src, dst)  # raises FileExistsError, as in the real race

    monkeypatch.setattr(os, "link", racing_link)
    got = load_or_create_identity(tmp_path)
    assert got == theirs
    assert sorted(p.name for p in tmp_path.iterdir()) == [IDENTITY_FILE]


def test_default_folder_is_the_user_config_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    if os.name == "posix" and "darwin" not in os.uname().sysname.lower():
        assert default_config_dir() == tmp_path / "xdg" / "p2p-chinchon"
        ident = load_or_create_identity()
        assert ident.path == tmp_path / "xdg" / "p2p-chinchon" / IDENTITY_FILE
    else:  # pragma: no cover
        assert default_config_dir().name == "p2p-chinchon"


def test_from_seed_checks_length() -> None:
    with pytest.raises(IdentityError):
        Identity.from_seed(b"short")
    with pytest.raises(TypeError):
        Identity(b"not a key")  # type: ignore[arg-type]
