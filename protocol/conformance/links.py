"""Links ("Transport", "Links", "Lobby", "Mesh handshake"): frames over TLS 1.3, the player's
certificate, the lobby's join request, the mesh handshake.  Python's asyncio and ssl."""
from __future__ import annotations

import asyncio
import datetime
import hashlib
import os
import ssl
import struct

import msgpack
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.x509.oid import NameOID

import wire

MAX_FRAME = 1 << 20
MAGIC = b"CHCNMESH"
OK = b"CHCNMESHok"


class LinkError(Exception):
    pass


def pub_bytes(sk: Ed25519PrivateKey) -> bytes:
    return sk.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def certificate(sk: Ed25519PrivateKey, public: bytes | None = None) -> bytes:
    """the player's certificate ("Links"); `public` (tests): the certificate's fields for another
    key, signed by sk, to compare the to-be-signed bytes with a vector's"""
    key = public or pub_bytes(sk)
    pk = Ed25519PublicKey.from_public_bytes(key)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "p2p-chinchon " + wire.fingerprint(key))])
    serial = (int.from_bytes(hashlib.sha256(key).digest()[:16], "big") >> 1) or 1
    utc = datetime.UTC
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(pk)
            .serial_number(serial)
            .not_valid_before(datetime.datetime(2000, 1, 1, tzinfo=utc))
            .not_valid_after(datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=utc))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(sk, None))
    return cert.public_bytes(serialization.Encoding.DER)


def cert_key(der: bytes) -> bytes:
    """the Ed25519 key of a self-signed certificate whose signature verifies, else LinkError"""
    try:
        cert = x509.load_der_x509_certificate(der)
        pk = cert.public_key()
        if not isinstance(pk, Ed25519PublicKey):
            raise LinkError("certificate key is not Ed25519")
        pk.verify(cert.signature, cert.tbs_certificate_bytes)
    except (ValueError, InvalidSignature) as e:
        raise LinkError(f"bad certificate: {e}") from e
    return pk.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def server_context(sk: Ed25519PrivateKey, workdir: str) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    der = certificate(sk)
    cf = os.path.join(workdir, "cert.pem")
    kf = os.path.join(workdir, "key.pem")
    with open(cf, "wb") as f:
        f.write(x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM))
    with open(kf, "wb") as f:
        f.write(sk.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption()))
    os.chmod(kf, 0o600)
    ctx.load_cert_chain(cf, kf)
    return ctx


def client_context() -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def read_frame(r: asyncio.StreamReader, cap: int = MAX_FRAME) -> bytes:
    n = struct.unpack(">I", await r.readexactly(4))[0]
    if n > cap:
        raise LinkError(f"frame of {n} bytes over the cap {cap}")
    return await r.readexactly(n)


def frame(payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + payload


# -- lobby (joiner side) ----------------------------------------------------------------------

async def join(host: str, port: int, sk: Ed25519PrivateKey, name: str, addr: str, log):
    """join a table: returns (offer frame, seating frame, our seat)"""
    r, w = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=client_context(),
                                                          server_hostname=host), 10)
    try:
        der = w.get_extra_info("ssl_object").getpeercert(binary_form=True)
        host_key = cert_key(der)
        C = hashlib.sha256(der).digest()
        challenge = await asyncio.wait_for(read_frame(r, 1024), 10)
        if len(challenge) != 32:
            raise LinkError("challenge is not 32 bytes")
        key = pub_bytes(sk)
        # no candidate addresses ("addrs" empty): the host's observed address is enough on one machine
        sig = sk.sign(b"p2p-chinchon/join/v3\x00" + wire.packb([name, key, addr, []]) + challenge + C)
        w.write(frame(wire.packb({"v": 3, "name": name, "key": key, "addr": addr, "addrs": [], "sig": sig})))
        await w.drain()
        m = await _host_msg(r)
        if "offer" not in m:
            raise LinkError(f"no offer: {m}")
        offer = m["offer"]
        e = wire.decode(offer)
        if e.kind != "offer" or e.seq != 0 or e.body["host_key"] != host_key or not wire.verify_sig(e, host_key):
            raise LinkError("the offer is not signed by the key of the host's certificate")
        import table
        t = table.Table()
        t.exp = None
        try:
            t.apply(e)           # every check of the offer: rules, proof rounds, seats, deck size
        except table.Violation as v:
            raise LinkError(f"refused the table: {v.rule}: {v.reason}") from v
        if e.body["proof_rounds"] != e.body["rules"]["shuffle_proof_rounds"]:
            raise LinkError("bad_rules: proof_rounds")
        if e.body["rules"]["shuffle_proof"] == "cut-and-choose" and e.body["proof_rounds"] < 40:
            raise LinkError("bad_rules: too few proof rounds")
        log(f"offer: table {e.body['name']!r}, rules {e.body['rules']['preset']}, host {wire.fingerprint(host_key)}")
        w.write(frame(b"sit"))
        await w.drain()
        seat = None
        while True:
            m = await _host_msg(r, timeout=600)
            if "seat" in m:
                seat = m["seat"]
                log(f"seated at {seat}")
            elif "lobby" in m:
                log(f"lobby: {[p['name'] for p in m['lobby']]}")
            elif "seating" in m:
                return offer, m["seating"], seat
            else:
                raise LinkError(f"unexpected lobby message {m}")
    finally:
        w.close()


async def _host_msg(r, timeout=30):
    raw = await asyncio.wait_for(read_frame(r), timeout)
    try:
        m = msgpack.unpackb(raw, raw=False)
    except Exception as e:  # noqa: BLE001
        raise LinkError(f"host sent a frame that is not msgpack: {e}") from e
    if not isinstance(m, dict) or len(m) != 1:
        raise LinkError(f"host sent {m!r}")
    if "error" in m:
        raise LinkError(f"refused: {m['error']}")
    return m


# -- mesh handshake ----------------------------------------------------------------------------

def hello(game, a, b, n):
    return MAGIC + bytes([2]) + game + struct.pack(">HH", a, b) + n


def auth(game, a, b, x, y, C):
    return b"p2p-chinchon/mesh-auth/v2\x00" + game + struct.pack(">HH", a, b) + x + y + C


def _parse_hello(m, game):
    if len(m) != 61 or m[:8] != MAGIC or m[8] != 2 or m[9:25] != game:
        raise LinkError("bad HELLO")
    a, b = struct.unpack(">HH", m[25:29])
    return a, b, m[29:61]


def _verify(key, sig, msg):
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(sig, msg)
    except InvalidSignature as e:
        raise LinkError("handshake signature") from e


async def accept_handshake(r, w, game, me, keys, sk, my_cert):
    """acceptor side: returns the dialler's seat"""
    C = hashlib.sha256(my_cert).digest()
    i, j, n_i = _parse_hello(await asyncio.wait_for(read_frame(r, 128), 10), game)
    if j != me or not 0 <= i < me:
        raise LinkError("HELLO not for us or from a seat that may not dial us")
    n_j = os.urandom(32)
    w.write(frame(hello(game, me, i, n_j)) + frame(sk.sign(auth(game, me, i, n_j, n_i, C))))
    await w.drain()
    sig = await asyncio.wait_for(read_frame(r, 128), 10)
    _verify(keys[i], sig, auth(game, i, me, n_i, n_j, C))
    w.write(frame(OK))
    await w.drain()
    return i


async def dial_handshake(r, w, game, me, j, keys, sk):
    der = w.get_extra_info("ssl_object").getpeercert(binary_form=True)
    if cert_key(der) != keys[j]:
        raise LinkError("acceptor's certificate is not the seated key")
    C = hashlib.sha256(der).digest()
    n_i = os.urandom(32)
    w.write(frame(hello(game, me, j, n_i)))
    await w.drain()
    a, b, n_j = _parse_hello(await asyncio.wait_for(read_frame(r, 128), 10), game)
    if (a, b) != (j, me):
        raise LinkError("HELLO not from the acceptor")
    _verify(keys[j], await asyncio.wait_for(read_frame(r, 128), 10), auth(game, j, me, n_j, n_i, C))
    w.write(frame(sk.sign(auth(game, me, j, n_i, n_j, C))))
    await w.drain()
    if await asyncio.wait_for(read_frame(r, 128), 10) != OK:
        raise LinkError("no OK")
