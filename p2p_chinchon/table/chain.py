"""The chain: total order, early buffer, equivocation, resync and evidence.

:class:`Chain` owns ``envelopes``/``frames``/``head``/``buffer``. Every frame from a peer and every
envelope of our own that joins the chain (our own ``fault`` excepted) passes :meth:`Chain.apply`: position, previous hash, signature, speaker and
kind are checked here; the message's own checks are its handler's (``on_<kind>`` of the part
that owns the kind, which the table names: :meth:`ChainRouter.handler`), which return a commit
closure without changing anything. Only when every check has passed does the envelope join
the chain and its commit run. Knows nothing of cards: what it asks of the other parts is the
three small interfaces below. (docs/protocol.md "Envelope", "Seats, order and phases")"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from p2p_chinchon import wire
from p2p_chinchon.schedule import TERMINAL_KINDS

from .common import (
    MAX_BUFFERED,
    MAX_BUFFERED_BYTES,
    RESYNC_DEPTH,
    ZERO32,
    Accepted,
    Commit,
    Evidence,
    Outbox,
    Output,
    ProtocolViolation,
    Resync,
    Send,
    _Dropped,
    _Equivocation,
    _unexpected,
)
from .state import Flow, Part

if TYPE_CHECKING:
    from .lobby import Lobby
    from .view import EventLog

Judgement = tuple[str, ProtocolViolation | None]


class HandNumber(Protocol):
    """The hand being played (:class:`~p2p_chinchon.table.hand.Hand`)."""

    @property
    def hand_no(self) -> int: ...


class ChainRouter(Protocol):
    """What the chain asks of the table around it (:class:`~p2p_chinchon.table.Table`)."""

    @property
    def hand(self) -> HandNumber: ...

    def handler(self, kind: str) -> Callable[[wire.Envelope], Commit | None]:
        """The check of an envelope of ``kind`` (its part's ``on_<kind>``)."""
        ...

    def _advance(self) -> None:
        """Sign this seat's automatic messages that are due now."""
        ...


class ChainFaults(Protocol):
    """What the chain asks of the faults part (faults.py)."""

    def judge_replayed(self, env: wire.Envelope) -> None:
        """Audit: judge a recorded ``fault`` against the state just before it."""
        ...

    def stop_with_fault(self, exc: ProtocolViolation, frames: tuple[bytes, ...]) -> None: ...

    def stop_from_peer(self, env: wire.Envelope) -> None: ...


class ChainRemoval(Protocol):
    """What the chain asks of the removal part (removal.py): votes and leaves never chained,
    and removes of another branch."""

    removed: dict[int, str]  # seat -> why: its removal is complete in our chain
    leaves: dict[int, bytes]  # seat -> its signed leave, kept out of the chain

    def note_vote(self, env: wire.Envelope, frame: bytes) -> None: ...

    def plays_on_without(self, seat: int) -> bool: ...

    def leave_acted_on(self, seat: int, frame: bytes) -> bool: ...

    def note_leave(self, env: wire.Envelope, frame: bytes) -> None: ...

    def removal_conflict(self, env: wire.Envelope, mine: wire.Envelope) -> bool: ...

    def note_branch(self, env: wire.Envelope) -> bool: ...


class Chain(Part):
    """The chain part of :class:`~p2p_chinchon.table.Table`: the accepted envelopes in order
    (``envelopes``, their exact bytes ``frames``, ``head`` the hash of the last one), the early
    ``buffer`` (seq -> seat -> validly signed frame), and what is being checked now (the
    signer ``current_seat`` and its ``current_frame``; ``emitting_own`` for our own;
    ``replaying`` for an audit's replay). ``router``, ``faults`` and ``removal`` are set by
    the table once every part is built."""

    router: ChainRouter
    faults: ChainFaults
    removal: ChainRemoval

    def __init__(self, flow: Flow, lobby: Lobby, out: Outbox, events: EventLog) -> None:
        super().__init__(flow, lobby, out, events)
        self.envelopes: list[wire.Envelope] = []
        self.frames: list[bytes] = []
        self.head: bytes = ZERO32
        self.buffer: dict[int, dict[int, bytes]] = {}
        self.current_frame = b""
        self.current_seat: int | None = None
        self.emitting_own = False
        self.replaying = False
        self.asked_ahead: int | None = None  # our chain's length when we last asked for envelopes ahead

    def guarded(self, step: Callable[[], None], frames: tuple[bytes, ...], link_seat: int | None = None) -> None:
        """Run ``step`` then everything it unblocks. A frame nobody can be blamed for is dropped
        and kept as evidence (the table goes on); a violation stops the table with a fault."""
        try:
            try:
                step()
                self.drain_buffer()
                self.router._advance()
            except ProtocolViolation:
                raise
            except Exception as exc:  # noqa: BLE001 - no exception from the table escapes a node
                raise _unexpected(self.current_seat, exc, len(self.envelopes)) from None
        except _Dropped as d:
            self.out.add(Evidence(d.seat, d.rule, d.reason, d.frames or frames))
            self.events.event("dropped", (d.seat,), rule=d.rule, detail=d.reason)
            if d.resync is not None and link_seat is not None:
                self.out.add(Resync(link_seat, d.resync))
        except ProtocolViolation as exc:
            self.faults.stop_with_fault(exc, frames)

    def replay(self, frame: bytes | wire.Envelope) -> list[Output]:
        """Audit: apply the next frame of a recorded chain, strictly in order. Raises
        :class:`ProtocolViolation` (nothing changed) instead of stopping with a fault. For a
        ``fault``, the faults part judges its evidence against the state before it
        (``Faults.judge_replayed`` sets ``Faults.fault_judgement``). ``frame`` may be given already decoded, as the
        :class:`~p2p_chinchon.wire.Envelope` that :func:`~p2p_chinchon.wire.decode_envelope`
        returned for it (an audit or a resume decodes each frame once, not three times); its
        frame is then ``env.encode()``, the exact bytes it was decoded from."""
        self.out.items = []
        if isinstance(frame, wire.Envelope):
            env, frame = frame, frame.encode()
        else:
            try:
                env = wire.decode_envelope(frame)
            except wire.WireError as exc:
                raise ProtocolViolation(None, "malformed", str(exc), len(self.envelopes)) from None
        if env.seq != len(self.envelopes):
            raise ProtocolViolation(env.seat, "seq", f"seq {env.seq} at position {len(self.envelopes)}", len(self.envelopes))
        if env.kind == "fault":
            self.faults.judge_replayed(env)
        self.replaying = True  # a recorded leave is applied where it stands
        try:
            self.accept_frame(frame, None, env)
        finally:
            self.replaying = False
        return self.out.take()

    def emit_own(self, kind: str, body: dict[str, Any]) -> None:
        """Sign our own ``kind`` envelope and apply it through every check a peer's passes
        (raises :class:`ProtocolViolation` with nothing changed); then send it."""
        env = wire.make_envelope(
            self.lobby.signing_key().private_key,
            game=self.lobby.game,
            seq=len(self.envelopes),
            seat=self.lobby.seat(),
            prev=self.head,
            kind=kind,
            body=body,
        )
        frame = env.encode()
        self.emitting_own = True
        try:
            self.apply(env, frame)  # same rule checks as for a peer (raises before any change)
        finally:
            self.emitting_own = False
        self.out.add(Send(frame))

    def accept_frame(self, frame: bytes, link_seat: int | None, env: wire.Envelope | None = None) -> None:
        """Place one frame: apply it at the head, buffer it if early, compare it if late.

        Blame needs a signature: a frame that does not decode, is not validly signed by the
        seat it names, or belongs to another game is dropped (:class:`_Dropped`, kept as
        evidence) and never names a seat in a fault, since anyone on the network path can
        produce one. A validly signed envelope that conflicts with ours either proves
        something against its signer (equivocation, speaking out of turn) or shows that our
        histories diverged, in which case we ask the sender for its envelopes (Resync).
        ``env``: ``frame`` already decoded (:meth:`replay`)."""
        if env is None:
            try:
                env = wire.decode_envelope(frame)
            except wire.WireError as exc:
                raise _Dropped(link_seat, "malformed", str(exc)) from None
        if self.envelopes and env.game != self.lobby.game:
            raise _Dropped(env.seat, "wrong_game", "an envelope of another game (a replay?)")
        self.current_seat = env.seat  # what goes wrong judging it is its signer's, not the last one's
        n = len(self.envelopes)
        if self.lobby.players and not self.replaying and self.out_for_good(env):
            self.drop_removed(env, frame)
            return
        if env.kind == "away":
            if self.replaying:  # a forged one is damage, not its named seat's (signature first)
                if self.envelopes:  # after the offer a key is known: the host's, then the seating's
                    self.check_sig(env)
                if n > 0 and env.prev != self.head:  # another history, as for any envelope
                    raise _Dropped(env.seat, "diverged", f"seq {env.seq} follows another history")
                raise ProtocolViolation(env.seat, "unexpected", "an away vote is never chained", env.seq)
            self.removal.note_vote(env, frame)  # removal.py: a vote, never chained
            return
        if (env.kind == "leave" and self.lobby.players and not self.replaying and 0 <= env.seat < len(self.lobby.players)
                and self.removal.leave_acted_on(env.seat, frame)):
            return  # the same leave again (a resync answer from the leaver): already acted on
        if env.kind == "leave" and self.lobby.players and not self.replaying and self.removal.plays_on_without(env.seat):
            self.verify_or_drop(env)
            self.removal.note_leave(env, frame)  # not chained: the others remove the seat (removal.py)
            return
        if env.seq < n:
            if self.frames[env.seq] == frame:
                return  # duplicate (resent after a reconnect, or answered to a resync)
            self.verify_or_drop(env)
            if env.kind == "leave" and self.removal.plays_on_without(env.seat):
                # too late for its place: the game goes on, the seat is removed as absent
                raise _Dropped(env.seat, "late_leave", f"a leave at seq {env.seq}, where another envelope is")
            if env.kind in TERMINAL_KINDS:
                self.faults.stop_from_peer(env)
                return
            mine = self.envelopes[env.seq]
            if mine.seat == env.seat:
                raise _Equivocation(env.seat, (self.frames[env.seq], frame), env.seq)
            if "remove" in (env.kind, mine.kind) and self.removal.removal_conflict(env, mine):
                return
            if mine.prev == env.prev:
                raise ProtocolViolation(env.seat, "not_your_turn",
                                        f"signed seq {env.seq} where seat {mine.seat} spoke", env.seq)
            if self.removal.note_branch(env):
                return  # another branch's removal of this seat, every signature in
            raise _Dropped(env.seat, "diverged", f"seq {env.seq} follows another history",
                           resync=max(0, env.seq - RESYNC_DEPTH))
        if self.lobby.players:
            self.verify_or_drop(env)
            if (env.seq > n or env.prev != self.head) and self.removal.note_branch(env):
                return
        if env.seq > n:
            if env.kind in TERMINAL_KINDS and self.lobby.players and not (
                    env.kind == "leave" and self.removal.plays_on_without(env.seat)):
                self.faults.stop_from_peer(env)  # a peer stopped the table at a point we have not reached
                return
            slot = self.buffer.get(env.seq, {})
            old = slot.get(env.seat)
            if old is not None and old != frame:
                if self.lobby.players:
                    raise _Equivocation(env.seat, (old, frame), env.seq)
                return
            held = sum(len(f) for x in self.buffer.values() for f in x.values())
            if (env.seq > n + MAX_BUFFERED or sum(len(x) for x in self.buffer.values()) >= MAX_BUFFERED
                    or held + len(frame) > MAX_BUFFERED_BYTES):
                self.ask_ahead(link_seat)  # we may be the one behind: never an accusation
                return
            self.buffer.setdefault(env.seq, {})[env.seat] = frame
            return
        if env.prev != self.head and n > 0:
            raise _Dropped(env.seat, "diverged", f"seq {env.seq} follows another history",
                           resync=max(0, n - RESYNC_DEPTH))
        self.apply(env, frame, verified=bool(self.lobby.players))

    def out_for_good(self, env: wire.Envelope) -> bool:
        """``env`` is signed by another seat out of the game for good here: its removal is
        complete in our chain, or its ``leave`` is chained; or ``env`` stands at or after the
        position of its ``leave`` held for its removal (signed after it: an honest seat signs
        nothing after its leave; what it signed before may still be on its way)."""
        if env.seat == self.lobby.me:
            return False
        if env.seat in self.flow.left:
            return True
        held = self.removal.leaves.get(env.seat)
        return held is not None and env.seq >= wire.decode_envelope(held).seq

    def drop_removed(self, env: wire.Envelope, frame: bytes) -> None:
        """``env`` is signed by a seat out of the game for good here (:meth:`out_for_good`):
        whatever it names (a ``fault`` or ``leave`` included, at any position), it changes
        nothing here (rule ``removed``, or ``left`` for a seat that left). Its envelopes from before, and
        its held ``leave``, sent again, are duplicates; any other is dropped and kept as
        evidence (with ours at its position, when we hold one). Raises :class:`_Dropped`."""
        if (env.seq < len(self.envelopes) and self.frames[env.seq] == frame) or self.removal.leaves.get(env.seat) == frame:
            return
        self.verify_or_drop(env)
        ours = (self.frames[env.seq],) if env.seq < len(self.envelopes) and env.kind != "away" else ()
        rule, how = ("removed", "was removed from") if env.seat in self.removal.removed else ("left", "left")
        raise _Dropped(env.seat, rule, f"seat {env.seat} {how} the game: its {env.kind} at seq {env.seq} "
                       "changes nothing", frames=(*ours, frame))

    def ask_ahead(self, link_seat: int | None) -> None:
        """A validly signed envelope too far ahead of our chain to buffer (more than
        :data:`MAX_BUFFERED` positions, or the buffer full): no seat is blamed (it is as likely
        that we were away as that it floods), nothing is kept; we ask the link's seat for what
        follows our chain (:class:`Resync`), once per length of our chain."""
        n = len(self.envelopes)
        if link_seat is None or self.asked_ahead == n:
            return
        self.asked_ahead = n
        self.out.add(Resync(link_seat, n))

    def verify_or_drop(self, env: wire.Envelope) -> None:
        try:
            self.check_sig(env)
        except ProtocolViolation as exc:
            raise _Dropped(env.seat, exc.rule, exc.reason) from None

    def drain_buffer(self) -> None:
        while not (self.flow.fault or self.flow.finished):
            cands = self.buffer.pop(len(self.envelopes), None)
            if not cands:
                break
            step = self.flow.expected()
            speaker = step.seat if step is not None else -1
            # the expected speaker's envelope first; any other seat's is then out of turn
            for _seat, frame in sorted(cands.items(), key=lambda kv: kv[0] != speaker):
                self.accept_frame(frame, None)
                if self.flow.fault or self.flow.finished:
                    return
            self.router._advance()

    def check_sig(self, env: wire.Envelope) -> None:
        key = self.key_of(env)
        try:
            wire.verify_envelope(env, key)
        except wire.WireError as exc:
            raise ProtocolViolation(env.seat, "bad_signature", str(exc), env.seq) from None

    def key_of(self, env: wire.Envelope) -> bytes:
        if env.kind == "offer" and env.seq == 0:
            key = env.body.get("host_key")
            if not isinstance(key, bytes):
                raise ProtocolViolation(env.seat, "malformed", "offer without host key", 0)
            return key
        if env.seat >= len(self.lobby.players):
            if env.seq == 1 and env.seat == 0:
                return self.lobby.offer_key
            raise ProtocolViolation(env.seat, "unknown_seat", f"no seat {env.seat} at this table", env.seq)
        return self.lobby.players[env.seat].key

    def apply(self, env: wire.Envelope, frame: bytes, verified: bool = False) -> None:
        """Check ``env`` at the head of the chain and apply it. Raises ProtocolViolation with
        nothing changed; on success the envelope is appended and Accepted is emitted.
        ``verified``: the signature was already checked (or the envelope is our own)."""
        commit = self.check_envelope(env, frame, verified)
        # All checks passed: mutate.
        self.envelopes.append(env)
        self.frames.append(frame)
        self.head = env.hash()
        self.out.add(Accepted(env.seq, frame, env))
        if commit is not None:
            commit()

    def record(self, env: wire.Envelope, frame: bytes) -> None:
        """Append our own ``fault`` unchecked: it stops the table, nothing follows it."""
        self.envelopes.append(env)
        self.frames.append(frame)
        self.head = env.hash()
        self.out.add(Accepted(env.seq, frame, env))

    def check_envelope(self, env: wire.Envelope, frame: bytes, verified: bool = False) -> Commit | None:
        """Every check of ``env`` at the head of the chain, changing nothing: returns the
        commit closure of its handler (the apply step), or raises ProtocolViolation."""
        if env.seq != len(self.envelopes):
            raise ProtocolViolation(env.seat, "seq", f"seq {env.seq}, expected {len(self.envelopes)}", env.seq)
        self.current_frame = frame
        self.current_seat = env.seat
        if env.prev != self.head:
            raise ProtocolViolation(env.seat, "broken_chain", "prev is not the hash of the previous envelope", env.seq)
        if env.seq == 0:
            if env.kind != "offer" or env.seat != 0:
                raise ProtocolViolation(env.seat, "unexpected", "a chain starts with the host's offer", 0)
            self.check_sig(env)
            commit = self.checked(env, self.router.handler("offer"))
        else:
            if env.game != self.lobby.game:
                raise ProtocolViolation(env.seat, "wrong_game", "envelope belongs to another game", env.seq)
            if not (verified or self.emitting_own):
                self.check_sig(env)
            if env.kind in TERMINAL_KINDS:
                commit = self.checked(env, self.router.handler(env.kind))
            elif env.kind == "remove":  # its first one is not the expected speaker's
                commit = self.checked(env, self.router.handler("remove"))
            else:
                step = self.flow.expected()
                if step is None:
                    raise ProtocolViolation(env.seat, "unexpected", f"no message expected, got {env.kind}", env.seq)
                if env.seat != step.seat:
                    raise ProtocolViolation(
                        env.seat, "not_your_turn", f"seat {step.seat} must send {step.kind}, not seat {env.seat}", env.seq
                    )
                kinds = ("discard", "close") if step.kind == "discard" else (step.kind,)
                if env.kind not in kinds:
                    raise ProtocolViolation(env.seat, "unexpected", f"expected {step.kind}, got {env.kind}", env.seq)
                if "hand" in env.body and self.flow.engine is not None and env.body["hand"] != self.router.hand.hand_no:
                    raise ProtocolViolation(env.seat, "wrong_hand", f"hand {env.body['hand']}, expected {self.router.hand.hand_no}", env.seq)
                commit = self.checked(env, self.router.handler(env.kind))  # validates everything, returns a closure that mutates
        return commit

    def judge_frame(self, env: wire.Envelope, frame: bytes) -> Judgement:
        """What one validly placed frame proves against its signer here, changing nothing
        (the checks of :meth:`accept_frame` without its effects): ``("proves", violation)``,
        ``("valid", None)`` (a legal move at our head) or ``("unverifiable", None)``."""
        n = len(self.envelopes)
        if env.game != self.lobby.game:
            return "unverifiable", None
        try:
            self.check_sig(env)
        except ProtocolViolation:
            return "unverifiable", None
        if env.seq < n:
            mine = self.envelopes[env.seq]
            if env.kind in TERMINAL_KINDS or self.frames[env.seq] == frame:
                return "unverifiable", None
            if mine.seat != env.seat and env.kind != mine.kind and (env.kind == "remove" or (
                    mine.kind == "remove" and env.seat == mine.body["seat"])):
                return "unverifiable", None  # who is gone is a matter of view, not of proof
            if mine.seat == env.seat:
                return "proves", _Equivocation(env.seat, (self.frames[env.seq], frame), env.seq)
            if mine.prev == env.prev:
                return "proves", ProtocolViolation(env.seat, "not_your_turn",
                                                   f"signed seq {env.seq} where seat {mine.seat} spoke", env.seq)
            return "unverifiable", None
        if env.seq > n:
            old = self.buffer.get(env.seq, {}).get(env.seat)
            if old is not None and old != frame:
                return "proves", _Equivocation(env.seat, (old, frame), env.seq)
            return "unverifiable", None
        if env.prev != self.head:
            return "unverifiable", None
        saved = self.current_frame, self.current_seat
        try:
            self.check_envelope(env, frame, verified=True)
        except ProtocolViolation as exc:
            return "proves", exc
        finally:
            self.current_frame, self.current_seat = saved
        return "valid", None

    def checked(self, env: wire.Envelope, handler: Callable[[wire.Envelope], Commit | None]) -> Commit | None:
        """Run a handler's checks: any error they raise (the engine's, the deck's, a body of
        the wrong shape) is the signer's protocol violation, raised before any change."""
        try:
            return handler(env)
        except ProtocolViolation:
            raise
        except Exception as exc:  # noqa: BLE001 - engine.GameError, deck.DeckError, KeyError...
            raise _unexpected(env.seat, exc, env.seq) from None

