"""What one seat may know, and what a person or a bot may ask for: the UI/bot contract.

The table (``table/``) builds a :class:`SeatView` after every change; the UI renders it and
bots read it. Neither holds rules: they send :data:`Intent` values back, and the table checks
them with the same engine that checks every peer's moves. A :class:`SeatView` never contains a
face the seat has not legitimately seen (its own hand, public discards, shown hands).

Shapes: cards are :class:`p2p_chinchon.engine.Card`; seats are ints 0..N-1 in playing order
(seat i+1 sits to the right of seat i, 000 "Setup").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

# ---------------------------------------------------------------- phases shown to people
LOBBY = "lobby"  # seats filling, rules proposed, waiting for every seat to agree
SHUFFLING = "shuffling"  # key setup, shuffle chain and proofs, deal
PLAYING = "playing"  # turn loop; see SeatView.step
RESTOCKING = "restocking"  # stock exhausted: discard pile re-shuffled by every seat
SHOWDOWN = "showdown"  # a seat closed; hands are shown, lay-offs computed
HAND_OVER = "hand_over"  # secrets revealed, hand audited and signed
REENTRY = "reentry"  # busted seats are asked whether they buy back in
OVER = "over"  # game ended (winner set)
STOPPED = "stopped"  # a fault (cheat, timeout, leave) stopped the table; see SeatView.fault


@dataclass(frozen=True)
class SeatInfo:
    """One seat as everybody sees it."""

    seat: int
    name: str
    fingerprint: str
    cards: int = 0  # cards in hand now
    total: int = 0  # running penalty total
    eliminated: bool = False
    reentries_used: int = 0
    is_dealer: bool = False
    is_bot: bool = False
    connected: bool = True
    agreed: bool = False  # signed the rules agreement (lobby)


@dataclass(frozen=True)
class ShownHand:
    """One player's hand at the showdown (after a close)."""

    seat: int
    melds: tuple[tuple[Any, ...], ...]  # tuples of Card
    laid_off: tuple[Any, ...]  # Cards laid off on melds on the table
    deadwood: tuple[Any, ...]  # Cards that count
    penalty: int


@dataclass(frozen=True)
class Fault:
    """Why the table stopped: the accused seat (None when nobody is to blame), a stable rule id
    (e.g. ``bad_signature``, ``not_your_turn``, ``shuffle``, ``timeout``, ``equivocation``,
    ``left``) and a sentence for people."""

    seat: int | None
    rule: str
    reason: str


@dataclass(frozen=True)
class SeatView:
    """Everything the seat ``me`` may know right now. Immutable snapshot.

    ``hand`` is in the seat's own order (the table keeps draw order; the UI may re-order it for
    display). ``close_options`` is non-empty only while it is ``me``'s turn to discard and the
    engine says the hand may close: ``(discard card, points, chinchon)`` per legal discard,
    best first. ``progress`` is ``(done, total, label)`` while shuffling/verifying.
    """

    me: int | None  # None for an observer/auditor
    table_name: str = ""
    rules: Any = None  # engine Rules
    seats: tuple[SeatInfo, ...] = ()
    max_seats: int = 0  # seats at the table (the offer's); 0 = not known yet
    # True before the seating is signed: ``seats`` are who sits so far (the host's unsigned
    # lobby list, display only) and ``me`` the seat this one holds in it; free seats are
    # ``max_seats - len(seats)``. Nobody agrees to provisional seats.
    provisional: bool = False
    phase: str = LOBBY
    hand_no: int = 0
    dealer: int | None = None
    to_play: int | None = None
    step: str | None = None  # "draw" | "discard" while PLAYING; None otherwise
    hand: tuple[Any, ...] = ()  # my cards (faces)
    discard_top: Any = None  # Card or None
    discard_size: int = 0
    stock_size: int = 0
    last_from_discard: dict[int, Any] = field(default_factory=dict)  # seat -> Card
    close_options: tuple[tuple[Any, int, bool], ...] = ()
    first_round: bool = True  # nobody may close yet (where the rules say so)
    progress: tuple[int, int, str] | None = None
    showdown: tuple[ShownHand, ...] = ()  # last hand's showdown, closer first
    closer: int | None = None
    score_history: tuple[tuple[int, ...], ...] = ()  # per hand: penalty per seat
    reentry_offer: bool = False  # am I being asked to buy back in?
    winner: int | None = None
    fault: Fault | None = None
    log: tuple[str, ...] = ()  # recent public happenings, oldest first (English; UI may re-render)
    log_total: int = 0  # lines logged since the start (so a printer can tell which are new)

    @property
    def my_turn(self) -> bool:
        return self.me is not None and self.to_play == self.me and self.phase == PLAYING


# ---------------------------------------------------------------- intents (UI/bot -> table)


@dataclass(frozen=True)
class Agree:
    """Accept the proposed table (rules and seating)."""


@dataclass(frozen=True)
class Draw:
    source: str  # "stock" | "discard"


@dataclass(frozen=True)
class Discard:
    card: Any  # Card in my hand


@dataclass(frozen=True)
class Close:
    card: Any  # the card to put face down


@dataclass(frozen=True)
class Reenter:
    accept: bool


@dataclass(frozen=True)
class Leave:
    reason: str = "left the table"


Intent = Union[Agree, Draw, Discard, Close, Reenter, Leave]
