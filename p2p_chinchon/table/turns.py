"""The turns: draw, draw shares, discard, close, show, re-entry and the game's end, through
the rules engine (engine/). Every move is checked against the engine before it is applied;
the engine's events drive what comes next (restock, scoring, re-entry, the next hand).
(docs/protocol.md "Hands"; docs/rules.md)"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from p2p_chinchon import engine, view as v, wire

from .common import Commit, GameEvent, IntentError, Outbox, ProtocolViolation, Step, _unexpected
from .state import Flow, Part

if TYPE_CHECKING:
    from .lobby import Lobby
    from .view import EventLog

# engine events about one seat -> log event kind
_SEAT_EVENTS = {"Eliminated": "eliminated", "ReentryOffered": "reentry_offer", "Reentered": "reenter"}


class Cards(Protocol):
    """What the turns ask of the hand's crypto (hand.py): the hand being played, its seats, our
    decryption shares, the peers' shares checked, cards opened and their faces checked, and a
    restock of the stock."""

    hand_no: int

    @property
    def seats(self) -> tuple[int, ...]: ...

    def my_share(self, slot: int) -> bytes: ...

    def record_share(self, slot: int, seat: int, d: bytes) -> None: ...

    def verify_shares(self, env: wire.Envelope, pairs: Iterable[tuple[int, bytes]]) -> list[tuple[int, bytes]]: ...

    def open_public(self, slot: int, seat_extra: tuple[int, bytes] | None = None) -> engine.Card: ...

    def open_private(self, slot: int, extra: dict[int, dict[int, bytes]]) -> engine.Card: ...

    def check_faces(self, env: wire.Envelope, faces: dict[int, engine.Card]) -> None: ...

    def cards_at(self, slot: int) -> tuple[engine.Card, ...]: ...

    def restock_needed(self, slots: tuple[int, ...]) -> None: ...

    def begin_hand(self) -> None: ...


class ChainHead(Protocol):
    """What the turns read of the chain (chain.py): the head a ``game_end`` signs."""

    head: bytes


class Turns(Part):
    """The turns part of :class:`~p2p_chinchon.table.Table`: the moves through the rules
    engine and what the engine's events start. Owns the game's outcome as it is signed
    (``game_end_sigs``, ``unsigned_end``: seats whose ``game_end`` never came, ``left_at_end``:
    the seats out of the game when it was over, None before; N_end is the others), the
    scores shown (``score_history``, ``last_showdown``, ``last_closer``) and the slot of a stock
    draw being opened (``pending_draw_slot``). Reaches the deck only through :class:`Cards`."""

    def __init__(self, flow: Flow, lobby: Lobby, out: Outbox, events: EventLog, chain: ChainHead,
                 hand: Cards) -> None:
        super().__init__(flow, lobby, out, events)
        self.chain = chain
        self.hand = hand
        self.game_end_sigs: set[int] = set()
        self.unsigned_end: tuple[int, ...] = ()
        self.left_at_end: frozenset[int] | None = None
        self.score_history: list[tuple[int, ...]] = []
        self.last_showdown: tuple[v.ShownHand, ...] = ()
        self.last_closer: int | None = None
        self.pending_draw_slot: int | None = None

    def my_slot_of(self, card: engine.Card) -> int:
        e = self.flow.game()
        for slot in e.hands.get(self.lobby.seat(), []):
            if e.faces.get(slot) == card:
                return slot
        raise IntentError(f"{card} is not in your hand")

    def discard_body(self, kind: str, slot: int) -> dict[str, Any]:
        e = self.flow.game()
        hand = e.hands[self.lobby.seat()]
        if kind == "discard":
            return {"hand": self.hand.hand_no, "slot": slot, "share": self.hand.my_share(slot)}
        kept = [s for s in hand if s != slot]
        return {
            "hand": self.hand.hand_no,
            "slot": slot,
            "shares": [{"slot": s, "share": self.hand.my_share(s)} for s in kept],
        }

    def engine_apply(self, env: wire.Envelope, action: engine.Action) -> list[engine.Event]:
        try:
            return self.flow.game().apply(action)
        except engine.IllegalAction as exc:
            raise ProtocolViolation(env.seat, exc.rule, str(exc), env.seq) from None

    def on_draw(self, env: wire.Envelope) -> Commit:
        e = self.flow.game()
        src = env.body["source"]
        action = engine.DrawStock(env.seat) if src == "stock" else engine.DrawDiscard(env.seat)
        legal = e.legal_actions(env.seat)
        if action not in legal:
            self.dry_run(env, action, {})  # let the engine name the broken rule
            raise ProtocolViolation(env.seat, "illegal", f"draw from {src} not allowed", env.seq)
        slot = e.stock[0] if src == "stock" else e.discard_pile[-1]

        def commit() -> None:
            self.game_events(self.engine_apply(env, action))
            if src == "stock":
                self.pending_draw_slot = slot
                self.flow.expect("draw_share", (s for s in self.hand.seats if s != env.seat))
            if src == "discard":
                self.events.event("draw_discard", (env.seat,), cards=self.hand.cards_at(slot))
            else:
                self.events.event("draw_stock", (env.seat,))

        return commit

    def on_draw_share(self, env: wire.Envelope) -> Commit:
        slot = env.body["slot"]
        if slot != self.pending_draw_slot:
            raise ProtocolViolation(env.seat, "share", f"share for slot {slot}, the draw is slot {self.pending_draw_slot}", env.seq)
        [(slot, d)] = self.hand.verify_shares(env, [(slot, env.body["share"])])
        last = self.flow.block_ends()
        faces = {}
        if last and self.lobby.me == self.flow.game().to_play:
            faces[slot] = self.hand.open_private(slot, {env.seat: {slot: d}})
            self.hand.check_faces(env, faces)

        def commit() -> None:
            self.flow.done("draw_share")
            self.hand.record_share(slot, env.seat, d)
            if last:
                for s, card in faces.items():
                    self.flow.game().learn(s, card)
                self.pending_draw_slot = None

        return commit

    def on_discard(self, env: wire.Envelope) -> Commit:
        e = self.flow.game()
        slot = env.body["slot"]
        if slot not in e.hands.get(env.seat, []):
            raise ProtocolViolation(env.seat, "not_in_hand", f"slot {slot} is not in seat {env.seat}'s hand", env.seq)
        [(slot, d)] = self.hand.verify_shares(env, [(slot, env.body["share"])])
        card = self.hand.open_public(slot, (env.seat, d))
        action = engine.Discard(env.seat, slot)
        self.dry_run(env, action, {slot: card})

        def commit() -> None:
            self.hand.record_share(slot, env.seat, d)
            self.learn(slot, card)
            self.events.event("discard", (env.seat,), cards=(card,))
            self.game_events(self.engine_apply(env, action))

        return commit

    def on_close(self, env: wire.Envelope) -> Commit:
        e = self.flow.game()
        slot = env.body["slot"]
        hand = e.hands.get(env.seat, [])
        if slot not in hand:
            raise ProtocolViolation(env.seat, "not_in_hand", f"slot {slot} is not in seat {env.seat}'s hand", env.seq)
        pairs = [(x["slot"], x["share"]) for x in env.body["shares"]]
        if sorted(s for s, _ in pairs) != sorted(s for s in hand if s != slot):
            raise ProtocolViolation(env.seat, "close", "a close shows exactly the seven kept cards", env.seq)
        ds = self.hand.verify_shares(env, pairs)
        faces = {s: self.hand.open_public(s, (env.seat, d)) for s, d in ds}
        action = engine.Close(env.seat, slot)
        self.dry_run(env, action, faces)

        def commit() -> None:
            for s, d in ds:
                self.hand.record_share(s, env.seat, d)
                self.learn(s, faces[s])
            self.last_closer = env.seat
            self.events.event("close", (env.seat,))
            self.game_events(self.engine_apply(env, action))
            self.flow.to(v.SHOWDOWN)
            order = e.showdown_order() if e.phase == engine.Phase.SHOWDOWN else []
            self.flow.expect("show", order)
            if not order:
                self.after_showdown()

        return commit

    def dry_run(self, env: wire.Envelope, action: engine.Action, faces: dict[int, engine.Card]) -> None:
        """Check an engine action against a copy of the engine with the new faces learned."""
        import copy

        trial = copy.deepcopy(self.flow.game(), self.frozen_memo())
        try:
            for s, c in faces.items():
                if trial.faces.get(s) is None:
                    trial.learn(s, c)
                elif trial.faces[s] != c:
                    raise ProtocolViolation(env.seat, "face_mismatch", f"slot {s} opened as {c}, known as {trial.faces[s]}", env.seq)
            trial.apply(action)
        except engine.GameError as exc:  # IllegalAction, or a face the engine refuses to learn
            raise _unexpected(env.seat, exc, env.seq) from None

    def frozen_memo(self) -> dict[int, Any]:
        """A deepcopy memo that shares the engine's frozen values (the rules, the cards of the
        deck and the last showdown are frozen dataclasses the engine replaces, never mutates)
        instead of copying them: the copy behaves the same at a fraction of the cost."""
        e = self.flow.game()
        cards = e.deck_cards()
        memo: dict[int, Any] = {id(c): c for c in cards}
        memo[id(cards)] = cards
        memo[id(e.rules)] = e.rules
        if e.last_showdown is not None:
            memo[id(e.last_showdown)] = e.last_showdown
        return memo

    def learn(self, slot: int, card: engine.Card) -> None:
        if self.flow.game().faces.get(slot) is None:
            self.flow.game().learn(slot, card)

    def on_show(self, env: wire.Envelope) -> Commit:
        e = self.flow.game()
        hand = e.hands.get(env.seat, [])
        pairs = [(x["slot"], x["share"]) for x in env.body["shares"]]
        if sorted(s for s, _ in pairs) != sorted(hand):
            raise ProtocolViolation(env.seat, "show", "a shown hand covers exactly the seat's cards", env.seq)
        ds = self.hand.verify_shares(env, pairs)
        faces = {s: self.hand.open_public(s, (env.seat, d)) for s, d in ds}
        self.hand.check_faces(env, faces)

        def commit() -> None:
            last = self.flow.done("show")
            for s, d in ds:
                self.hand.record_share(s, env.seat, d)
                self.learn(s, faces[s])
            if last:
                self.after_showdown()

        return commit

    def after_showdown(self) -> None:
        e = self.flow.game()
        if e.phase == engine.Phase.SHOWDOWN:
            self.game_events(e.score_hand())
        self.flow.expect("secret", self.hand.seats)

    def after_hand(self) -> None:
        e = self.flow.game()
        self.flow.to(v.HAND_OVER)
        if e.phase == engine.Phase.REENTRY:
            self.flow.to(v.REENTRY)
            self.flow.expect("reenter", e.pending_reentry)
        else:
            self.next_hand_or_end()

    def on_reenter(self, env: wire.Envelope) -> Commit:
        action = engine.Reenter(env.seat, bool(env.body["accept"]))
        self.dry_run(env, action, {})

        def commit() -> None:
            last = self.flow.done("reenter")
            self.game_events(self.engine_apply(env, action))
            if last:
                self.next_hand_or_end()

        return commit

    def next_hand_or_end(self) -> None:
        e = self.flow.game()
        if e.phase == engine.Phase.OVER:
            self.flow.winner = e.winner
            self.flow.to(v.OVER)
            self.left_at_end = frozenset(self.flow.left)  # fixes N_end: a signer's later leave must not lower it
            self.flow.expect("game_end", (s for s in range(len(self.lobby.players)) if s not in self.flow.left))
        else:
            self.hand.begin_hand()

    def on_game_end(self, env: wire.Envelope) -> Commit:
        b = env.body
        if b["winner"] != (self.flow.winner if self.flow.winner is not None else 255):
            raise ProtocolViolation(env.seat, "digest_mismatch", "the seat names another winner", env.seq)
        if b["digest"] != env.prev:
            raise ProtocolViolation(env.seat, "digest_mismatch", "game_end must sign the chain head it follows", env.seq)

        def commit() -> None:
            last = self.flow.done("game_end")
            self.game_end_sigs.add(env.seat)
            if last:
                self.out.add(self.flow.finish())

        return commit

    def void_by_removal(self) -> None:
        """A removal voided the hand in progress (removal.py): nobody scores it."""
        self.score_history.append(tuple(0 for _ in self.lobby.players))

    def cancel_draw(self) -> None:
        """The stock draw being opened never will be (its drawer or a sharer was removed)."""
        self.pending_draw_slot = None

    def end_signed_by_majority(self) -> bool:
        """The game is over and the chained ``game_end``s are more than half of N_end less the
        seats that left or were removed since without signing one (N_end: the seats in the
        game when it was over; every chained ``game_end`` counts, its seat's later ``leave``
        notwithstanding, so a signer that goes home lowers nothing): its end is settled
        (docs/protocol.md "Removal", the game's end): no other branch can end the game."""
        if self.left_at_end is None:
            return False
        n_end = len(self.lobby.players) - len(self.left_at_end)
        unsigned_gone = (self.flow.left - self.left_at_end) - self.game_end_sigs
        return 2 * len(self.game_end_sigs) > n_end - len(unsigned_gone)

    def end_without(self, seat: int) -> bool:
        """``seat``'s ``game_end`` is awaited and its ``rejoin_wait`` ran out: when a strict
        majority already signed the game's end (:meth:`end_signed_by_majority`), the game
        ends here, signing nothing; the seats whose ``game_end`` is missing are named in
        ``unsigned_end`` and in a log line (audit: ``ok``, the same). False otherwise."""
        step = self.flow.expected()
        if step != Step("game_end", seat) or not self.end_signed_by_majority() or self.flow.finished:
            return False
        self.unsigned_end = tuple(st.seat for st in self.flow.queue if st.kind == "game_end")
        self.out.add(self.flow.finish())
        self.events.event("unsigned_end", self.unsigned_end)
        return True

    def game_events(self, events: list[engine.Event]) -> None:
        for ev in events:
            self.out.add(GameEvent(ev))
            if isinstance(ev, engine.RestockNeeded):
                self.hand.restock_needed(tuple(ev.slots))
            elif isinstance(ev, engine.HandVoid):
                self.events.event("void", detail=ev.reason)
                self.score_history.append(tuple(0 for _ in self.lobby.players))
                self.flow.expect("secret", self.hand.seats)
            elif isinstance(ev, engine.StockDead):  # max_reshuffles with reshuffle_end="score"
                self.events.event("dead_hand")
                self.flow.to(v.SHOWDOWN)
                self.flow.expect("show", self.flow.game().showdown_order())
            elif isinstance(ev, engine.HandScored):
                self.record_score(ev)
            elif isinstance(ev, engine.GameOver):
                self.events.event("game_over", (ev.winner,))
            elif isinstance(ev, (engine.Eliminated, engine.ReentryOffered, engine.Reentered)):
                self.events.event(_SEAT_EVENTS[type(ev).__name__], (ev.seat,))

    def record_score(self, ev: engine.HandScored) -> None:
        pens = [0] * len(self.lobby.players)
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
        self.events.event("score", tuple(order), points=tuple(pens[s] for s in order))

    def auto_draw_share(self) -> dict[str, Any]:
        slot = self.pending_draw_slot
        if slot is None:
            raise RuntimeError("no stock draw is being opened")
        return {"hand": self.hand.hand_no, "slot": slot, "share": self.hand.my_share(slot)}

    def auto_show(self) -> dict[str, Any]:
        return {"hand": self.hand.hand_no,
                "shares": [{"slot": s, "share": self.hand.my_share(s)} for s in self.flow.game().hands[self.lobby.seat()]]}

    def auto_game_end(self) -> dict[str, Any]:
        return {"winner": self.flow.winner if self.flow.winner is not None else 255, "digest": self.chain.head}
