"""Unfinished games for the comeback tests' choice among several (no transcript behind them)."""

from __future__ import annotations

from pathlib import Path

from p2p_chinchon.commands.comeback import Unfinished


def unfinished_game(name: str, host: str, when: float) -> Unfinished:
    """A two-seat game ``name`` hosted at ``host``, last played at ``when``."""
    return Unfinished(Path(f"/x/{name}.chn"), name, ("Ana", "Bruno"), 1, (host, "10.0.0.9"), 40, when)
