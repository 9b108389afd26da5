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

The parts (docs/architecture.md, "Theory of operation: the table"): ``chain`` (order, buffer,
equivocation, resync), ``faults`` (stopping, judging a peer's fault), ``lobby``, ``hand`` (one
hand's deck sub-protocol), ``turns`` (moves through the rules engine), ``removal`` (playing on
without a seat that is gone) and ``view``. A message
kind ``k`` is checked by ``_on_k`` (check, then apply: it returns the commit closure) and, when
it is an automatic message of ours, made by ``_auto_k``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from p2p_chinchon import deck, engine, view as v

from .chain import ChainPart
from .common import (
    APP,
    DEFAULT_PROOF_ROUNDS,
    LOG_KEEP,
    MAX_BUFFERED,
    MAX_BUFFERED_BYTES,
    MIN_PROOF_ROUNDS,
    SHARE_KINDS,
    VERIFYING,
    ZERO32,
    Accepted,
    Evidence,
    Finished,
    GameEvent,
    IntentError,
    Job,
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
from .faults import FaultsPart
from .hand import HandCrypto, HandPart
from .lobby import LobbyPart, deck_too_big
from .removal import RemovalPart
from .turns import TurnsPart
from .view import ViewPart

__all__ = [
    "APP", "DEFAULT_PROOF_ROUNDS", "MAX_BUFFERED", "MAX_BUFFERED_BYTES", "MIN_PROOF_ROUNDS", "VERIFYING",
    "Accepted", "Evidence", "Finished", "GameEvent", "HandCrypto", "IntentError", "Job", "Player",
    "ProtocolViolation", "Resync", "Send", "Step", "Stopped", "Table", "deck", "engine", "proof_frames",
    "rules_hash", "run_job", "seating_hash", "toss_commitment",
]


class Table(ChainPart, FaultsPart, LobbyPart, HandPart, TurnsPart, RemovalPart, ViewPart):
    """One seat's (or an observer's) state of one table.

    Build with :meth:`create` (the host), :meth:`joining` (a seated player) or :meth:`observer`
    (audit). Feed peers' frames to :meth:`receive`, this seat's decisions to :meth:`intent`;
    both return a list of outputs (:class:`Accepted`, :class:`Send`, :class:`GameEvent`,
    :class:`Evidence`, :class:`Stopped`, :class:`Finished`). :meth:`view` gives the
    :class:`~p2p_chinchon.view.SeatView` for the UI and bots.
    """

    def __init__(self, identity: Any | None, rng: Any, *, auto_agree: bool = False,
                 defer_proofs: bool = False, min_proof_rounds: int = MIN_PROOF_ROUNDS) -> None:
        self.identity = identity
        self.min_proof_rounds = min_proof_rounds
        self.rng = rng
        self.auto_agree = auto_agree
        # Verify peers' shuffle proofs as Jobs off the critical path; every one must pass
        # before this seat reveals its end-of-hand secret (DESIGN "Deck").
        self.defer_proofs = defer_proofs
        self.pending_proofs: dict[int, tuple[int, int, bytes]] = {}  # job id -> (seat, seq, frame)
        # audit only: a peer's shuffle proof and decryption shares' DLEQ proofs are handed to
        # proof_sink(seq, fn, args) instead of being checked here (fn(*args) raises DeckError
        # if one fails: a pool runs it, and the audit names the first envelope that fails)
        self.proof_sink: Any = None
        self._jobs = 0
        self._prep: Any = None
        self._prep_job: int | None = None
        self._prep_args: tuple = ()
        self._shuffle_args: dict[int, tuple] = {}  # seq -> verify_shuffle arguments (evidence)
        self.me: int | None = None
        self.game: bytes = b""
        self.table_name = ""
        self.rules: Any = None
        self.rules_wire: dict = {}
        self.max_seats = 0
        self.proof_rounds = DEFAULT_PROOF_ROUNDS
        self.players: list[Player] = []
        self.chain: list[Any] = []  # accepted envelopes in order
        self.frames: list[bytes] = []
        self.head: bytes = ZERO32
        self.buffer: dict[int, dict[int, bytes]] = {}  # seq -> seat -> validly signed frame
        self.queue: deque[Step] = deque()
        self.phase = v.LOBBY
        self.engine: Any = None
        self.toss_commits: dict[int, bytes] = {}
        self.toss_nonces: dict[int, bytes] = {}
        self.my_toss_nonce = b""
        self.agreed = False
        self.points: tuple = ()
        self.deck_cards: tuple = ()
        self.hc: HandCrypto | None = None
        self.hand_started = False
        self.left: set[int] = set()  # seats that left or were removed
        self.removed: dict[int, str] = {}  # seat -> "absent" | "left": out of the game for good
        self.removing: list[dict] = []  # removals being signed, innermost last (removal.py)
        self.gone: set[int] = set()  # seats our driver saw away past rejoin_wait, or that left
        self.leaves: dict[int, bytes] = {}  # seat -> its signed leave, kept out of the chain
        self.votes: dict[tuple[int, bytes, int], dict[int, bytes]] = {}  # (seq, prev, seat) -> voter -> away
        self.branch: dict[bytes, Any] = {}  # prev -> a validly signed remove of another branch
        self._replaying = False
        self.catching_up = False  # the driver holds our own messages back (it was away: it catches up first)
        self.fault: v.Fault | None = None
        self.finished = False
        self.winner: int | None = None
        self.game_end_sigs: set[int] = set()
        self.unsigned_end: tuple[int, ...] = ()  # seats whose game_end never came (turns.py end_without)
        # the seats out of the game when it was over (None before); N_end is the others (turns.py)
        self.left_at_end: frozenset[int] | None = None
        self.log: deque[v.LogEvent] = deque(maxlen=LOG_KEEP)
        self.log_total = 0
        self._close_memo: tuple | None = None  # view.py: (key, close answers) last computed
        self.score_history: list[tuple[int, ...]] = []
        self.last_showdown: tuple[v.ShownHand, ...] = ()
        self.last_closer: int | None = None
        self.progress: tuple[int, int, str] | None = None
        self._pending_draw_slot: int | None = None
        self._pending: list[Player] = []  # host only: players seated before the seating
        self._hand_played = 0
        self._emitting_own = False
        self._current_frame = b""
        self._current_seat: int | None = None  # signer of the envelope being checked
        self._held_stop: Any = None  # a stop to show once the pending proofs are checked
        self.fault_judgement: tuple = ("unverifiable", None)  # audit: the last fault replayed, judged
        self._out: list = []

    @classmethod
    def create(
        cls,
        identity: Any,
        rng: Any,
        *,
        name: str,
        rules: Any,
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
        t.me = 0
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
        t.game = game
        t._pending = [Player("host", identity.public_bytes, addr)]
        t._out = []
        t._emit_own("offer", body)
        return t

    @classmethod
    def joining(cls, identity: Any, rng: Any, offer_frame: bytes, *, auto_agree: bool = False,
                defer_proofs: bool = False, min_proof_rounds: int = MIN_PROOF_ROUNDS) -> Table:
        """A player who fetched the host's ``offer`` frame; the ``seating`` follows by receive.
        Raises :class:`ProtocolViolation` for an offer we refuse (malformed, bad rules, shuffle
        proofs weaker than ``min_proof_rounds``)."""
        t = cls(identity, rng, auto_agree=auto_agree, defer_proofs=defer_proofs,
                min_proof_rounds=min_proof_rounds)
        t._out = []
        t._accept_frame(offer_frame, link_seat=0)
        return t

    @classmethod
    def observer(cls) -> Table:
        """No seat, no secrets: replays and checks everything public (``audit``). It accepts
        any k: the audit reports the table's proof strength instead of refusing it."""
        return cls(None, None, min_proof_rounds=1)

    @property
    def seated(self) -> bool:
        return bool(self.players)

    def expected(self) -> Step | None:
        """The seat that must speak next and what it must send, or None (stopped/finished, or
        a stop waits for our pending proof checks)."""
        if self.fault or self.finished or self._held_stop is not None:
            return None
        if self.queue:
            return self.queue[0]
        e = self.engine
        if e is None or not self.hand_started:
            return None
        ph = e.phase
        if ph == engine.Phase.DRAW:
            return Step("draw", e.to_play)
        if ph == engine.Phase.DISCARD:
            return Step("discard", e.to_play)  # or "close"
        return None

    def receive(self, frame: bytes, link_seat: int | None = None) -> list:
        """A frame from a peer (``link_seat`` = the seat of the link it came on, if known)."""
        self._out = []
        if self.fault or self.finished or self._held_stop is not None:
            return []
        self._guarded(lambda: self._accept_frame(frame, link_seat), (frame,), link_seat)
        return self._take()

    def intent(self, intent: Any) -> list:
        """This seat's decision (from the UI or a bot). Raises :class:`IntentError`."""
        self._out = []
        if self.fault or self.finished:
            raise IntentError("the table has stopped")
        if isinstance(intent, v.Leave):
            self._emit_own("leave", {"reason": intent.reason[:256]})
            return self._take()
        if self.catching_up:
            raise IntentError("wait: catching up with the others first")
        step = self.expected()
        if isinstance(intent, v.Agree):
            # Joiners agree in seat order, but each person reads the table at once: an agree
            # given before this seat's turn is held (self.agreed) and _auto_agree signs it when
            # the turn comes, never out of turn.
            if self.me is None or self.me in self.toss_commits:
                raise IntentError("nothing to agree to now" if self.me is None else "you have already agreed")
            if not any(s.kind == "agree" and s.seat == self.me for s in self.queue):
                raise IntentError("nothing to agree to now")
            self.agreed = True
        elif isinstance(intent, v.Draw):
            self._check_my_step(step, "draw")
            if intent.source not in ("stock", "discard"):
                raise IntentError("draw from 'stock' or 'discard'")
            self._try_emit("draw", {"hand": self._hand_played, "source": intent.source})
        elif isinstance(intent, (v.Discard, v.Close)):
            self._check_my_step(step, "discard")
            if self.verifying:  # a discard or close carries decryption shares
                raise IntentError(f"wait: {VERIFYING}")
            slot = self._my_slot_of(intent.card)
            kind = "discard" if isinstance(intent, v.Discard) else "close"
            self._try_emit(kind, self._discard_body(kind, slot))
        elif isinstance(intent, v.Reenter):
            if step is None or step.kind != "reenter" or step.seat != self.me:
                raise IntentError("you are not being asked to re-enter")
            self._try_emit("reenter", {"hand": self._hand_played, "accept": bool(intent.accept)})
        else:
            raise IntentError(f"unknown intent {intent!r}")
        self._guarded(lambda: None, ())
        return self._take()

    def poll(self) -> list:
        """Run any automatic step that is ours now (e.g. right after construction)."""
        self._out = []
        if not (self.fault or self.finished):
            self._guarded(lambda: None, ())
        return self._take()

    def job_done(self, job_id: int, result: Any) -> list:
        """The driver finished a :class:`Job` (``result`` as returned by :func:`run_job`)."""
        self._out = []
        if self.fault or self.finished:
            return []
        if job_id == self._prep_job:
            self._prep_job = None
            if not isinstance(result, Exception):
                self._prep = result
        elif job_id in self.pending_proofs:
            seat, seq, frame = self.pending_proofs.pop(job_id)
            if isinstance(result, Exception):
                reason = getattr(result, "reason", str(result))
                self._held_stop = None  # the cheat is what we show, not a later leave
                self._stop_with_fault(ProtocolViolation(seat, "shuffle", reason, seq), (frame,))
                return self._take()
        if self._held_stop is not None:
            if not self.pending_proofs:
                held, self._held_stop = self._held_stop, None
                held()
                if not (self.fault or self.finished):  # a leave held back may start a removal
                    self._guarded(lambda: None, ())
            return self._take()
        self._guarded(lambda: None, ())
        return self._take()

    def _new_job(self, kind: str, fn: Any, args: tuple) -> int:
        self._jobs += 1
        self._out.append(Job(self._jobs, kind, fn, args))
        return self._jobs

    def _advance(self) -> None:
        """Send every message that is ours to send now and needs no decision."""
        guard = 0
        while not (self.fault or self.finished or self.catching_up) and self.me is not None and self.identity is not None:
            guard += 1
            if guard > 10_000:  # pragma: no cover
                raise RuntimeError("protocol loop")
            step = self.expected()
            if step is not None and step.seat != self.me:
                start = self._removal_start_body(step)  # the seat we wait for is gone
                if start is None:
                    return
                self._emit_own("remove", start)
                self._drain_buffer()
                continue
            if step is None:
                return
            body = self._auto_body(step)
            if body is None:
                return  # waiting for a decision (intent)
            self._emit_own(step.kind, body)
            self._drain_buffer()

    def _auto_body(self, step: Step) -> dict | None:
        """The body of this seat's automatic message for ``step`` (``_auto_<kind>`` of the part
        that owns the kind), or None: a decision (draw, discard, reenter) or a wait."""
        if step.kind in SHARE_KINDS and self.verifying:
            return None  # a share waits for every peer's shuffle proof (job_done resumes)
        make = getattr(self, f"_auto_{step.kind}", None)
        return make() if make is not None else None

