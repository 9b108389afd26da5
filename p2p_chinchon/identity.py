"""Long-term identity keys: one Ed25519 key per person, kept in the user's config folder.

The key signs every envelope the person sends (:mod:`p2p_chinchon.wire`); its public half sits in
the ``seating`` message, and its :func:`fingerprint` is how people recognise each other in the
lobby. The same key makes the self-signed X.509 certificate that every TLS link presents
(:meth:`Identity.certificate`); peers pin the key inside it, never a certificate authority. File: ``<config_dir>/identity.key``, an unencrypted PKCS#8 PEM Ed25519 private key (the
format ``openssl pkey`` reads); a raw 32-byte seed is accepted too. The file is created with mode
0600 (and the folder, if created, 0700) and refused if group or others may read or write it.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import stat
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2p_chinchon._fs import fsync_dir as _fsync_dir

# cryptography's x509 and serialization modules load where used (certificates, key files):
# a process starting up says its fingerprint before it needs them

__all__ = [
    "APP_NAME",
    "CERT_VALID_FROM",
    "CERT_VALID_UNTIL",
    "IDENTITY_FILE",
    "Identity",
    "IdentityError",
    "default_config_dir",
    "fingerprint",
    "load_or_create_identity",
    "public_bytes",
    "certificate_key",
]

APP_NAME = "p2p-chinchon"
IDENTITY_FILE = "identity.key"
_SEED_BYTES = 32
# Fixed validity, so a key always makes the same certificate (Ed25519 signs deterministically):
# the pin is the key, and an expiry would only add a clock to a protocol that has none.
CERT_VALID_FROM = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
CERT_VALID_UNTIL = datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=datetime.UTC)


class IdentityError(Exception):
    """The identity file cannot be used: unsafe permissions, wrong owner, or not a key."""


def public_bytes(private_key: Ed25519PrivateKey) -> bytes:
    """The 32 raw bytes of ``private_key``'s public key (RFC 8032 encoding)."""
    return private_key.public_key().public_bytes_raw()


def fingerprint(public_bytes: bytes) -> str:
    """Short human form of a public key: 4 groups of 4 base32 characters of SHA-256(key).

    Example: ``"MZXW-6YTB-OI3D-EMRT"`` (80 bits). Raises ValueError unless 32 bytes.
    """
    if type(public_bytes) not in (bytes, bytearray) or len(public_bytes) != 32:
        raise ValueError("fingerprint: public key must be 32 bytes")
    text = base64.b32encode(hashlib.sha256(bytes(public_bytes)).digest()).decode("ascii")[:16]
    return "-".join(text[i : i + 4] for i in range(0, 16, 4))


def certificate_key(der: bytes) -> bytes:
    """The 32-byte Ed25519 key of a self-signed identity certificate (DER, as a TLS peer
    presented it). Raises ``ValueError`` unless ``der`` is an X.509 certificate holding an
    Ed25519 key whose own signature over the certificate verifies."""
    from cryptography import x509

    try:
        cert = x509.load_der_x509_certificate(bytes(der))
        key = cert.public_key()
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not an X.509 certificate: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError(f"certificate key is {type(key).__name__}, not Ed25519")
    try:
        key.verify(cert.signature, cert.tbs_certificate_bytes)
    except InvalidSignature:
        raise ValueError("certificate is not self-signed by its key") from None
    return key.public_bytes_raw()


@dataclass(frozen=True, eq=False)
class Identity:
    """An Ed25519 key pair. ``public_bytes`` is 32 bytes; ``fingerprint`` as :func:`fingerprint`.

    Two identities are equal when their public keys are.
    """

    private_key: Ed25519PrivateKey = field(repr=False)
    public_bytes: bytes = field(init=False)
    fingerprint: str = field(init=False)
    path: Path | None = None  # the file it was loaded from, None if in memory

    def __post_init__(self) -> None:
        if not isinstance(self.private_key, Ed25519PrivateKey):
            raise TypeError("Identity needs an Ed25519PrivateKey")
        pub = public_bytes(self.private_key)
        object.__setattr__(self, "public_bytes", pub)
        object.__setattr__(self, "fingerprint", fingerprint(pub))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.public_bytes == self.public_bytes

    def __hash__(self) -> int:
        return hash(self.public_bytes)

    @classmethod
    def generate(cls, rng: Any | None = None) -> Identity:
        """A fresh in-memory identity (tests, bots). ``rng.token_bytes(32)`` makes the seed if
        given (e.g. :class:`p2p_chinchon.rng.SeededRng` for reproducible bots); else the OS
        generator through ``cryptography``."""
        if rng is None:
            return cls(Ed25519PrivateKey.generate())
        return cls.from_seed(rng.token_bytes(_SEED_BYTES))

    @classmethod
    def from_seed(cls, seed: bytes, path: Path | None = None) -> Identity:
        """Identity from a 32-byte RFC 8032 seed. Raises IdentityError otherwise."""
        if type(seed) not in (bytes, bytearray) or len(seed) != _SEED_BYTES:
            raise IdentityError("an Ed25519 seed is exactly 32 bytes")
        return cls(Ed25519PrivateKey.from_private_bytes(bytes(seed)), path)

    def seed(self) -> bytes:
        """The 32-byte private seed (secret)."""
        return self.private_key.private_bytes_raw()

    @cached_property
    def certificate(self) -> bytes:
        """Self-signed X.509 certificate (PEM) of this key, for TLS (Syncthing's device-ID
        pattern: no certificate authority; peers pin the key it holds). Deterministic: subject
        and issuer ``CN=p2p-chinchon <fingerprint>``, serial from SHA-256(key), validity
        2000-01-01..9999-12-31, Ed25519 signature (RFC 8410)."""
        from cryptography import x509
        from cryptography.hazmat.primitives import serialization
        from cryptography.x509.oid import NameOID

        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"p2p-chinchon {self.fingerprint}")])
        serial = int.from_bytes(hashlib.sha256(self.public_bytes).digest()[:16], "big") >> 1 or 1
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self.private_key.public_key())
            .serial_number(serial)
            .not_valid_before(CERT_VALID_FROM)
            .not_valid_after(CERT_VALID_UNTIL)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(self.private_key, None)
        )
        return cert.public_bytes(serialization.Encoding.PEM)

    def to_pem(self) -> bytes:
        """Unencrypted PKCS#8 PEM of the private key (secret): the identity file's content."""
        from cryptography.hazmat.primitives import serialization

        return self.private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )


def default_config_dir() -> Path:
    """The per-user config folder (platformdirs), e.g. ``~/.config/p2p-chinchon`` on Linux."""
    import platformdirs  # only needed here; keeps import of the core light

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def _parse_key(data: bytes, path: Path) -> Identity:
    if len(data) == _SEED_BYTES and not data.startswith(b"-----"):
        return Identity.from_seed(data, path)
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise IdentityError(f"{path}: not a PEM private key or 32-byte seed ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityError(f"{path}: holds a {type(key).__name__}, expected an Ed25519 key")
    return Identity(key, path)


def _check_private(path: Path, st: os.stat_result) -> None:
    if os.name != "posix":  # no POSIX modes to check (Windows ACLs are per-user by default)
        return
    if not stat.S_ISREG(st.st_mode):
        raise IdentityError(f"{path} is not a regular file")
    if st.st_uid != os.getuid():
        raise IdentityError(f"{path} belongs to uid {st.st_uid}, not to you (uid {os.getuid()})")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        raise IdentityError(
            f"{path} has mode {mode:04o}: other users may read your identity key; "
            f"fix it with 'chmod 600 {path}' (or delete it to make a new identity)"
        )


def load_or_create_identity(config_dir: Path | None = None, *, rng: Any | None = None) -> Identity:
    """Load ``<config_dir>/identity.key``, creating it on first run.

    ``config_dir`` defaults to :func:`default_config_dir`; it is created with mode 0700 if
    missing. A new key is written to a temporary file with mode 0600, fsynced and linked into
    place without overwriting, so two processes starting at once end up with the same key.
    ``rng`` (``token_bytes(32)``) makes the seed if given, else the OS generator.

    Raises :class:`IdentityError` if the file is readable or writable by group/others, is not
    owned by the current user, or is not an Ed25519 key; ``OSError`` for I/O failures.
    """
    folder = Path(config_dir) if config_dir is not None else default_config_dir()
    path = folder / IDENTITY_FILE
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return _create(folder, path, rng)
    except OSError as exc:
        raise IdentityError(f"{path}: cannot open ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        _check_private(path, os.fstat(f.fileno()))
        data = f.read(64 * 1024)
    return _parse_key(data, path)


def _create(folder: Path, path: Path, rng: Any | None) -> Identity:
    if not folder.exists():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    ident = Identity.generate(rng)
    pem = ident.to_pem()
    tmp = folder / f".{IDENTITY_FILE}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)  # fails if another process created the key meanwhile
        except FileExistsError:
            return load_or_create_identity(folder)
        except OSError:  # filesystems without hard links
            try:
                fd2 = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                return load_or_create_identity(folder)
            with os.fdopen(fd2, "wb") as f:
                f.write(pem)
                f.flush()
                os.fsync(f.fileno())
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    _fsync_dir(folder)
    return Identity(ident.private_key, path)
