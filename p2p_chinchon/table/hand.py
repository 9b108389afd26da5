"""One hand's deck sub-protocol: keys, the shuffle chain, the deal, card openings, restock,
the end-of-hand secrets and audit.

The per-hand public and secret values live in one :class:`HandCrypto` (``Hand.hc``); the
ciphertexts and the published decryption shares of the hand in ``cts``/``shares``. Deferred
shuffle proofs (``pending_proofs``) gate every decryption share and the secret: nothing that
opens a card leaves this seat before every shuffle proof of the deck passed here.
(docs/protocol.md "The deck (mental poker)", "Hands")"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from p2p_chinchon import deck, engine, view as v, wire
from p2p_chinchon.rng import SeededRng

from .common import (
    VERIFYING,
    Commit,
    IntentError,
    Job,
    Outbox,
    ProtocolViolation,
    _h,
    _packb,
    _prepare_shuffle,
    _verify_shuffle,
)
from .state import Flow, Part

if TYPE_CHECKING:
    from .lobby import Lobby
    from .view import EventLog


@dataclass
class HandCrypto:
    """One hand's mental-poker state: its keys (public parts for everyone, ``keypair`` for us
    only), its ciphertexts and the decryption shares published for them. Each hand has its
    own, so the next hand's can be built while this one is played."""

    seats: tuple[int, ...]
    keypair: deck.KeyPair | None = None
    commits: dict[int, bytes] = field(default_factory=dict)
    publics: dict[int, bytes] = field(default_factory=dict)
    joint: bytes = b""
    round: int = 0  # 0 = initial shuffle, r = r-th stock re-shuffle
    restock_in: list[deck.Ciphertext] = field(default_factory=list)  # ciphertexts being re-shuffled
    restock_slots: tuple[int, ...] = ()
    secrets: dict[int, bytes] = field(default_factory=dict)
    digests: dict[int, bytes] = field(default_factory=dict)
    digest: bytes = b""
    cts: list[deck.Ciphertext] = field(default_factory=list)  # slot -> Ciphertext (restocked slots appended)
    shares: dict[int, dict[int, bytes]] = field(default_factory=dict)  # slot -> seat -> d


class HandTurns(Protocol):
    """What the hand asks of the turns part (turns.py): the engine's events of the deal and
    of a restock, a face the engine learns, and what follows a hand's digests."""

    def game_events(self, events: list[engine.Event]) -> None: ...

    def learn(self, slot: int, card: engine.Card) -> None: ...

    def after_hand(self) -> None: ...


class HandChain(Protocol):
    """What the hand reads of the chain (chain.py): the head the hand digest signs, the frame
    being checked (a deferred proof keeps it as evidence), and whether it is our own."""

    head: bytes
    current_frame: bytes
    emitting_own: bool


ProofSink = Callable[[int, Callable[..., None], tuple[Any, ...]], None]


class Hand(Part):
    """The hand part of :class:`~p2p_chinchon.table.Table`: one hand's deck sub-protocol.

    Owns ``hc`` (this hand's :class:`HandCrypto`), ``hand_no`` (the hand being played,
    0-based), the game's ``deck_cards`` and their group ``points``, ``total_steps`` (the
    shuffle phase's length, for the progress bar), our shuffle's preparation job (``prep``,
    ``prep_job``, ``prep_args``), every shuffle's proof arguments by seq (``shuffle_args``,
    kept as evidence and for the end-of-hand audit), the peers' proofs still being checked
    (``pending_proofs``: job id -> (seat, seq, frame)), ``defer_proofs`` (check peers' proofs
    as Jobs) and ``proof_sink`` (audit: hand every proof to a pool instead). ``turns`` is set by
    the table once every part is built."""

    turns: HandTurns

    def __init__(self, flow: Flow, lobby: Lobby, out: Outbox, events: EventLog, chain: HandChain, *,
                 defer_proofs: bool) -> None:
        super().__init__(flow, lobby, out, events)
        self.chain = chain
        self.hc: HandCrypto | None = None
        # the hand being played (0-based): stays put until the next hand's keys are set up,
        # although the engine may already count the next one after scoring
        self.hand_no = 0
        self.deck_cards: tuple[engine.Card, ...] = ()
        self.points: tuple[bytes, ...] = ()
        self.total_steps = 0
        self.prep: deck.ShufflePrep | None = None
        self.prep_job: int | None = None
        self.prep_args: tuple[Any, ...] = ()
        self.shuffle_args: dict[int, tuple[Any, ...]] = {}
        # Verify peers' shuffle proofs as Jobs off the critical path; every one must pass
        # before this seat reveals its end-of-hand secret (docs/protocol.md "Deferred verification").
        self.defer_proofs = defer_proofs
        self.pending_proofs: dict[int, tuple[int, int, bytes]] = {}
        # audit only: a peer's shuffle proof and decryption shares' DLEQ proofs are handed to
        # proof_sink(seq, fn, args) instead of being checked here (fn(*args) raises DeckError
        # if one fails: a pool runs it, and the audit names the first envelope that fails)
        self.proof_sink: ProofSink | None = None

    def job_done(self, job_id: int, result: object) -> tuple[int, int, bytes] | None:
        """The driver finished one of this hand's jobs (:meth:`Table.job_done`): our shuffle's
        preparation (kept when it worked), or a peer's shuffle proof, no longer pending. Returns
        ``(seat, seq, frame)`` of a peer's proof that failed, else None."""
        if job_id == self.prep_job:
            self.prep_job = None
            if isinstance(result, deck.ShufflePrep):
                self.prep = result
        elif job_id in self.pending_proofs:
            seat, seq, frame = self.pending_proofs.pop(job_id)
            if isinstance(result, Exception):
                return seat, seq, frame
        return None

    def first_hand(self) -> None:
        """The toss named the first dealer (``flow.engine`` is set): the game's deck, then its
        first hand."""
        self.deck_cards = self.flow.game().deck_cards()
        self.points = deck.card_points(len(self.deck_cards))
        self.begin_hand()

    @property
    def cts(self) -> list[deck.Ciphertext]:
        """The current hand's ciphertexts, slot -> Ciphertext (``[]`` before the first hand)."""
        return self.hc.cts if self.hc is not None else []

    @cts.setter
    def cts(self, value: list[deck.Ciphertext]) -> None:
        self.crypto().cts = value

    def keypair(self) -> deck.KeyPair:
        """This seat's key of this hand. Raises :class:`RuntimeError` before it is made."""
        kp = self.crypto().keypair
        if kp is None:
            raise RuntimeError("this seat's key of the hand is not made yet")
        return kp

    def crypto(self) -> HandCrypto:
        """This hand's :class:`HandCrypto`. Raises :class:`RuntimeError` before the first hand
        (a deck step is only expected once it began)."""
        if self.hc is None:
            raise RuntimeError("no hand has begun")
        return self.hc

    @property
    def seats(self) -> tuple[int, ...]:
        """The seats dealt in this hand (``()`` before the first hand)."""
        return self.hc.seats if self.hc is not None else ()

    @property
    def shares(self) -> dict[int, dict[int, bytes]]:
        """The current hand's published decryption shares, slot -> seat -> share."""
        return self.hc.shares if self.hc is not None else {}

    @property
    def verifying(self) -> bool:
        """True while a peer's shuffle proof of this hand's deck is still being checked (a
        deferred ``verify_shuffle`` Job): no decryption share leaves this seat meanwhile."""
        return bool(self.pending_proofs)

    def key_secrets(self) -> dict[str, Any]:
        """This hand's key, once made (``hand``, ``key`` = secret scalar, ``key_nonce``), for
        :meth:`~p2p_chinchon.table.Table.seat_secrets`; else empty."""
        keypair = self.hc.keypair if self.hc is not None else None
        if keypair is not None:
            return {"hand": self.hand_no, "key": keypair.secret_bytes(), "key_nonce": keypair.nonce}
        return {}

    def resumable_jobs(self, jobs: list[Job]) -> list[Job]:
        """After a rejoin's :meth:`Table.replay <p2p_chinchon.table.Table.replay>` of the chain: which of the ``jobs`` it produced still
        matter (this hand's proof checks, our pending shuffle preparation). Proofs of earlier
        hands passed before our secret of that hand went out (it is in the chain): forgotten."""
        live = [j for j in jobs if j.id == self.prep_job
                or (j.id in self.pending_proofs and j.args[0].hand == self.hand_no)]
        ids = {j.id for j in live}
        self.pending_proofs = {k: val for k, val in self.pending_proofs.items() if k in ids}
        return live

    def restore_key(self, saved: dict[str, Any]) -> None:
        """Put back the key :meth:`key_secrets` gave, once its hand has begun here."""
        hc = self.hc
        if hc is not None and hc.keypair is None and saved.get("hand") == self.hand_no and "key" in saved:
            x = deck.GROUP.scalar_from_bytes(saved["key"])
            hc.keypair = deck.KeyPair(x, deck.GROUP.mul_base(x), saved["key_nonce"])

    def ctx(self, seat: int) -> deck.Context:
        return deck.Context(self.lobby.game, self.hand_no, seat)

    def record_share(self, slot: int, seat: int, d: bytes) -> None:
        """``seat``'s published decryption share ``d`` of ``slot`` (checked)."""
        self.crypto().shares.setdefault(slot, {})[seat] = d

    def my_share(self, slot: int) -> bytes:
        if self.verifying:  # the invariant itself; the callers wait before asking
            raise IntentError(f"no decryption share while {VERIFYING}")
        ctx = self.ctx(self.lobby.seat())
        return deck.decryption_share(ctx, self.keypair(), self.cts[slot], slot, self.lobby.randomness())

    def begin_hand(self) -> None:
        e = self.flow.game()
        seats = tuple(e.active)
        self.hand_no = e.hand_no
        self.hc = HandCrypto(seats=seats)
        self.flow.hand_started = False
        self.cts = deck.initial_deck(len(self.deck_cards))
        self.flow.to(v.SHUFFLING)
        self.flow.expect("key_commit", seats)
        self.flow.expect("key_share", seats)
        self.flow.expect("shuffle", self.shuffle_order())
        self.flow.expect("deal_shares", seats)
        self.total_steps = len(self.flow.queue)
        self.events.event("deal", (e.dealer,), numbers=(e.hand_no + 1,))

    def shuffle_order(self) -> list[int]:
        """Seats in playing order starting after the dealer: the dealer shuffles last."""
        seats = list(self.crypto().seats)
        d = self.flow.game().dealer
        i = seats.index(d) if d in seats else 0
        return seats[i + 1:] + seats[: i + 1]

    def on_key_commit(self, env: wire.Envelope) -> Commit:
        def commit() -> None:
            self.flow.done("key_commit")
            self.crypto().commits[env.seat] = env.body["commit"]

        return commit

    def on_key_share(self, env: wire.Envelope) -> Commit:
        b = env.body
        try:
            public = deck.verify_key_share(self.ctx(env.seat), b["share"], self.crypto().commits[env.seat], b["nonce"])
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "key_share", exc.reason, env.seq) from None
        joint = None
        if len(self.crypto().publics) + 1 == len(self.crypto().seats):
            try:
                joint = deck.joint_key([*self.crypto().publics.values(), public])
            except deck.DeckError as exc:
                raise ProtocolViolation(env.seat, "key_share", exc.reason, env.seq) from None

        def commit() -> None:
            self.flow.done("key_share")
            self.crypto().publics[env.seat] = public
            if joint is not None:
                self.crypto().joint = joint
                self.start_prep(len(self.cts))

        return commit

    def start_prep(self, n: int) -> None:
        """Precompute the multiplications of our next shuffle (``n`` cards under the joint
        key) as a Job, while the seats before us shuffle."""
        self.prep = None
        if self.lobby.me in self.crypto().seats and self.lobby.rng is not None:
            # a seeded (test) table derives the job's stream; real play uses secrets
            seed = self.lobby.rng.token_bytes(32) if isinstance(self.lobby.randomness(), SeededRng) else None
            self.prep_args = (self.crypto().joint, n, self.lobby.proof_rounds, seed, self.lobby.table_rules().shuffle_proof)
            self.prep_job = self.out.new_job("prepare_shuffle", _prepare_shuffle, self.prep_args)

    def on_shuffle(self, env: wire.Envelope) -> Commit:
        b = env.body
        hc = self.crypto()
        if b["round"] != hc.round:
            raise ProtocolViolation(env.seat, "shuffle", f"round {b['round']}, expected {hc.round}", env.seq)
        deck_in = hc.restock_in if hc.round else self.cts
        args: tuple[Any, ...] = (self.ctx(env.seat), hc.joint, deck_in, None, b["proof"], self.lobby.proof_rounds, hc.round,
                self.lobby.table_rules().shuffle_proof)
        try:
            deck_out = deck.decode_deck(b["deck"], len(deck_in))
            args = args[:3] + (deck_out,) + args[4:]
            # our own proof was just made by this code; a peer's is checked now or as a Job
            if not self.chain.emitting_own and not self.defer_proofs and self.proof_sink is None:
                _verify_shuffle(*args)
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "shuffle", exc.reason, env.seq) from None
        frame = self.chain.current_frame

        def commit() -> None:
            last = self.flow.done("shuffle")
            self.shuffle_args[env.seq] = args
            if self.proof_sink is not None and not self.chain.emitting_own:
                self.proof_sink(env.seq, _verify_shuffle, args)
            elif self.defer_proofs and not self.chain.emitting_own:
                jid = self.out.new_job("verify_shuffle", _verify_shuffle, args)
                self.pending_proofs[jid] = (env.seat, env.seq, frame)
            if hc.round:
                hc.restock_in = deck_out
                if last:
                    self.finish_restock()
            else:
                self.cts = list(deck_out)  # a restock extends cts: the proof job keeps its own deck_out
                if last:
                    self.start_deal()

        return commit

    def start_deal(self) -> None:
        e = self.flow.game()
        events = e.start_hand(len(self.cts))
        self.turns.game_events(events)
        self.flow.hand_started = True

    def deal_share_slots(self, seat: int) -> list[int]:
        """Slots whose decryption share ``seat`` publishes at the deal: every card dealt to
        another seat, and the upcard; ascending."""
        plan = self.flow.game().deal_plan()
        slots = [s for owner, ss in plan.items() if owner != seat for s in ss]
        slots.append(self.flow.game().upcard_slot())
        return sorted(slots)

    def on_deal_shares(self, env: wire.Envelope) -> Commit:
        slots = self.deal_share_slots(env.seat)
        shares = env.body["shares"]
        if len(shares) != len(slots):
            raise ProtocolViolation(env.seat, "share", f"{len(shares)} deal shares, expected {len(slots)}", env.seq)
        ds = self.verify_shares(env, list(zip(slots, shares, strict=True)))
        faces = {}
        if self.flow.block_ends():  # the last deal shares: the upcard and our cards open now
            extra = {env.seat: dict(ds)}
            up = self.flow.game().upcard_slot()
            faces[up] = self.open_public(up, (env.seat, dict(ds)[up]))
            if self.lobby.me is not None and self.lobby.me in self.crypto().seats:
                for slot in self.flow.game().hands[self.lobby.me]:
                    faces[slot] = self.open_private(slot, extra)
            self.check_faces(env, faces)

        def commit() -> None:
            last = self.flow.done("deal_shares")
            for slot, d in ds:
                self.shares.setdefault(slot, {})[env.seat] = d
            if last:
                self.finish_deal(faces)

        return commit

    def verify_shares(self, env: wire.Envelope, pairs: Iterable[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        ctx = self.ctx(env.seat)
        public = self.crypto().publics[env.seat]
        out = []
        later = []  # (ciphertext, slot, share) for the proof_sink
        sink = self.proof_sink
        for slot, share in pairs:
            if not (0 <= slot < len(self.cts)):
                raise ProtocolViolation(env.seat, "share", f"no slot {slot}", env.seq)
            if sink is not None and type(share) is bytes and len(share) == deck.SHARE_LEN:
                later.append((self.cts[slot], slot, share))
                out.append((slot, share[:32]))  # d, as the check returns it when it passes
                continue
            try:
                out.append((slot, deck.verify_decryption_share(ctx, public, self.cts[slot], slot, share)))
            except deck.DeckError as exc:
                raise ProtocolViolation(env.seat, "share", f"slot {slot}: {exc.reason}", env.seq) from None
        if later and sink is not None:
            sink(env.seq, _verify_share_batch, (ctx, public, later))
        return out

    def finish_deal(self, faces: dict[int, Any]) -> None:
        up = self.flow.game().upcard_slot()
        for slot, card in faces.items():
            self.turns.learn(slot, card)
        self.flow.to(v.PLAYING)
        self.events.event("upcard", cards=self.cards_at(up))

    def open_public(self, slot: int, seat_extra: tuple[int, bytes] | None = None) -> engine.Card:
        """The card at a public ``slot`` from every seat's share (``seat_extra``: the share of
        the envelope being checked, not yet stored)."""
        extra = {seat_extra[0]: seat_extra[1]} if seat_extra else {}
        return self.open_with(slot, extra)

    def open_private(self, slot: int, extra: dict[int, dict[int, bytes]]) -> engine.Card:
        """The card at our own ``slot``: the peers' shares (``extra``: seat -> slot -> share
        of the envelope being checked) and our own, which never leaves this seat."""
        ds = {seat: by_slot[slot] for seat, by_slot in extra.items() if slot in by_slot}
        ds[self.lobby.seat()] = deck.own_share(self.keypair(), self.cts[slot])
        return self.open_with(slot, ds)

    def open_with(self, slot: int, extra: dict[int, bytes]) -> engine.Card:
        ds = {**self.shares.get(slot, {}), **extra}
        missing = [s for s in self.crypto().seats if s not in ds]
        if missing:
            raise ProtocolViolation(missing[0], "share", f"no decryption share for slot {slot}")
        try:
            idx = deck.open_card(self.cts[slot], [ds[s] for s in self.crypto().seats], self.points)
        except deck.DeckError as exc:
            # Every share was proven correct, so this cannot happen unless a shuffle cheated.
            raise ProtocolViolation(None, "not_a_card", f"slot {slot}: {exc.reason}") from None
        return self.deck_cards[idx]

    def check_faces(self, env: wire.Envelope, faces: dict[int, Any]) -> None:
        """The engine's checks of ``learn`` for every newly opened face, before any is learned:
        a slot seen with another face, or one card at two slots (a bad shuffle got through)."""
        known = self.flow.game().faces
        where = {c: s for s, c in known.items()}
        for slot, card in faces.items():
            old = known.get(slot)
            if old is not None and old != card:
                raise ProtocolViolation(env.seat, "face_mismatch", f"slot {slot} opened as {card}, known as {old}", env.seq)
            other = where.get(card, slot)
            if other != slot:
                raise ProtocolViolation(env.seat, "duplicate_card", f"slot {slot} opened as {card}, "
                                        f"already at slot {other}: a shuffle of this hand is bad", env.seq)
            where[card] = slot

    def cards_at(self, slot: int) -> tuple[engine.Card, ...]:
        """The public card at ``slot`` as a log event's ``cards`` (empty while unknown)."""
        c = self.flow.game().faces.get(slot)
        return (c,) if c is not None else ()

    def restock_needed(self, slots: tuple[int, ...]) -> None:
        hc = self.crypto()
        hc.round += 1
        hc.restock_slots = tuple(slots)
        hc.restock_in = [self.cts[s] for s in slots]
        self.start_prep(len(slots))
        self.flow.to(v.RESTOCKING)
        self.flow.expect("shuffle", self.shuffle_order())
        self.events.event("reshuffle", numbers=(len(slots),))

    def finish_restock(self) -> None:
        hc = self.crypto()
        first = len(self.cts)
        self.cts.extend(hc.restock_in)
        new_slots = tuple(range(first, first + len(hc.restock_in)))
        hc.restock_in = []
        self.flow.to(v.PLAYING)
        self.turns.game_events(self.flow.game().apply(engine.Restock(new_slots)))

    def on_secret(self, env: wire.Envelope) -> Commit:
        secret = env.body["secret"]
        try:
            deck.verify_secret(self.ctx(env.seat), secret, self.crypto().publics[env.seat])
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "secret", exc.reason, env.seq) from None
        final = None
        if len(self.crypto().secrets) + 1 == len(self.crypto().seats):
            final = self.audit_hand({**self.crypto().secrets, env.seat: secret})

        def commit() -> None:
            self.flow.done("secret")
            self.crypto().secrets[env.seat] = secret
            if final is not None:
                totals = list(self.flow.game().totals)
                self.crypto().digest = _h(b"p2p-chinchon/hand-digest/v1", self.lobby.game, self.hand_no.to_bytes(2, "big"),
                                    self.chain.head, _packb(totals), _packb(final))
                self.flow.expect("hand_digest", self.crypto().seats)

        return commit

    def audit_hand(self, secrets_by_seat: dict[int, bytes]) -> list[int]:
        """Every secret is known: decrypt every slot and check it against every face seen
        during the hand. Returns the card index of every slot (the hand's final deck). On a
        failure the seat whose shuffle changed the cards is named (see :meth:`blame_shuffle`)."""
        hc = self.crypto()
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
            known = self.flow.game().faces.get(slot)
            if known is not None and known != card:
                problem = f"slot {slot} decrypts to {card}, was shown as {known}"
                break
            final.append(idx)
        if problem is None and sorted(final[: len(self.deck_cards)]) != list(range(len(self.deck_cards))):
            problem = "the final deck is not a permutation of the cards"
        if problem is not None:
            raise ProtocolViolation(self.blame_shuffle(secrets), "end_of_hand", problem)
        return final

    def blame_shuffle(self, secrets: list[bytes]) -> int | None:
        """With every secret known, the first shuffle of this hand (in chain order) whose
        output cards are not its input cards: its author cheated. (With every proof verified
        this cannot happen; it is the end-of-hand audit's own answer.)"""
        for seq in sorted(self.shuffle_args):
            ctx: deck.Context = self.shuffle_args[seq][0]
            deck_in, deck_out = self.shuffle_args[seq][2:4]
            if ctx.hand != self.hand_no:
                continue
            try:
                before = sorted(deck.decrypt_with_secrets(ct, secrets, self.points) for ct in deck_in)
                after = sorted(deck.decrypt_with_secrets(ct, secrets, self.points) for ct in deck_out)
            except deck.DeckError:
                return ctx.seat
            if before != after:
                return ctx.seat
        return None

    def on_hand_digest(self, env: wire.Envelope) -> Commit:
        b = env.body
        if b["digest"] != self.crypto().digest or list(b["totals"]) != list(self.flow.game().totals):
            raise ProtocolViolation(env.seat, "digest_mismatch", "the seat's hand digest differs from ours", env.seq)

        def commit() -> None:
            self.flow.done("hand_digest")
            self.crypto().digests[env.seat] = b["digest"]
            if len(self.crypto().digests) == len(self.crypto().seats):
                self.turns.after_hand()

        return commit

    def auto_key_commit(self) -> dict[str, Any]:
        hc = self.crypto()
        keypair = hc.keypair = deck.KeyPair.generate(self.lobby.randomness())
        return {"hand": self.hand_no, "commit": keypair.commitment(self.ctx(self.lobby.seat()))}

    def auto_key_share(self) -> dict[str, Any]:
        return {"hand": self.hand_no, "share": deck.make_key_share(self.ctx(self.lobby.seat()), self.keypair(),
                                                                  self.lobby.randomness()),
                "nonce": self.keypair().nonce}

    def auto_shuffle(self) -> dict[str, Any] | None:
        hc = self.crypto()
        if self.prep_job is not None:
            # our preparation job is still running: wait for it (job_done) rather than do
            # the same multiplications a second time, on the same cores, right now
            return None
        deck_in = hc.restock_in if hc.round else self.cts
        prep, self.prep = self.prep, None
        if prep is None or prep.joint_key != hc.joint or prep.n != len(deck_in):
            # the job failed or was for another deck: prepare now, from the same
            # arguments when they fit (a seeded game stays reproducible)
            args = self.prep_args
            fits = args and args[0] == hc.joint and args[1] == len(deck_in)
            prep = _prepare_shuffle(*args) if fits else None
        out, proof = deck.shuffle(self.ctx(self.lobby.seat()), hc.joint, deck_in, self.lobby.randomness(),
                                  k=self.lobby.proof_rounds, round=hc.round, prep=prep,
                                  system=deck.proof_system(self.lobby.table_rules().shuffle_proof, self.lobby.proof_rounds))
        return {"hand": self.hand_no, "round": hc.round, "deck": deck.encode_deck(out), "proof": proof}

    def auto_deal_shares(self) -> dict[str, Any] | None:
        if not self.flow.hand_started:
            return None
        return {"hand": self.hand_no, "shares": [self.my_share(s) for s in self.deal_share_slots(self.lobby.seat())]}

    def auto_secret(self) -> dict[str, Any] | None:
        if self.pending_proofs:
            return None  # every peer's shuffle proof must pass before our secret goes out
        return {"hand": self.hand_no, "secret": self.keypair().secret_bytes()}

    def auto_hand_digest(self) -> dict[str, Any]:
        return {"hand": self.hand_no, "digest": self.crypto().digest, "totals": list(self.flow.game().totals)}


def _verify_share_batch(ctx: deck.Context, public: bytes, items: list[tuple[deck.Ciphertext, int, bytes]]) -> None:
    """The DLEQ checks of one envelope's decryption shares, ``(ciphertext, slot, share)``
    each (``Hand.proof_sink``: an audit's pool runs them)."""
    for ct, slot, share in items:
        deck.verify_decryption_share(ctx, public, ct, slot, share)
