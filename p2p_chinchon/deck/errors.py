"""The deck's one error type: a verdict naming the offending seat and protocol step."""

from __future__ import annotations


class DeckError(Exception):
    """A peer's deck message failed a check, or local input to the deck is malformed.

    Attributes:
        seat: the seat that authored the bad message (``Context.seat`` of the verifier's
            context), or ``None`` when no seat is to blame (e.g. a local decoding call).
        step: the protocol step, one of ``"key_share"``, ``"key_commit"``, ``"joint_key"``,
            ``"shuffle"``, ``"share"``, ``"secret"``, ``"open"``, ``"decode"``, ``"group"``.
        reason: a short human-readable explanation.
    """

    def __init__(self, seat: int | None, step: str, reason: str) -> None:
        self.seat = seat
        self.step = step
        self.reason = reason
        who = "no seat" if seat is None else f"seat {seat}"
        super().__init__(f"{step}: {reason} ({who})")

    def blame(self, seat: int | None, step: str) -> DeckError:
        """A copy naming ``seat`` and ``step`` (used when a low-level check fails)."""
        return DeckError(seat, step, self.reason)

    def __reduce__(self) -> tuple[type[DeckError], tuple[int | None, str, str]]:
        # picklable, so verifiers can run in a process pool
        return (DeckError, (self.seat, self.step, self.reason))
