"""TLS 1.3 for every link (lobby and mesh): stdlib :mod:`ssl` through :class:`trio.SSLStream`.

Each player's certificate is self-signed by their Ed25519 identity key
(:attr:`p2p_chinchon.identity.Identity.certificate`); no certificate authority is involved.
The server side of a link presents it; the client side pins the server's *identity key*: after
the handshake it reads the certificate the server presented and refuses the link unless the key
in it is the expected one (the seat's key in the signed seating, or for the lobby the key whose
fingerprint the mDNS advertisement or the user gave). OpenSSL has already checked, in the
handshake, that the server holds that certificate's private key (TLS 1.3 CertificateVerify), so
a matching key means the far end is that player. This is Syncthing's device-ID pattern: the pin
is a hash of the key, checked by the application instead of by a CA chain.

The client proves *its* identity inside the encrypted channel, by signing a fresh nonce of the
server together with :func:`cert_fingerprint` of the server's certificate (mesh handshake,
lobby join request), so its proof is valid for that server and that connection only.

Errors: :class:`PinMismatch` (the server is not who we expected) and :class:`TlsError` (the
handshake failed: not TLS, an old version, a broken connection), both :class:`TlsError`.
"""

from __future__ import annotations

import hashlib
import os
import ssl
import tempfile
from typing import Any

import trio

from p2p_chinchon.identity import certificate_key, fingerprint

__all__ = [
    "PinMismatch",
    "TlsError",
    "accept_tls",
    "cert_fingerprint",
    "client_context",
    "dial_tls",
    "server_context",
]


class TlsError(Exception):
    """A TLS handshake failed (message: why)."""


class PinMismatch(TlsError):
    """The server's certificate holds another key than the one pinned."""


def cert_fingerprint(der: bytes) -> bytes:
    """SHA-256 of a certificate's DER bytes (32 bytes): what a client's proof is bound to."""
    return hashlib.sha256(der).digest()


def _base(server: bool) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if server else ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    return ctx


_server_contexts: dict[bytes, tuple[ssl.SSLContext, bytes]] = {}


def server_context(identity: Any) -> tuple[ssl.SSLContext, bytes]:
    """The server-side context presenting ``identity``'s certificate, and that certificate's
    :func:`cert_fingerprint`. Cached per key (contexts are immutable once made)."""
    cached = _server_contexts.get(identity.public_bytes)
    if cached is not None:
        return cached
    ctx = _base(server=True)
    ctx.verify_mode = ssl.CERT_NONE  # the client proves its key inside the channel (module doc)
    _load_chain(ctx, identity.certificate, identity.to_pem())
    der = ssl.PEM_cert_to_DER_cert(identity.certificate.decode("ascii"))
    _server_contexts[identity.public_bytes] = (ctx, cert_fingerprint(der))
    return _server_contexts[identity.public_bytes]


def _load_chain(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """``load_cert_chain`` takes a file name only: hand it the PEM in an anonymous memory file
    (Linux), so the key never touches the disk; elsewhere a private temporary folder."""
    data = cert_pem + key_pem
    if hasattr(os, "memfd_create") and os.path.isdir("/proc/self/fd"):
        fd = os.memfd_create("p2p-chinchon-identity", getattr(os, "MFD_CLOEXEC", 0))
        try:
            os.write(fd, data)
            ctx.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    with tempfile.TemporaryDirectory() as folder:  # mode 0700, removed at once
        path = os.path.join(folder, "identity.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        ctx.load_cert_chain(path)


def client_context() -> ssl.SSLContext:
    """Client-side context: TLS 1.3 only, no CA and no host name; the pin is checked by
    :func:`dial_tls` on the key in the server's certificate."""
    ctx = _base(server=False)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


_HANDSHAKE_ERRORS = (ssl.SSLError, trio.BrokenResourceError, trio.ClosedResourceError, OSError)


async def accept_tls(
    stream: trio.abc.Stream, identity: Any, *, hello_timeout: float | None = None
) -> tuple[trio.SSLStream[Any], bytes]:
    """Server side: TLS handshake presenting ``identity``'s certificate. Returns the TLS
    stream and our certificate's fingerprint. ``hello_timeout`` (seconds, None = no limit): the
    client must send its first bytes (the ClientHello) within it, so an idle connection is
    closed early; checked on a socket stream only (another stream has nothing to wait on).
    Raises :class:`TlsError`, for a missing ClientHello too."""
    if hello_timeout is not None:
        await _await_client_hello(stream, hello_timeout)
    ctx, fp = server_context(identity)
    tls = trio.SSLStream(stream, ctx, server_side=True, https_compatible=True)
    try:
        await tls.do_handshake()
    except _HANDSHAKE_ERRORS as exc:
        raise TlsError(f"TLS handshake failed: {exc}") from None
    return tls, fp


async def _await_client_hello(stream: trio.abc.Stream, timeout: float) -> None:
    # Readable without consuming anything: the handshake then reads the ClientHello itself
    # (or the end of the stream, and fails at once).
    sock = getattr(stream, "socket", None)
    if sock is None:
        return
    with trio.move_on_after(timeout):
        try:
            await trio.lowlevel.wait_readable(sock)
        except _HANDSHAKE_ERRORS as exc:
            raise TlsError(f"TLS handshake failed: {exc}") from None
        return
    raise TlsError(f"no TLS ClientHello within {timeout:g} s")


async def dial_tls(
    stream: trio.abc.Stream, *, expect_key: bytes | None = None, expect_fingerprint: str | None = None
) -> tuple[trio.SSLStream[Any], bytes, bytes]:
    """Client side: TLS handshake, then the pin: the server's certificate must hold
    ``expect_key`` (32 raw bytes) and/or a key whose :func:`~p2p_chinchon.identity.fingerprint`
    is ``expect_fingerprint``. With neither, any self-signed identity certificate is accepted
    and the caller must check the returned key (trust on first use, e.g. ``--connect`` without
    a fingerprint, where the signed offer must then carry the same key).

    Returns ``(tls_stream, server_key, server_cert_fingerprint)``. Raises :class:`PinMismatch`
    or :class:`TlsError`."""
    tls = trio.SSLStream(stream, client_context(), server_side=False, https_compatible=True)
    try:
        await tls.do_handshake()
    except _HANDSHAKE_ERRORS as exc:
        raise TlsError(f"TLS handshake failed: {exc}") from None
    der = tls.getpeercert(binary_form=True)
    if not der:
        raise TlsError("the server presented no certificate")
    try:
        key = certificate_key(der)
    except ValueError as exc:
        raise PinMismatch(f"the server's certificate is not an identity certificate: {exc}") from None
    if expect_key is not None and key != expect_key:
        raise PinMismatch(f"the server's key is {fingerprint(key)}, expected {fingerprint(expect_key)}")
    if expect_fingerprint is not None and fingerprint(key) != expect_fingerprint:
        raise PinMismatch(f"the server's key is {fingerprint(key)}, expected {expect_fingerprint}")
    return tls, key, cert_fingerprint(der)
