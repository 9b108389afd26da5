"""Injected randomness for the sans-I/O core.

Production code passes the :mod:`secrets` module itself (it has ``token_bytes`` and
``randbelow``). Tests pass :class:`SeededRng`, a deterministic source built on SHAKE-256 so that
runs are reproducible. Never use the :mod:`random` module for anything secret.
"""

from __future__ import annotations

import hashlib
from typing import Protocol


class Rng(Protocol):
    def token_bytes(self, n: int) -> bytes: ...

    def randbelow(self, n: int) -> int: ...


class SeededRng:
    """Deterministic byte stream: SHAKE-256(seed || counter). For tests and replays only."""

    def __init__(self, seed: bytes | str | int) -> None:
        if isinstance(seed, int):
            seed = seed.to_bytes(16, "big", signed=True)
        elif isinstance(seed, str):
            seed = seed.encode()
        self._seed = bytes(seed)
        self._counter = 0

    def token_bytes(self, n: int) -> bytes:
        self._counter += 1
        h = hashlib.shake_256(self._seed + self._counter.to_bytes(8, "big"))
        return h.digest(n)

    def randbelow(self, n: int) -> int:
        """Uniform integer in [0, n) by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError("randbelow(n) needs n > 0")
        nbytes = (n.bit_length() + 7) // 8 + 1
        limit = (256**nbytes // n) * n
        while True:
            x = int.from_bytes(self.token_bytes(nbytes), "big")
            if x < limit:
                return x % n
