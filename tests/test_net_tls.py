"""TLS 1.3 links: identity certificates, the pin on the server's key, refusals."""

from __future__ import annotations

import ssl

import pytest
import trio
import trio.testing

from p2p_chinchon.identity import Identity, certificate_key
from p2p_chinchon.net import tls


def test_certificate_is_deterministic_and_holds_the_identity_key() -> None:
    ident = Identity.generate()
    assert Identity.from_seed(ident.seed()).certificate == ident.certificate
    der = ssl.PEM_cert_to_DER_cert(ident.certificate.decode())
    assert certificate_key(der) == ident.public_bytes
    with pytest.raises(ValueError):
        certificate_key(der[:-10] + b"\x00" * 10)  # signature no longer verifies
    with pytest.raises(ValueError):
        certificate_key(b"not a certificate")


async def _pair(server_id: Identity, **pins: object) -> tuple[object, object]:
    a, b = trio.testing.memory_stream_pair()
    out: dict[str, object] = {}
    async with trio.open_nursery() as nursery:

        async def server() -> None:
            try:
                out["server"] = await tls.accept_tls(b, server_id)
            except tls.TlsError as exc:
                out["server"] = exc

        nursery.start_soon(server)
        try:
            out["client"] = await tls.dial_tls(a, **pins)  # type: ignore[arg-type]
        except tls.TlsError as exc:
            out["client"] = exc
            await a.aclose()
    return out["client"], out["server"]


async def test_pinned_key_is_accepted_and_traffic_is_tls13() -> None:
    host = Identity.generate()
    client, server = await _pair(host, expect_key=host.public_bytes, expect_fingerprint=host.fingerprint)
    assert isinstance(client, tuple) and isinstance(server, tuple)
    stream, key, cert = client
    assert key == host.public_bytes
    assert stream.version() == "TLSv1.3"
    assert cert == server[1]  # both sides agree on the certificate hash


@pytest.mark.parametrize("pin", ["expect_key", "expect_fingerprint"])
async def test_wrong_pin_is_refused(pin: str) -> None:
    host, other = Identity.generate(), Identity.generate()
    value = other.public_bytes if pin == "expect_key" else other.fingerprint
    client, _server = await _pair(host, **{pin: value})
    assert isinstance(client, tls.PinMismatch)
    assert other.fingerprint in str(client) and host.fingerprint in str(client)


async def test_tls12_client_is_refused() -> None:
    host = Identity.generate()
    a, b = trio.testing.memory_stream_pair()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    async with trio.open_nursery() as nursery:
        result: list[object] = []

        async def server() -> None:
            with trio.fail_after(10), pytest.raises(tls.TlsError):
                await tls.accept_tls(b, host)
            await b.aclose()  # as the mesh and the lobby do
            result.append("refused")

        nursery.start_soon(server)
        with trio.fail_after(10), pytest.raises((ssl.SSLError, trio.BrokenResourceError)):
            await trio.SSLStream(a, ctx, server_side=False).do_handshake()
        await a.aclose()
    assert result == ["refused"]
