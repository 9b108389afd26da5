"""What one seat may know, and what a person or a bot may ask for: the UI/bot contract.

The table (``table/``) builds a :class:`SeatView` after every change; the UI renders it and
bots read it. Neither holds rules: they send :data:`Intent` values back, and the table checks
them with the same engine that checks every peer's moves. A :class:`SeatView` never contains a
face the seat has not legitimately seen (its own hand, public discards, shown hands).

Shapes: cards are :class:`p2p_chinchon.engine.Card`; seats are ints 0..N-1 in playing order
(seat i+1 sits to the right of seat i, 000 "Setup").
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

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
    left: bool = False  # out of the game for good: left, or removed as absent (standings: "left")


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
    ``left``) and a sentence for people (English; ``removed``: ``detail`` is why, ``absent``
    or ``left``, and ``hand`` the 1-based hand, for a UI to say it in its language)."""

    seat: int | None
    rule: str
    reason: str
    detail: str = ""
    hand: int = 0


# ---------------------------------------------------------------- the public log, as events

# kind -> the English sentence (``LogEvent.text``: logs, --no-ui printouts); the UI says each
# kind in the person's language from the same fields (ui/logtext.py)
_ENGLISH = {
    "opened": "table '{table}' opened",
    "seated": "{name} sat down ({k}/{n})",  # a joiner sat down in the lobby
    "unseated": "{name} left ({k}/{n})",  # a joiner left the lobby before the seating
    "seating": "seated: {names}",
    "agreed": "{name} agreed to the table",
    "first_dealer": "{name} deals first (coin toss)",
    "deal": "hand {n}: {name} deals",
    "upcard": "dealt; upcard {card}",
    "draw_stock": "{name} draws from the stock",
    "draw_discard": "{name} draws from the discard: {card}",
    "discard": "{name} discards {card}",
    "close": "{name} closes",
    "reshuffle": "the stock is empty: {n} discards are re-shuffled by every seat",
    "void": "hand void: {reason}",
    "dead_hand": "the stock ran out too many times: every hand is shown and scores as it stands",
    "score": "scores: {scores}",
    "eliminated": "{name} is out",
    "reentry_offer": "{name} may buy back in",
    "reenter": "{name} buys back in",
    "game_over": "game over: {name} wins",
    "left": "{name} left: {reason}",
    "removed": "{name} is out of the game for good ({reason}): the others play on",
    "voided": "hand {n} voided: {name} left",
    "fault": "fault: seat {seat}: {rule}: {reason}",
    "dropped": "dropped a frame ({rule}, claimed seat {seat}): {reason}",
    "stopped": "stopped by {name}: {reason}",
    "unsigned_end": "the game's end is signed by a majority, not by {all} (away): the result stands",
}
LOG_KINDS = frozenset(_ENGLISH)


@dataclass(frozen=True)
class LogEvent:
    """One public happening at the table, as data: the UI says it in the person's language,
    bots read it (who took which discard), nobody parses ``text`` back.

    ``kind``: one of :data:`LOG_KINDS`. ``seats``: the seats it is about (the acting seat
    first; "score": in scoring order; "fault"/"dropped": the accused or claimed seat, empty
    when nobody). ``names``: their names as logged ("-" for a seat the table does not know;
    "seated"/"unseated": the joiner's name, who has no seat yet). ``cards``: the card moved
    ("upcard", "draw_discard", "discard"). ``points``: "score": the penalty of ``seats[i]``.
    ``numbers``: "deal", "voided": (hand number from 1,); "reshuffle": (discards re-shuffled,);
    "seated"/"unseated": (seats taken, seats). ``rule``: "fault"/"dropped": the rule id.
    ``detail``: free text shown as it came: the table's name ("opened"), a reason ("void",
    "left", "removed": "absent" or "left", "fault", "dropped", "stopped"). ``fingerprints``: "seating": each seat's key
    fingerprint. ``text``: the English sentence. Build with :func:`log_event`.
    Raises ValueError for a kind not in :data:`LOG_KINDS`."""

    kind: str
    seats: tuple[int, ...] = ()
    names: tuple[str, ...] = ()
    cards: tuple[Any, ...] = ()
    points: tuple[int, ...] = ()
    numbers: tuple[int, ...] = ()
    rule: str = ""
    detail: str = ""
    fingerprints: tuple[str, ...] = ()
    text: str = ""

    def __post_init__(self) -> None:
        if self.kind not in LOG_KINDS:
            raise ValueError(f"unknown log event kind {self.kind!r}")

    @property
    def seat(self) -> int | None:
        """The seat the event is about first (the actor), or None."""
        return self.seats[0] if self.seats else None

    @property
    def card(self) -> Any:
        """The card the event moved, or None."""
        return self.cards[0] if self.cards else None

    def fields(self) -> dict[str, Any]:
        """The template fields of this event (cards as ``str``; the UI swaps in its faces)."""
        nums = self.numbers
        return {
            "name": self.names[0] if self.names else "-",
            "seat": self.seat,
            "card": str(self.card) if self.card is not None else "?",
            "n": nums[-1] if nums else 0,  # the hand, the discards, or the seats of "k/n"
            "k": nums[0] if nums else 0,  # seats taken ("seated"/"unseated")
            "table": self.detail,
            "reason": self.detail,
            "rule": self.rule,
            "names": ", ".join(f"{n} [{f}]" for n, f in zip(self.names, self.fingerprints, strict=False)),
            "all": ", ".join(self.names),
            "scores": ", ".join(f"{n} {p:+d}" for n, p in zip(self.names, self.points, strict=False)),
        }


def log_event(kind: str, seats: tuple[int, ...] = (), names: tuple[str, ...] = (), **fields: Any) -> LogEvent:
    """A :class:`LogEvent` with its English ``text``: the one builder the table and the bot
    harness (bots/tournament.py) share. ``fields``: the other :class:`LogEvent` fields."""
    ev = LogEvent(kind, tuple(seats), tuple(names), **fields)
    text = "game over: nobody wins" if kind == "game_over" and not seats else _ENGLISH[kind].format(**ev.fields())
    return dataclasses.replace(ev, text=text)


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
    # while PLAYING: the other seat whose automatic step the hand waits for (a stock draw's
    # decryption share: "getting your card: waiting for Bruno's share"); None otherwise
    awaiting: int | None = None
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
    events: tuple[LogEvent, ...] = ()  # recent public happenings, oldest first
    log_total: int = 0  # events logged since the start (so a printer can tell which are new)

    @property
    def log(self) -> tuple[str, ...]:
        """``events`` as English sentences (logs, --no-ui printouts)."""
        return tuple(e.text for e in self.events)

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
class ShowdownSeen:
    """Local to a seat, never a move: the person put the held showdown away (a key), so a turn
    that reached them meanwhile has its clock start now, not when ``showdown_time`` ends."""


@dataclass(frozen=True)
class Leave:
    reason: str = "left the table"


Intent = Agree | Draw | Discard | Close | Reenter | Leave
