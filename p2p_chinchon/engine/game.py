"""The pure state machine for a whole game of Chinchón.

The engine holds card **slots** (positions in the masked deck, ints) whose faces may be unknown
to this node; the table reveals faces with :meth:`Game.learn` as the mental-poker deck opens
them. Every node applies the same actions in the same order and so holds the same public state.
Seats are in playing order: seat i+1 sits to the right of seat i, and play and the deal turn to
the right (000 "Setup" 1-2).

API in the style of game libraries: :meth:`Game.legal_actions`, :meth:`Game.apply` returning
events, :class:`IllegalAction` naming the broken rule (state unchanged).
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Any, cast

from .cards import Card
from .melds import close_result
from .rules import Rules
from .scoring import HAND_SIZE, Showdown, score_showdown, score_standing
from .words import counted

__all__ = [
    "Phase",
    "Game",
    "GameError",
    "IllegalAction",
    "Action",
    "DrawStock",
    "DrawDiscard",
    "Discard",
    "Close",
    "Restock",
    "Reenter",
    "Event",
    "Dealt",
    "Drew",
    "Discarded",
    "Closed",
    "RestockNeeded",
    "Restocked",
    "HandVoid",
    "HandScored",
    "Eliminated",
    "ReentryOffered",
    "Reentered",
    "GameOver",
    "HAND_SIZE",
]


class Phase(enum.Enum):
    DEAL = "deal"  # waiting for start_hand
    DRAW = "draw"  # to_play draws from the stock or the discard pile
    DISCARD = "discard"  # to_play discards or closes
    RESTOCK = "restock"  # the table must re-shuffle the discard pile minus its top
    SHOWDOWN = "showdown"  # after a close: the table reveals hands, then score_hand()
    REENTRY = "reentry"  # busted seats answer re-entry offers
    OVER = "over"


class GameError(ValueError):
    """Misuse of the game by the caller (wrong phase for start_hand/score_hand, a face that
    contradicts what is known, an impossible card, an unknown slot)."""


class IllegalAction(GameError):
    """An action that the rules do not allow. ``rule`` is a short stable id: not_your_turn,
    wrong_phase, not_in_hand, unknown_face, first_round_close, close_points, wild_in_deadwood,
    empty_pile, bad_restock, no_offer, bad_action."""

    def __init__(self, seat: int | None, rule: str, message: str) -> None:
        super().__init__(f"seat {seat}: {rule}: {message}")
        self.seat = seat
        self.rule = rule
        self.message = message


def _plain(v: Any) -> Any:
    if isinstance(v, Card):
        return str(v)
    if isinstance(v, enum.Enum):
        return v.value
    if isinstance(v, Showdown):
        return v.to_dict()
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (tuple, list, frozenset, set)):
        items = sorted(v) if isinstance(v, (frozenset, set)) else v
        return [_plain(x) for x in items]
    return v


class _Record:
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """``{"type": ClassName, field: value, ...}`` with cards as French names."""
        d: dict[str, Any] = {"type": type(self).__name__}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            d[f.name] = _plain(getattr(self, f.name))
        return d


# -- actions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DrawStock(_Record):
    seat: int


@dataclass(frozen=True, slots=True)
class DrawDiscard(_Record):
    seat: int


@dataclass(frozen=True, slots=True)
class Discard(_Record):
    seat: int
    slot: int


@dataclass(frozen=True, slots=True)
class Close(_Record):
    """Close the hand: ``slot`` goes face down; the other seven cards are shown."""

    seat: int
    slot: int


@dataclass(frozen=True, slots=True)
class Restock(_Record):
    """The table re-shuffled the discard pile minus its top into ``new_slots`` (faces
    unknown); the first of them is drawn first."""

    new_slots: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Reenter(_Record):
    seat: int
    accept: bool


Action = DrawStock | DrawDiscard | Discard | Close | Restock | Reenter


# -- events -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Dealt(_Record):
    hand_no: int
    dealer: int
    plan: tuple[tuple[int, tuple[int, ...]], ...]  # (seat, slots) in dealing order
    upcard_slot: int
    stock: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Drew(_Record):
    seat: int
    source: str  # "stock" | "discard"
    slot: int
    card: Card | None  # known for a discard-pile draw


@dataclass(frozen=True, slots=True)
class Discarded(_Record):
    seat: int
    slot: int
    card: Card


@dataclass(frozen=True, slots=True)
class Closed(_Record):
    seat: int
    slot: int  # the face-down discard
    kept: tuple[int, ...]
    cards: tuple[Card, ...]
    score: int
    chinchon: bool


@dataclass(frozen=True, slots=True)
class RestockNeeded(_Record):
    slots: tuple[int, ...]  # the discard pile minus its top, bottom first


@dataclass(frozen=True, slots=True)
class Restocked(_Record):
    new_slots: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class HandVoid(_Record):
    hand_no: int
    reason: str


@dataclass(frozen=True, slots=True)
class StockDead(_Record):
    """The stock ran out after ``max_reshuffles`` re-shuffles and the table scores the hand as
    it stands (``reshuffle_end="score"``): every seat shows, from ``seat`` round."""

    hand_no: int
    seat: int


@dataclass(frozen=True, slots=True)
class HandScored(_Record):
    hand_no: int
    closer: int | None  # None: a dead hand scored as it stands (nobody closed)
    penalties: tuple[tuple[int, int], ...]  # (seat, penalty), closer first
    totals: tuple[int, ...]  # by seat
    showdown: Showdown


@dataclass(frozen=True, slots=True)
class Eliminated(_Record):
    seat: int
    total: int
    reason: str  # "over_limit" | "declined" | "no_reentry" | "left" (withdraw)


@dataclass(frozen=True, slots=True)
class ReentryOffered(_Record):
    seat: int
    total: int  # the total the seat would re-enter with


@dataclass(frozen=True, slots=True)
class Reentered(_Record):
    seat: int
    total: int


@dataclass(frozen=True, slots=True)
class GameOver(_Record):
    winner: int
    reason: str  # "chinchon" | "last_player" | "all_out"


Event = (
    Dealt | Drew | Discarded | Closed | RestockNeeded | Restocked | HandVoid | StockDead | HandScored
    | Eliminated | ReentryOffered | Reentered | GameOver
)


class Game:
    """A whole game between ``n_seats`` seats; ``first_dealer`` deals hand 0.

    Read-only attributes for callers: ``rules``, ``n_seats``, ``phase``, ``hand_no`` (0-based),
    ``dealer``, ``active`` (seats still in, in seat order), ``to_play``, ``totals`` (by seat),
    ``eliminated``, ``reentries_used``, ``hands`` (seat -> slots), ``stock`` (next drawn
    first), ``discard_pile`` (top last), ``faces`` (slot -> Card this node knows),
    ``last_from_discard`` (seat -> the card it last took from the pile this hand), ``winner``,
    ``pending_reentry``, ``closer``, ``turns_taken`` (seat -> completed turns
    this hand), ``first_player`` (the hand's first player), ``close_discard`` and
    ``last_showdown`` (the :class:`Showdown` of the last scored hand).

    Raises :class:`GameError` for a bad seat count or dealer (via ``rules.deck``)."""

    def __init__(self, rules: Rules, n_seats: int, first_dealer: int) -> None:
        if not isinstance(rules, Rules):
            raise GameError("rules must be a Rules value")
        try:
            self._deck = rules.deck(n_seats)
        except ValueError as exc:
            raise GameError(str(exc)) from None
        if not isinstance(first_dealer, int) or not 0 <= first_dealer < n_seats:
            raise GameError(f"first dealer {first_dealer!r} is not a seat")
        self._deck_set = frozenset(self._deck)
        self.rules = rules
        self.n_seats = n_seats
        self.phase = Phase.DEAL
        self.hand_no = 0
        self.dealer = first_dealer
        self.active: tuple[int, ...] = tuple(range(n_seats))
        self.to_play: int | None = None
        self.totals: list[int] = [0] * n_seats
        self.eliminated: frozenset[int] = frozenset()
        self.reentries_used: list[int] = [0] * n_seats
        self.winner: int | None = None
        self.pending_reentry: tuple[int, ...] = ()
        self.last_showdown: Showdown | None = None
        self._reentry_total = 0
        self._clear_hand()

    def _clear_hand(self) -> None:
        self.hands: dict[int, list[int]] = {s: [] for s in self.active}
        self.stock: list[int] = []
        self.discard_pile: list[int] = []
        self.faces: dict[int, Card] = {}
        self.last_from_discard: dict[int, Card] = {}
        self.closer: int | None = None
        self.standing: int | None = None  # a dead hand scored as it stands: shown from this seat
        self.close_discard: int | None = None
        self.turns_taken: dict[int, int] = {s: 0 for s in self.active}
        self.first_player: int | None = None
        self.reshuffles = 0  # times this hand's stock was made again from the discard pile
        self.taken_slot: int | None = None  # the discard pile's top taken this turn
        self._live: set[int] = set()
        self._retired: set[int] = set()

    # -- seats --------------------------------------------------------------------------
    def deck_cards(self) -> tuple[Card, ...]:
        """``rules.deck(n_seats)``: card index i of the masked deck is this card."""
        return self._deck

    def next_active(self, seat: int) -> int:
        """The first seat still in after ``seat``, going right (seat + 1, seat + 2, ...)."""
        for k in range(1, self.n_seats + 1):
            s = (seat + k) % self.n_seats
            if s in self.active:
                return s
        raise GameError("no seat is still in")  # pragma: no cover

    def _order_from(self, first: int) -> list[int]:
        out = [first]
        while len(out) < len(self.active):
            out.append(self.next_active(out[-1]))
        return out

    def deal_plan(self) -> dict[int, list[int]]:
        """Seat -> slots of the (next) deal: slots 0..7m-1 one at a time, starting with the
        seat to the dealer's right (000 "Setup" 3)."""
        order = self._order_from(self.next_active(self.dealer))
        m = len(order)
        plan: dict[int, list[int]] = {s: [] for s in order}
        for k in range(HAND_SIZE * m):
            plan[order[k % m]].append(k)
        return plan

    def upcard_slot(self) -> int:
        """The slot turned face up to start the discard pile: 7m."""
        return HAND_SIZE * len(self.active)

    # -- hand lifecycle -----------------------------------------------------------------
    def start_hand(self, n_slots: int) -> list[Event]:
        """Deal a hand from a masked deck of ``n_slots`` slots (must be ``len(deck_cards())``).
        Phase DEAL -> DRAW with ``to_play`` the seat after the dealer. Raises GameError."""
        if self.phase is not Phase.DEAL:
            raise GameError(f"start_hand in phase {self.phase.value}")
        if n_slots != len(self._deck):
            raise GameError(f"the deck has {len(self._deck)} cards, got {n_slots} slots")
        plan = self.deal_plan()
        self._clear_hand()
        up = self.upcard_slot()
        for s, slots in plan.items():
            self.hands[s] = list(slots)
        self.discard_pile = [up]
        self.stock = list(range(up + 1, n_slots))
        self._live = set(range(n_slots))
        first = self.next_active(self.dealer)
        self.first_player = first
        events: list[Event] = [
            Dealt(self.hand_no, self.dealer, tuple((s, tuple(v)) for s, v in plan.items()), up,
                  tuple(self.stock))
        ]
        events.extend(self._begin_turn(first))
        return events

    def learn(self, slot: int, card: Card) -> None:
        """Record that ``slot`` holds ``card``. Raises GameError for an unknown slot, a card not
        in this deck, or a face that contradicts what is known (another face for this slot, or
        this card already known at another live slot)."""
        if not isinstance(slot, int) or slot not in self._live:
            raise GameError(f"slot {slot!r} is not in play")
        if not isinstance(card, Card) or card not in self._deck_set:
            raise GameError(f"{card!r} is not a card of this deck")
        old = self.faces.get(slot)
        if old is not None:
            if old != card:
                raise GameError(f"slot {slot} is {old}, not {card}")
            return
        for s, c in self.faces.items():
            if c == card:
                raise GameError(f"{card} is already at slot {s}")
        self.faces[slot] = card

    def face(self, slot: int) -> Card | None:
        return self.faces.get(slot)

    def _begin_turn(self, seat: int) -> list[Event]:
        self.to_play = seat
        if self.stock:
            self.phase = Phase.DRAW
            return []
        if self.rules.max_reshuffles and self.reshuffles >= self.rules.max_reshuffles:
            # table option (the documents let the stock be re-made without end): a
            # dead hand whose stock ran out max_reshuffles times ends. reshuffle_end="score":
            # every hand is shown (from the seat whose turn it was) and scores as it stands;
            # "void": nobody scores and the deal passes.
            if self.rules.reshuffle_end == "score":
                self.standing = seat
                self.to_play = None
                self.phase = Phase.SHOWDOWN
                return [StockDead(self.hand_no, seat)]
            events: list[Event] = [HandVoid(self.hand_no, "reshuffles")]
            self._next_hand()
            return events
        if len(self.discard_pile) >= 2:
            # 000 "Playing a turn": leave the top card, shuffle the rest as the new stock.
            self.phase = Phase.RESTOCK
            return [RestockNeeded(tuple(self.discard_pile[:-1]))]
        # Nothing to re-shuffle (only when the deck barely covers the deal; rules.deck refuses
        # such tables): the hand is void, as a misdeal is; nobody scores and the deal passes.
        events = [HandVoid(self.hand_no, "stock_exhausted")]
        self._next_hand()
        return events

    def _next_hand(self) -> None:
        self.standing = None
        self.dealer = self.next_active(self.dealer)
        self.hand_no += 1
        self.phase = Phase.DEAL
        self.to_play = None

    # -- actions --------------------------------------------------------------------------
    def close_banned(self) -> bool:
        """Whether nobody may close now: the first-round ban (``rules.first_round_ban``) holds
        until every seat in the hand has taken a turn (000 "Closing")."""
        return self.rules.first_round_ban and any(self.turns_taken[s] == 0 for s in self.active)

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now (closes only when the kept faces are known)."""
        out: list[Action] = []
        if self.phase is Phase.REENTRY:
            if seat in self.pending_reentry:
                out += [Reenter(seat, True), Reenter(seat, False)]
            return out
        if seat != self.to_play:
            return out
        if self.phase is Phase.DRAW:
            if self.stock:
                out.append(DrawStock(seat))
            if self.discard_pile and self.discard_pile[-1] in self.faces:
                out.append(DrawDiscard(seat))
        elif self.phase is Phase.DISCARD:
            hand = self.hands[seat]
            out += [Discard(seat, s) for s in hand if s in self.faces and not self._throws_back(s)]
            if not self.close_banned():
                for s in hand:
                    kept = [x for x in hand if x != s]
                    if all(x in self.faces for x in kept) and close_result(
                        [self.faces[x] for x in kept], self.rules
                    ):
                        out.append(Close(seat, s))
        return out

    def apply(self, action: Action) -> list[Event]:
        """Apply one action and return its events. Raises :class:`IllegalAction` (state
        unchanged) when the rules forbid it."""
        if isinstance(action, DrawStock):
            return self._draw_stock(action)
        if isinstance(action, DrawDiscard):
            return self._draw_discard(action)
        if isinstance(action, Discard):
            return self._discard(action)
        if isinstance(action, Close):
            return self._close(action)
        if isinstance(action, Restock):
            return self._restock(action)
        if isinstance(action, Reenter):
            return self._reenter(action)
        raise IllegalAction(None, "bad_action", f"not an action: {action!r}")

    def _turn(self, seat: int, phase: Phase) -> None:
        if self.phase is not phase:
            raise IllegalAction(seat, "wrong_phase", f"phase is {self.phase.value}")
        if seat != self.to_play:
            raise IllegalAction(seat, "not_your_turn", f"seat {self.to_play} is to play")

    def _draw_stock(self, a: DrawStock) -> list[Event]:
        self._turn(a.seat, Phase.DRAW)
        slot = self.stock.pop(0)
        self.hands[a.seat].append(slot)
        self.phase = Phase.DISCARD
        self.taken_slot = None
        return [Drew(a.seat, "stock", slot, None)]

    def _draw_discard(self, a: DrawDiscard) -> list[Event]:
        self._turn(a.seat, Phase.DRAW)
        if not self.discard_pile:
            raise IllegalAction(a.seat, "empty_pile", "the discard pile is empty")
        slot = self.discard_pile[-1]
        card = self.faces.get(slot)
        if card is None:
            raise IllegalAction(a.seat, "unknown_face", f"the top of the pile (slot {slot}) is not revealed")
        self.discard_pile.pop()
        self.hands[a.seat].append(slot)
        self.taken_slot = slot
        self.last_from_discard[a.seat] = card
        self.phase = Phase.DISCARD
        return [Drew(a.seat, "discard", slot, card)]

    def _own(self, seat: int, slot: int) -> None:
        if not isinstance(slot, int) or slot not in self.hands.get(seat, ()):
            raise IllegalAction(seat, "not_in_hand", f"slot {slot!r} is not in the hand")

    def _discard(self, a: Discard) -> list[Event]:
        self._turn(a.seat, Phase.DISCARD)
        self._own(a.seat, a.slot)
        card = self.faces.get(a.slot)
        if card is None:
            raise IllegalAction(a.seat, "unknown_face", f"slot {a.slot} must be revealed first")
        if self._throws_back(a.slot):
            raise IllegalAction(a.seat, "discard_taken",
                                f"{card} was just taken from the discard pile (table option discard_taken)")
        self.hands[a.seat].remove(a.slot)
        self.discard_pile.append(a.slot)
        self.turns_taken[a.seat] += 1
        events: list[Event] = [Discarded(a.seat, a.slot, card)]
        events.extend(self._begin_turn(self.next_active(a.seat)))
        return events

    def _throws_back(self, slot: int) -> bool:
        """Whether discarding ``slot`` throws back the card just taken, where the table forbids
        it (``rules.discard_taken`` False; the documents are silent: allowed by default)."""
        return not self.rules.discard_taken and slot == self.taken_slot

    def _close(self, a: Close) -> list[Event]:
        self._turn(a.seat, Phase.DISCARD)
        self._own(a.seat, a.slot)
        kept = [s for s in self.hands[a.seat] if s != a.slot]
        missing = [s for s in kept if s not in self.faces]
        if missing:
            raise IllegalAction(a.seat, "unknown_face", f"kept slots {missing} are not revealed")
        if self.close_banned():
            raise IllegalAction(a.seat, "first_round_close",
                                "nobody may close before every player has had a turn")
        cards = [self.faces[s] for s in kept]
        res = close_result(cards, self.rules)
        if res is None:
            lenient = dataclasses.replace(self.rules, close_wild_unmatched=True)
            if not self.rules.close_wild_unmatched and close_result(cards, lenient):
                raise IllegalAction(a.seat, "wild_in_deadwood",
                                    "a wild card may not stay unmatched in a close")
            raise IllegalAction(a.seat, "close_points",
                                f"at most {counted(self.rules.close_max_unmatched, 'unmatched card')} "
                                f"worth {self.rules.close_max_points} may stay")
        self.hands[a.seat] = kept
        self.close_discard = a.slot
        self.closer = a.seat
        self.turns_taken[a.seat] += 1
        self.to_play = None
        self.phase = Phase.SHOWDOWN
        return [Closed(a.seat, a.slot, tuple(kept), tuple(cards), res.score, res.chinchon)]

    def _restock(self, a: Restock) -> list[Event]:
        if self.phase is not Phase.RESTOCK:
            raise IllegalAction(None, "wrong_phase", f"phase is {self.phase.value}")
        new = a.new_slots
        need = len(self.discard_pile) - 1
        if (
            not isinstance(new, tuple)
            or len(new) != need
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in new)
            or len(set(new)) != len(new)
            or any(s in self._live or s in self._retired for s in new)
        ):
            raise IllegalAction(None, "bad_restock", f"need {need} fresh distinct slots")
        for s in self.discard_pile[:-1]:
            self._live.discard(s)
            self._retired.add(s)
            self.faces.pop(s, None)
        self.discard_pile = self.discard_pile[-1:]
        self.stock = list(new)
        self._live.update(new)
        self.phase = Phase.DRAW
        self.reshuffles += 1
        return [Restocked(tuple(new))]

    # -- showdown and scores ------------------------------------------------------------
    def showdown_order(self) -> list[int]:
        """The other active seats, going round from the closer (a dead hand scored as it
        stands: every active seat, from the one whose turn it was)."""
        if self.standing is not None:
            return self._order_from(self.standing)
        if self.closer is None:
            raise GameError("nobody has closed")
        return self._order_from(self.closer)[1:]

    def score_hand(self) -> list[Event]:
        """Score the closed hand once every shown face is known: totals, eliminations,
        re-entry offers, game end. Raises GameError in another phase or with a face missing."""
        standing = self.standing is not None
        if self.phase is not Phase.SHOWDOWN or (self.closer is None and not standing):
            raise GameError(f"score_hand in phase {self.phase.value}")
        seats = (self.showdown_order() if standing  # not standing: someone closed (see above)
                 else [cast(int, self.closer), *self.showdown_order()])
        for s in seats:
            missing = [x for x in self.hands[s] if x not in self.faces]
            if missing:
                raise GameError(f"seat {s}: slots {missing} are not revealed")
        cards = [[self.faces[x] for x in self.hands[s]] for s in seats]
        if standing:
            sd = score_standing(self.rules, cards, n_players=self.n_seats)
            self.standing = None
        else:
            sd = score_showdown(self.rules, cards[0], cards[1:], n_players=self.n_seats)
        self.last_showdown = sd
        for s, p in zip(seats, sd.penalties, strict=True):
            self.totals[s] += p
        events: list[Event] = [
            HandScored(self.hand_no, None if standing else self.closer, tuple(zip(seats, sd.penalties, strict=True)),
                       tuple(self.totals), sd)
        ]
        if sd.game_won:
            # won by the closer's chinchón: a hand scored as it stands has no closer, never wins
            events.append(self._game_over(cast(int, self.closer), "chinchon"))
            return events
        busted = [s for s in self.active if self.totals[s] > self.rules.limit]
        remaining = [s for s in self.active if s not in busted]
        if not remaining:
            events.append(self._game_over(self._all_out_winner(), "all_out"))
            return events
        offers: list[int] = []
        for s in busted:
            if (
                self.reentries_used[s] < self.rules.reentries
                and len(remaining) >= self.rules.reentry_min_remaining
            ):
                offers.append(s)
            else:
                events.append(self._eliminate(s, "over_limit"))
        if len(remaining) == 1 and not offers:
            events.append(self._game_over(remaining[0], "last_player"))
            return events
        if offers:
            # 000 "Winning the game": re-enter with the highest total of the players still in.
            self._reentry_total = max(self.totals[s] for s in remaining)
            self.pending_reentry = tuple(offers)
            self.phase = Phase.REENTRY
            self.to_play = None
            events += [ReentryOffered(s, self._reentry_total) for s in offers]
            return events
        self._next_hand()
        return events

    def _all_out_winner(self) -> int:
        # 001 "End of the match": lowest total; tie: the last closer, else the hand player,
        # else the first tied seat in playing order from the hand player.
        low = min(self.totals[s] for s in self.active)
        tied = [s for s in self.active if self.totals[s] == low]
        if self.closer in tied:
            return self.closer
        assert self.first_player is not None
        for s in self._order_from(self.first_player):
            if s in tied:
                return s
        return tied[0]  # pragma: no cover

    def withdraw(self, seat: int, *, void_hand: bool) -> list[Event]:
        """``seat`` is out of the game for good (it left, or the table removed it:
        docs/protocol.md "Removal"): out like an eliminated seat, with reason ``"left"``; its
        total stays on the score sheet. ``void_hand``: the hand in progress cannot finish
        without the seat (the table says so): it is void (:class:`HandVoid` ``"left"``: nobody
        scores) and the deal moves on, as after any void hand. A pending re-entry offer of the
        seat lapses. With one seat left the game is over and it wins (``"last_player"``).
        Nothing happens to a seat already out, or once the game is over. Raises
        :class:`GameError` for a seat that is not at the table."""
        if not isinstance(seat, int) or not 0 <= seat < self.n_seats:
            raise GameError(f"seat {seat!r} is not at the table")
        if self.phase is Phase.OVER or seat not in self.active:
            return []
        events: list[Event] = [self._eliminate(seat, "left")]
        self.pending_reentry = tuple(s for s in self.pending_reentry if s != seat)
        if void_hand:
            events.append(HandVoid(self.hand_no, "left"))
        if len(self.active) == 1:
            events.append(self._game_over(self.active[0], "last_player"))
        elif void_hand or (self.phase is Phase.REENTRY and not self.pending_reentry):
            self._next_hand()  # 000 "Setup" 2: the deal passes to the next seat still in
        elif self.phase is Phase.DEAL and self.dealer == seat:
            self.dealer = self.next_active(seat)  # the next deal was the seat's: it passes on
        return events

    def _eliminate(self, seat: int, reason: str) -> Eliminated:
        self.eliminated = self.eliminated | {seat}
        self.active = tuple(s for s in self.active if s != seat)
        return Eliminated(seat, self.totals[seat], reason)

    def _game_over(self, winner: int, reason: str) -> GameOver:
        self.winner = winner
        self.phase = Phase.OVER
        self.to_play = None
        self.pending_reentry = ()
        return GameOver(winner, reason)

    def _reenter(self, a: Reenter) -> list[Event]:
        if self.phase is not Phase.REENTRY:
            raise IllegalAction(a.seat, "wrong_phase", f"phase is {self.phase.value}")
        if a.seat not in self.pending_reentry:
            raise IllegalAction(a.seat, "no_offer", "this seat has no re-entry offer")
        if not isinstance(a.accept, bool):
            raise IllegalAction(a.seat, "bad_action", "accept must be true or false")
        events: list[Event] = []
        if a.accept:
            self.totals[a.seat] = self._reentry_total
            self.reentries_used[a.seat] += 1
            events.append(Reentered(a.seat, self._reentry_total))
        else:
            events.append(self._eliminate(a.seat, "declined"))
        self.pending_reentry = tuple(s for s in self.pending_reentry if s != a.seat)
        if not self.pending_reentry:
            if len(self.active) == 1:
                events.append(self._game_over(self.active[0], "last_player"))
            else:
                self._next_hand()
        return events
