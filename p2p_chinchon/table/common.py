"""What every part of the table shares: its errors, its outputs and the :class:`Outbox` they
are collected in, the hashes every seat signs (rules, seating, toss) and the protocol's limits."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import msgpack

from p2p_chinchon import deck, engine, view as v, wire
from p2p_chinchon.identity import fingerprint
from p2p_chinchon.rng import SeededRng

APP = "p2p-chinchon"
DEFAULT_PROOF_ROUNDS = 64  # cut-and-choose shadow shuffles: soundness 2^-64
# A joiner refuses weaker tables: below ~40 rounds a shuffler can grind a forged proof
# (2^k Fiat-Shamir tries) within a turn's timeout. Tests and demos lower it explicitly.
MIN_PROOF_ROUNDS = 40
MAX_BUFFERED = 512  # early envelopes kept while waiting for their predecessors
# ...and their bytes: an honest seat is at most a round of shuffles ahead (8 seats x ~200 KiB
# at k = 64), so 16 MiB never refuses one, while 512 frames of 1 MiB would be 0.5 GiB.
MAX_BUFFERED_BYTES = 16 << 20
RESYNC_DEPTH = 16  # on divergence, ask the peer for this many envelopes before the conflict
LOG_KEEP = 200
ZERO32 = bytes(32)
VERIFYING = "verifying the shuffle"
# Faults a seat finds opening its own card, which no other seat can re-check.
PRIVATE_OPEN_RULES = ("duplicate_card", "face_mismatch", "not_a_card", "bad_card")


def _h(*parts: bytes) -> bytes:
    d = hashlib.sha256()
    for p in parts:
        d.update(len(p).to_bytes(4, "big"))
        d.update(p)
    return d.digest()


def _packb(obj: Any) -> bytes:
    packed: bytes = msgpack.packb(obj, use_bin_type=True)
    return packed


def rules_hash(rules_wire: dict[str, Any], proof_rounds: int) -> bytes:
    """SHA-256 of the canonical rules map (plus the proof parameter) every seat signs."""
    items = sorted(rules_wire.items())
    return _h(b"p2p-chinchon/rules/v1", _packb(items), proof_rounds.to_bytes(2, "big"))


def seating_hash(players: list[dict[str, Any]]) -> bytes:
    return _h(b"p2p-chinchon/seating/v1", _packb([[p["name"], p["key"], p["addr"]] for p in players]))


def toss_commitment(game: bytes, seat: int, nonce: bytes) -> bytes:
    return _h(b"p2p-chinchon/toss/v1", game, seat.to_bytes(1, "big"), nonce)


class ProtocolViolation(Exception):
    """A peer's envelope broke the protocol. ``seat`` is the accused seat (None when the frame
    cannot be attributed), ``rule`` a stable id, ``index`` the chain position it claimed."""

    def __init__(self, seat: int | None, rule: str, reason: str, index: int | None = None):
        super().__init__(f"seat {seat}: {rule}: {reason}" if seat is not None else f"{rule}: {reason}")
        self.seat = seat
        self.rule = rule
        self.reason = reason
        self.index = index


class IntentError(Exception):
    """This seat asked for something the rules or the protocol do not allow now."""


@dataclass(frozen=True)
class Accepted:
    """An envelope joined the chain (ours or a peer's): persist ``frame`` before acting on it."""

    index: int
    frame: bytes
    env: wire.Envelope


@dataclass(frozen=True)
class Send:
    """Broadcast ``frame`` to every other seat."""

    frame: bytes


@dataclass(frozen=True)
class Evidence:
    """A rejected frame kept as evidence (never in the chain)."""

    seat: int | None
    rule: str
    reason: str
    frames: tuple[bytes, ...]


@dataclass(frozen=True)
class Resync:
    """Our chain and ``seat``'s have diverged: ask it for its envelopes from ``from_seq`` on,
    so that the conflicting versions meet and whoever signed both is caught (equivocation)."""

    seat: int
    from_seq: int


@dataclass(frozen=True)
class GameEvent:
    """An engine event (dealt, drew, discarded, closed, scored, eliminated, game over...)."""

    event: engine.Event


@dataclass(frozen=True)
class Job:
    """Heavy, pure work the driver may run off the event loop (a thread or a process pool:
    ``fn`` is a module-level function, ``args`` are picklable) and report back with
    :meth:`Table.job_done`. Kinds: ``verify_shuffle`` (a peer's proof, deferred when the
    table was built with ``defer_proofs``) and ``prepare_shuffle`` (our own shuffle's
    multiplications, done while we wait for our turn; for the first shuffle of a hand and for
    every re-shuffle of the stock). The driver must report every job: a seat whose turn to
    shuffle comes while its ``prepare_shuffle`` job runs waits for it."""

    id: int
    kind: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]


def run_job(job: Job) -> Any:
    """Run a job, returning its result or the DeckError it raised (never raising it)."""
    try:
        return job.fn(*job.args)
    except deck.DeckError as exc:
        return exc


def _prepare_shuffle(joint: bytes, n: int, k: int, seed: bytes | None,
                     system: str = deck.PROOF_SYSTEMS[0]) -> deck.ShufflePrep:
    import secrets

    return deck.prepare_shuffle(joint, n, SeededRng(seed) if seed is not None else secrets, k,
                                system=deck.proof_system(system, k))


def _verify_shuffle(ctx: deck.Context, joint: bytes, deck_in: list[deck.Ciphertext],
                    deck_out: list[deck.Ciphertext], proof: bytes, k: int,
                    round: int, system: str) -> None:
    """``deck.verify_shuffle`` with the table's proof system (``rules.shuffle_proof``) by name."""
    deck.verify_shuffle(ctx, joint, deck_in, deck_out, proof, k, round,
                        system=deck.proof_system(system, k))


@dataclass(frozen=True)
class Stopped:
    fault: v.Fault


@dataclass(frozen=True)
class Finished:
    winner: int | None


@dataclass
class Player:
    name: str
    key: bytes
    addr: str
    addrs: tuple[str, ...] = ()  # more places the seat may be reached (docs/protocol.md "Lobby", "Table setup: rules, seating, coin toss")

    @cached_property
    def fingerprint(self) -> str:
        """:func:`p2p_chinchon.identity.fingerprint` of ``key`` (kept: every view shows it)."""
        return fingerprint(self.key)


@dataclass(frozen=True)
class Step:
    kind: str
    seat: int


Output = Accepted | Send | Evidence | Resync | GameEvent | Job | Stopped | Finished
# What a handler returns once every check of an envelope passed: the change it makes.
Commit = Callable[[], None]


class Outbox:
    r"""The outputs of one call into the table (``receive``, ``intent``, ...), in order, and
    the counter that numbers the :class:`Job`\ s handed to the driver. Every part adds to the
    one outbox."""

    def __init__(self) -> None:
        self.items: list[Output] = []
        self.jobs = 0

    def add(self, item: Output) -> None:
        self.items.append(item)

    def take(self) -> list[Output]:
        """The outputs so far, emptying the outbox."""
        out, self.items = self.items, []
        return out

    def new_job(self, kind: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> int:
        """Hand the driver a :class:`Job`; returns its id (for :meth:`Table.job_done`)."""
        self.jobs += 1
        self.items.append(Job(self.jobs, kind, fn, args))
        return self.jobs


def _clip_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8 without splitting a character (the wire
    caps names in bytes)."""
    return text.encode()[:limit].decode("utf-8", "ignore")


def _unexpected(seat: int | None, exc: Exception, index: int | None) -> ProtocolViolation:
    """An error from a check (engine, deck, a malformed body) as a protocol violation."""
    rule = getattr(exc, "rule", None) or getattr(exc, "step", None)
    rule = rule or ("bad_card" if isinstance(exc, engine.GameError) else "malformed")
    reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
    return ProtocolViolation(seat, str(rule), f"{reason} ({type(exc).__name__})"[:256], index)


def proof_frames(exc: ProtocolViolation) -> tuple[bytes, ...]:
    return getattr(exc, "frames", ())


def _fit_evidence(frames: tuple[bytes, ...]) -> list[bytes]:
    """Evidence frames that fit in one fault envelope (the frame cap is 1 MiB)."""
    out, size = [], 0
    for f in frames[:8]:
        if size + len(f) > 900_000:
            break
        out.append(f)
        size += len(f)
    return out


class _Dropped(ProtocolViolation):
    """A frame that proves nothing against anyone: dropped, kept as evidence, table goes on."""

    def __init__(self, seat: int | None, rule: str, reason: str, resync: int | None = None,
                 frames: tuple[bytes, ...] = ()):
        super().__init__(seat, rule, reason)
        self.resync = resync
        self.frames = frames


class _Equivocation(ProtocolViolation):
    def __init__(self, seat: int, frames: tuple[bytes, bytes], index: int):
        super().__init__(seat, "equivocation", f"two different signed envelopes for seq {index}", index)
        self.frames = frames


