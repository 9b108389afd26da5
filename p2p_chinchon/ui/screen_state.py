"""The table screen's own state (:class:`ScreenState`): what it keeps between keys and views.

The seat's latest :class:`~p2p_chinchon.view.SeatView` and what the screen tracks from one view
to the next (the discard pile this hand, who went out when, each player's last turn, the showdown
held on screen, the bells owed), the screen's mode and its prompts (a question asked, the table
picker, the message line), and the hand's display order (melds grouped, or the person's own order,
and the picked card). It never decides a rule. The keys (:mod:`.screen_keys`) and the layout
(:mod:`.screen_layout`) are built on it; :class:`~p2p_chinchon.ui.screen.TableScreen` is all three.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import view as V
from ..i18n import Translator
from .logtext import make_log_renderer
from .render import COURTS, Faces, deck_style

if TYPE_CHECKING:  # annotations only: the engine is imported where used (display helpers), the bridge brings trio
    from ..engine import Arrangement, Card
    from .bridge import ToNode
    from .lobby import TablePicker

HintFn = Callable[[V.SeatView], object]  # an intent (worded by the screen), a str, or None
# fingerprints -> {fingerprint: (wins, games)}: this evening's earlier games among these players
EveningFn = Callable[[list[str]], dict[str, tuple[int, int]]]
# screen modes (UI-local); HOLD keeps a showdown up after the table moved on, RECALL shows it again
NORMAL, HELP, CONFIRM_QUIT, ASK, PICKER, FINAL = "normal", "help", "confirm", "ask", "picker", "final"
PILE = "pile"  # the discard pile's history this hand (p), until any key
HOLD, RECALL = "hold", "recall"
DEFAULT_SHOWDOWN_TIME = 30  # seconds, when the rules predate the showdown_time option
NOTICES_KEPT = 3  # notices shown together until the next key (e.g. two seats nobody reaches)
AFTER_CLOSE = frozenset({V.SHOWDOWN, V.HAND_OVER, V.REENTRY, V.OVER})


def _arrangement(hand: Sequence[Card], rules: Any) -> Arrangement | None:
    """The engine's best arrangement of ``hand`` (display only), or None when unavailable."""
    if rules is None or not hand or len(hand) > 8:
        return None
    try:
        from ..engine import best_arrangement
    except ImportError:
        return None
    try:
        return best_arrangement(list(hand), rules)
    except Exception:  # a display helper must never take the table down
        return None


def must_agree(view: V.SeatView | None, agreed_here: bool = False) -> bool:
    """Whether the lobby waits for this seat to agree: it is seated (the seating is proposed),
    has not agreed (``agreed_here``: the person already did) and the node has not agreed for it
    (a host agrees by opening the table)."""
    if view is None or view.phase != V.LOBBY or agreed_here or view.provisional:
        return False
    mine = [s for s in view.seats if s.seat == view.me]
    return bool(mine) and not mine[0].agreed


def stops_as_one_line(view: V.SeatView | None) -> bool:
    """Whether an error that stops the node is said as one line on the command line (and the
    command's exit code) rather than on a final screen: it came before any game began (no
    table shown, or its lobby), so there is nothing on the screen to read first."""
    return view is None or view.phase == V.LOBBY


def _sort_key(card: Card) -> tuple[int, int, int]:
    return (1 if card.rank == 0 else 0, card.suit, card.rank)


def _remove(cards: list[Card], card: Card) -> bool:
    for i, c in enumerate(cards):
        if c == card:
            del cards[i]
            return True
    return False


def new_game(old: V.SeatView | None, view: V.SeatView) -> bool:
    """Whether ``view`` is another game's lobby after ``old``'s game (a rematch)."""
    return old is not None and view.phase == V.LOBBY and old.phase != V.LOBBY


class ScreenState:
    """UI-local state of one seat's table screen, and what the node's inputs do to it.

    ``send(intent)`` delivers an intent to the node (thread-safe on the caller's side);
    ``exit()`` ends the application; ``force_quit()`` cancels the node (second Ctrl-C);
    ``hint(view)`` is the optional hint provider (the bot's suggestion: an intent, or a str);
    ``clock() -> seconds`` times the showdown hold (default :func:`time.monotonic`)."""

    def __init__(self, tr: Translator, faces: Faces | None = None, *,
                 send: Callable[[ToNode], None] | None = None, hint: HintFn | None = None,
                 exit: Callable[[], None] | None = None,
                 force_quit: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.tr = tr
        self._faces_base = dataclasses.replace(faces or Faces(), courts=COURTS.get(tr.lang, "JQK"))
        self.send = send or (lambda intent: None)
        self.hint = hint
        self.exit = exit or (lambda: None)
        self.force_quit = force_quit or (lambda: None)
        self.view: V.SeatView | None = None
        self.status = ""
        self.message = ""
        self.message_style = ""
        self._notices: list[str] = []  # what self.message holds when it is the node's notices
        self._topics: list[str] = []  # each notice's topic ("" for none), in step with _notices
        self.scroll = 0  # lines the lobby's cut block is scrolled down (↑ ↓)
        self._scroll_max = 0
        self.mode = NORMAL
        self.order: list[Card] | None = None  # custom order after < or >; None = melds grouped
        self.picked: Card | None = None  # the picked card (identity, not index)
        self.typed = ""
        self.pending: ToNode | None = None  # intent sent, not yet answered by a new view
        self.agreed = False
        self.leave_sent = False
        self.reentry_answered: int | None = None  # hand_no of the offer answered
        self.final_text = ""
        self.picker: TablePicker | None = None  # while picking a table
        self.ask_question = ""
        self._ask_answer: Callable[[bool | str], None] | None = None
        self._ask_block = False
        self._ask_after = False  # a question waits for the showdown on screen to go
        self._arr_cache: tuple[object, Arrangement | None] = (None, None)  # (hand and rules, theirs)
        self._best_cache: tuple[object, tuple[int, list[Card]] | None] = (None, None)
        self.log_line = make_log_renderer(tr, lambda: self.faces)
        self.clock = clock
        self.shown: V.SeatView | None = None  # the last showdown seen (HOLD and RECALL show it)
        # this hand's discard pile, as it went: (seat, card, "threw" / "took"), or (-1, n,
        # "reshuffle"); built from every view's new log events (a view keeps only the last 50)
        self.pile: list[tuple[int, Any, str]] = []
        self._pile_seen = 0
        # fingerprints -> {fingerprint: (wins, games)} of this evening's earlier games among
        # these players (set by the command: the local tally), shown on the sheet
        self.evening: EveningFn | None = None
        self._evening_cache: tuple[tuple[str, ...], dict[str, tuple[int, int]]] | None = None
        self._shown_key: tuple[int, int | None] | None = None  # (hands scored, closer) on screen
        self.hold_until = 0.0
        self._no_autopick: tuple[Card, ...] | None = None  # the hand right after taking the discard
        self.marks: list[tuple[int, int, str, int]] = []  # (after hand n, seat, "out"/"in", total)
        self.last_turn: dict[int, tuple[Card | None, Card]] = {}  # seat -> (card taken or None, thrown)
        self._turn_start: tuple[int, int, int] | None = None  # (hand_no, seat, log_total)
        self.bells = 0  # rings owed to the terminal (your turn, someone closed); see take_bells

    def _new_game(self) -> None:
        """A rematch's lobby: what this screen kept of the last game goes (its
        showdown, the pile, who went out when, the last turns, the card order)."""
        self.order, self.picked, self.typed = None, None, ""
        self.reentry_answered = None
        self.shown, self._shown_key = None, None
        self.pile, self._pile_seen = [], 0
        self.marks, self.last_turn, self._turn_start = [], {}, None
        self._evening_cache = None  # the finished game now counts tonight
        self._no_autopick = None
        if self.mode in (HOLD, RECALL):
            self.mode = NORMAL

    # ------------------------------------------------------------ inputs from the node
    @property
    def faces(self) -> Faces:
        rules = self.view.rules if self.view is not None else None
        base = self._faces_base
        deck = deck_style(rules) if rules is not None and not base.fixed else base.deck
        return Faces(deck, base.unicode, base.color, base.courts, base.fixed)

    def set_view(self, view: V.SeatView) -> None:
        old, pending = self.view, self.pending
        if new_game(old, view):
            self._new_game()
            old = None  # nothing of the last game is compared with this one
        self.view = view
        self.pending = None
        if old is not None and (old.hand_no != view.hand_no or old.phase != view.phase):
            if view.phase in (V.PLAYING, V.SHUFFLING):
                self.message = ""
        if old is not None and old.hand_no != view.hand_no:
            self.order = None  # a new hand starts grouped by melds, not in the last order
        if view.phase != V.LOBBY:
            self.agreed = False
        self._track_pile(view)
        self._track_marks(old, view)
        self._track_turns(old, view)
        self._track_showdown(view)
        self._track_bells(old, view)
        if view.reentry_offer and self.mode == HOLD:
            self.mode = NORMAL  # the re-entry question shows the showdown and waits itself
        hand = list(view.hand)
        if self.picked is not None and self.picked not in hand:
            self.picked = None
        if old is not None and len(hand) == len(old.hand) + 1:
            new = list(hand)
            for c in old.hand:
                _remove(new, c)
            took = (isinstance(pending, V.Draw) and pending.source == "discard") or (
                len(new) == 1 and old.discard_top is not None and new[0] == old.discard_top
                and view.discard_size == old.discard_size - 1)
            if took:  # Enter must not throw the taken card back: pick the hint's card or none
                self._no_autopick = tuple(hand)
                card = self._hint_card(view)
                self.picked = None if len(new) == 1 and card == new[0] else card
            elif len(new) == 1:  # just drew from the stock: pick the drawn card
                self.picked = new[0]
        if self._no_autopick is not None and self._no_autopick != tuple(hand):
            self._no_autopick = None
        if self.picked is None and hand and self._no_autopick is None:
            self.picked = self.display_hand()[0][-1] if self.display_hand()[0] else None

    def _track_marks(self, old: V.SeatView | None, view: V.SeatView) -> None:
        """Note eliminations and re-entries as they happen, for the score sheet."""
        if old is None:
            return
        before = {s.seat: s for s in old.seats}
        n = len(view.score_history)
        for s in view.seats:
            was = before.get(s.seat)
            if was is None:
                continue
            if s.eliminated and not was.eliminated:
                self.marks.append((n, s.seat, "out", s.total))
            if s.reentries_used > was.reentries_used or (was.eliminated and not s.eliminated):
                self.marks.append((n, s.seat, "in", s.total))

    def _track_turns(self, old: V.SeatView | None, view: V.SeatView) -> None:
        """Each player's last turn ("took 5♦, threw K♣"): when the turn passes on, its draw is
        the seat's draw among the log events since the turn began (the pile's size misleads
        when the stock is reshuffled from the pile in that turn)."""
        if view.phase != V.PLAYING or view.to_play is None:
            if old is not None and old.hand_no != view.hand_no:
                self.last_turn.clear()
            return
        start = self._turn_start
        if start is not None and start[0] == view.hand_no and start[1] != view.to_play:
            seat = start[1]
            fresh = view.log_total - start[2]  # log events since the turn began
            since = view.events[max(0, len(view.events) - fresh):] if fresh > 0 else ()
            drew = next((e for e in reversed(since) if e.seat == seat
                         and e.kind in ("draw_discard", "draw_stock")), None)
            took = drew.card if drew is not None and drew.kind == "draw_discard" else None
            if view.discard_top is not None:
                self.last_turn[seat] = (took, view.discard_top)
        if start is None or start[:2] != (view.hand_no, view.to_play):
            if start is not None and start[0] != view.hand_no:
                self.last_turn.clear()
            self._turn_start = (view.hand_no, view.to_play, view.log_total)

    def _track_showdown(self, view: V.SeatView) -> None:
        """Keep the last showdown; a new one is held on screen for the table's showdown_time
        (it must not flash past while the next hand is dealt)."""
        if not view.showdown or view.phase not in AFTER_CLOSE:
            return
        key = (len(view.score_history), view.closer)
        self.shown = view  # the latest view of it: totals and outcome lines fill in
        if key == self._shown_key:
            return
        self._shown_key = key
        seconds = getattr(view.rules, "showdown_time", DEFAULT_SHOWDOWN_TIME)
        if seconds > 0 and view.phase != V.OVER and self.mode == NORMAL:
            self.mode, self.hold_until = HOLD, self.clock() + seconds

    def _track_bells(self, old: V.SeatView | None, view: V.SeatView) -> None:
        if old is None:
            return
        if view.my_turn and view.step == "draw" and not (old.my_turn and old.step == "draw"):
            self.bells += 1
        if view.closer is not None and view.showdown and (
                len(view.score_history), view.closer) != (len(old.score_history), old.closer):
            self.bells += 1

    def take_bells(self) -> int:
        """How many times to ring the terminal bell now (and forget them)."""
        n, self.bells = self.bells, 0
        return n

    def holding(self) -> bool:
        """Whether a showdown is still held; releases it once its time has passed."""
        if self.mode == HOLD and self.clock() >= self.hold_until:
            self.mode = self._after_showdown()
        return self.mode == HOLD

    def _after_showdown(self) -> str:
        """The mode a showdown put away returns to: a question asked meanwhile (the rematch),
        else the final screen once the game is over."""
        if self._ask_after and self._ask_answer is not None:
            self._ask_after = False
            return ASK
        return FINAL if self.final_text else NORMAL

    def hold_left(self) -> float:
        """Seconds until the held showdown goes away (0 when none is held)."""
        return max(0.0, self.hold_until - self.clock()) if self.holding() else 0.0

    def i_agreed(self) -> bool:
        """True unless the lobby waits for this seat's agreement (see :func:`must_agree`)."""
        return not must_agree(self.view, self.agreed)

    def set_status(self, text: str) -> None:
        self.status = text

    def rejected(self, reason: str) -> None:
        """The table refused our last intent: say why."""
        self.pending = None
        # an agree the table refused was not given: the person may press a again (once the table
        # signed an agree, the view's own seat says so and i_agreed() stays true)
        self.agreed = False
        self._say(self.tr("refused", reason=reason), "class:error")

    def noticed(self, text: str, topic: str = "") -> None:
        """A notice from the node (the turn clock played for us, a seat nobody can reach):
        kept on the message line until the next key or hand, where a status line would be
        overwritten at once; the last :data:`NOTICES_KEPT` notices stand together, wrapped
        (:meth:`message_lines`), so a long one is read to its end. A notice with a ``topic``
        (:func:`~p2p_chinchon.ui.bridge.notice_topic`) replaces the earlier ones of that topic
        (a new code word: the one used before, and who used it, are no longer news)."""
        shown = self._notices if self._notices and self.message == "\n".join(self._notices) else []
        kept = [(t, n) for t, n in zip(self._topics[-len(shown):] if shown else [], shown, strict=True)
                if not topic or t != topic]
        kept = [*kept, (topic, text)][-NOTICES_KEPT:]
        self._topics, self._notices = [t for t, _ in kept], [n for _, n in kept]
        self._say("\n".join(self._notices), "class:error")

    def node_done(self, text: str) -> None:
        """The session ended: the final screen, after the showdown on screen (if any) is read."""
        self.final_text = text
        if not (self.holding() or self.mode == RECALL):
            self.mode = FINAL

    def start_ask(self, question: str, answer: Callable[[bool | str], None], *,
                  block: bool = False) -> None:
        self.ask_question, self._ask_answer = question, answer
        self._ask_block = block
        self.typed = ""
        if self.mode in (HOLD, RECALL) and (self.mode == RECALL or self.holding()):
            self._ask_after = True  # a showdown on screen (the game's last): asked once it goes
            return
        self.mode = ASK

    def end_ask(self) -> None:
        """The asker withdrew its question (e.g. the joiner it was about left)."""
        if self.mode == ASK:
            self.mode = NORMAL
        self._ask_answer = None
        self._ask_after = False

    def start_picker(self, picker: TablePicker) -> None:
        self.mode, self.picker = PICKER, picker

    def end_picker(self) -> None:
        if self.mode == PICKER:
            self.mode = NORMAL
        self.picker = None

    # ------------------------------------------------------------ hand order and arrangement
    def arrangement(self) -> Arrangement | None:
        view = self.view
        if view is None:
            return None
        key = (tuple(view.hand), id(view.rules))
        if self._arr_cache[0] != key:
            self._arr_cache = (key, _arrangement(view.hand, view.rules))
        return self._arr_cache[1]

    def best_discard(self) -> tuple[int, Card] | None:
        """``(deadwood, card)``: the least deadwood a seven-card hand keeps after discarding one
        of the eight held, and that card (display only; None when unavailable). Of cards that
        leave the same least deadwood, the picked one is named, so that the screen never makes
        two suggestions for equal cards."""
        view = self.view
        if view is None or len(view.hand) != 8:
            return None
        key = ("best", tuple(view.hand), id(view.rules))
        if self._best_cache[0] != key:
            best: tuple[int, list[Card]] | None = None
            for card in dict.fromkeys(view.hand):  # each distinct card once
                rest = list(view.hand)
                _remove(rest, card)
                arr = _arrangement(rest, view.rules)
                if arr is None:
                    continue
                if best is None or arr.points < best[0]:
                    best = (arr.points, [card])
                elif arr.points == best[0]:
                    best[1].append(card)
            self._best_cache = (key, best)
        best = self._best_cache[1]
        if best is None:
            return None
        picked = self.picked
        return best[0], picked if picked is not None and picked in best[1] else best[1][0]

    def _track_pile(self, view: V.SeatView) -> None:
        fresh = view.log_total - self._pile_seen
        self._pile_seen = view.log_total
        if fresh <= 0:
            return
        for ev in view.events[-fresh:]:
            if ev.kind == "deal":
                self.pile = []
            elif ev.kind in ("discard", "draw_discard") and ev.seats and ev.cards:
                self.pile.append((ev.seats[0], ev.cards[0], "threw" if ev.kind == "discard" else "took"))
            elif ev.kind == "upcard" and ev.cards:
                self.pile.append((-1, ev.cards[0], "upcard"))
            elif ev.kind == "reshuffle":
                self.pile.append((-1, ev.numbers[0] if ev.numbers else 0, "reshuffle"))

    def display_hand(self) -> tuple[list[Card], list[int | None]]:
        """``(cards, group)``: the hand in display order and, per card, the index of its meld
        (None for deadwood or in a custom order)."""
        if self.view is None:
            return [], []
        hand = list(self.view.hand)
        if self.order is not None:
            rest = list(hand)
            cards: list[Card] = [c for c in self.order if _remove(rest, c)]
            cards += rest  # newly drawn cards go to the right
            self.order = list(cards)
            return cards, [None] * len(cards)
        arr = self.arrangement()
        cards = []
        groups: list[int | None] = []
        rest = list(hand)
        if arr is not None:
            for g, meld in enumerate(arr.melds):
                for c in meld.cards:
                    if _remove(rest, c):
                        cards.append(c)
                        groups.append(g)
        rest.sort(key=_sort_key)
        return cards + rest, groups + [None] * len(rest)

    def _picked_index(self, cards: list[Card]) -> int:
        for i, c in enumerate(cards):
            if c == self.picked:
                return i
        return -1

    def _pick_at(self, i: int) -> bool:
        cards, _ = self.display_hand()
        if 0 <= i < len(cards):
            self.picked = cards[i]
            return True
        return False

    def _move_picked(self, delta: int) -> None:
        cards, _ = self.display_hand()
        i = self._picked_index(cards)
        j = i + delta
        if i < 0 or not 0 <= j < len(cards):
            return
        cards[i], cards[j] = cards[j], cards[i]
        self.order = cards

    # ------------------------------------------------------------ the message line, the hint's card
    def _say(self, text: str, style: str = "") -> None:
        self.message, self.message_style = text, style

    def _hint_card(self, view: V.SeatView) -> Card | None:
        """The card the hint would discard now, or None (no provider, or it fails)."""
        if self.hint is None:
            return None
        try:
            card = getattr(self.hint(view), "card", None)
        except Exception:  # a hint is a courtesy: never let it break taking a card
            return None
        return card if card in view.hand else None
