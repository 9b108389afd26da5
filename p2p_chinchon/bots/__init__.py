"""Bots: strategies that choose a move from what one seat may know (its
:class:`~p2p_chinchon.view.SeatView`). Three levels: ``easy`` (:class:`SimpleBot`, greedy on
deadwood), ``normal`` and ``hard`` (:mod:`.strategy`)."""

from __future__ import annotations

from typing import Any

from .simple import SimpleBot
from .strategy import HardBot, NormalBot

__all__ = ["SimpleBot", "NormalBot", "HardBot", "LEVELS", "BEST_LEVEL", "make_bot", "parse_levels"]

LEVELS: dict[str, type] = {"easy": SimpleBot, "normal": NormalBot, "hard": HardBot}
BEST_LEVEL = "hard"


def make_bot(rules: Any, rng: Any, level: str = "easy") -> Any:
    """A bot of ``level`` (easy, normal, hard) for a table with ``rules``; ``rng`` breaks ties
    (pass a SeededRng for reproducible games). Raises ValueError for an unknown level."""
    try:
        cls = LEVELS[level]
    except KeyError:
        raise ValueError(f"unknown bot level {level!r} (easy, normal, hard)") from None
    return cls(rules, rng)


def parse_levels(text: str, n: int) -> list[str]:
    """``"hard"`` -> that level for all ``n`` bots; ``"easy,normal,hard"`` -> one per bot, in
    seat order (exactly ``n``). Raises ValueError naming the bad part."""
    parts = [p.strip().lower() for p in text.split(",")]
    bad = [p for p in parts if p not in LEVELS]
    if bad:
        raise ValueError(f"unknown bot level {bad[0]!r} (easy, normal, hard)")
    if len(parts) == 1:
        return parts * n
    if len(parts) != n:
        raise ValueError(f"{len(parts)} bot levels for {n} bots (give one, or one per bot)")
    return parts
