"""A removed seat's modified client, as a process: ``python tests/late_fault.py TRANSCRIPT
IDENTITY_DIR HOST PORT`` signs a ``fault`` (a ``timeout`` against seat 1) with the seat's own
key at its own last position in TRANSCRIPT (its record of the game), dials seat 0's mesh port
as that seat (TLS pinned to seat 0's key, the link handshake) and sends it. Prints ``sent`` and
exits 0 once the frame is written; any refusal is an exception (exit 1).

Used by tests/test_partition_netns.py: whatever a removed seat signs later is dropped by the
others and kept as evidence naming it (docs/protocol.md "Removal")."""

from __future__ import annotations

import sys
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2p_chinchon import wire
from p2p_chinchon.identity import load_or_create_identity
from p2p_chinchon.net.framing import FrameReader, send_frame
from p2p_chinchon.net.mesh import dial_handshake
from p2p_chinchon.net.node import ENVELOPE
from p2p_chinchon.net.tls import dial_tls
from p2p_chinchon.transcript import load_transcript


async def main(transcript: Path, identity_dir: Path, host: str, port: int) -> None:
    me = load_or_create_identity(identity_dir)
    envs = load_transcript(transcript).envelopes
    players = envs[1].body["players"]
    seat = [p["key"] for p in players].index(me.public_bytes)
    fault = wire.make_envelope(me.private_key, game=envs[0].game, seq=len(envs), seat=seat, prev=envs[-1].hash(),
                               kind="fault", body={"accused": 1, "rule": "timeout", "reason": "did not draw",
                                                   "evidence": []}).encode()
    host_key = players[0]["key"]
    stream = await trio.open_tcp_stream(host, port)
    tls, _key, cert = await dial_tls(stream, expect_key=host_key)
    reader = FrameReader(tls)
    await dial_handshake(tls, reader, game_id=envs[0].game, seat=seat, peer_seat=0, sign=me.private_key.sign,
                         peer_key=Ed25519PublicKey.from_public_bytes(host_key), cert=cert)
    await send_frame(tls, ENVELOPE + fault)  # a mesh payload: its type byte, then the envelope
    print("sent", flush=True)
    await trio.sleep(2)  # the frame is read before the link closes
    await trio.aclose_forcefully(tls)


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
