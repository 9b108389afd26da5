"""Faults: stopping the table, judging a peer's ``fault`` or ``leave``, and evidence.

A violation we verified is signed as our own ``fault`` carrying the offending frame(s); a
peer's fault is re-checked against our state ("confirmed", a false accusation, a ``timeout``
consistent with the chain, or "unverifiable"). A stop that arrives while peers' shuffle proofs
are being verified is shown only after them. (docs/protocol.md "Faults and audit")"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from p2p_chinchon import deck, view as v, wire
from p2p_chinchon.schedule import TERMINAL_KINDS

from .common import (
    PRIVATE_OPEN_RULES,
    Commit,
    Evidence,
    Outbox,
    ProtocolViolation,
    Send,
    Stopped,
    _Equivocation,
    _fit_evidence,
    _verify_shuffle,
    proof_frames,
)
from .state import Flow, Part

if TYPE_CHECKING:
    from .chain import Chain, Judgement
    from .hand import Hand
    from .lobby import Lobby
    from .removal import Removal
    from .view import EventLog


class Faults(Part):
    """The faults part of :class:`~p2p_chinchon.table.Table`: stops, and the judging of a
    peer's ``fault``. Owns ``fault_judgement`` (audit: the last fault replayed, judged); the
    stop itself is the :class:`~p2p_chinchon.table.state.Flow`'s (``fault``, ``held_stop``).
    Reads the chain, the hand's pending proof checks and the removal part's removes; changes
    only the flow, the outbox and the log, and asks the chain to record our own ``fault``."""

    def __init__(self, flow: Flow, lobby: Lobby, out: Outbox, events: EventLog, chain: Chain,
                 hand: Hand, removal: Removal) -> None:
        super().__init__(flow, lobby, out, events)
        self.chain = chain
        self.hand = hand
        self.removal = removal
        self.fault_judgement: Judgement = ("unverifiable", None)

    def timeout(self, rule: str = "timeout", blame: bool = True) -> None:
        """The driver's per-action timer fired: stop, naming the expected speaker (``blame``)
        or nobody (a driver cut off from everyone). ``rule``: "timeout" (connected but silent)
        or "absent" (disconnected past the table's ``rejoin_wait``). Not while we verify
        shuffle proofs ourselves: every honest seat waits for the same."""
        step = self.flow.expected()
        if step is None or step.seat == self.lobby.me or self.hand.verifying:
            return
        what = "did not send" if rule == "timeout" else "was away and did not send"
        self.stop_with_fault(
            ProtocolViolation(step.seat if blame else None, rule, f"seat {step.seat} {what} {step.kind} in time"), ()
        )

    def stop_with_fault(self, exc: ProtocolViolation, frames: tuple[bytes, ...],
                         shown: v.Fault | None = None) -> None:
        """Sign our own ``fault`` (what we verified: ``exc``) and stop. ``shown`` is what the
        UI says, when it differs (a peer's accusation we could not check ourselves)."""
        if isinstance(exc, _Equivocation):
            frames = exc.frames
        self.out.add(Evidence(exc.seat, exc.rule, exc.reason, tuple(frames)))
        self.events.event("fault", (exc.seat,), rule=exc.rule, detail=exc.reason)
        if self.lobby.me is not None and self.lobby.identity is not None and self.lobby.players:
            body = {
                "accused": exc.seat if exc.seat is not None else 255,
                "rule": exc.rule[:64],
                "reason": exc.reason[:256],
                "evidence": _fit_evidence(frames),
            }
            env = wire.make_envelope(
                self.lobby.identity.private_key, game=self.lobby.game, seq=len(self.chain.envelopes), seat=self.lobby.me,
                prev=self.chain.head, kind="fault", body=body,
            )
            frame = env.encode()
            self.chain.record(env, frame)  # it stops the table: no handler checks it
            self.out.add(Send(frame))
        fault = shown or v.Fault(exc.seat, exc.rule, exc.reason)
        self.flow.stop(fault)
        self.out.add(Stopped(fault))

    def judge_replayed(self, env: wire.Envelope) -> None:
        """Audit: ``fault_judgement`` is the recorded ``fault`` ``env``'s evidence judged
        against the state just before it (:meth:`check_evidence`)."""
        b = env.body
        accused = b["accused"] if b["accused"] != 255 else None
        self.fault_judgement = self.check_evidence(b["evidence"], (b["rule"], accused, env.seat), at=env)

    def peer_fault_view(self, env: wire.Envelope) -> tuple[ProtocolViolation | None, v.Fault]:
        """Judge a peer's ``fault``: what we can prove ourselves, and what to show."""
        b = env.body
        accused = b["accused"] if b["accused"] != 255 else None
        status, proof = self.check_evidence(b["evidence"], (b["rule"], accused, env.seat), at=env)
        if status == "proves" and proof is not None and proof.seat == accused:
            return proof, v.Fault(accused, proof.rule, f"{self.lobby.name(env.seat)} caught it, confirmed here: {proof.reason}")
        if status == "valid":
            return None, v.Fault(env.seat, "false_accusation",
                                 f"{self.lobby.name(env.seat)} accused seat {accused} ({b['rule']}) but its evidence proves nothing against it")
        if status == "consistent":
            return None, v.Fault(accused, b["rule"], f"{self.lobby.name(env.seat)} reports: {b['reason']} "
                                 "(the chain agrees it was that seat's turn)")
        if accused is None:  # e.g. a partition ("absent"): the sender blames nobody, nor do we
            return None, v.Fault(None, b["rule"], f"{self.lobby.name(env.seat)} stopped the table, blaming nobody: "
                                 f"{b['reason']}")
        return None, v.Fault(env.seat, b["rule"], f"{self.lobby.name(env.seat)} accuses {self.lobby.name(accused)}: "
                             f"{b['reason']} (unverifiable)")

    def after_proofs(self, stop: Callable[[], None]) -> None:
        """Run ``stop`` now, or once every pending shuffle proof passed: a seat that sends a
        bad shuffle and then leaves (or accuses) is shown as a cheat, not as what it said."""
        if self.hand.pending_proofs:
            self.flow.held_stop = stop
        else:
            stop()

    def handle_terminal(self, env: wire.Envelope) -> Commit:
        if env.kind == "leave":
            def stop_leave() -> None:
                self.flow.left.add(env.seat)
                self.events.event("left", (env.seat,), detail=env.body["reason"])
                if self.flow.finished:
                    return
                in_hand = self.hand.hc is not None and env.seat in self.hand.hc.seats and self.flow.phase != v.OVER
                active = self.flow.engine is None or env.seat in self.flow.game().active
                if in_hand or active or any(st.seat == env.seat and st.kind != "game_end" for st in self.flow.queue):
                    fault = v.Fault(env.seat, "left", _left_text(self.lobby.name(env.seat), env.body["reason"]))
                    self.flow.stop(fault)
                    self.out.add(Stopped(fault))
                else:  # an eliminated seat may go home; it just will not sign the game end
                    self.flow.drop(lambda st: st.seat != env.seat)
                    if self.flow.phase == v.OVER and not self.flow.queue:
                        self.out.add(self.flow.finish())
            return lambda: self.after_proofs(stop_leave)
        # a peer's fault, in its place in the chain: the table stops; we say what we can check
        _, shown = self.peer_fault_view(env)

        def stop_fault() -> None:
            self.flow.stop(shown)
            self.events.event("stopped", (env.seat,), detail=shown.reason)
            self.out.add(Stopped(shown))

        return lambda: self.after_proofs(stop_fault)

    def stop_from_peer(self, env: wire.Envelope) -> None:
        """A validly signed ``fault``/``leave`` that we cannot chain (our chain is behind, or
        already holds another envelope at its position). It stops us; we record our own fault
        quoting it, and adopt its accusation only if we can check its evidence ourselves."""
        self.after_proofs(lambda: self.stop_off_chain(env))

    def stop_off_chain(self, env: wire.Envelope) -> None:
        if env.kind == "leave":
            exc = ProtocolViolation(env.seat, "left", _left_text(self.lobby.name(env.seat), env.body["reason"]))
            self.stop_with_fault(exc, (env.encode(),))
            return
        proof, shown = self.peer_fault_view(env)
        if proof is not None:  # we checked it: quote the frames that prove it, not the messenger
            self.stop_with_fault(proof, proof_frames(proof) or tuple(env.body["evidence"]), shown)
        else:
            exc = ProtocolViolation(None, "stopped_by_peer",
                                    f"seat {env.seat} stopped the table off our chain: {env.body['rule']}")
            self.stop_with_fault(exc, (env.encode(),), shown)

    def speaker_at(self, env: wire.Envelope) -> int | None:
        """The seat that was to speak where the fault ``env`` stands: the expected speaker at
        our head, or, for a fault whose ``prev`` is an ancestor of our head (it raced the move
        our chain holds there), the signer of our envelope at its position, which was that
        position's expected speaker; None when that is unknown (a ``fault``, ``leave`` or
        ``remove`` there, or another history)."""
        n = len(self.chain.envelopes)
        if env.seq == n:
            step = self.flow.expected()
            return step.seat if step is not None else None
        if 0 < env.seq < n and self.chain.envelopes[env.seq].prev == env.prev and self.chain.envelopes[env.seq].kind not in (
                *TERMINAL_KINDS, "remove"):
            return self.chain.envelopes[env.seq].seat
        return None

    def quoted_fault(self, env: wire.Envelope) -> wire.Envelope | None:
        """The peer's ``fault`` that our ``fault`` ``env`` quotes when it stopped us off our
        chain (``stopped_by_peer``, blaming nobody, its one evidence frame that fault, validly
        signed by another seat of this game, its ``prev`` an ancestor of our head), else None.
        ``audit`` judges the quoted fault at its own position, as the seat that chained it did,
        so honest transcripts of one game get one verdict."""
        b = env.body
        if env.kind != "fault" or b["accused"] != 255 or len(b["evidence"]) != 1:
            return None
        try:
            q = wire.decode_envelope(b["evidence"][0])
        except wire.WireError:
            return None
        if q.kind != "fault" or q.seat == env.seat or q.game != self.lobby.game or not 0 < q.seq < len(self.chain.envelopes):
            return None
        if self.chain.envelopes[q.seq].prev != q.prev or self.chain.frames[q.seq] == b["evidence"][0]:
            return None
        try:
            self.chain.check_sig(q)
        except ProtocolViolation:
            return None
        return q

    def check_evidence(self, frames: list[bytes], claim: tuple[str, int | None, int] | None = None,
                       at: wire.Envelope | None = None) -> Judgement:
        """Judge a fault's evidence against this state (audit uses the state just before the
        fault). Returns ``("proves", violation)`` when a frame is validly signed and breaks a
        rule attributable to its signer (or two frames prove equivocation), ``("valid", None)``
        when the single frame is a valid move here (the accusation is false), and
        ``("unverifiable", None)`` otherwise (no evidence, damaged or unsigned frames, another
        history). ``claim`` = (rule, accused, accuser) lets the chain check what needs no
        frame: a ``timeout`` is ``("consistent", None)`` when the accused was the expected
        speaker here, ``("valid", None)`` (false) when it was not; ``at``: the fault envelope,
        whose own position decides who was to speak (:meth:`speaker_at`)."""
        if claim is not None and claim[1] is None:
            return "unverifiable", None  # a fault that blames nobody has nothing to prove
        if claim is not None and claim[0] == "timeout" and not frames:
            if at is not None:
                speaker = self.speaker_at(at)
            else:
                step = self.flow.expected()
                speaker = step.seat if step is not None else None
            if speaker is None:
                return "unverifiable", None  # who was to speak there is not in our chain
            return ("consistent" if speaker == claim[1] != claim[2] else "valid"), None
        if not frames:
            return "unverifiable", None
        try:
            envs = [wire.decode_envelope(f) for f in frames]
        except wire.WireError:
            return "unverifiable", None
        if len(envs) == 2:
            a, b = envs
            if a.seq != b.seq or a.seat != b.seat or frames[0] == frames[1]:
                return "valid", None  # not two different envelopes of one seat: proves nothing
            try:
                self.chain.check_sig(a)
                self.chain.check_sig(b)
            except ProtocolViolation:
                return "valid", None
            return "proves", _Equivocation(a.seat, (frames[0], frames[1]), a.seq)
        if len(envs) != 1:
            return "unverifiable", None
        e = envs[0]
        if e.kind == "away":
            return "valid", None  # a vote is never a step of the chain: it proves nothing against its voter
        if e.kind == "leave" and claim is not None and claim[:2] == ("left", e.seat) and (
                e.seat in self.removal.removed or e.seat in self.removal.leaves):
            return "valid", None  # acted on already: the game went on without the seat, it stops nothing
        if e.kind == "leave" and claim is not None and claim[:2] == ("left", e.seat):
            try:  # the leaver's own signed leave, quoted by the seat it stopped
                self.chain.check_sig(e)
            except ProtocolViolation:
                return "unverifiable", None
            return "proves", ProtocolViolation(e.seat, "left", f"{self.lobby.name(e.seat)} left the table", e.seq)
        if e.seq < len(self.chain.envelopes) and self.chain.frames[e.seq] == frames[0]:
            # already in our chain: only a shuffle can still be proven bad (deferred proofs)
            args = self.hand.shuffle_args.get(e.seq)
            if args is None and claim is not None and claim[0] in PRIVATE_OPEN_RULES:
                return "unverifiable", None  # what the accuser's own card opened to
            if args is None:
                return "valid", None
            try:
                _verify_shuffle(*args)
            except deck.DeckError as exc:
                return "proves", ProtocolViolation(e.seat, "shuffle", exc.reason, e.seq)
            return "valid", None
        if e.kind == "remove" and e.seq < len(self.chain.envelopes):  # a remove where another step is
            try:
                self.chain.check_sig(e)
            except ProtocolViolation:
                return "unverifiable", None
            mine = self.chain.envelopes[e.seq]
            misplaced = self.removal.misplaced_remove(e, mine)
            if misplaced is not None:
                return "proves", misplaced
            if mine.prev == e.prev and mine.seat == e.body["seat"] != e.seat:
                refuted = self.removal.refuted_remove(e, mine)  # X's own envelope holds the place
                if refuted is not None:
                    return "proves", refuted
        return self.chain.judge_frame(e, frames[0])


def _left_text(name: str, reason: str) -> str:
    """Why a seat left, for the fault shown to people (the leave's own reason when it gave one)."""
    return f"{name} left the table" + ("" if reason in ("", "left the table") else f": {reason}")
