"""One hand's deck sub-protocol: keys, the shuffle chain, the deal, card openings, restock,
the end-of-hand secrets and audit.

The per-hand public and secret values live in one :class:`HandCrypto` (``Table.hc``); the
ciphertexts and the published decryption shares of the hand in ``cts``/``shares``. Deferred
shuffle proofs (``pending_proofs``) gate every decryption share and the secret: nothing that
opens a card leaves this seat before every shuffle proof of the deck passed here.
(docs/protocol.md "Deck"; DESIGN.md "Deck")"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from p2p_chinchon import deck, engine, view as v
from p2p_chinchon.rng import SeededRng

from .common import VERIFYING, IntentError, ProtocolViolation, Step, _h, _packb, _prepare_shuffle, _verify_shuffle


@dataclass
class HandCrypto:
    """One hand's mental-poker state: its keys (public parts for everyone, ``keypair`` for us
    only), its ciphertexts and the decryption shares published for them. Each hand has its
    own, so the next hand's can be built while this one is played."""

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
    cts: list = field(default_factory=list)  # slot -> Ciphertext (restocked slots appended)
    shares: dict[int, dict[int, bytes]] = field(default_factory=dict)  # slot -> seat -> d


class HandPart:
    """The hand part of :class:`~p2p_chinchon.table.Table` (a mixin: the state is the table's)."""

    @property
    def cts(self) -> list:
        """The current hand's ciphertexts, slot -> Ciphertext (``[]`` before the first hand)."""
        return self.hc.cts if self.hc is not None else []

    @cts.setter
    def cts(self, value: list) -> None:
        self.hc.cts = value

    @property
    def shares(self) -> dict[int, dict[int, bytes]]:
        """The current hand's published decryption shares, slot -> seat -> share."""
        return self.hc.shares if self.hc is not None else {}

    @property
    def verifying(self) -> bool:
        """True while a peer's shuffle proof of this hand's deck is still being checked (a
        deferred ``verify_shuffle`` Job): no decryption share leaves this seat meanwhile."""
        return bool(self.pending_proofs)

    def seat_secrets(self) -> dict:
        """This seat's secrets a restarted node needs to carry on (msgpack-ready): the toss
        nonce and, once made, this hand's key (``hand``, ``key`` = secret scalar, ``key_nonce``)."""
        out: dict = {"toss_nonce": self.my_toss_nonce}
        if self.hc is not None and self.hc.keypair is not None:
            out.update(hand=self._hand_played, key=self.hc.keypair.secret_bytes(), key_nonce=self.hc.keypair.nonce)
        return out

    def resumable_jobs(self, jobs: list) -> list:
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
            x = deck.GROUP.scalar_from_bytes(saved["key"])
            hc.keypair = deck.KeyPair(x, deck.GROUP.mul_base(x), saved["key_nonce"])

    @property
    def hand_no(self) -> int:
        """The hand being played (0-based); stays put until the next hand's keys are set up,
        although the engine may already count the next one after scoring."""
        return self._hand_played

    def _ctx(self, seat: int) -> Any:
        return deck.Context(self.game, self._hand_played, seat)

    def _my_share(self, slot: int) -> bytes:
        if self.verifying:  # the invariant itself; the callers wait before asking
            raise IntentError(f"no decryption share while {VERIFYING}")
        hc = self.hc
        ctx = self._ctx(self.me)
        return deck.decryption_share(ctx, hc.keypair, self.cts[slot], slot, self.rng)

    def _begin_hand(self) -> None:
        e = self.engine
        seats = tuple(e.active)
        self._hand_played = e.hand_no
        self.hc = HandCrypto(seats=seats)
        self.hand_started = False
        self.cts = deck.initial_deck(len(self.deck_cards))
        self.phase = v.SHUFFLING
        self.queue.extend(Step("key_commit", s) for s in seats)
        self.queue.extend(Step("key_share", s) for s in seats)
        self.queue.extend(Step("shuffle", s) for s in self._shuffle_order())
        self.queue.extend(Step("deal_shares", s) for s in seats)
        self._total_steps = len(self.queue)
        self.log_event("deal", (e.dealer,), numbers=(e.hand_no + 1,))

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
            self._prep_args = (self.hc.joint, n, self.proof_rounds, seed, self.rules.shuffle_proof)
            self._prep_job = self._new_job("prepare_shuffle", _prepare_shuffle, self._prep_args)

    def _on_shuffle(self, env: Any) -> Any:
        b = env.body
        hc = self.hc
        if b["round"] != hc.round:
            raise ProtocolViolation(env.seat, "shuffle", f"round {b['round']}, expected {hc.round}", env.seq)
        deck_in = hc.restock_in if hc.round else self.cts
        args = (self._ctx(env.seat), hc.joint, deck_in, None, b["proof"], self.proof_rounds, hc.round,
                self.rules.shuffle_proof)
        try:
            deck_out = deck.decode_deck(b["deck"], len(deck_in))
            args = args[:3] + (deck_out,) + args[4:]
            # our own proof was just made by this code; a peer's is checked now or as a Job
            if not self._emitting_own and not self.defer_proofs and self.proof_sink is None:
                _verify_shuffle(*args)
        except deck.DeckError as exc:
            raise ProtocolViolation(env.seat, "shuffle", exc.reason, env.seq) from None
        frame = self._current_frame

        def commit() -> None:
            self.queue.popleft()
            self._shuffle_args[env.seq] = args
            if self.proof_sink is not None and not self._emitting_own:
                self.proof_sink(env.seq, _verify_shuffle, args)
            elif self.defer_proofs and not self._emitting_own:
                jid = self._new_job("verify_shuffle", _verify_shuffle, args)
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
        ds = self._verify_shares(env, list(zip(slots, shares, strict=True)))
        faces = {}
        if len(self.queue) == 1:  # the last deal shares: the upcard and our cards open now
            extra = {env.seat: dict(ds)}
            up = self.engine.upcard_slot()
            faces[up] = self._open_public(up, (env.seat, dict(ds)[up]))
            if self.me is not None and self.me in self.hc.seats:
                for slot in self.engine.hands[self.me]:
                    faces[slot] = self._open_private(slot, extra)
            self._check_faces(env, faces)

        def commit() -> None:
            self.queue.popleft()
            for slot, d in ds:
                self.shares.setdefault(slot, {})[env.seat] = d
            if not self.queue:
                self._finish_deal(faces)

        return commit

    def _verify_shares(self, env: Any, pairs: Iterable[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
        ctx = self._ctx(env.seat)
        public = self.hc.publics[env.seat]
        out = []
        later = []  # (ciphertext, slot, share) for the proof_sink
        for slot, share in pairs:
            if not (0 <= slot < len(self.cts)):
                raise ProtocolViolation(env.seat, "share", f"no slot {slot}", env.seq)
            if self.proof_sink is not None and type(share) is bytes and len(share) == deck.SHARE_LEN:
                later.append((self.cts[slot], slot, share))
                out.append((slot, share[:32]))  # d, as the check returns it when it passes
                continue
            try:
                out.append((slot, deck.verify_decryption_share(ctx, public, self.cts[slot], slot, share)))
            except deck.DeckError as exc:
                raise ProtocolViolation(env.seat, "share", f"slot {slot}: {exc.reason}", env.seq) from None
        if later:
            self.proof_sink(env.seq, _verify_share_batch, (ctx, public, later))
        return out

    def _finish_deal(self, faces: dict[int, Any]) -> None:
        up = self.engine.upcard_slot()
        for slot, card in faces.items():
            self._learn(slot, card)
        self.phase = v.PLAYING
        self.log_event("upcard", cards=self._cards_at(up))

    def _open_public(self, slot: int, seat_extra: tuple[int, bytes] | None = None) -> Any:
        """The card at a public ``slot`` from every seat's share (``seat_extra``: the share of
        the envelope being checked, not yet stored)."""
        extra = {seat_extra[0]: seat_extra[1]} if seat_extra else {}
        return self._open_with(slot, extra)

    def _open_private(self, slot: int, extra: dict[int, dict[int, bytes]]) -> Any:
        """The card at our own ``slot``: the peers' shares (``extra``: seat -> slot -> share
        of the envelope being checked) and our own, which never leaves this seat."""
        ds = {seat: by_slot[slot] for seat, by_slot in extra.items() if slot in by_slot}
        ds[self.me] = deck.own_share(self.hc.keypair, self.cts[slot])
        return self._open_with(slot, ds)

    def _open_with(self, slot: int, extra: dict[int, bytes]) -> Any:
        ds = {**self.shares.get(slot, {}), **extra}
        missing = [s for s in self.hc.seats if s not in ds]
        if missing:
            raise ProtocolViolation(missing[0], "share", f"no decryption share for slot {slot}")
        try:
            idx = deck.open_card(self.cts[slot], [ds[s] for s in self.hc.seats], self.points)
        except deck.DeckError as exc:
            # Every share was proven correct, so this cannot happen unless a shuffle cheated.
            raise ProtocolViolation(None, "not_a_card", f"slot {slot}: {exc.reason}") from None
        return self.deck_cards[idx]

    def _check_faces(self, env: Any, faces: dict[int, Any]) -> None:
        """The engine's checks of ``learn`` for every newly opened face, before any is learned:
        a slot seen with another face, or one card at two slots (a bad shuffle got through)."""
        known = self.engine.faces
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

    def _cards_at(self, slot: int) -> tuple:
        """The public card at ``slot`` as a log event's ``cards`` (empty while unknown)."""
        c = self.engine.faces.get(slot)
        return (c,) if c is not None else ()

    def _restock_needed(self, slots: tuple[int, ...]) -> None:
        hc = self.hc
        hc.round += 1
        hc.restock_slots = tuple(slots)
        hc.restock_in = [self.cts[s] for s in slots]
        self._start_prep(len(slots))
        self.phase = v.RESTOCKING
        self.queue.extend(Step("shuffle", s) for s in self._shuffle_order())
        self.log_event("reshuffle", numbers=(len(slots),))

    def _finish_restock(self) -> None:
        hc = self.hc
        first = len(self.cts)
        self.cts.extend(hc.restock_in)
        new_slots = tuple(range(first, first + len(hc.restock_in)))
        hc.restock_in = []
        self.phase = v.PLAYING
        self._game_events(self.engine.apply(engine.Restock(new_slots)))

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

    def _auto_key_commit(self) -> dict:
        hc = self.hc
        hc.keypair = deck.KeyPair.generate(self.rng)
        return {"hand": self._hand_played, "commit": hc.keypair.commitment(self._ctx(self.me))}

    def _auto_key_share(self) -> dict:
        hc = self.hc
        return {"hand": self._hand_played, "share": deck.make_key_share(self._ctx(self.me), hc.keypair, self.rng),
                "nonce": hc.keypair.nonce}

    def _auto_shuffle(self) -> dict | None:
        hc = self.hc
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
                                  k=self.proof_rounds, round=hc.round, prep=prep,
                                  system=deck.proof_system(self.rules.shuffle_proof, self.proof_rounds))
        return {"hand": self._hand_played, "round": hc.round, "deck": deck.encode_deck(out), "proof": proof}

    def _auto_deal_shares(self) -> dict | None:
        if not self.hand_started:
            return None
        return {"hand": self._hand_played, "shares": [self._my_share(s) for s in self._deal_share_slots(self.me)]}

    def _auto_secret(self) -> dict | None:
        if self.pending_proofs:
            return None  # every peer's shuffle proof must pass before our secret goes out
        return {"hand": self._hand_played, "secret": self.hc.keypair.secret_bytes()}

    def _auto_hand_digest(self) -> dict:
        return {"hand": self._hand_played, "digest": self.hc.digest, "totals": list(self.engine.totals)}


def _verify_share_batch(ctx: Any, public: bytes, items: list) -> None:
    """The DLEQ checks of one envelope's decryption shares, ``(ciphertext, slot, share)``
    each (``Table.proof_sink``: an audit's pool runs them)."""
    for ct, slot, share in items:
        deck.verify_decryption_share(ctx, public, ct, slot, share)
