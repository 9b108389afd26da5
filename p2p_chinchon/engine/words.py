"""English count phrases for the engine's and the commands' messages ("1 point", "2 points")."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``"1 point"``, ``"-1 point"``, ``"0 points"``, ``"3 unmatched cards"``: ``n`` with
    ``noun``, singular for 1 and -1, else ``plural`` (default: ``noun`` + "s")."""
    return f"{n} {noun if abs(n) == 1 else (plural or noun + 's')}"
