"""The chain: total order, early buffer, equivocation, resync and evidence.

Owns ``chain``/``frames``/``head``/``buffer``. Every frame from a peer and every envelope of
our own passes :meth:`ChainPart._apply`: position, previous hash, signature, speaker and kind
are checked here; the message's own checks are its handler's (``_on_<kind>``, found by name),
which return a commit closure without changing anything. Only when every check has passed
does the envelope join the chain and its commit run. Knows nothing of cards.
(docs/protocol.md "Chain")"""

from __future__ import annotations

from typing import Any

from p2p_chinchon import wire

from .common import (
    MAX_BUFFERED,
    MAX_BUFFERED_BYTES,
    RESYNC_DEPTH,
    TERMINAL_KINDS,
    Accepted,
    Evidence,
    ProtocolViolation,
    Resync,
    Send,
    _Dropped,
    _Equivocation,
    _unexpected,
)


class ChainPart:
    """The chain part of :class:`~p2p_chinchon.table.Table` (a mixin: the state is the table's)."""

    def _take(self) -> list:
        out, self._out = self._out, []
        return out

    def _guarded(self, step: Any, frames: tuple[bytes, ...], link_seat: int | None = None) -> None:
        """Run ``step`` then everything it unblocks. A frame nobody can be blamed for is dropped
        and kept as evidence (the table goes on); a violation stops the table with a fault."""
        try:
            try:
                step()
                self._drain_buffer()
                self._advance()
            except ProtocolViolation:
                raise
            except Exception as exc:  # noqa: BLE001 - no exception from the table escapes a node
                raise _unexpected(self._current_seat, exc, len(self.chain)) from None
        except _Dropped as d:
            self._out.append(Evidence(d.seat, d.rule, d.reason, d.frames or frames))
            self.log_event("dropped", (d.seat,), rule=d.rule, detail=d.reason)
            if d.resync is not None and link_seat is not None:
                self._out.append(Resync(link_seat, d.resync))
        except ProtocolViolation as exc:
            self._stop_with_fault(exc, frames)

    def replay(self, frame: bytes | wire.Envelope) -> list:
        """Audit: apply the next frame of a recorded chain, strictly in order. Raises
        :class:`ProtocolViolation` (nothing changed) instead of stopping with a fault. For a
        ``fault``, :attr:`fault_judgement` is its evidence judged against the state before it
        (:meth:`check_evidence`). ``frame`` may be given already decoded, as the
        :class:`~p2p_chinchon.wire.Envelope` that :func:`~p2p_chinchon.wire.decode_envelope`
        returned for it (an audit or a resume decodes each frame once, not three times); its
        frame is then ``env.encode()``, the exact bytes it was decoded from."""
        self._out = []
        if isinstance(frame, wire.Envelope):
            env, frame = frame, frame.encode()
        else:
            try:
                env = wire.decode_envelope(frame)
            except wire.WireError as exc:
                raise ProtocolViolation(None, "malformed", str(exc), len(self.chain)) from None
        if env.seq != len(self.chain):
            raise ProtocolViolation(env.seat, "seq", f"seq {env.seq} at position {len(self.chain)}", len(self.chain))
        if env.kind == "fault":
            b = env.body
            accused = b["accused"] if b["accused"] != 255 else None
            self.fault_judgement = self.check_evidence(b["evidence"], (b["rule"], accused, env.seat), at=env)
        self._replaying = True  # a recorded leave is applied where it stands
        try:
            self._accept_frame(frame, None, env)
        finally:
            self._replaying = False
        return self._take()

    def _emit_own(self, kind: str, body: dict) -> None:
        env = wire.make_envelope(
            self.identity.private_key,
            game=self.game,
            seq=len(self.chain),
            seat=self.me,
            prev=self.head,
            kind=kind,
            body=body,
        )
        frame = env.encode()
        self._emitting_own = True
        try:
            self._apply(env, frame)  # same rule checks as for a peer (raises before any change)
        finally:
            self._emitting_own = False
        self._out.append(Send(frame))

    def _accept_frame(self, frame: bytes, link_seat: int | None, env: wire.Envelope | None = None) -> None:
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
        if self.chain and env.game != self.game:
            raise _Dropped(env.seat, "wrong_game", "an envelope of another game (a replay?)")
        self._current_seat = env.seat  # what goes wrong judging it is its signer's, not the last one's
        n = len(self.chain)
        if env.kind == "away":
            if self._replaying:  # a forged one is damage, not its named seat's (signature first)
                if self.players:
                    self._check_sig(env)
                raise ProtocolViolation(env.seat, "unexpected", "an away vote is never chained", env.seq)
            self._note_vote(env, frame)  # removal.py: a vote, never chained
            return
        if (env.kind == "leave" and self.players and not self._replaying and 0 <= env.seat < len(self.players)
                and (env.seat in self.removed or self.leaves.get(env.seat) == frame)):
            return  # the same leave again (a resync answer from the leaver): already acted on
        if env.kind == "leave" and self.players and not self._replaying and self._plays_on_without(env.seat):
            self._verify_or_drop(env)
            self._note_leave(env, frame)  # not chained: the others remove the seat (removal.py)
            return
        if env.seq < n:
            if self.frames[env.seq] == frame:
                return  # duplicate (resent after a reconnect, or answered to a resync)
            self._verify_or_drop(env)
            if env.kind == "leave" and self._plays_on_without(env.seat):
                # too late for its place: the game goes on, the seat is removed as absent
                raise _Dropped(env.seat, "late_leave", f"a leave at seq {env.seq}, where another envelope is")
            if env.kind in TERMINAL_KINDS:
                self._stop_from_peer(env)
                return
            mine = self.chain[env.seq]
            if mine.seat == env.seat:
                raise _Equivocation(env.seat, (self.frames[env.seq], frame), env.seq)
            if "remove" in (env.kind, mine.kind) and self._removal_conflict(env, mine):
                return
            if mine.prev == env.prev:
                raise ProtocolViolation(env.seat, "not_your_turn",
                                        f"signed seq {env.seq} where seat {mine.seat} spoke", env.seq)
            if self._note_branch(env):
                return  # another branch's removal of this seat, every signature in
            raise _Dropped(env.seat, "diverged", f"seq {env.seq} follows another history",
                           resync=max(0, env.seq - RESYNC_DEPTH))
        if self.players:
            self._verify_or_drop(env)
            if (env.seq > n or env.prev != self.head) and self._note_branch(env):
                return
        if env.seq > n:
            if env.kind in TERMINAL_KINDS and self.players and not (
                    env.kind == "leave" and self._plays_on_without(env.seat)):
                self._stop_from_peer(env)  # a peer stopped the table at a point we have not reached
                return
            if env.seq > n + MAX_BUFFERED:  # no honest seat runs this far ahead of us
                raise ProtocolViolation(env.seat, "flood", f"signed seq {env.seq} while our chain has {n}", env.seq)
            slot = self.buffer.setdefault(env.seq, {})
            old = slot.get(env.seat)
            if old is not None and old != frame:
                if self.players:
                    raise _Equivocation(env.seat, (old, frame), env.seq)
                return
            if sum(len(x) for x in self.buffer.values()) >= MAX_BUFFERED:
                raise ProtocolViolation(env.seat, "flood", "too many signed envelopes ahead of the chain", env.seq)
            held = sum(len(f) for x in self.buffer.values() for f in x.values())
            if held + len(frame) > MAX_BUFFERED_BYTES:
                raise ProtocolViolation(env.seat, "flood", f"{held + len(frame)} bytes of signed envelopes "
                                        "ahead of the chain", env.seq)
            slot[env.seat] = frame
            return
        if env.prev != self.head and n > 0:
            raise _Dropped(env.seat, "diverged", f"seq {env.seq} follows another history",
                           resync=max(0, n - RESYNC_DEPTH))
        self._apply(env, frame, verified=bool(self.players))

    def _verify_or_drop(self, env: Any) -> None:
        try:
            self._check_sig(env)
        except ProtocolViolation as exc:
            raise _Dropped(env.seat, exc.rule, exc.reason) from None

    def _drain_buffer(self) -> None:
        while not (self.fault or self.finished):
            cands = self.buffer.pop(len(self.chain), None)
            if not cands:
                break
            step = self.expected()
            speaker = step.seat if step is not None else -1
            # the expected speaker's envelope first; any other seat's is then out of turn
            for _seat, frame in sorted(cands.items(), key=lambda kv: kv[0] != speaker):
                self._accept_frame(frame, None)
                if self.fault or self.finished:
                    return
            self._advance()

    def _check_sig(self, env: Any) -> None:
        key = self._key_of(env)
        try:
            wire.verify_envelope(env, key)
        except wire.WireError as exc:
            raise ProtocolViolation(env.seat, "bad_signature", str(exc), env.seq) from None

    def _key_of(self, env: Any) -> bytes:
        if env.kind == "offer" and env.seq == 0:
            key = env.body.get("host_key")
            if not isinstance(key, bytes):
                raise ProtocolViolation(env.seat, "malformed", "offer without host key", 0)
            return key
        if env.seat >= len(self.players):
            if env.seq == 1 and env.seat == 0:
                return self.offer_key
            raise ProtocolViolation(env.seat, "unknown_seat", f"no seat {env.seat} at this table", env.seq)
        return self.players[env.seat].key

    def _apply(self, env: Any, frame: bytes, verified: bool = False) -> None:
        """Check ``env`` at the head of the chain and apply it. Raises ProtocolViolation with
        nothing changed; on success the envelope is appended and Accepted is emitted.
        ``verified``: the signature was already checked (or the envelope is our own)."""
        commit = self._check_envelope(env, frame, verified)
        # All checks passed: mutate.
        self.chain.append(env)
        self.frames.append(frame)
        self.head = env.hash()
        self._out.append(Accepted(env.seq, frame, env))
        if commit is not None:
            commit()

    def _check_envelope(self, env: Any, frame: bytes, verified: bool = False) -> Any:
        """Every check of ``env`` at the head of the chain, changing nothing: returns the
        commit closure of its handler (the apply step), or raises ProtocolViolation."""
        if env.seq != len(self.chain):
            raise ProtocolViolation(env.seat, "seq", f"seq {env.seq}, expected {len(self.chain)}", env.seq)
        self._current_frame = frame
        self._current_seat = env.seat
        if env.prev != self.head:
            raise ProtocolViolation(env.seat, "broken_chain", "prev is not the hash of the previous envelope", env.seq)
        if env.seq == 0:
            if env.kind != "offer" or env.seat != 0:
                raise ProtocolViolation(env.seat, "unexpected", "a chain starts with the host's offer", 0)
            self._check_sig(env)
            commit = self._checked(env, self._handle_offer)
        else:
            if env.game != self.game:
                raise ProtocolViolation(env.seat, "wrong_game", "envelope belongs to another game", env.seq)
            if not (verified or self._emitting_own):
                self._check_sig(env)
            if env.kind in TERMINAL_KINDS:
                commit = self._checked(env, self._handle_terminal)
            elif env.kind == "remove":  # its first one is not the expected speaker's
                commit = self._checked(env, self._on_remove)
            else:
                step = self.expected()
                if step is None:
                    raise ProtocolViolation(env.seat, "unexpected", f"no message expected, got {env.kind}", env.seq)
                if env.seat != step.seat:
                    raise ProtocolViolation(
                        env.seat, "not_your_turn", f"seat {step.seat} must send {step.kind}, not seat {env.seat}", env.seq
                    )
                kinds = ("discard", "close") if step.kind == "discard" else (step.kind,)
                if env.kind not in kinds:
                    raise ProtocolViolation(env.seat, "unexpected", f"expected {step.kind}, got {env.kind}", env.seq)
                if "hand" in env.body and self.engine is not None and env.body["hand"] != self.hand_no:
                    raise ProtocolViolation(env.seat, "wrong_hand", f"hand {env.body['hand']}, expected {self.hand_no}", env.seq)
                handler = getattr(self, f"_on_{env.kind}")
                commit = self._checked(env, handler)  # validates everything, returns a closure that mutates
        return commit

    def _judge_frame(self, env: Any, frame: bytes) -> tuple[str, ProtocolViolation | None]:
        """What one validly placed frame proves against its signer here, changing nothing
        (the checks of :meth:`_accept_frame` without its effects): ``("proves", violation)``,
        ``("valid", None)`` (a legal move at our head) or ``("unverifiable", None)``."""
        n = len(self.chain)
        if env.game != self.game:
            return "unverifiable", None
        try:
            self._check_sig(env)
        except ProtocolViolation:
            return "unverifiable", None
        if env.seq < n:
            mine = self.chain[env.seq]
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
        saved = self._current_frame, self._current_seat
        try:
            self._check_envelope(env, frame, verified=True)
        except ProtocolViolation as exc:
            return "proves", exc
        finally:
            self._current_frame, self._current_seat = saved
        return "valid", None

    def _checked(self, env: Any, handler: Any) -> Any:
        """Run a handler's checks: any error they raise (the engine's, the deck's, a body of
        the wrong shape) is the signer's protocol violation, raised before any change."""
        try:
            return handler(env)
        except ProtocolViolation:
            raise
        except Exception as exc:  # noqa: BLE001 - engine.GameError, deck.DeckError, KeyError...
            raise _unexpected(env.seat, exc, env.seq) from None

