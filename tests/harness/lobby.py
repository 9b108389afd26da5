"""The lobby tests' pieces: a host's table ready to open its lobby, and a stand-in link."""

from __future__ import annotations

from p2p_chinchon import table as tbl
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng


def host_table(seats: int, host_id: Identity) -> tbl.Table:
    """Ana's classic table of ``seats`` seats, 4 proof rounds, not yet open."""
    table = tbl.Table.create(host_id, SeededRng("host"), name="Mesa de Ana", rules=make_rules("classic", {}),
                             max_seats=seats, addr="127.0.0.1:1", proof_rounds=4)
    table.lobby.set_host_name("Ana")
    return table


class Frames:
    """A stand-in link that replays frames, for :func:`read_answer`."""

    def __init__(self, *frames: bytes | None) -> None:
        self.frames = list(frames)

    async def receive(self) -> bytes | None:
        return self.frames.pop(0)
