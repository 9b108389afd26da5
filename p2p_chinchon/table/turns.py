"""The turns: draw, draw shares, discard, close, show, re-entry and the game's end, through
the rules engine (engine/). Every move is checked against the engine before it is applied;
the engine's events drive what comes next (restock, scoring, re-entry, the next hand).
(docs/protocol.md "Turns"; docs/rules.md)"""

from __future__ import annotations

from typing import Any

from p2p_chinchon import engine, view as v

from .common import Finished, GameEvent, IntentError, ProtocolViolation, Step, _unexpected

# engine events about one seat -> log event kind
_SEAT_EVENTS = {"Eliminated": "eliminated", "ReentryOffered": "reentry_offer", "Reentered": "reenter"}


class TurnsPart:
    """The turns part of :class:`~p2p_chinchon.table.Table` (a mixin: the state is the table's)."""

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

    def _try_emit(self, kind: str, body: dict) -> None:
        """Sign and apply our own move through the same checks as a peer's; an illegal move
        raises IntentError and nothing is signed into the chain or sent."""
        try:
            self._emit_own(kind, body)
        except ProtocolViolation as exc:
            raise IntentError(exc.reason) from None

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
            if src == "discard":
                self.log_event("draw_discard", (env.seat,), cards=self._cards_at(slot))
            else:
                self.log_event("draw_stock", (env.seat,))

        return commit

    def _on_draw_share(self, env: Any) -> Any:
        slot = env.body["slot"]
        if slot != self._pending_draw_slot:
            raise ProtocolViolation(env.seat, "share", f"share for slot {slot}, the draw is slot {self._pending_draw_slot}", env.seq)
        [(slot, d)] = self._verify_shares(env, [(slot, env.body["share"])])
        last = len(self.queue) == 1 or self.queue[1].kind != "draw_share"
        faces = {}
        if last and self.me == self.engine.to_play:
            faces[slot] = self._open_private(slot, {env.seat: {slot: d}})
            self._check_faces(env, faces)

        def commit() -> None:
            self.queue.popleft()
            self.shares.setdefault(slot, {})[env.seat] = d
            if last:
                for s, card in faces.items():
                    self.engine.learn(s, card)
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
            self.log_event("discard", (env.seat,), cards=(card,))
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
            self.log_event("close", (env.seat,))
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
        except engine.GameError as exc:  # IllegalAction, or a face the engine refuses to learn
            raise _unexpected(env.seat, exc, env.seq) from None

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
        self._check_faces(env, faces)

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
            self.left_at_end = frozenset(self.left)  # fixes N_end: a signer's later leave must not lower it
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

    def end_signed_by_majority(self) -> bool:
        """The game is over and the chained ``game_end``s are more than half of N_end less the
        seats that left or were removed since without signing one (N_end: the seats in the
        game when it was over; every chained ``game_end`` counts, its seat's later ``leave``
        notwithstanding, so a signer that goes home lowers nothing): its end is settled
        (docs/protocol.md "Removal", the game's end): no other branch can end the game."""
        if self.left_at_end is None:
            return False
        n_end = len(self.players) - len(self.left_at_end)
        unsigned_gone = (self.left - self.left_at_end) - self.game_end_sigs
        return 2 * len(self.game_end_sigs) > n_end - len(unsigned_gone)

    def end_without(self, seat: int) -> bool:
        """``seat``'s ``game_end`` is awaited and its ``rejoin_wait`` ran out: when a strict
        majority already signed the game's end (:meth:`end_signed_by_majority`), the game
        ends here, signing nothing; the seats whose ``game_end`` is missing are named in
        ``unsigned_end`` and in a log line (audit: ``ok``, the same). False otherwise."""
        step = self.expected()
        if step != Step("game_end", seat) or not self.end_signed_by_majority() or self.finished:
            return False
        self.unsigned_end = tuple(st.seat for st in self.queue if st.kind == "game_end")
        self.finished = True
        self.log_event("unsigned_end", self.unsigned_end)
        self._out.append(Finished(self.winner))
        return True

    def _game_events(self, events: list) -> None:
        for ev in events:
            self._out.append(GameEvent(ev))
            name = type(ev).__name__
            if name == "RestockNeeded":
                self._restock_needed(tuple(ev.slots))
            elif name == "HandVoid":
                self.log_event("void", detail=ev.reason)
                self.score_history.append(tuple(0 for _ in self.players))
                self.queue.extend(Step("secret", s) for s in self.hc.seats)
            elif name == "StockDead":  # max_reshuffles with reshuffle_end="score" (issue 24)
                self.log_event("dead_hand")
                self.phase = v.SHOWDOWN
                self.queue.extend(Step("show", s) for s in self.engine.showdown_order())
            elif name == "HandScored":
                self._record_score(ev)
            elif name == "GameOver":
                self.log_event("game_over", (ev.winner,))
            elif name in _SEAT_EVENTS:
                self.log_event(_SEAT_EVENTS[name], (ev.seat,))

    def _record_score(self, ev: Any) -> None:
        pens = [0] * len(self.players)
        order = [seat for seat, _ in ev.penalties]
        for seat, p in ev.penalties:
            pens[seat] = p
        self.score_history.append(tuple(pens))
        shown = []
        for seat, ph in zip(order, ev.showdown.players, strict=True):
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
        self.log_event("score", tuple(order), points=tuple(pens[s] for s in order))

    def _auto_draw_share(self) -> dict:
        slot = self._pending_draw_slot
        return {"hand": self._hand_played, "slot": slot, "share": self._my_share(slot)}

    def _auto_show(self) -> dict:
        return {"hand": self._hand_played,
                "shares": [{"slot": s, "share": self._my_share(s)} for s in self.engine.hands[self.me]]}

    def _auto_game_end(self) -> dict:
        return {"winner": self.winner if self.winner is not None else 255, "digest": self.head}
