"""Signed chains for the transcript tests: seats' keys, a script of steps, and build to sign it."""

from __future__ import annotations

from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.wire import ZERO_HASH, Envelope, make_envelope

RNG = SeededRng("test_transcript")
SEATS = [Identity.generate(RNG) for _ in range(3)]
STRANGER = Identity.generate(RNG)
GAME = RNG.token_bytes(16)


def script(n_seats: int = 3) -> list[tuple[int, str, dict]]:
    out: list[tuple[int, str, dict]] = [
        (0, "offer", {"name": "t", "rules": {}, "max_seats": 4, "app": "p2p-chinchon", "nonce": RNG.token_bytes(32),
                      "proof_rounds": 64, "host_key": SEATS[0].public_bytes}),
        (0, "seating", {"players": [{"name": f"p{i}", "key": SEATS[i].public_bytes, "addr": "", "addrs": []} for i in range(n_seats)]}),
    ]
    out += [(s, "toss", {"nonce": RNG.token_bytes(32)}) for s in range(n_seats)]
    out += [(s, "key_commit", {"hand": 0, "commit": RNG.token_bytes(32)}) for s in range(n_seats)]
    return out


def build(steps, *, game: bytes = GAME, signer=None, prev: bytes = ZERO_HASH, seq0: int = 0) -> list[Envelope]:
    envs = []
    for i, (seat, kind, body) in enumerate(steps):
        key = (signer or (lambda s: SEATS[s] if s < len(SEATS) else STRANGER))(seat)
        env = make_envelope(key.private_key, game=game, seq=seq0 + i, seat=seat, prev=prev, kind=kind, body=body)
        envs.append(env)
        prev = env.hash()
    return envs
