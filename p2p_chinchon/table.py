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

Every incoming envelope is checked (canonical decoding, game id, version, chain position,
signature, speaker, kind, hand number, proofs, engine rules) before it changes anything. A bad
one is rejected and kept as evidence: the table answers with a signed ``fault`` and stops.
Errors: :class:`ProtocolViolation` (names seat, rule, chain index) for peers' envelopes,
:class:`IntentError` for this seat's own illegal intents (nothing is signed or sent).
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable

import msgpack

from p2p_chinchon import PROTOCOL_VERSION, deck, engine, view as v, wire
from p2p_chinchon.identity import fingerprint
from p2p_chinchon.rng import SeededRng

APP = "p2p-chinchon"
DEFAULT_PROOF_ROUNDS = 64  # cut-and-choose shadow shuffles: soundness 2^-64
# A joiner refuses weaker tables: below ~40 rounds a shuffler can grind a forged proof
# (2^k Fiat-Shamir tries) within a turn's timeout. Tests and demos lower it explicitly.
MIN_PROOF_ROUNDS = 40
MAX_BUFFERED = 512  # early envelopes kept while waiting for their predecessors
RESYNC_DEPTH = 16  # on divergence, ask the peer for this many envelopes before the conflict
LOG_KEEP = 200
ZERO32 = bytes(32)
TERMINAL_KINDS = ("fault", "leave")


def _h(*parts: bytes) -> bytes:
    d = hashlib.sha256()
    for p in parts:
        d.update(len(p).to_bytes(4, "big"))
        d.update(p)
    return d.digest()


def _packb(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def rules_hash(rules_wire: dict, proof_rounds: int) -> bytes:
    """SHA-256 of the canonical rules map (plus the proof parameter) every seat signs."""
    items = sorted(rules_wire.items())
    return _h(b"p2p-chinchon/rules/v1", _packb(items), proof_rounds.to_bytes(2, "big"))


def seating_hash(players: list[dict]) -> bytes:
    return _h(b"p2p-chinchon/seating/v1", _packb([[p["name"], p["key"], p["addr"]] for p in players]))


def toss_commitment(game: bytes, seat: int, nonce: bytes) -> bytes:
    return _h(b"p2p-chinchon/toss/v1", game, seat.to_bytes(1, "big"), nonce)


# ------------------------------------------------------------------------------------ errors


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


# ------------------------------------------------------------------------------------ outputs


@dataclass(frozen=True)
class Accepted:
    """An envelope joined the chain (ours or a peer's): persist ``frame`` before acting on it."""

    index: int
    frame: bytes
    env: Any


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

    event: Any


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
    fn: Any
    args: tuple


def run_job(job: Job) -> Any:
    """Run a job, returning its result or the DeckError it raised (never raising it)."""
    try:
        return job.fn(*job.args)
    except deck.DeckError as exc:
        return exc


def _prepare_shuffle(joint: bytes, n: int, k: int, seed: bytes | None) -> Any:
    import secrets

    return deck.prepare_shuffle(joint, n, SeededRng(seed) if seed is not None else secrets, k)


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

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)


@dataclass(frozen=True)
class Step:
    kind: str
    seat: int


@dataclass
class HandCrypto:
    """Per-hand mental-poker state (public parts for everyone, ``keypair`` for us only)."""

    seats: tuple[int, ...]
    keypair: Any = None
    commits: dict[int, bytes] = field(default_factory=dict)
    publics: dict[int, bytes] = field(default_factory=dict)
    joint: bytes = b""
    round: int = 0  # 0 = initial shuffle, r = r-th stock re-shuffle
    restock_in: list = field(default_factory=list)  # ciphertexts being re-shuffled
    restock_slots: tuple[int, ...] = ()
    secrets: dict[int, bytes] = field(default_factory=dict)
    digests: dict[int, bytes] = field(default_factory=dict)
    digest: bytes = b""


class Table:
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
        self.cts: list = []  # slot -> Ciphertext
        self.points: tuple = ()
        self.deck_cards: tuple = ()
        self.shares: dict[int, dict[int, bytes]] = {}  # slot -> seat -> d
        self.hc: HandCrypto | None = None
        self.hand_started = False
        self.left: set[int] = set()
        self.fault: v.Fault | None = None
        self.finished = False
        self.winner: int | None = None
        self.game_end_sigs: set[int] = set()
        self.log: deque[str] = deque(maxlen=LOG_KEEP)
        self.log_total = 0
        self.score_history: list[tuple[int, ...]] = []
        self.last_showdown: tuple[v.ShownHand, ...] = ()
        self.last_closer: int | None = None
        self.progress: tuple[int, int, str] | None = None
        self._pending_draw_slot: int | None = None
        self._pending: list[Player] = []  # host only: players seated before the seating
        self._hand_played = 0
        self._emitting_own = False
        self._current_frame = b""
        self._out: list = []

    # ------------------------------------------------------------------ construction

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

    # ------------------------------------------------------------------ public API

    @property
    def seated(self) -> bool:
        return bool(self.players)

    def expected(self) -> Step | None:
        """The seat that must speak next and what it must send, or None (stopped/finished)."""
        if self.fault or self.finished:
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

    def seat_host(self, name: str, key: bytes, addr: str) -> int:
        """Host only: add a joiner (identity already checked by the lobby link). Returns its seat."""
        if self.me != 0 or self.players:
            raise IntentError("only the host may seat players, before the seating is signed")
        if any(p.key == key for p in self._pending):
            return next(i for i, p in enumerate(self._pending) if p.key == key)
        if len(self._pending) >= self.max_seats:
            raise IntentError("the table is full")
        if len(addr.encode()) > 64:
            raise IntentError("the joiner's address is too long")
        name = _clip_utf8(name, 29) or "?"
        taken = {p.name for p in self._pending}
        unique, n = name, 2
        while unique in taken:  # two "Ana"s at one table would be ambiguous in every log line
            unique, n = f"{name} {n}", n + 1
        self._pending.append(Player(unique, key, addr))
        return len(self._pending) - 1

    def unseat_host(self, key: bytes) -> None:
        """Host only, before the seating: the joiner with identity ``key`` left the lobby; its
        seat is free again (the seats after it move up one)."""
        if self.me != 0 or self.players:
            raise IntentError("only the host may unseat players, before the seating is signed")
        self._pending = [p for i, p in enumerate(self._pending) if i == 0 or p.key != key]

    def set_host_name(self, name: str) -> None:
        """Host only, before the seating: the host's own name at the table."""
        self._pending[0].name = _clip_utf8(name, 32) or "host"

    @property
    def pending_players(self) -> list[Player]:
        """Host only: the players seated so far (the host first), before the seating is signed."""
        return list(self._pending)

    def start(self) -> list:
        """Host only: sign the ``seating`` with the players seated so far (at least 2)."""
        players = self.pending_players
        if len(players) < 2:
            raise IntentError("a table needs at least two players")
        body = {"players": [{"name": p.name, "key": p.key, "addr": p.addr} for p in players]}
        self._out = []
        self._emit_own("seating", body)
        self._guarded(lambda: None, ())
        return self._take()

    def receive(self, frame: bytes, link_seat: int | None = None) -> list:
        """A frame from a peer (``link_seat`` = the seat of the link it came on, if known)."""
        self._out = []
        if self.fault or self.finished:
            return []
        self._guarded(lambda: self._accept_frame(frame, link_seat), (frame,), link_seat)
        return self._take()

    def _guarded(self, step: Any, frames: tuple[bytes, ...], link_seat: int | None = None) -> None:
        """Run ``step`` then everything it unblocks. A frame nobody can be blamed for is dropped
        and kept as evidence (the table goes on); a violation stops the table with a fault."""
        try:
            step()
            self._drain_buffer()
            self._advance()
        except _Dropped as d:
            self._out.append(Evidence(d.seat, d.rule, d.reason, d.frames or frames))
            self._log(f"dropped a frame ({d.rule}, claimed seat {d.seat}): {d.reason}")
            if d.resync is not None and link_seat is not None:
                self._out.append(Resync(link_seat, d.resync))
        except ProtocolViolation as exc:
            self._stop_with_fault(exc, frames)

    def replay(self, frame: bytes) -> list:
        """Audit: apply the next frame of a recorded chain, strictly in order. Raises
        :class:`ProtocolViolation` (nothing changed) instead of stopping with a fault."""
        import copy

        self._out = []
        try:
            env = wire.decode_envelope(frame)
        except wire.WireError as exc:
            raise ProtocolViolation(None, "malformed", str(exc), len(self.chain)) from None
        if env.seq != len(self.chain):
            raise ProtocolViolation(env.seat, "seq", f"seq {env.seq} at position {len(self.chain)}", len(self.chain))
        if env.kind == "fault":
            self._before_last = copy.deepcopy(self)
        self._accept_frame(frame, None)
        return self._take()

    def intent(self, intent: Any) -> list:
        """This seat's decision (from the UI or a bot). Raises :class:`IntentError`."""
        self._out = []
        if self.fault or self.finished:
            raise IntentError("the table has stopped")
        if isinstance(intent, v.Leave):
            self._emit_own("leave", {"reason": intent.reason[:256]})
            return self._take()
        step = self.expected()
        if isinstance(intent, v.Agree):
            if step is None or step.kind != "agree" or step.seat != self.me:
                raise IntentError("nothing to agree to now")
            self.agreed = True
        elif isinstance(intent, v.Draw):
            self._check_my_step(step, "draw")
            if intent.source not in ("stock", "discard"):
                raise IntentError("draw from 'stock' or 'discard'")
            self._try_emit("draw", {"hand": self._hand_played, "source": intent.source})
        elif isinstance(intent, (v.Discard, v.Close)):
            self._check_my_step(step, "discard")
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
            try:
                self._advance()
            except ProtocolViolation as exc:  # pragma: no cover - own-message bug
                self._stop_with_fault(exc, ())
        return self._take()

    def timeout(self, rule: str = "timeout", blame: bool = True) -> list:
        """The driver's per-action timer fired: stop, naming the expected speaker (``blame``)
        or nobody (a driver cut off from everyone). ``rule``: "timeout" (connected but silent)
        or "absent" (disconnected past the table's ``rejoin_wait``)."""
        self._out = []
        step = self.expected()
        if step is None or step.seat == self.me:
            return []
        what = "did not send" if rule == "timeout" else "was away and did not send"
        self._stop_with_fault(
            ProtocolViolation(step.seat if blame else None, rule, f"seat {step.seat} {what} {step.kind} in time"), ()
        )
        return self._take()

    def seat_secrets(self) -> dict:
        """This seat's secrets a restarted node needs to carry on (msgpack-ready): the toss
        nonce and, once made, this hand's key (``hand``, ``key`` = secret scalar, ``key_nonce``)."""
        out: dict = {"toss_nonce": self.my_toss_nonce}
        if self.hc is not None and self.hc.keypair is not None:
            out.update(hand=self._hand_played, key=self.hc.keypair.secret_bytes(), key_nonce=self.hc.keypair.nonce)
        return out

    def resumable_jobs(self, jobs: list[Job]) -> list[Job]:
        """After a rejoin's :meth:`replay` of the chain: which of the ``jobs`` it produced still
        matter (this hand's proof checks, our pending shuffle preparation). Proofs of earlier
        hands passed before our secret of that hand went out (it is in the chain): forgotten."""
        live = [j for j in jobs if j.id == self._prep_job
                or (j.id in self.pending_proofs and j.args[0].hand == self._hand_played)]
        ids = {j.id for j in live}
        self.pending_proofs = {k: val for k, val in self.pending_proofs.items() if k in ids}
        return live

    def restore_secrets(self, saved: dict) -> None:
        """Put back what :meth:`seat_secrets` gave (a rejoin replays the chain, calling this
        after each envelope): the key is restored once its hand has begun here."""
        self.my_toss_nonce = self.my_toss_nonce or saved.get("toss_nonce", b"")
        hc = self.hc
        if hc is not None and hc.keypair is None and saved.get("hand") == self._hand_played and "key" in saved:
            x = deck.ED25519.scalar_from_bytes(saved["key"])
            hc.keypair = deck.KeyPair(x, deck.ED25519.mul_base(x), saved["key_nonce"])

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
                self._stop_with_fault(ProtocolViolation(seat, "shuffle", reason, seq), (frame,))
                return self._take()
        try:
            self._advance()
        except ProtocolViolation as exc:  # pragma: no cover - own-message bug
            self._stop_with_fault(exc, ())
        return self._take()

    def _new_job(self, kind: str, fn: Any, args: tuple) -> int:
        self._jobs += 1
        self._out.append(Job(self._jobs, kind, fn, args))
        return self._jobs

    def needs_decision(self) -> str | None:
        """What this seat must decide now: "agree", "draw", "discard", "reenter" or None."""
        step = self.expected()
        if step is None or self.me is None or step.seat != self.me:
            return None
        if step.kind in ("agree", "draw", "discard", "reenter"):
            if step.kind == "agree" and self.agreed:
                return None
            return step.kind
        return None

    # ------------------------------------------------------------------ helpers for intents

    def _check_my_step(self, step: Step | None, kind: str) -> None:
        if self.me is None or step is None or step.seat != self.me or step.kind != kind:
            raise IntentError(f"it is not your turn to {kind}")

    def _my_slot_of(self, card: Any) -> int:
        e = self.engine
        for slot in e.hands.get(self.me, []):
            if e.faces.get(slot) == card:
                return slot
        raise IntentError(f"{card} is not in your hand")

    def _discard_body(self, kind: str, slot: int) -> dict:
        e = self.engine
        hand = e.hands[self.me]
        if kind == "discard":
            return {"hand": self._hand_played, "slot": slot, "share": self._my_share(slot)}
        kept = [s for s in hand if s != slot]
        return {
            "hand": self._hand_played,
            "slot": slot,
            "shares": [{"slot": s, "share": self._my_share(s)} for s in kept],
        }

    def _my_share(self, slot: int) -> bytes:
        hc = self.hc
        ctx = self._ctx(self.me)
        return deck.decryption_share(ctx, hc.keypair, self.cts[slot], slot, self.rng)

    def _try_emit(self, kind: str, body: dict) -> None:
        """Sign and apply our own move through the same checks as a peer's; an illegal move
        raises IntentError and nothing is signed into the chain or sent."""
        try:
            self._emit_own(kind, body)
        except ProtocolViolation as exc:
            raise IntentError(exc.reason) from None

    # ------------------------------------------------------------------ chain mechanics

    def _take(self) -> list:
        out, self._out = self._out, []
        return out

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

    def _accept_frame(self, frame: bytes, link_seat: int | None) -> None:
        """Place one frame: apply it at the head, buffer it if early, compare it if late.

        Blame needs a signature: a frame that does not decode, is not validly signed by the
        seat it names, or belongs to another game is dropped (:class:`_Dropped`, kept as
        evidence) and never names a seat in a fault, since anyone on the network path can
        produce one. A validly signed envelope that conflicts with ours either proves
        something against its signer (equivocation, speaking out of turn) or shows that our
        histories diverged, in which case we ask the sender for its envelopes (Resync)."""
        try:
            env = wire.decode_envelope(frame)
        except wire.WireError as exc:
            raise _Dropped(link_seat, "malformed", str(exc)) from None
        if self.chain and env.game != self.game:
            raise _Dropped(env.seat, "wrong_game", "an envelope of another game (a replay?)")
        n = len(self.chain)
        if env.seq < n:
            if self.frames[env.seq] == frame:
                return  # duplicate (resent after a reconnect, or answered to a resync)
            self._verify_or_drop(env)
            if env.kind in TERMINAL_KINDS:
                self._stop_from_peer(env)
                return
            mine = self.chain[env.seq]
            if mine.seat == env.seat:
                raise _Equivocation(env.seat, (self.frames[env.seq], frame), env.seq)
            if mine.prev == env.prev:
                raise ProtocolViolation(env.seat, "not_your_turn",
                                        f"signed seq {env.seq} where seat {mine.seat} spoke", env.seq)
            raise _Dropped(env.seat, "diverged", f"seq {env.seq} follows another history",
                           resync=max(0, env.seq - RESYNC_DEPTH))
        if self.players:
            self._verify_or_drop(env)
        if env.seq > n:
            if env.kind in TERMINAL_KINDS and self.players:
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
        if env.seq != len(self.chain):
            raise ProtocolViolation(env.seat, "seq", f"seq {env.seq}, expected {len(self.chain)}", env.seq)
        self._current_frame = frame
        if env.prev != self.head:
            raise ProtocolViolation(env.seat, "broken_chain", "prev is not the hash of the previous envelope", env.seq)
        if env.seq == 0:
            if env.kind != "offer" or env.seat != 0:
                raise ProtocolViolation(env.seat, "unexpected", "a chain starts with the host's offer", 0)
            self._check_sig(env)
            commit = self._handle_offer(env)
        else:
            if env.game != self.game:
                raise ProtocolViolation(env.seat, "wrong_game", "envelope belongs to another game", env.seq)
            if not (verified or self._emitting_own):
                self._check_sig(env)
            if env.kind in TERMINAL_KINDS:
                commit = self._handle_terminal(env)
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
                commit = handler(env)  # validates everything, returns a closure that mutates
        # All checks passed: mutate.
        self.chain.append(env)
        self.frames.append(frame)
        self.head = env.hash()
        self._out.append(Accepted(env.seq, frame, env))
        if commit is not None:
            commit()

    # ------------------------------------------------------------------ faults

    def _stop_with_fault(self, exc: ProtocolViolation, frames: tuple[bytes, ...],
                         shown: v.Fault | None = None) -> None:
        """Sign our own ``fault`` (what we verified: ``exc``) and stop. ``shown`` is what the
        UI says, when it differs (a peer's accusation we could not check ourselves)."""
        if isinstance(exc, _Equivocation):
            frames = exc.frames
        self._out.append(Evidence(exc.seat, exc.rule, exc.reason, tuple(frames)))
        self._log(f"fault: seat {exc.seat}: {exc.rule}: {exc.reason}")
        if self.me is not None and self.identity is not None and self.players:
            body = {
                "accused": exc.seat if exc.seat is not None else 255,
                "rule": exc.rule[:64],
                "reason": exc.reason[:256],
                "evidence": _fit_evidence(frames),
            }
            env = wire.make_envelope(
                self.identity.private_key, game=self.game, seq=len(self.chain), seat=self.me,
                prev=self.head, kind="fault", body=body,
            )
            frame = env.encode()
            self.chain.append(env)
            self.frames.append(frame)
            self.head = env.hash()
            self._out.append(Accepted(env.seq, frame, env))
            self._out.append(Send(frame))
        self.fault = shown or v.Fault(exc.seat, exc.rule, exc.reason)
        self.phase = v.STOPPED
        self._out.append(Stopped(self.fault))

    def _peer_fault_view(self, env: Any) -> tuple[ProtocolViolation | None, v.Fault]:
        """Judge a peer's ``fault``: what we can prove ourselves, and what to show."""
        b = env.body
        accused = b["accused"] if b["accused"] != 255 else None
        status, proof = self.check_evidence(b["evidence"])
        if status == "proves" and proof is not None and proof.seat == accused:
            return proof, v.Fault(accused, proof.rule, f"{self._name(env.seat)} caught it, confirmed here: {proof.reason}")
        if status == "valid":
            return None, v.Fault(env.seat, "false_accusation",
                                 f"{self._name(env.seat)} accused seat {accused} ({b['rule']}) but its evidence proves nothing against it")
        return None, v.Fault(accused, b["rule"], f"{self._name(env.seat)} reports: {b['reason']} (not checked here)")

    def _handle_terminal(self, env: Any) -> Any:
        if env.kind == "leave":
            def commit() -> None:
                self.left.add(env.seat)
                self._log(f"{self._name(env.seat)} left: {env.body['reason']}")
                if self.finished:
                    return
                in_hand = self.hc is not None and env.seat in self.hc.seats and self.phase != v.OVER
                active = self.engine is None or env.seat in self.engine.active
                if in_hand or active or any(st.seat == env.seat and st.kind != "game_end" for st in self.queue):
                    self.fault = v.Fault(env.seat, "left", _left_text(self._name(env.seat), env.body["reason"]))
                    self.phase = v.STOPPED
                    self._out.append(Stopped(self.fault))
                else:  # an eliminated seat may go home; it just will not sign the game end
                    self.queue = deque(st for st in self.queue if st.seat != env.seat)
                    if self.phase == v.OVER and not self.queue and not self.finished:
                        self.finished = True
                        self._out.append(Finished(self.winner))
            return commit
        # a peer's fault, in its place in the chain: the table stops; we say what we can check
        _, shown = self._peer_fault_view(env)

        def commit_fault() -> None:
            self.fault = shown
            self.phase = v.STOPPED
            self._log(f"stopped by {self._name(env.seat)}: {shown.reason}")
            self._out.append(Stopped(self.fault))

        return commit_fault

    def _stop_from_peer(self, env: Any) -> None:
        """A validly signed ``fault``/``leave`` that we cannot chain (our chain is behind, or
        already holds another envelope at its position). It stops us; we record our own fault
        quoting it, and adopt its accusation only if we can check its evidence ourselves."""
        if env.kind == "leave":
            exc = ProtocolViolation(env.seat, "left", _left_text(self._name(env.seat), env.body["reason"]))
            self._stop_with_fault(exc, (env.encode(),))
            return
        proof, shown = self._peer_fault_view(env)
        if proof is not None:  # we checked it: quote the frames that prove it, not the messenger
            self._stop_with_fault(proof, proof_frames(proof) or tuple(env.body["evidence"]), shown)
        else:
            exc = ProtocolViolation(None, "stopped_by_peer",
                                    f"seat {env.seat} stopped the table off our chain: {env.body['rule']}")
            self._stop_with_fault(exc, (env.encode(),), shown)

    def check_evidence(self, frames: list) -> tuple[str, ProtocolViolation | None]:
        """Judge a fault's evidence against this state (audit uses the state just before the
        fault). Returns ``("proves", violation)`` when a frame is validly signed and breaks a
        rule attributable to its signer (or two frames prove equivocation), ``("valid", None)``
        when the single frame is a valid move here (the accusation is false), and
        ``("unverifiable", None)`` otherwise (no evidence, damaged or unsigned frames, another
        history)."""
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
                self._check_sig(a)
                self._check_sig(b)
            except ProtocolViolation:
                return "valid", None
            return "proves", _Equivocation(a.seat, (frames[0], frames[1]), a.seq)
        if len(envs) != 1:
            return "unverifiable", None
        e = envs[0]
        if e.seq < len(self.chain) and self.frames[e.seq] == frames[0]:
            # already in our chain: only a shuffle can still be proven bad (deferred proofs)
            args = self._shuffle_args.get(e.seq)
            if args is None:
                return "valid", None
            try:
                deck.verify_shuffle(*args)
            except deck.DeckError as exc:
                return "proves", ProtocolViolation(e.seat, "shuffle", exc.reason, e.seq)
            return "valid", None
        import copy

        trial = copy.deepcopy(self)
        trial._out = []
        try:
            trial._accept_frame(frames[0], None)
        except _Dropped:
            return "unverifiable", None
        except ProtocolViolation as exc:
            return "proves", exc
        if envs[0].seq == len(self.chain) and len(trial.chain) == len(self.chain) + 1:
            return "valid", None
        return "unverifiable", None

    # ------------------------------------------------------------------ lobby handlers

    def _handle_offer(self, env: Any) -> Any:
        b = env.body
        if b.get("app") != APP:
            raise ProtocolViolation(0, "malformed", "not a p2p-chinchon offer", 0)
        try:
            rules = engine.Rules.from_wire(b["rules"])
        except Exception as exc:  # RulesError
            raise ProtocolViolation(0, "bad_rules", str(exc), 0) from None
        if b["proof_rounds"] != rules.shuffle_proof_rounds:
            raise ProtocolViolation(0, "bad_rules", "offer's proof_rounds differs from its rules' shuffle_proof_rounds", 0)
        if not (1 <= b["proof_rounds"] <= deck.MAX_K):
            raise ProtocolViolation(0, "bad_rules", "proof_rounds out of range", 0)
        if b["proof_rounds"] < self.min_proof_rounds:
            raise ProtocolViolation(0, "weak_proofs", f"the table's shuffle proofs use k = {b['proof_rounds']} "
                                    f"rounds; this seat requires at least {self.min_proof_rounds}", 0)

        def commit() -> None:
            self.game = env.game
            self.table_name = b["name"]
            self.rules = rules
            self.rules_wire = dict(b["rules"])
            self.max_seats = b["max_seats"]
            self.proof_rounds = b["proof_rounds"]
            self.offer_key = b["host_key"]
            self.queue.append(Step("seating", 0))
            self._log(f"table '{b['name']}' opened")

        return commit

    def _on_seating(self, env: Any) -> Any:  # expected via _lobby_step
        players = env.body["players"]
        if not (2 <= len(players) <= self.max_seats):
            raise ProtocolViolation(0, "bad_seating", f"{len(players)} players for {self.max_seats} seats", env.seq)
        keys = [p["key"] for p in players]
        if len(set(keys)) != len(keys):
            raise ProtocolViolation(0, "bad_seating", "one key in two seats", env.seq)
        if keys[0] != self.offer_key:
            raise ProtocolViolation(0, "bad_seating", "seat 0 is not the host", env.seq)

        def commit() -> None:
            self.queue.popleft()
            self.players = [Player(p["name"], p["key"], p["addr"]) for p in players]
            if self.identity is not None:
                mine = [i for i, p in enumerate(self.players) if p.key == self.identity.public_bytes]
                self.me = mine[0] if mine else None
            self.queue.extend(Step("agree", s) for s in range(len(players)))
            self.queue.extend(Step("toss", s) for s in range(len(players)))
            self._log("seated: " + ", ".join(f"{p.name} [{p.fingerprint}]" for p in self.players))

        return commit

    def _on_agree(self, env: Any) -> Any:
        b = env.body
        if b["rules_hash"] != rules_hash(self.rules_wire, self.proof_rounds):
            raise ProtocolViolation(env.seat, "disagree", "agreed to different rules", env.seq)
        if b["seating_hash"] != self._seating_hash():
            raise ProtocolViolation(env.seat, "disagree", "agreed to a different seating", env.seq)

        def commit() -> None:
            self.queue.popleft()
            self.toss_commits[env.seat] = b["toss_commit"]
            self._log(f"{self._name(env.seat)} agreed to the table")

        return commit

    def _on_toss(self, env: Any) -> Any:
        nonce = env.body["nonce"]
        if toss_commitment(self.game, env.seat, nonce) != self.toss_commits.get(env.seat):
            raise ProtocolViolation(env.seat, "toss", "toss nonce does not open the commitment", env.seq)

        def commit() -> None:
            self.queue.popleft()
            self.toss_nonces[env.seat] = nonce
            if len(self.toss_nonces) == len(self.players):
                seed = _h(b"p2p-chinchon/first-dealer/v1", self.game,
                          *[self.toss_nonces[s] for s in range(len(self.players))])
                first = int.from_bytes(seed, "big") % len(self.players)
                self.engine = engine.Game(self.rules, len(self.players), first)
                self.deck_cards = self.engine.deck_cards()
                self.points = deck.card_points(len(self.deck_cards))
                self._log(f"{self._name(first)} deals first (coin toss)")
                self._begin_hand()

        return commit

    def _seating_hash(self) -> bytes:
        return seating_hash([{"name": p.name, "key": p.key, "addr": p.addr} for p in self.players])

    # ------------------------------------------------------------------ hand: keys and shuffle

    @property
    def hand_no(self) -> int:
        """The hand being played (0-based); stays put until the next hand's keys are set up,
        although the engine may already count the next one after scoring."""
        return self._hand_played

    def _ctx(self, seat: int) -> Any:
        return deck.Context(self.game, self._hand_played, seat)

    def _begin_hand(self) -> None:
        e = self.engine
        seats = tuple(e.active)
        self._hand_played = e.hand_no
        self.hc = HandCrypto(seats=seats)
        self.hand_started = False
        self.shares = {}
        self.cts = deck.initial_deck(len(self.deck_cards))
        self.phase = v.SHUFFLING
        self.queue.extend(Step("key_commit", s) for s in seats)
        self.queue.extend(Step("key_share", s) for s in seats)
        self.queue.extend(Step("shuffle", s) for s in self._shuffle_order())
        self.queue.extend(Step("deal_shares", s) for s in seats)
        self._total_steps = len(self.queue)
        self._log(f"hand {e.hand_no + 1}: {self._name(e.dealer)} deals")

    def _shuffle_order(self) -> list[int]:
        """Seats in playing order starting after the dealer: the dealer shuffles last."""
        seats = list(self.hc.seats)
        d = self.engine.dealer
        i = seats.index(d) if d in seats else 0
        return seats[i + 1:] + seats[: i + 1]

    def _on_key_commit(self, env: Any) -> Any:
        def commit() -> None:
            self.queue.popleft()
            self.hc.commits[env.seat] = env.body["commit"]

        return commit

    def _on_key_share(self, env: Any) -> Any:
        b = env.body
        try:
            public = deck.verify_key_share(self._ctx(env.seat), b["share"], self.hc.commits[env.seat], b["nonce"])
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "key_share", exc.reason, env.seq) from None
        joint = None
        if len(self.hc.publics) + 1 == len(self.hc.seats):
            try:
                joint = deck.joint_key([*self.hc.publics.values(), public])
            except deck.DeckError as exc:
                raise ProtocolViolation(env.seat, "key_share", exc.reason, env.seq) from None

        def commit() -> None:
            self.queue.popleft()
            self.hc.publics[env.seat] = public
            if joint is not None:
                self.hc.joint = joint
                self._start_prep(len(self.cts))

        return commit

    def _start_prep(self, n: int) -> None:
        """Precompute the multiplications of our next shuffle (``n`` cards under the joint
        key) as a Job, while the seats before us shuffle."""
        self._prep = None
        if self.me in self.hc.seats and self.rng is not None:
            # a seeded (test) table derives the job's stream; real play uses secrets
            seed = self.rng.token_bytes(32) if isinstance(self.rng, SeededRng) else None
            self._prep_args = (self.hc.joint, n, self.proof_rounds, seed)
            self._prep_job = self._new_job("prepare_shuffle", _prepare_shuffle, self._prep_args)

    def _on_shuffle(self, env: Any) -> Any:
        b = env.body
        hc = self.hc
        if b["round"] != hc.round:
            raise ProtocolViolation(env.seat, "shuffle", f"round {b['round']}, expected {hc.round}", env.seq)
        deck_in = hc.restock_in if hc.round else self.cts
        args = (self._ctx(env.seat), hc.joint, deck_in, None, b["proof"], self.proof_rounds, hc.round)
        try:
            deck_out = deck.decode_deck(b["deck"], len(deck_in))
            args = args[:3] + (deck_out,) + args[4:]
            # our own proof was just made by this code; a peer's is checked now or as a Job
            if not self._emitting_own and not self.defer_proofs:
                deck.verify_shuffle(*args)
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "shuffle", exc.reason, env.seq) from None
        frame = self._current_frame

        def commit() -> None:
            self.queue.popleft()
            self._shuffle_args[env.seq] = args
            if self.defer_proofs and not self._emitting_own:
                jid = self._new_job("verify_shuffle", deck.verify_shuffle, args)
                self.pending_proofs[jid] = (env.seat, env.seq, frame)
            if hc.round:
                hc.restock_in = deck_out
                if not self.queue or self.queue[0].kind != "shuffle":
                    self._finish_restock()
            else:
                self.cts = list(deck_out)  # a restock extends cts: the proof job keeps its own deck_out
                if not self.queue or self.queue[0].kind != "shuffle":
                    self._start_deal()

        return commit

    def _start_deal(self) -> None:
        e = self.engine
        events = e.start_hand(len(self.cts))
        self._game_events(events)
        self.hand_started = True

    def _deal_share_slots(self, seat: int) -> list[int]:
        """Slots whose decryption share ``seat`` publishes at the deal: every card dealt to
        another seat, and the upcard; ascending."""
        plan = self.engine.deal_plan()
        slots = [s for owner, ss in plan.items() if owner != seat for s in ss]
        slots.append(self.engine.upcard_slot())
        return sorted(slots)

    def _on_deal_shares(self, env: Any) -> Any:
        slots = self._deal_share_slots(env.seat)
        shares = env.body["shares"]
        if len(shares) != len(slots):
            raise ProtocolViolation(env.seat, "share", f"{len(shares)} deal shares, expected {len(slots)}", env.seq)
        ds = self._verify_shares(env, list(zip(slots, shares)))

        def commit() -> None:
            self.queue.popleft()
            for slot, d in ds:
                self.shares.setdefault(slot, {})[env.seat] = d
            if not self.queue:
                self._finish_deal()

        return commit

    def _verify_shares(self, env: Any, pairs: Iterable[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        ctx = self._ctx(env.seat)
        public = self.hc.publics[env.seat]
        out = []
        for slot, share in pairs:
            if not (0 <= slot < len(self.cts)):
                raise ProtocolViolation(env.seat, "share", f"no slot {slot}", env.seq)
            try:
                out.append((slot, deck.verify_decryption_share(ctx, public, self.cts[slot], slot, share)))
            except deck.DeckError as exc:
                raise ProtocolViolation(env.seat, "share", f"slot {slot}: {exc.reason}", env.seq) from None
        return out

    def _finish_deal(self) -> None:
        e = self.engine
        up = e.upcard_slot()
        self._learn(up, self._open_public(up))
        if self.me is not None and self.me in self.hc.seats:
            for slot in e.hands[self.me]:
                self._open_private(slot)
        self.phase = v.PLAYING
        self._log(f"dealt; upcard {self._face(up)}")

    def _open_public(self, slot: int, seat_extra: tuple[int, bytes] | None = None) -> Any:
        ds = dict(self.shares.get(slot, {}))
        if seat_extra:
            ds[seat_extra[0]] = seat_extra[1]
        missing = [s for s in self.hc.seats if s not in ds]
        if missing:
            raise ProtocolViolation(missing[0], "share", f"no decryption share for slot {slot}")
        try:
            idx = deck.open_card(self.cts[slot], [ds[s] for s in self.hc.seats], self.points)
        except deck.DeckError as exc:
            raise ProtocolViolation(None, "not_a_card", f"slot {slot}: {exc.reason}") from None
        card = self.deck_cards[idx]
        return card

    def _open_private(self, slot: int) -> None:
        """Complete a private reveal with our own share (we own the slot)."""
        ds = dict(self.shares.get(slot, {}))
        ds[self.me] = deck.own_share(self.hc.keypair, self.cts[slot])
        try:
            idx = deck.open_card(self.cts[slot], [ds[s] for s in self.hc.seats], self.points)
        except deck.DeckError as exc:
            # Every share was proven correct, so this cannot happen unless a shuffle cheated.
            raise ProtocolViolation(None, "not_a_card", f"slot {slot}: {exc.reason}") from None
        self.engine.learn(slot, self.deck_cards[idx])

    def _face(self, slot: int) -> str:
        c = self.engine.faces.get(slot)
        return str(c) if c is not None else "?"

    # ------------------------------------------------------------------ turns

    def _engine_apply(self, env: Any, action: Any) -> list:
        try:
            return self.engine.apply(action)
        except engine.IllegalAction as exc:
            raise ProtocolViolation(env.seat, exc.rule, str(exc), env.seq) from None

    def _on_draw(self, env: Any) -> Any:
        e = self.engine
        src = env.body["source"]
        action = engine.DrawStock(env.seat) if src == "stock" else engine.DrawDiscard(env.seat)
        legal = e.legal_actions(env.seat)
        if action not in legal:
            self._dry_run(env, action, {})  # let the engine name the broken rule
            raise ProtocolViolation(env.seat, "illegal", f"draw from {src} not allowed", env.seq)
        slot = e.stock[0] if src == "stock" else e.discard_pile[-1]

        def commit() -> None:
            self._game_events(self._engine_apply(env, action))
            if src == "stock":
                self._pending_draw_slot = slot
                self.queue.extend(Step("draw_share", s) for s in self.hc.seats if s != env.seat)
            self._log(f"{self._name(env.seat)} draws from the {src}"
                      + (f": {self._face(slot)}" if src == "discard" else ""))

        return commit

    def _on_draw_share(self, env: Any) -> Any:
        slot = env.body["slot"]
        if slot != self._pending_draw_slot:
            raise ProtocolViolation(env.seat, "share", f"share for slot {slot}, the draw is slot {self._pending_draw_slot}", env.seq)
        [(slot, d)] = self._verify_shares(env, [(slot, env.body["share"])])

        def commit() -> None:
            self.queue.popleft()
            self.shares.setdefault(slot, {})[env.seat] = d
            if not self.queue or self.queue[0].kind != "draw_share":
                if self.me == self.engine.to_play:
                    self._open_private(slot)
                self._pending_draw_slot = None

        return commit

    def _on_discard(self, env: Any) -> Any:
        e = self.engine
        slot = env.body["slot"]
        if slot not in e.hands.get(env.seat, []):
            raise ProtocolViolation(env.seat, "not_in_hand", f"slot {slot} is not in seat {env.seat}'s hand", env.seq)
        [(slot, d)] = self._verify_shares(env, [(slot, env.body["share"])])
        card = self._open_public(slot, (env.seat, d))
        action = engine.Discard(env.seat, slot)
        self._dry_run(env, action, {slot: card})

        def commit() -> None:
            self.shares.setdefault(slot, {})[env.seat] = d
            self._learn(slot, card)
            self._log(f"{self._name(env.seat)} discards {card}")
            self._game_events(self._engine_apply(env, action))

        return commit

    def _on_close(self, env: Any) -> Any:
        e = self.engine
        slot = env.body["slot"]
        hand = e.hands.get(env.seat, [])
        if slot not in hand:
            raise ProtocolViolation(env.seat, "not_in_hand", f"slot {slot} is not in seat {env.seat}'s hand", env.seq)
        pairs = [(x["slot"], x["share"]) for x in env.body["shares"]]
        if sorted(s for s, _ in pairs) != sorted(s for s in hand if s != slot):
            raise ProtocolViolation(env.seat, "close", "a close shows exactly the seven kept cards", env.seq)
        ds = self._verify_shares(env, pairs)
        faces = {s: self._open_public(s, (env.seat, d)) for s, d in ds}
        action = engine.Close(env.seat, slot)
        self._dry_run(env, action, faces)

        def commit() -> None:
            for s, d in ds:
                self.shares.setdefault(s, {})[env.seat] = d
                self._learn(s, faces[s])
            self.last_closer = env.seat
            self._log(f"{self._name(env.seat)} closes")
            self._game_events(self._engine_apply(env, action))
            self.phase = v.SHOWDOWN
            order = e.showdown_order() if e.phase == engine.Phase.SHOWDOWN else []
            self.queue.extend(Step("show", s) for s in order)
            if not order:
                self._after_showdown()

        return commit

    def _dry_run(self, env: Any, action: Any, faces: dict[int, Any]) -> None:
        """Check an engine action against a copy of the engine with the new faces learned."""
        import copy

        trial = copy.deepcopy(self.engine, self._frozen_memo())
        try:
            for s, c in faces.items():
                if trial.faces.get(s) is None:
                    trial.learn(s, c)
                elif trial.faces[s] != c:
                    raise ProtocolViolation(env.seat, "face_mismatch", f"slot {s} opened as {c}, known as {trial.faces[s]}", env.seq)
            trial.apply(action)
        except engine.IllegalAction as exc:
            raise ProtocolViolation(env.seat, exc.rule, str(exc), env.seq) from None

    def _frozen_memo(self) -> dict[int, Any]:
        """A deepcopy memo that shares the engine's frozen values (the rules, the cards of the
        deck and the last showdown are frozen dataclasses the engine replaces, never mutates)
        instead of copying them: the copy behaves the same at a fraction of the cost."""
        e = self.engine
        cards = e.deck_cards()
        memo: dict[int, Any] = {id(c): c for c in cards}
        memo[id(cards)] = cards
        memo[id(e.rules)] = e.rules
        if e.last_showdown is not None:
            memo[id(e.last_showdown)] = e.last_showdown
        return memo

    def _learn(self, slot: int, card: Any) -> None:
        if self.engine.faces.get(slot) is None:
            self.engine.learn(slot, card)

    def _on_show(self, env: Any) -> Any:
        e = self.engine
        hand = e.hands.get(env.seat, [])
        pairs = [(x["slot"], x["share"]) for x in env.body["shares"]]
        if sorted(s for s, _ in pairs) != sorted(hand):
            raise ProtocolViolation(env.seat, "show", "a shown hand covers exactly the seat's cards", env.seq)
        ds = self._verify_shares(env, pairs)
        faces = {s: self._open_public(s, (env.seat, d)) for s, d in ds}
        for s, c in faces.items():
            if e.faces.get(s) is not None and e.faces[s] != c:
                raise ProtocolViolation(env.seat, "face_mismatch", f"slot {s}", env.seq)

        def commit() -> None:
            self.queue.popleft()
            for s, d in ds:
                self.shares.setdefault(s, {})[env.seat] = d
                self._learn(s, faces[s])
            if not self.queue or self.queue[0].kind != "show":
                self._after_showdown()

        return commit

    def _after_showdown(self) -> None:
        e = self.engine
        if e.phase == engine.Phase.SHOWDOWN:
            self._game_events(e.score_hand())
        self.queue.extend(Step("secret", s) for s in self.hc.seats)

    # ------------------------------------------------------------------ restock

    def _restock_needed(self, slots: tuple[int, ...]) -> None:
        hc = self.hc
        hc.round += 1
        hc.restock_slots = tuple(slots)
        hc.restock_in = [self.cts[s] for s in slots]
        self._start_prep(len(slots))
        self.phase = v.RESTOCKING
        self.queue.extend(Step("shuffle", s) for s in self._shuffle_order())
        self._log(f"the stock is empty: {len(slots)} discards are re-shuffled by every seat")

    def _finish_restock(self) -> None:
        hc = self.hc
        first = len(self.cts)
        self.cts.extend(hc.restock_in)
        new_slots = tuple(range(first, first + len(hc.restock_in)))
        hc.restock_in = []
        self.phase = v.PLAYING
        self._game_events(self.engine.apply(engine.Restock(new_slots)))

    # ------------------------------------------------------------------ end of hand

    def _on_secret(self, env: Any) -> Any:
        secret = env.body["secret"]
        try:
            deck.verify_secret(self._ctx(env.seat), secret, self.hc.publics[env.seat])
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "secret", exc.reason, env.seq) from None
        final = None
        if len(self.hc.secrets) + 1 == len(self.hc.seats):
            final = self._audit_hand({**self.hc.secrets, env.seat: secret})

        def commit() -> None:
            self.queue.popleft()
            self.hc.secrets[env.seat] = secret
            if final is not None:
                totals = list(self.engine.totals)
                self.hc.digest = _h(b"p2p-chinchon/hand-digest/v1", self.game, self._hand_played.to_bytes(2, "big"),
                                    self.head, _packb(totals), _packb(final))
                self.queue.extend(Step("hand_digest", s) for s in self.hc.seats)

        return commit

    def _audit_hand(self, secrets_by_seat: dict[int, bytes]) -> list[int]:
        """Every secret is known: decrypt every slot and check it against every face seen
        during the hand. Returns the card index of every slot (the hand's final deck). On a
        failure the seat whose shuffle changed the cards is named (see :meth:`_blame_shuffle`)."""
        hc = self.hc
        secrets = [secrets_by_seat[s] for s in hc.seats]
        final = []
        problem = None
        for slot, ct in enumerate(self.cts):
            try:
                idx = deck.decrypt_with_secrets(ct, secrets, self.points)
            except deck.DeckError as exc:
                problem = f"slot {slot}: {exc.reason}"
                break
            card = self.deck_cards[idx]
            known = self.engine.faces.get(slot)
            if known is not None and known != card:
                problem = f"slot {slot} decrypts to {card}, was shown as {known}"
                break
            final.append(idx)
        if problem is None and sorted(final[: len(self.deck_cards)]) != list(range(len(self.deck_cards))):
            problem = "the final deck is not a permutation of the cards"
        if problem is not None:
            raise ProtocolViolation(self._blame_shuffle(secrets), "end_of_hand", problem)
        return final

    def _blame_shuffle(self, secrets: list[bytes]) -> int | None:
        """With every secret known, the first shuffle of this hand (in chain order) whose
        output cards are not its input cards: its author cheated. (With every proof verified
        this cannot happen; it is the end-of-hand audit's own answer.)"""
        for seq in sorted(self._shuffle_args):
            ctx, _joint, deck_in, deck_out, *_ = self._shuffle_args[seq]
            if ctx.hand != self._hand_played:
                continue
            try:
                before = sorted(deck.decrypt_with_secrets(ct, secrets, self.points) for ct in deck_in)
                after = sorted(deck.decrypt_with_secrets(ct, secrets, self.points) for ct in deck_out)
            except deck.DeckError:
                return ctx.seat
            if before != after:
                return ctx.seat
        return None

    def _on_hand_digest(self, env: Any) -> Any:
        b = env.body
        if b["digest"] != self.hc.digest or list(b["totals"]) != list(self.engine.totals):
            raise ProtocolViolation(env.seat, "digest_mismatch", "the seat's hand digest differs from ours", env.seq)

        def commit() -> None:
            self.queue.popleft()
            self.hc.digests[env.seat] = b["digest"]
            if len(self.hc.digests) == len(self.hc.seats):
                self._after_hand()

        return commit

    def _after_hand(self) -> None:
        e = self.engine
        self.phase = v.HAND_OVER
        if e.phase == engine.Phase.REENTRY:
            self.phase = v.REENTRY
            self.queue.extend(Step("reenter", s) for s in e.pending_reentry)
        else:
            self._next_hand_or_end()

    def _on_reenter(self, env: Any) -> Any:
        action = engine.Reenter(env.seat, bool(env.body["accept"]))
        self._dry_run(env, action, {})

        def commit() -> None:
            self.queue.popleft()
            self._game_events(self._engine_apply(env, action))
            if not self.queue:
                self._next_hand_or_end()

        return commit

    def _next_hand_or_end(self) -> None:
        e = self.engine
        if e.phase == engine.Phase.OVER:
            self.winner = e.winner
            self.phase = v.OVER
            self.queue.extend(Step("game_end", s) for s in range(len(self.players)) if s not in self.left)
        else:
            self._begin_hand()

    def _on_game_end(self, env: Any) -> Any:
        b = env.body
        if b["winner"] != (self.winner if self.winner is not None else 255):
            raise ProtocolViolation(env.seat, "digest_mismatch", "the seat names another winner", env.seq)
        if b["digest"] != env.prev:
            raise ProtocolViolation(env.seat, "digest_mismatch", "game_end must sign the chain head it follows", env.seq)

        def commit() -> None:
            self.queue.popleft()
            self.game_end_sigs.add(env.seat)
            if not self.queue:
                self.finished = True
                self._out.append(Finished(self.winner))

        return commit

    # ------------------------------------------------------------------ our automatic steps

    def _advance(self) -> None:
        """Send every message that is ours to send now and needs no decision."""
        guard = 0
        while not (self.fault or self.finished) and self.me is not None and self.identity is not None:
            guard += 1
            if guard > 10_000:  # pragma: no cover
                raise RuntimeError("protocol loop")
            step = self.expected()
            if step is None or step.seat != self.me:
                return
            body = self._auto_body(step)
            if body is None:
                return  # waiting for a decision (intent)
            self._emit_own(step.kind, body)
            self._drain_buffer()

    def _auto_body(self, step: Step) -> dict | None:
        k = step.kind
        e = self.engine
        if k == "agree":
            if not (self.agreed or self.auto_agree):
                return None
            self.my_toss_nonce = self.my_toss_nonce or self.rng.token_bytes(32)
            return {
                "rules_hash": rules_hash(self.rules_wire, self.proof_rounds),
                "seating_hash": self._seating_hash(),
                "toss_commit": toss_commitment(self.game, self.me, self.my_toss_nonce),
            }
        if k == "toss":
            return {"nonce": self.my_toss_nonce}
        hc = self.hc
        if k == "key_commit":
            hc.keypair = deck.KeyPair.generate(self.rng)
            return {"hand": self._hand_played, "commit": hc.keypair.commitment(self._ctx(self.me))}
        if k == "key_share":
            return {"hand": self._hand_played, "share": deck.make_key_share(self._ctx(self.me), hc.keypair, self.rng), "nonce": hc.keypair.nonce}
        if k == "shuffle":
            if self._prep_job is not None:
                # our preparation job is still running: wait for it (job_done) rather than do
                # the same multiplications a second time, on the same cores, right now
                return None
            deck_in = hc.restock_in if hc.round else self.cts
            prep, self._prep = self._prep, None
            if prep is None or prep.joint_key != hc.joint or prep.n != len(deck_in):
                # the job failed or was for another deck: prepare now, from the same
                # arguments when they fit (a seeded game stays reproducible)
                args = self._prep_args
                fits = args and args[0] == hc.joint and args[1] == len(deck_in)
                prep = _prepare_shuffle(*args) if fits else None
            out, proof = deck.shuffle(self._ctx(self.me), hc.joint, deck_in, self.rng,
                                      k=self.proof_rounds, round=hc.round, prep=prep)
            return {"hand": self._hand_played, "round": hc.round, "deck": deck.encode_deck(out), "proof": proof}
        if k == "deal_shares":
            if not self.hand_started:
                return None
            return {"hand": self._hand_played, "shares": [self._my_share(s) for s in self._deal_share_slots(self.me)]}
        if k == "draw_share":
            slot = self._pending_draw_slot
            return {"hand": self._hand_played, "slot": slot, "share": self._my_share(slot)}
        if k == "show":
            return {"hand": self._hand_played, "shares": [{"slot": s, "share": self._my_share(s)} for s in e.hands[self.me]]}
        if k == "secret":
            if self.pending_proofs:
                return None  # every peer's shuffle proof must pass before our secret goes out
            return {"hand": self._hand_played, "secret": hc.keypair.secret_bytes()}
        if k == "hand_digest":
            return {"hand": self._hand_played, "digest": hc.digest, "totals": list(e.totals)}
        if k == "game_end":
            return {"winner": self.winner if self.winner is not None else 255, "digest": self.head}
        return None  # draw, discard, reenter: decisions

    # ------------------------------------------------------------------ engine events

    def _game_events(self, events: list) -> None:
        for ev in events:
            self._out.append(GameEvent(ev))
            name = type(ev).__name__
            if name == "RestockNeeded":
                self._restock_needed(tuple(ev.slots))
            elif name == "HandVoid":
                self._log(f"hand void: {ev.reason}")
                self.score_history.append(tuple(0 for _ in self.players))
                self.queue.extend(Step("secret", s) for s in self.hc.seats)
            elif name == "HandScored":
                self._record_score(ev)
            elif name == "GameOver":
                self._log(f"game over: {self._name(ev.winner) if ev.winner is not None else 'nobody'} wins")
            elif name in ("Eliminated", "ReentryOffered", "Reentered"):
                self._log(f"{name}: {self._event_seat_text(ev)}")

    def _event_seat_text(self, ev: Any) -> str:
        seat = getattr(ev, "seat", None)
        if seat is None and hasattr(ev, "seats"):
            return ", ".join(self._name(s) for s in ev.seats)
        return self._name(seat) if seat is not None else str(ev)

    def _record_score(self, ev: Any) -> None:
        pens = [0] * len(self.players)
        order = [seat for seat, _ in ev.penalties]
        for seat, p in ev.penalties:
            pens[seat] = p
        self.score_history.append(tuple(pens))
        shown = []
        for seat, ph in zip(order, ev.showdown.players):
            shown.append(
                v.ShownHand(
                    seat=seat,
                    melds=tuple(tuple(m.cards) for m in ph.melds),
                    laid_off=tuple(lo.card for lo in ph.laid_off),
                    deadwood=tuple(ph.deadwood),
                    penalty=ph.penalty,
                )
            )
        self.last_showdown = tuple(shown)
        self._log("scores: " + ", ".join(f"{self._name(s)} {pens[s]:+d}" for s in order))

    # ------------------------------------------------------------------ view

    def _name(self, seat: int | None) -> str:
        if seat is None or seat >= len(self.players):
            return f"seat {seat}"
        return self.players[seat].name

    def _log(self, text: str) -> None:
        self.log.append(text)
        self.log_total += 1

    def view(self) -> v.SeatView:
        """The :class:`SeatView` for this seat (or an observer), rebuilt from the state."""
        e = self.engine
        step = self.expected()
        seats = []
        for i, p in enumerate(self.players):
            seats.append(
                v.SeatInfo(
                    seat=i, name=p.name, fingerprint=p.fingerprint,
                    cards=len(e.hands.get(i, [])) if e and self.hand_started else 0,
                    total=e.totals[i] if e else 0,
                    eliminated=(i in e.eliminated) if e else False,
                    reentries_used=e.reentries_used[i] if e else 0,
                    is_dealer=(e is not None and e.dealer == i),
                    connected=i not in self.left,
                    agreed=i in self.toss_commits,
                )
            )
        hand = ()
        discard_top = None
        close_options: tuple = ()
        to_play = None
        stepname = None
        if e is not None and self.hand_started:
            if self.me is not None:
                hand = tuple(e.faces[s] for s in e.hands.get(self.me, []) if e.faces.get(s) is not None)
            if e.discard_pile:
                discard_top = e.faces.get(e.discard_pile[-1])
            if self.phase in (v.PLAYING, v.RESTOCKING):
                to_play = e.to_play
                if step is not None and step.kind in ("draw", "discard"):
                    stepname = step.kind
                if stepname == "discard" and self.me == e.to_play:
                    close_options = self._close_options()
        progress = None
        if self.phase == v.SHUFFLING and self.queue:
            total = getattr(self, "_total_steps", len(self.queue))
            progress = (total - len(self.queue), total, f"{self.queue[0].kind} by {self._name(self.queue[0].seat)}")
        return v.SeatView(
            me=self.me,
            table_name=self.table_name,
            rules=self.rules,
            seats=tuple(seats),
            phase=self.phase,
            hand_no=e.hand_no if e else 0,
            dealer=e.dealer if e else None,
            to_play=to_play,
            step=stepname,
            hand=hand,
            discard_top=discard_top,
            discard_size=len(e.discard_pile) if e and self.hand_started else 0,
            stock_size=len(e.stock) if e and self.hand_started else 0,
            last_from_discard=dict(e.last_from_discard) if e else {},
            close_options=close_options,
            first_round=bool(e and self.hand_started and not self._may_close_now()),
            progress=progress,
            showdown=self.last_showdown,
            closer=self.last_closer,
            score_history=tuple(self.score_history),
            reentry_offer=bool(step and step.kind == "reenter" and step.seat == self.me),
            winner=self.winner,
            fault=self.fault,
            log=tuple(self.log)[-50:],
            log_total=self.log_total,
        )

    def _may_close_now(self) -> bool:
        e = self.engine
        if e.phase != engine.Phase.DISCARD or self.me != e.to_play:
            return True
        return any(isinstance(a, engine.Close) for a in e.legal_actions(self.me)) or not self._close_options_raw()

    def _close_options_raw(self) -> list:
        e = self.engine
        faces = [e.faces.get(s) for s in e.hands.get(self.me, [])]
        if None in faces or len(faces) != 8:
            return []
        return engine.close_options(faces, self.rules)

    def _close_options(self) -> tuple:
        e = self.engine
        legal = {a.slot for a in e.legal_actions(self.me) if isinstance(a, engine.Close)}
        if not legal:
            return ()
        legal_cards = {e.faces[s] for s in legal}
        opts = [o for o in self._close_options_raw() if o.discard in legal_cards]
        opts.sort(key=lambda o: (o.score, str(o.discard)))
        return tuple((o.discard, o.score, bool(o.chinchon)) for o in opts)


def _left_text(name: str, reason: str) -> str:
    """Why a seat left, for the fault shown to people (the leave's own reason when it gave one)."""
    return f"{name} left the table" + ("" if reason in ("", "left the table") else f": {reason}")


def _clip_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8 without splitting a character (the wire
    caps names in bytes)."""
    return text.encode()[:limit].decode("utf-8", "ignore")


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
