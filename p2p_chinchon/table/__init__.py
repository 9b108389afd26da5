"""One seat's view of a Chinchón table: the table protocol as a sans-I/O state machine.

Frames in, frames and events out; no sockets, clocks or event loop (the h11 ``_state.py``
model). The same class runs inside a live node (``net/node.py``), inside every bot peer, and in
``p2p-chinchon audit`` (as an observer with no seat and no secrets).

Total order: at every point exactly one seat must speak next (:meth:`Table.expected`); every
envelope's ``seq`` is its index in the chain and ``prev`` the hash of the envelope before it.
A node applies envelopes strictly in chain order, buffering any that arrive early.

Flow (see docs/protocol.md for the sequence diagram)::

    offer(0) seating(0) agree(0..N-1) toss(0..N-1)
    per hand:  key_commit(A) key_share(A) shuffle(dealer+1 .. dealer) deal_shares(A)
               turns: draw(p) [draw_share(A - p)] discard(p) | close(p)
               restock: shuffle(round r, A) when a turn starts with an empty stock
               show(from the closer) secret(A) hand_digest(A) reenter(offered seats)
    game_end(every seat still at the table)
    remove(every other seat still at the table): a seat gone for good, its first remove
        carrying a majority's ``away`` votes (removal.py; votes are never chained)

Every incoming envelope is checked (canonical decoding, game id, version, chain position,
signature, speaker, kind, hand number, proofs, engine rules) before it changes anything. A bad
one is rejected and kept as evidence: the table answers with a signed ``fault`` and stops.
Errors: :class:`ProtocolViolation` (names seat, rule, chain index) for peers' envelopes,
:class:`IntentError` for this seat's own illegal intents (nothing is signed or sent).

The parts (docs/architecture.md, "Theory of operation: the table") are objects that own their
state, composed here: the :class:`~.state.Flow` (the schedule: who speaks next), ``lobby``,
``chain`` (the envelopes in order, the early buffer, equivocation, resync), ``hand`` (one hand's deck
sub-protocol), ``turns`` (moves through the rules engine), ``removal`` (playing on without a
seat that is gone), ``faults`` (stopping, judging a peer's fault) and ``viewer`` (the view).
A message kind ``k`` is checked by ``on_k`` of the part that owns it (check, then apply: it
returns the commit closure; :attr:`Table.checks`) and, when it is an automatic message of ours,
made by ``auto_k`` of the same part (:attr:`Table.makers`); :mod:`p2p_chinchon.schedule`
names the part of every kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from p2p_chinchon import deck, engine, view as v, wire
from p2p_chinchon.schedule import HANDLERS, SHARE_KINDS

from .chain import Chain
from .common import (
    APP,
    DEFAULT_PROOF_ROUNDS,
    MAX_BUFFERED,
    MAX_BUFFERED_BYTES,
    MIN_PROOF_ROUNDS,
    VERIFYING,
    Accepted,
    Commit,
    Evidence,
    Finished,
    GameEvent,
    IntentError,
    Job,
    Outbox,
    Output,
    Player,
    ProtocolViolation,
    Resync,
    Send,
    Step,
    Stopped,
    _verify_shuffle as _verify_shuffle,  # re-exported: tests call tbl._verify_shuffle
    proof_frames,
    rules_hash,
    run_job,
    seating_hash,
    toss_commitment,
)
from .faults import Faults
from .hand import Hand, HandCrypto
from .lobby import Lobby, deck_too_big
from .removal import Removal
from .state import Flow
from .turns import Turns
from .view import EventLog, TableView

if TYPE_CHECKING:
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.rng import Rng

__all__ = [
    "APP", "DEFAULT_PROOF_ROUNDS", "MAX_BUFFERED", "MAX_BUFFERED_BYTES", "MIN_PROOF_ROUNDS", "VERIFYING",
    "Accepted", "Evidence", "Finished", "GameEvent", "HandCrypto", "IntentError", "Job", "Player",
    "HANDLERS", "ProtocolViolation", "Resync", "Send", "Step", "Stopped", "Table", "TableView", "deck", "engine", "proof_frames",
    "rules_hash", "run_job", "seating_hash", "toss_commitment",
]


class Table:
    """One seat's (or an observer's) state of one table.

    Build with :meth:`create` (the host), :meth:`joining` (a seated player) or :meth:`observer`
    (audit). Feed peers' frames to :meth:`receive`, this seat's decisions to :meth:`intent`;
    both return a list of outputs (:class:`Accepted`, :class:`Send`, :class:`GameEvent`,
    :class:`Evidence`, :class:`Resync`, :class:`Job`, :class:`Stopped`, :class:`Finished`). :meth:`view` gives the
    :class:`~p2p_chinchon.view.SeatView` for the UI and bots.

    The table composes its parts (each owns its state; docs/architecture.md) and is the one
    place that takes inputs, collects outputs and signs this seat's automatic messages. Its
    state is read on the parts themselves (``t.chain.head``, ``t.lobby.players``,
    ``t.removal.removed``): one spelling for each; the table keeps only read-outs that are
    questions to the whole table (:meth:`expected`, :meth:`view`, :meth:`waiting`,
    :meth:`needs_decision`, :attr:`seated`).
    """

    def __init__(self, identity: Identity | None, rng: Rng | None, *, auto_agree: bool = False,
                 defer_proofs: bool = False, min_proof_rounds: int = MIN_PROOF_ROUNDS) -> None:
        self.flow = Flow()
        self.out = Outbox()
        self.lobby = Lobby(self.flow, self.out, EventLog(lambda: self.lobby.players), identity, rng,
                           auto_agree=auto_agree, min_proof_rounds=min_proof_rounds)
        self.events = self.lobby.events
        self.chain = Chain(self.flow, self.lobby, self.out, self.events)
        self.hand = Hand(self.flow, self.lobby, self.out, self.events, self.chain, defer_proofs=defer_proofs)
        self.turns = Turns(self.flow, self.lobby, self.out, self.events, self.chain, self.hand)
        self.removal = Removal(self.flow, self.lobby, self.out, self.events, self.chain, self.hand, self.turns)
        self.faults = Faults(self.flow, self.lobby, self.out, self.events, self.chain, self.hand, self.removal)
        self.viewer = TableView(self.flow, self.lobby, self.hand, self.turns, self.removal, self.events)
        # the parts that call back into another part that is built after them
        self.lobby.hand = self.hand
        self.hand.turns = self.turns
        self.chain.router = self
        self.chain.faults = self.faults
        self.chain.removal = self.removal
        lobby, hand, turns = self.lobby, self.hand, self.turns
        # kind -> its check, on the part schedule.KINDS names (a test keeps the two in step);
        # a test may replace one on one table
        self.checks: dict[str, Callable[[wire.Envelope], Commit | None]] = {
            "offer": lobby.handle_offer, "seating": lobby.on_seating, "agree": lobby.on_agree,
            "toss": lobby.on_toss,
            "key_commit": hand.on_key_commit, "key_share": hand.on_key_share, "shuffle": hand.on_shuffle,
            "deal_shares": hand.on_deal_shares, "secret": hand.on_secret, "hand_digest": hand.on_hand_digest,
            "draw": turns.on_draw, "draw_share": turns.on_draw_share, "discard": turns.on_discard,
            "close": turns.on_close, "show": turns.on_show, "reenter": turns.on_reenter,
            "game_end": turns.on_game_end,
            "remove": self.removal.on_remove,
            "fault": self.faults.handle_terminal, "leave": self.faults.handle_terminal,
        }
        # kind -> the body of this seat's automatic message of it (the agree and the first
        # remove of a seat are made elsewhere: Lobby.auto_agree_body, Removal.removal_start_body)
        self.makers: dict[str, Callable[[], dict[str, Any] | None]] = {
            "toss": lobby.auto_toss,
            "key_commit": hand.auto_key_commit, "key_share": hand.auto_key_share, "shuffle": hand.auto_shuffle,
            "deal_shares": hand.auto_deal_shares, "secret": hand.auto_secret, "hand_digest": hand.auto_hand_digest,
            "draw_share": turns.auto_draw_share, "show": turns.auto_show, "game_end": turns.auto_game_end,
            "remove": self.removal.auto_remove,
        }

    @classmethod
    def create(
        cls,
        identity: Identity,
        rng: Rng,
        *,
        name: str,
        rules: engine.Rules,
        max_seats: int,
        addr: str,
        proof_rounds: int | None = None,
        auto_agree: bool = False,
        defer_proofs: bool = False,
    ) -> Table:
        """The host opens a table: signs the ``offer`` (chain root, seq 0) as seat 0.
        ``proof_rounds`` (k) overrides ``rules.shuffle_proof_rounds``; the host may choose any
        k, its joiners decide whether to accept it (``min_proof_rounds``)."""
        import dataclasses

        if proof_rounds is not None and proof_rounds != rules.shuffle_proof_rounds:
            rules = dataclasses.replace(rules, shuffle_proof_rounds=proof_rounds)
        too_big = deck_too_big(rules, max_seats)
        if too_big is not None:  # refused before anything is signed: the wire cannot carry it
            raise IntentError(too_big)
        t = cls(identity, rng, auto_agree=auto_agree, defer_proofs=defer_proofs, min_proof_rounds=1)
        game = rng.token_bytes(16)
        body = {
            "name": name,
            "rules": rules.to_wire(),
            "max_seats": max_seats,
            "app": APP,
            "nonce": rng.token_bytes(32),
            "proof_rounds": rules.shuffle_proof_rounds,
            "host_key": identity.public_bytes,
        }
        t.lobby.open_as_host(game, Player("host", identity.public_bytes, addr))
        t.out.items = []
        t._emit_own("offer", body)
        return t

    @classmethod
    def joining(cls, identity: Identity, rng: Rng, offer_frame: bytes, *, auto_agree: bool = False,
                defer_proofs: bool = False, min_proof_rounds: int = MIN_PROOF_ROUNDS) -> Table:
        """A player who fetched the host's ``offer`` frame; the ``seating`` follows by receive.
        Raises :class:`ProtocolViolation` for an offer we refuse (malformed, bad rules, shuffle
        proofs weaker than ``min_proof_rounds``)."""
        t = cls(identity, rng, auto_agree=auto_agree, defer_proofs=defer_proofs,
                min_proof_rounds=min_proof_rounds)
        t.out.items = []
        t.chain.accept_frame(offer_frame, link_seat=0)
        return t

    @classmethod
    def observer(cls) -> Table:
        """No seat, no secrets: replays and checks everything public (``audit``). It accepts
        any k: the audit reports the table's proof strength instead of refusing it."""
        return cls(None, None, min_proof_rounds=1)

    # ------------------------------------------------------------------ the parts, wired

    def handler(self, kind: str) -> Callable[[wire.Envelope], Commit | None]:
        """The check of an envelope of ``kind`` (:attr:`checks`). Raises
        :class:`ProtocolViolation` for a kind the table has no check of (``away``: never
        chained)."""
        fn = self.checks.get(kind)
        if fn is None:
            raise ProtocolViolation(self.chain.current_seat, "unexpected", f"no message of kind {kind}")
        return fn

    # ------------------------------------------------------------------ inputs

    def expected(self) -> Step | None:
        """The seat that must speak next and what it must send, or None (stopped/finished, or
        a stop waits for our pending proof checks)."""
        return self.flow.expected()

    def receive(self, frame: bytes, link_seat: int | None = None) -> list[Output]:
        """A frame from a peer (``link_seat`` = the seat of the link it came on, if known)."""
        self.out.items = []
        if self.flow.over or self.flow.held_stop is not None:
            return []
        self.chain.guarded(lambda: self.chain.accept_frame(frame, link_seat), (frame,), link_seat)
        return self.out.take()

    def replay(self, frame: bytes | wire.Envelope) -> list[Output]:
        """Audit: apply the next frame of a recorded chain, strictly in order
        (:meth:`Chain.replay <p2p_chinchon.table.chain.Chain.replay>`). Raises
        :class:`ProtocolViolation` (nothing changed) instead of stopping with a fault."""
        return self.chain.replay(frame)

    def intent(self, intent: v.Intent) -> list[Output]:
        """This seat's decision (from the UI or a bot). Raises :class:`IntentError`."""
        self.out.items = []
        if self.flow.over:
            raise IntentError("the table has stopped")
        if isinstance(intent, v.Leave):
            self._emit_own("leave", {"reason": intent.reason[:256]})
            return self.out.take()
        if self.flow.catching_up:
            raise IntentError("wait: catching up with the others first")
        step = self.expected()
        me = self.lobby.me
        if isinstance(intent, v.Agree):
            # Joiners agree in seat order, but each person reads the table at once: an agree
            # given before this seat's turn is held (lobby.agreed) and auto_agree_body signs it
            # when the turn comes, never out of turn.
            if me is None or me in self.lobby.toss_commits:
                raise IntentError("nothing to agree to now" if me is None else "you have already agreed")
            if not any(s.kind == "agree" and s.seat == me for s in self.flow.queue):
                raise IntentError("nothing to agree to now")
            self.lobby.agree()
        elif isinstance(intent, v.Draw):
            self._check_my_step(step, "draw")
            if intent.source not in ("stock", "discard"):
                raise IntentError("draw from 'stock' or 'discard'")
            self._try_emit("draw", {"hand": self.hand.hand_no, "source": intent.source})
        elif isinstance(intent, (v.Discard, v.Close)):
            self._check_my_step(step, "discard")
            if self.hand.verifying:  # a discard or close carries decryption shares
                raise IntentError(f"wait: {VERIFYING}")
            slot = self.turns.my_slot_of(intent.card)
            kind = "discard" if isinstance(intent, v.Discard) else "close"
            self._try_emit(kind, self.turns.discard_body(kind, slot))
        elif isinstance(intent, v.Reenter):
            if step is None or step.kind != "reenter" or step.seat != me:
                raise IntentError("you are not being asked to re-enter")
            self._try_emit("reenter", {"hand": self.hand.hand_no, "accept": bool(intent.accept)})
        else:
            raise IntentError(f"unknown intent {intent!r}")
        self.chain.guarded(lambda: None, ())
        return self.out.take()

    def poll(self) -> list[Output]:
        """Run any automatic step that is ours now (e.g. right after construction)."""
        self.out.items = []
        if not self.flow.over:
            self.chain.guarded(lambda: None, ())
        return self.out.take()

    def job_done(self, job_id: int, result: Any) -> list[Output]:
        """The driver finished a :class:`Job` (``result`` as returned by :func:`run_job`)."""
        self.out.items = []
        if self.flow.over:
            return []
        failed = self.hand.job_done(job_id, result)
        if failed is not None:
            seat, seq, frame = failed
            reason = getattr(result, "reason", str(result))
            self.flow.held_stop = None  # the cheat is what we show, not a later leave
            self.faults.stop_with_fault(ProtocolViolation(seat, "shuffle", reason, seq), (frame,))
            return self.out.take()
        if self.flow.held_stop is not None:
            if not self.hand.pending_proofs:
                held, self.flow.held_stop = self.flow.held_stop, None
                held()
                if not self.flow.over:  # a leave held back may start a removal
                    self.chain.guarded(lambda: None, ())
            return self.out.take()
        self.chain.guarded(lambda: None, ())
        return self.out.take()

    def start(self) -> list[Output]:
        """Host only: sign the ``seating`` with the players seated so far (at least 2)."""
        body = self.lobby.seating_body()
        self.out.items = []
        self._emit_own("seating", body)
        self.chain.guarded(lambda: None, ())
        return self.out.take()

    def timeout(self, rule: str = "timeout", blame: bool = True) -> list[Output]:
        """The driver's per-action timer fired: stop, naming the expected speaker (``blame``)
        or nobody (a driver cut off from everyone). ``rule``: "timeout" (connected but silent)
        or "absent" (disconnected past the table's ``rejoin_wait``). Not while we verify
        shuffle proofs ourselves: every honest seat waits for the same."""
        self.out.items = []
        self.faults.timeout(rule, blame)
        return self.out.take()

    def absent(self, seat: int) -> list[Output]:
        """The driver's ``rejoin_wait`` for ``seat`` ran out on its own clock (the seat is
        disconnected from this node). When the chain lets the table remove it, this seat
        votes (a signed ``away``, sent to every peer, never chained) and signs its ``remove``
        as soon as it is its turn to (it starts the removal once it holds a majority's votes
        and no seat before it in seat order is still here). Before the first hand the table
        cannot play on without anyone and stops with a ``fault`` ``absent`` naming the seat;
        during the game, when no majority can remove it (a table of two, or too many seats
        gone at once), nothing is signed: the table waits (the driver's ``stall_limit``).
        When a majority signed the game's end, the game ends without the seat
        (:meth:`end_without`). Returns the outputs, like :meth:`receive`."""
        self.out.items = []
        if self.flow.over:
            return []
        if self.flow.engine is None:
            return self.timeout("absent", True)
        if self.turns.end_without(seat):  # a majority signed the game's end: it ends without the seat
            return self.out.take()
        if not self.removal.can_remove(seat):
            return []
        self.removal.vote_absent(seat)
        self.chain.guarded(lambda: None, ())
        return self.out.take()

    def halt(self, reason: str) -> list[Output]:
        """The driver gives up waiting (its ``stall_limit``: no majority could be reached, or
        this node reached nobody): the table stops **signing nothing**, blaming nobody, and
        the record stays resumable. Returns the outputs (a :class:`Stopped`)."""
        self.out.items = []
        if self.flow.over:
            return []
        fault = v.Fault(None, "stalled", reason)
        self.flow.stop(fault)
        self.out.add(Stopped(fault))  # (no log line "stopped by": nobody stopped it)
        return self.out.take()

    # ------------------------------------------------------------------ this seat's messages

    def _emit_own(self, kind: str, body: dict[str, Any]) -> None:
        """Sign and apply our own envelope through the same checks as a peer's, then send it
        (:meth:`Chain.emit_own <p2p_chinchon.table.chain.Chain.emit_own>`)."""
        self.chain.emit_own(kind, body)

    def _try_emit(self, kind: str, body: dict[str, Any]) -> None:
        """Sign and apply our own move through the same checks as a peer's; an illegal move
        raises IntentError and nothing is signed into the chain or sent."""
        try:
            self._emit_own(kind, body)
        except ProtocolViolation as exc:
            raise IntentError(exc.reason) from None

    def _check_my_step(self, step: Step | None, kind: str) -> None:
        if self.lobby.me is None or step is None or step.seat != self.lobby.me or step.kind != kind:
            raise IntentError(f"it is not your turn to {kind}")

    def _advance(self) -> None:
        """Send every message that is ours to send now and needs no decision."""
        guard = 0
        while not (self.flow.over or self.flow.catching_up) and self.lobby.me is not None \
                and self.lobby.identity is not None:
            guard += 1
            if guard > 10_000:  # pragma: no cover
                raise RuntimeError("protocol loop")
            step = self.expected()
            if step is not None and step.seat != self.lobby.me:
                start = self.removal.removal_start_body(step)  # the seat we wait for is gone
                if start is None:
                    return
                self._emit_own("remove", start)
                self.chain.drain_buffer()
                continue
            if step is None:
                return
            body = self._auto_body(step)
            if body is None:
                return  # waiting for a decision (intent)
            self._emit_own(step.kind, body)
            self.chain.drain_buffer()

    def _auto_body(self, step: Step) -> dict[str, Any] | None:
        """The body of this seat's automatic message for ``step`` (``auto_<kind>`` of the part
        that owns the kind), or None: a decision (draw, discard, reenter) or a wait."""
        if step.kind in SHARE_KINDS and self.hand.verifying:
            return None  # a share waits for every peer's shuffle proof (job_done resumes)
        if step.kind == "agree":
            return self.lobby.auto_agree_body()
        make = self.makers.get(step.kind)
        return make() if make is not None else None

    # ------------------------------------------------------------------ a restarted seat

    def seat_secrets(self) -> dict[str, Any]:
        """This seat's secrets a restarted node needs to carry on (msgpack-ready): the toss
        nonce and, once made, this hand's key (``hand``, ``key`` = secret scalar, ``key_nonce``)."""
        return {"toss_nonce": self.lobby.my_toss_nonce, **self.hand.key_secrets()}

    def restore_secrets(self, saved: dict[str, Any]) -> None:
        """Put back what :meth:`seat_secrets` gave (a rejoin replays the chain, calling this
        after each envelope): the key is restored once its hand has begun here."""
        self.lobby.restore_toss_nonce(saved.get("toss_nonce", b""))
        self.hand.restore_key(saved)

    def resumable_jobs(self, jobs: list[Job]) -> list[Job]:
        """After a rejoin's :meth:`replay` of the chain: which of the ``jobs`` it produced still
        matter (:meth:`Hand.resumable_jobs <p2p_chinchon.table.hand.Hand.resumable_jobs>`)."""
        return self.hand.resumable_jobs(jobs)

    # ------------------------------------------------------------------ read-outs

    def waiting(self) -> str | None:
        """:meth:`TableView.waiting`."""
        return self.viewer.waiting()

    def needs_decision(self) -> str | None:
        """:meth:`TableView.needs_decision`."""
        return self.viewer.needs_decision()

    def view(self) -> v.SeatView:
        """:meth:`TableView.view`."""
        return self.viewer.view()

    @property
    def seated(self) -> bool:
        """The seating is signed."""
        return bool(self.lobby.players)
