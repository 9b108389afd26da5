"""Whole games on the engine alone (no crypto, no network) between bots: the tournament
harness of ``p2p-chinchon bench bots`` and of the bot tests.

The harness knows every face (it deals a shuffled deck, drawn from the injected ``rng``) but
gives each seat only its :class:`~p2p_chinchon.view.SeatView`, built from the engine state the
way the table builds it, with the same log events (:func:`p2p_chinchon.view.log_event`). Deciders are
``decide(view, need) -> intent`` (:func:`p2p_chinchon.autoplay.bot_decider`).
Sans-I/O: no clock; a caller that wants timings wraps the deciders.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import view as v
from ..engine import (
    Card,
    Close,
    Discard,
    DrawDiscard,
    DrawStock,
    Game,
    GameOver,
    HandScored,
    Phase,
    Reenter,
    Restock,
    Rules,
)
from ..rng import Rng
from .evaluate import Evaluator

__all__ = ["GameResult", "TableHarness", "play_game", "seat_view"]

NAMES = ("Ana", "Bruno", "Carla", "Diego", "Elena", "Fermín", "Gloria", "Hugo")
LOG_SHOWN = 50  # events a view carries, as the table
MAX_TURNS = 2000  # per hand: a safety stop for bots that never close (counted as unfinished)

Decider = Callable[[v.SeatView, str], Any]


class HarnessError(RuntimeError):
    """A decider answered with a move the engine refuses (a bot bug), naming the seat."""


@dataclass
class GameResult:
    """``winner`` (None when a hand hit ``MAX_TURNS``), final ``totals`` by seat and
    ``penalties``: one ``{seat: penalty}`` per scored hand."""

    winner: int | None
    totals: list[int]
    penalties: list[dict[int, int]] = field(default_factory=list)


def _shuffled(n: int, rng: Rng) -> list[int]:
    order = list(range(n))
    for i in range(n - 1, 0, -1):  # Fisher-Yates
        j = rng.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def seat_view(game: Game, seat: int, names: Sequence[str], log: Sequence[v.LogEvent], log_total: int,
              history: Sequence[tuple[int, ...]], ev: Evaluator | None = None) -> v.SeatView:
    """What ``seat`` may know of ``game`` now: its own faces, the discard top, counts, the
    public totals and log; close options only while it must discard and may close."""
    g = game
    ev = ev or Evaluator(g.rules)
    seats = tuple(
        v.SeatInfo(seat=i, name=names[i], fingerprint="", cards=len(g.hands.get(i, ())),
                   total=g.totals[i], eliminated=i in g.eliminated,
                   reentries_used=g.reentries_used[i], is_dealer=g.dealer == i, is_bot=True)
        for i in range(g.n_seats)
    )
    playing = g.phase in (Phase.DRAW, Phase.DISCARD)
    step = {Phase.DRAW: "draw", Phase.DISCARD: "discard"}.get(g.phase)
    hand = tuple(g.faces[s] for s in g.hands.get(seat, ()))
    banned = g.close_banned()
    opts: tuple[tuple[Card, int, bool], ...] = ()
    if step == "discard" and g.to_play == seat and not banned:
        opts = tuple((o.discard, o.score, o.chinchon) for o in ev.close_options(hand))
    return v.SeatView(
        me=seat, table_name="bench", rules=g.rules, seats=seats,
        phase=v.PLAYING if playing else (v.OVER if g.phase is Phase.OVER else v.SHOWDOWN),
        hand_no=g.hand_no, dealer=g.dealer, to_play=g.to_play if playing else None,
        step=step if playing else None, hand=hand,
        discard_top=g.faces.get(g.discard_pile[-1]) if g.discard_pile else None,
        discard_size=len(g.discard_pile), stock_size=len(g.stock),
        last_from_discard=dict(g.last_from_discard), close_options=opts,
        first_round=banned, score_history=tuple(history), winner=g.winner,
        events=tuple(log[-LOG_SHOWN:]), log_total=log_total,
    )


class TableHarness:
    """One game between ``deciders`` (seat order) under ``rules``; ``rng`` shuffles."""

    def __init__(self, rules: Rules, deciders: Sequence[Decider], rng: Rng,
                 first_dealer: int = 0, names: Sequence[str] = NAMES) -> None:
        self.game = Game(rules, len(deciders), first_dealer)
        self.deciders = list(deciders)
        self.rng = rng
        self.names = list(names[: len(deciders)])
        self.log: list[v.LogEvent] = []
        self.log_total = 0
        self.history: list[tuple[int, ...]] = []
        self.result = GameResult(None, [])
        self._cards = self.game.deck_cards()
        self._ev = Evaluator(rules)
        self._next_slot = 0
        self._turns = 0

    def _say(self, kind: str, seats: tuple[int, ...] = (), **fields: Any) -> None:
        self.log.append(v.log_event(kind, seats, tuple(self.names[s] for s in seats), **fields))
        self.log_total += 1
        if len(self.log) > 4 * LOG_SHOWN:
            del self.log[: -LOG_SHOWN]

    def view(self, seat: int) -> v.SeatView:
        return seat_view(self.game, seat, self.names, self.log, self.log_total, self.history, self._ev)

    def _deal(self) -> None:
        g = self.game
        n = len(self._cards)
        order = _shuffled(n, self.rng)
        g.start_hand(n)
        for slot in range(n):
            g.learn(slot, self._cards[order[slot]])
        self._next_slot = n
        self._say("deal", (g.dealer,), numbers=(g.hand_no + 1,))
        self._say("upcard", cards=(g.faces[g.discard_pile[-1]],))

    def _restock(self) -> None:
        g = self.game
        old = [g.faces[s] for s in g.discard_pile[:-1]]
        order = _shuffled(len(old), self.rng)
        new = tuple(range(self._next_slot, self._next_slot + len(old)))
        self._next_slot += len(old)
        self._say("reshuffle", numbers=(len(old),))
        g.apply(Restock(new))
        for k, s in enumerate(new):
            g.learn(s, old[order[k]])

    def _ask(self, seat: int, need: str) -> Any:
        return self.deciders[seat](self.view(seat), need)

    def _slot(self, seat: int, card: Any) -> int:
        g = self.game
        for s in g.hands[seat]:
            if g.faces[s] == card:
                return s
        raise HarnessError(f"seat {seat}: {card!r} is not in its hand")

    def _turn(self) -> None:
        g = self.game
        seat = g.to_play
        assert seat is not None
        if g.phase is Phase.DRAW:
            intent = self._ask(seat, "draw")
            src = getattr(intent, "source", None)
            if not isinstance(intent, v.Draw) or src not in ("stock", "discard"):
                raise HarnessError(f"seat {seat}: {intent!r} is not a draw")
            action = DrawDiscard(seat) if src == "discard" else DrawStock(seat)
            top = g.faces.get(g.discard_pile[-1]) if g.discard_pile else None
            g.apply(action)
            if src == "discard":
                self._say("draw_discard", (seat,), cards=(top,) if top is not None else ())
            else:
                self._say("draw_stock", (seat,))
            return
        intent = self._ask(seat, "discard")
        if isinstance(intent, v.Close):
            g.apply(Close(seat, self._slot(seat, intent.card)))
            self._say("close", (seat,))
        elif isinstance(intent, v.Discard):
            slot = self._slot(seat, intent.card)
            self._say("discard", (seat,), cards=(intent.card,))
            g.apply(Discard(seat, slot))
        else:
            raise HarnessError(f"seat {seat}: {intent!r} is not a discard or a close")

    def _score(self) -> None:
        for ev in self.game.score_hand():
            if isinstance(ev, HandScored):
                self.result.penalties.append(dict(ev.penalties))
                row = [0] * self.game.n_seats
                for s, p in ev.penalties:
                    row[s] = p
                self.history.append(tuple(row))
            elif isinstance(ev, GameOver):
                self.result.winner = ev.winner

    def step(self) -> bool:
        """Advance by one deal, turn step, restock, scoring or round of re-entry answers.
        False once the game is over or a hand ran past ``MAX_TURNS`` turns (unfinished)."""
        g = self.game
        if g.phase is Phase.OVER or self._turns > MAX_TURNS:
            return False
        if g.phase is Phase.DEAL:
            self._deal()
            self._turns = 0
        elif g.phase is Phase.RESTOCK:
            self._restock()
        elif g.phase in (Phase.DRAW, Phase.DISCARD):
            self._turns += 1
            if self._turns > MAX_TURNS:
                return False
            self._turn()
        elif g.phase is Phase.SHOWDOWN:
            self._score()
        elif g.phase is Phase.REENTRY:
            for seat in g.pending_reentry:
                intent = self._ask(seat, "reenter")
                g.apply(Reenter(seat, bool(getattr(intent, "accept", True))))
        return True

    def play(self) -> GameResult:
        """Play to the end (or to a hand past ``MAX_TURNS``: winner None)."""
        while self.step():
            pass
        self.result.winner = self.game.winner
        self.result.totals = list(self.game.totals)
        return self.result


def play_game(rules: Rules, deciders: Sequence[Decider], rng: Rng, first_dealer: int = 0) -> GameResult:
    """Play one whole game (see :class:`TableHarness`)."""
    return TableHarness(rules, deciders, rng, first_dealer).play()

