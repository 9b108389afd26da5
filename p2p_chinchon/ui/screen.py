"""The table screen as a pure model: what a :class:`SeatView` looks like, and what keys do.

:class:`TableScreen` holds only UI-local state (card order, the picked card, the typed buffer,
prompts); it never decides a rule. Keys become intents through ``send``; the table checks them
with the engine, and refusals come back through :meth:`TableScreen.rejected`.
:meth:`TableScreen.render` lays the whole screen out for any size (80x24 upward stays readable;
smaller sizes drop the move log first, then the rules text, then seats), so the same function
serves the prompt_toolkit control, resizes and headless tests.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from .. import view as V
from .i18n import Translator, never_formed_text, own_stop_text
from .logtext import make_log_renderer
from .render import COURTS, CardTextError, Faces, card_style, card_text, deck_style, find_card
from .text import Line, asciify, cell, pad, plain, truncate, width

HintFn = Callable[[V.SeatView], Any]  # an intent (worded by the screen), a str, or None
# screen modes (UI-local); HOLD keeps a showdown up after the table moved on, RECALL shows it again
NORMAL, HELP, CONFIRM_QUIT, ASK, PICKER, FINAL = "normal", "help", "confirm", "ask", "picker", "final"
PILE = "pile"  # the discard pile's history this hand (p), until any key
HOLD, RECALL = "hold", "recall"
COMMAND_KEYS = frozenset("sdchqgaynlp?<>")
# One answer key per meaning in every language: "y" is no game action, whereas "s" (sí) draws and
# "o" (oui) could start a card name. Any other key leaves an open question open.
YES_KEYS = frozenset({"y", "Y"})
NO_KEYS = frozenset({"n", "N", "escape"})
BLOCK_KEYS = frozenset({"b", "B"})  # a question that allows it: no, and no to all from there
DEFAULT_SHOWDOWN_TIME = 30  # seconds, when the rules predate the showdown_time option
NOTICE_LINES = 6  # screen lines the node's notices may take (wrapped; the newest kept)
STATUS_LINES = 2  # screen lines the node's status (waits) may take, wrapped
NOTICES_KEPT = 3  # notices shown together until the next key (e.g. two seats nobody reaches)


def _arrangement(hand: Sequence[Any], rules: Any) -> Any:
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


def _rcell(text: str, cols: int) -> str:
    """``text`` right-aligned in ``cols`` cells (cut with "…" when longer)."""
    cut = plain(truncate(text, cols))
    return " " * (cols - width(cut)) + cut


def _sort_key(card: Any) -> tuple[int, int, int]:
    return (1 if card.rank == 0 else 0, card.suit, card.rank)


def _remove(cards: list[Any], card: Any) -> bool:
    for i, c in enumerate(cards):
        if c == card:
            del cards[i]
            return True
    return False


class TableScreen:
    """UI state and layout for one seat's table screen.

    ``send(intent)`` delivers an intent to the node (thread-safe on the caller's side);
    ``exit()`` ends the application; ``force_quit()`` cancels the node (second Ctrl-C);
    ``hint(view)`` is the optional hint provider (the bot's suggestion: an intent, or a str);
    ``clock() -> seconds`` times the showdown hold (default :func:`time.monotonic`)."""

    def __init__(self, tr: Translator, faces: Faces | None = None, *,
                 send: Callable[[Any], None] | None = None, hint: HintFn | None = None,
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
        self.scroll = 0  # lines the lobby's cut block is scrolled down (↑ ↓)
        self._scroll_max = 0
        self.mode = NORMAL
        self.order: list[Any] | None = None  # custom order after < or >; None = melds grouped
        self.picked: Any = None  # the picked card (identity, not index)
        self.typed = ""
        self.pending: Any = None  # intent sent, not yet answered by a new view
        self.agreed = False
        self.leave_sent = False
        self.reentry_answered: int | None = None  # hand_no of the offer answered
        self.final_text = ""
        self.picker: Any = None  # lobby.TablePicker while picking a table
        self.ask_question = ""
        self._ask_answer: Callable[[bool | str], None] | None = None
        self._ask_block = False
        self._ask_after = False  # a question waits for the showdown on screen to go
        self._arr_cache: tuple[Any, Any] = (None, None)
        self._best_cache: tuple[Any, Any] = (None, None)
        self.log_line = make_log_renderer(tr, lambda: self.faces)
        self.clock = clock
        self.shown: V.SeatView | None = None  # the last showdown seen (HOLD and RECALL show it)
        # this hand's discard pile, as it went: (seat, card, "threw" / "took"), or (-1, n,
        # "reshuffle"); built from every view's new log events (a view keeps only the last 50)
        self.pile: list[tuple[int, Any, str]] = []
        self._pile_seen = 0
        # fingerprints -> {fingerprint: (wins, games)} of this evening's earlier games among
        # these players (issue 24; set by the command: the local tally), shown on the sheet
        self.evening: Callable[[list[str]], dict[str, tuple[int, int]]] | None = None
        self._evening_cache: tuple[tuple[str, ...], dict] | None = None
        self._shown_key: Any = None
        self.hold_until = 0.0
        self._no_autopick: tuple[Any, ...] | None = None  # the hand right after taking the discard
        self.marks: list[tuple[int, int, str, int]] = []  # (after hand n, seat, "out"/"in", total)
        self.last_turn: dict[int, tuple[Any, Any]] = {}  # seat -> (card taken or None, thrown)
        self._turn_start: tuple[int, int, int] | None = None  # (hand_no, seat, log_total)
        self.bells = 0  # rings owed to the terminal (your turn, someone closed); see take_bells

    def _new_game(self) -> None:
        """A rematch's lobby (issue 24): what this screen kept of the last game goes (its
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
            self.order = None  # a new hand starts grouped by melds (issue 24), not in the last order
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
        (issue 13: it must not flash past while the next hand is dealt)."""
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

    def noticed(self, text: str) -> None:
        """A notice from the node (the turn clock played for us, a seat nobody can reach):
        kept on the message line until the next key or hand, where a status line would be
        overwritten at once; the last :data:`NOTICES_KEPT` notices stand together, wrapped
        (:meth:`message_lines`), so a long one is read to its end."""
        shown = self._notices if self._notices and self.message == "\n".join(self._notices) else []
        self._notices = [*shown, text][-NOTICES_KEPT:]
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

    def start_picker(self, picker: Any) -> None:
        self.mode, self.picker = PICKER, picker

    def end_picker(self) -> None:
        if self.mode == PICKER:
            self.mode = NORMAL
        self.picker = None

    # ------------------------------------------------------------ hand order and arrangement
    def arrangement(self) -> Any:
        view = self.view
        if view is None:
            return None
        key = (tuple(view.hand), id(view.rules))
        if self._arr_cache[0] != key:
            self._arr_cache = (key, _arrangement(view.hand, view.rules))
        return self._arr_cache[1]

    def best_discard(self) -> tuple[int, Any] | None:
        """``(deadwood, card)``: the least deadwood a seven-card hand keeps after discarding one
        of the eight held, and that card (display only; None when unavailable). Of cards that
        leave the same least deadwood, the picked one is named, so that the screen never makes
        two suggestions for equal cards (issue 24)."""
        view = self.view
        if view is None or len(view.hand) != 8:
            return None
        key = ("best", tuple(view.hand), id(view.rules))
        if self._best_cache[0] != key:
            best: tuple[int, list[Any]] | None = None
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
        return best[0], self.picked if self.picked in best[1] else best[1][0]

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

    def pile_lines(self, cols: int) -> list[Line]:
        """The discard pile's history this hand, one line per seat: the cards it threw, in
        order (a taken card is marked ``+``), then the re-shuffles; newest last."""
        view, tr = self.view, self.tr
        out: list[Line] = [[("class:label", tr("pile_title"))]]
        for seat in [s.seat for s in view.seats]:
            line: Line = [("class:label", f"{self.seat_name(seat)[:12]:<13}")]
            for who, card, what in self.pile:
                if who == seat and what in ("threw", "took"):
                    if what == "took":
                        line.append(("class:dim", " +"))
                    else:
                        line.append(("", " "))
                    line += self._card_frags(card)
            out.append(truncate(line, cols))
        shuffles = sum(1 for _, _, what in self.pile if what == "reshuffle")
        if shuffles:
            out.append([("class:dim", tr("pile_reshuffles", n=shuffles))])
        out.append([("class:dim", tr("pile_help"))])
        return out

    def display_hand(self) -> tuple[list[Any], list[int | None]]:
        """``(cards, group)``: the hand in display order and, per card, the index of its meld
        (None for deadwood or in a custom order)."""
        if self.view is None:
            return [], []
        hand = list(self.view.hand)
        if self.order is not None:
            rest = list(hand)
            cards = [c for c in self.order if _remove(rest, c)]
            cards += rest  # newly drawn cards go to the right
            self.order = list(cards)
            return cards, [None] * len(cards)
        arr = self.arrangement()
        cards: list[Any] = []
        groups: list[int | None] = []
        rest = list(hand)
        if arr is not None:
            for g, meld in enumerate(arr.melds):
                for c in getattr(meld, "cards", meld):
                    if _remove(rest, c):
                        cards.append(c)
                        groups.append(g)
        rest.sort(key=_sort_key)
        return cards + rest, groups + [None] * len(rest)

    def _picked_index(self, cards: list[Any]) -> int:
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

    # ------------------------------------------------------------ keys
    def _say(self, text: str, style: str = "") -> None:
        self.message, self.message_style = text, style

    def _send(self, intent: Any) -> None:
        self.pending = intent
        self.message = ""
        self.send(intent)

    def key(self, k: str) -> None:
        """Handle one key: a printable character, or one of "left", "right", "up", "down",
        "enter", "backspace", "escape", "c-c"."""
        if self.mode == FINAL:
            if k == "l" and self.shown is not None:  # the last showdown, still readable
                self.mode = RECALL
                return
            self.exit()
            return
        if self.mode in (HELP, PILE):
            self.mode = NORMAL
            return
        self.holding()  # a hold whose time has passed is over: this key is for the table
        if self.mode in (HOLD, RECALL) and (k != "c-c" or self.final_text):
            if self.mode == HOLD:
                self.send(V.ShowdownSeen())  # a turn that reached us meanwhile: its clock starts now
            self.mode = self._after_showdown()  # the key only puts the showdown away
            return
        if self.mode in (HOLD, RECALL):
            self.mode = NORMAL
        if self.mode == CONFIRM_QUIT:
            if k in YES_KEYS or k == "c-c":  # Ctrl-C twice: leave
                self.mode = NORMAL
                if self.leave_sent and k == "c-c":
                    self.force_quit()
                    return
                self.leave_sent = True
                self._say(self.tr("leaving"))
                self.send(V.Leave())
            elif k in NO_KEYS:
                self.mode = NORMAL
                self.message = ""
            return
        if self.mode == ASK:
            if k == "l" and self.shown is not None and not self._ask_block:
                self.mode, self._ask_after = RECALL, True  # read the last showdown, then answer
                return
            block = self._ask_block and k in BLOCK_KEYS
            if (k in YES_KEYS or k in NO_KEYS or block) and self._ask_answer is not None:
                answer, self._ask_answer = self._ask_answer, None
                self.mode = NORMAL
                answer("block" if block else k in YES_KEYS)
            return
        if self.mode == PICKER and self.picker is not None:
            if k in ("q", "c-c"):
                self.picker.key("escape")
            else:
                self.picker.key(k)
            return
        self._key_normal(k)

    def _key_normal(self, k: str) -> None:
        view = self.view
        if self.typed:
            if k == "enter":
                self._finish_typed()
            elif k == "backspace":
                self.typed = self.typed[:-1]
            elif k == "escape":
                self.typed = ""
            elif len(k) == 1 and k.isprintable():
                if (k in COMMAND_KEYS and not self._names_a_card(self.typed + k)
                        and (self.typed.isdigit() and len(self.typed) == 1
                             or self._names_a_card(self.typed))):
                    # the digit or the name picked a card; this letter is a command ("Kd" then "c")
                    self.typed = ""
                else:
                    self.typed += k
                    self._live_pick()
                    return
            else:  # another named key (arrows, Ctrl-C): the typing is over
                self.typed = ""
            if k in ("enter", "backspace", "escape"):
                return
        if k in ("q", "c-c"):
            if self.leave_sent and k == "c-c":
                self.force_quit()
                return
            self.mode = CONFIRM_QUIT
            # mid-game with two others still at the table, they play on without this seat
            plays_on = (view is not None and view.phase not in (V.LOBBY, V.OVER, V.STOPPED)
                        and sum(not getattr(s, "left", False) for s in view.seats) >= 3)
            self._say(self.tr("confirm_leave_game" if plays_on else "confirm_quit"), "class:prompt")
            return
        if k == "?":
            self.mode = HELP
            return
        if view is None:
            return
        if k == "p":  # who threw what this hand (issue 24): online players read hands from it
            self.mode = PILE
            return
        if k == "l":
            if self.shown is not None:
                self.mode = RECALL
            else:
                self._say(self.tr("no_showdown_yet"))
            return
        if k == "escape":
            self.message = ""
            return
        if view.phase == V.LOBBY and k in ("up", "down"):
            step = 1 if k == "down" else -1
            self.scroll = max(0, min(self.scroll + step, self._scroll_max))
            return
        if view.phase == V.LOBBY:
            if k == "a":
                if view.provisional or not view.seats:  # no seating to agree to yet
                    self._say(self.tr("not_in_lobby"))
                elif self.i_agreed():
                    self._say(self.tr("already_agreed"))
                else:
                    self.agreed = True
                    self._send(V.Agree())
                    self._say(self.tr("agreed_waiting"))
            return
        if view.reentry_offer and self.reentry_answered != view.hand_no:
            if k in YES_KEYS or k in ("n", "N"):
                self.reentry_answered = view.hand_no
                self._send(V.Reenter(k in YES_KEYS))
            return
        if k == "left" or k == "right":
            cards, _ = self.display_hand()
            if cards:
                i = self._picked_index(cards)
                i = (i + (1 if k == "right" else -1)) % len(cards) if i >= 0 else 0
                self.picked = cards[i]
            return
        if k in ("<", ">"):
            self._move_picked(-1 if k == "<" else 1)
            return
        if k == "g":
            self.order = None
            return
        if k == "h":
            self._hint()
            return
        if k in ("s", "d"):
            self._draw("stock" if k == "s" else "discard")
            return
        if k == "enter":
            self._discard(close=False)
            return
        if k == "c":
            self._discard(close=True)
            return
        if len(k) == 1 and (k.isdigit() or (k.isprintable() and not k.isspace()
                                              and k not in COMMAND_KEYS)):
            self.typed = k
            if k.isdigit() and k != "0":
                self._pick_at(int(k) - 1)
            return

    def _names_a_card(self, text: str) -> bool:
        view = self.view
        if view is None:
            return False
        try:
            find_card(text, view.hand, self.faces.deck)
        except CardTextError:
            return False
        return True

    def _live_pick(self) -> None:
        view = self.view
        if view is None:
            return
        try:
            self.picked = find_card(self.typed, view.hand, self.faces.deck)
        except CardTextError:
            pass

    def _finish_typed(self) -> None:
        text, self.typed = self.typed, ""
        view = self.view
        if text.isdigit() and len(text) == 1:
            self._discard(close=False)  # a lone digit already picked its card: Enter discards
            return
        if view is None:
            return
        try:
            self.picked = find_card(text, view.hand, self.faces.deck)
            self.message = ""
        except CardTextError:
            self._say(self.tr("bad_card_name", text=text), "class:error")
            return
        if view.my_turn and view.step == "discard":
            self._discard(close=False)  # a typed card name discards with one Enter

    def _busy(self) -> bool:
        if self.pending is not None:
            self._say(self.tr("waiting_table"))
            return True
        return False

    def _draw(self, source: str) -> None:
        view = self.view
        assert view is not None
        if not view.my_turn:
            self._say(self.tr("not_your_turn"), "class:error")
        elif view.step != "draw":
            self._say(self.tr("already_drew"), "class:error")
        elif source == "discard" and view.discard_top is None:
            self._say(self.tr("discard_empty"), "class:error")
        elif not self._busy():
            self._send(V.Draw(source))

    def _discard(self, close: bool) -> None:
        view = self.view
        assert view is not None
        if not view.my_turn:
            self._say(self.tr("not_your_turn"), "class:error")
            return
        if view.step != "discard":
            self._say(self.tr("draw_first"), "class:error")
            return
        card = self.picked
        if card is None or card not in view.hand:
            self._say(self.tr("pick_first"), "class:error")
            return
        if close:
            options = [o for o in view.close_options if o[0] == card]
            if not view.close_options:
                key = "no_close_first_round" if view.first_round else "no_close"
                self._say(self.tr(key), "class:error")
                return
            if not options:
                best = view.close_options[0]
                self._say(self.tr("close_with_other", card=card_text(best[0], self.faces),
                                  points=best[1]), "class:error")
                return
            if not self._busy():
                self._confirm_close(card, options[0][1])
            return
        if not self._busy():
            self._send(V.Discard(card))

    def _confirm_close(self, card: Any, points: int) -> None:
        """A close is signed and cannot be undone: ask first (issue 24), saying when it puts
        this seat over the limit."""
        view = self.view
        me = next((s for s in view.seats if s.seat == view.me), None)
        limit = getattr(view.rules, "limit", None)
        after = me.total + points if me is not None else None
        text = self.tr("confirm_close", card=card_text(card, self.faces), points=points)
        if after is not None and limit is not None and after > limit:
            text = self.tr("confirm_close_over", card=card_text(card, self.faces), points=points,
                           total=after, limit=limit)
        hand = view.hand_no

        def answer(yes: bool) -> None:
            if yes and self.view is not None and self.view.hand_no == hand and self.view.my_turn:
                self._send(V.Close(card))

        self.start_ask(text, answer)

    def _hint(self) -> None:
        if self.hint is None or self.view is None:
            self._say(self.tr("no_hint"))
            return
        try:
            got = self.hint(self.view)
        except Exception as exc:  # a hint provider's failure is a message, not a crash
            self._say(self.tr("no_hint") + f" ({exc})", "class:error")
            return
        card = getattr(got, "card", None)
        if card is not None and card in self.view.hand:
            self.picked = card  # h picks the card it suggests: Enter follows the hint
        self._say(self.tr("hint", text=self.hint_text(got)), "class:hint")

    def _hint_card(self, view: V.SeatView) -> Any:
        """The card the hint would discard now, or None (no provider, or it fails)."""
        if self.hint is None:
            return None
        try:
            card = getattr(self.hint(view), "card", None)
        except Exception:  # a hint is a courtesy: never let it break taking a card
            return None
        return card if card in view.hand else None

    def hint_text(self, got: Any) -> str:
        """A hint provider's answer in words: an intent in the player's language and the
        deck's notation, a str as it is, None as "wait for your turn"."""
        tr, view = self.tr, self.view
        if got is None:
            return tr("hint_wait")
        if isinstance(got, str):
            return got or "-"
        if isinstance(got, V.Draw):
            if got.source == "discard" and view is not None and view.discard_top is not None:
                return tr("hint_take", card=card_text(view.discard_top, self.faces))
            return tr("hint_stock")
        if isinstance(got, V.Close):
            pts = next((p for c, p, _ in (view.close_options if view else ()) if c == got.card), "?")
            return tr("hint_close", card=card_text(got.card, self.faces), points=pts)
        if isinstance(got, V.Discard):
            return tr("hint_discard", card=card_text(got.card, self.faces))
        return str(got)

    # ------------------------------------------------------------ layout
    def seat_name(self, seat: int | None) -> str:
        view = self.view
        if view is None or seat is None:
            return "?"
        for s in view.seats:
            if s.seat == seat:
                return s.name or f"#{seat}"
        return f"#{seat}"

    def _card_frags(self, card: Any, compact: bool = False, extra: str = "") -> Line:
        style = card_style(card, self.faces)
        return [((style + " " + extra).strip(), card_text(card, self.faces, compact))]

    def _cards_frags(self, cards: Sequence[Any], sep: str = " ", compact: bool = False) -> Line:
        out: Line = []
        for i, c in enumerate(cards):
            if i:
                out.append(("", sep))
            out += self._card_frags(c, compact)
        return out

    def header(self) -> Line:
        view, tr = self.view, self.tr
        parts = [("class:title", " p2p-chinchón ")]
        if view is None:
            return parts + [("", " " + (self.status or tr("connecting")))]
        if view.table_name:
            parts.append(("class:title.table", f" {view.table_name} "))
        if view.phase not in (V.LOBBY,):
            parts.append(("", " " + tr("hand_no", n=self.hand_number())))
        parts.append(("", " · "))
        parts.append(("class:phase", self.phase_text()))
        return parts

    def hand_number(self) -> int:
        """The hand the screen is about, from 1: after a close, the hand just scored (the
        table may already count the next one)."""
        view = self.view
        assert view is not None
        if view.phase in AFTER_CLOSE and view.score_history:
            return len(view.score_history)
        if view.phase == V.SHUFFLING:
            return len(view.score_history) + 1
        return view.hand_no + 1

    def phase_text(self) -> str:
        view, tr = self.view, self.tr
        assert view is not None
        if view.phase == V.PLAYING:
            if view.my_turn:
                if view.step in ("draw", "discard"):
                    return tr("your_turn_" + view.step)
                if view.awaiting is not None:  # the other seats still open the drawn card: whose share
                    return tr("your_turn_share", name=self.seat_name(view.awaiting))
                return tr("your_turn_busy")
            return tr("other_turn", name=self.seat_name(view.to_play))
        if view.phase == V.OVER and view.winner is not None:
            return self.winner_text(view.winner)
        return tr("phase_" + view.phase) if view.phase in V_PHASES else view.phase

    def stopped_text(self) -> str:
        """Why the table stopped, for people ("you left the table" when we did)."""
        view = self.view
        assert view is not None and view.fault is not None
        f = view.fault
        never = never_formed_text(f, view.dealer is not None, self.tr)  # no dealer: no hand yet
        if never is not None:
            return never
        reason = own_stop_text(f, view.me, self.tr) or f.reason
        return self.tr("stopped", reason=reason)

    def winner_text(self, seat: int) -> str:
        view = self.view
        if view is not None and seat == view.me:
            return self.tr("you_win")
        return self.tr("winner", name=self.seat_name(seat))

    def seat_lines(self, cols: int) -> list[Line]:
        view, tr, faces = self.view, self.tr, self.faces
        assert view is not None
        arrow = "▶" if faces.unicode else ">"
        lines: list[Line] = []
        for s in view.seats:
            turn = view.to_play == s.seat and view.phase == V.PLAYING
            style = "class:seat.turn" if turn else ("class:seat.out" if s.eliminated else "")
            flags = []
            if s.seat == view.me:
                flags.append(tr("you"))
            if s.is_dealer or view.dealer == s.seat:
                flags.append(tr("dealer_mark"))
            if getattr(s, "left", False):
                flags.append(tr("left_mark"))
            elif s.eliminated:
                flags.append(tr("out"))
            if s.is_bot:
                flags.append(tr("bot"))
            if not s.connected and not getattr(s, "left", False):
                flags.append(tr("offline"))
            agreed = getattr(s, "agreed", None)
            if view.phase == V.LOBBY and agreed:
                flags.append(tr("agreed"))
            # in the lobby fingerprints are whole: people compare them aloud before agreeing
            fp = s.fingerprint if view.phase == V.LOBBY else cell(s.fingerprint, 11)
            line: Line = [(style, f"{arrow if turn else ' '} {cell(s.name or '#' + str(s.seat), 12)} "),
                          ("class:fp", fp + " ")]
            if view.phase != V.LOBBY:
                line.append((style, cell(tr("n_cards", n=s.cards), 9) + " "
                             + cell(tr("total_n", n=s.total), 10) + " "))
            line.append(("class:flags", " ".join(flags)))
            last = self.last_turn.get(s.seat)
            if last is not None and view.phase == V.PLAYING:
                took, threw = last
                key = "turn_drew" if took is None else "turn_took"
                parts = tr(key, took="\x01", card="\x00").split("\x00")
                head, _, mid = parts[0].partition("\x01")
                line.append(("", "  " + head))
                if took is not None:
                    line += self._card_frags(took)
                    line.append(("", mid))
                line += self._card_frags(threw)
                line.append(("", parts[-1] if len(parts) > 1 else ""))
            lines.append(truncate(line, cols))
        if view.provisional:
            lines += [[("class:dim", f"  {cell('#' + str(i), 12)} {tr('free_seat')}")]
                      for i in range(len(view.seats), view.max_seats)]
        return lines

    def pile_line(self) -> Line:
        view, tr = self.view, self.tr
        assert view is not None
        line: Line = [("class:label", tr("discard_pile") + ": ")]
        if view.discard_top is not None:
            line += self._card_frags(view.discard_top, extra="class:card.top")
        else:
            line.append(("", tr("empty")))
        line.append(("", f" ({view.discard_size})   "))
        line.append(("class:label", tr("stock") + ": "))
        line.append(("", str(view.stock_size)))
        return line

    def hand_lines(self, cols: int, keys: bool = True) -> list[Line]:
        """Three lines: title with deadwood, the cards (melds in brackets), position numbers.
        ``keys``: say what the Enter key would discard (the full screen, not line mode)."""
        view, tr = self.view, self.tr
        assert view is not None
        cards, groups = self.display_hand()
        arr = self.arrangement()
        title: Line = [("class:label", tr("your_hand") + ": ")]
        if arr is not None:
            after = self.best_discard() if len(cards) == 8 else None
            if after is not None:  # 8 cards: what is left once the best card is thrown
                title.append(("", tr("deadwood_after", n=after[0], card="\x00").split("\x00")[0]))
                title += self._card_frags(after[1])
                title.append(("", tr("deadwood_after", n=after[0], card="\x00").split("\x00")[-1]))
            else:
                title.append(("", tr("deadwood_n", n=getattr(arr, "points", 0))))
            if getattr(arr, "melds", ()):
                title.append(("", " · " + tr("melds_n", n=len(arr.melds))))
        elif not cards:
            title.append(("", tr("no_cards")))
        if self.order is not None:
            title.append(("class:dim", "  (" + tr("custom_order") + ")"))
        if keys and view.my_turn and view.step == "discard" and self.picked in cards:
            enter = tr("enter_discards", card="\x00").split("\x00")
            said: Line = [("", " · "), ("class:prompt", enter[0]), *self._card_frags(self.picked),
                          ("class:prompt", enter[-1] if len(enter) > 1 else "")]
            if width(title + said) > cols:  # what Enter does is never cut off (issue 24): the
                title = title[:1]           # deadwood summary gives way, the card row says it
                said = said[1:]
            title += said
        for compact in (False, True):
            row, nums = self._hand_row(cards, groups, compact)
            if width(row) <= cols:
                break
        return [truncate(title, cols), truncate(row, cols), truncate(nums, cols)]

    def _hand_row(self, cards: list[Any], groups: list[int | None],
                  compact: bool) -> tuple[Line, Line]:
        row: Line = []
        nums: Line = []
        prev: int | None = None
        for i, (c, g) in enumerate(zip(cards, groups, strict=True)):
            gap = " " if i else ""
            if g != prev and prev is not None:
                row.append(("class:meld", "]"))
            if g is not None and g != prev:
                row.append(("", gap))
                row.append(("class:meld", "["))
            else:
                row.append(("", gap))
            nums.append(("", " " * (width(row) - width(nums))))
            extra = "class:card.picked" if c == self.picked else ""
            face = self._card_frags(c, compact, extra)
            row += face
            nums.append(("class:dim", str(i + 1) if i < 9 else " "))
            prev = g
        if prev is not None:
            row.append(("class:meld", "]"))
        return row, nums

    def close_line(self) -> Line | None:
        view, tr = self.view, self.tr
        assert view is not None
        if not (view.my_turn and view.step == "discard"):
            return None
        if view.close_options:
            opts = []
            for card, points, chinchon in view.close_options[:3]:
                opts.append(card_text(card, self.faces) + " → " + str(points)
                            + (" " + tr("chinchon") if chinchon else ""))
            return [("class:close", tr("may_close", options=", ".join(opts)))]
        key = "no_close_first_round" if view.first_round else "no_close"
        return [("class:dim", tr(key))]

    def progress_line(self, cols: int) -> Line | None:
        view = self.view
        if view is None or view.progress is None:
            return None
        done, total, label = view.progress
        bar_w = 20
        filled = 0 if total <= 0 else max(0, min(bar_w, done * bar_w // total))
        full, empty = ("█", "░") if self.faces.unicode else ("#", "-")
        return truncate([("class:progress", full * filled + empty * (bar_w - filled)),
                         ("", " " + self.progress_text(done, total, label))], cols)

    def progress_text(self, done: int, total: int, label: str) -> str:
        """A wait in the player's words: the table's "shuffle by Carla" becomes "Shuffling:
        Carla (3 of 12)"; a label of another shape is shown as it is."""
        kind, by, name = label.partition(" by ")
        key = PROGRESS_KEYS.get(kind)
        if not by or key is None:
            return f"{done}/{total} {label}"
        return self.tr(key, name=name, n=min(done + 1, total), total=total)

    def showdown_lines(self, cols: int, view: V.SeatView | None = None) -> list[Line]:
        """The closer, then each player's melds, lay-offs, deadwood and points this hand."""
        view, tr = view or self.view, self.tr
        assert view is not None
        lines: list[Line] = []
        if view.closer is not None and view.showdown:
            said = (tr("you_closed") if view.closer == view.me
                    else tr("closed_by", name=self.seat_name(view.closer)))
            lines.append([("class:label", said)])
        targets = lay_off_targets(view.showdown, view.rules)
        for sh in view.showdown:
            pen = [("class:penalty", f"{sh.penalty:>5}")]
            room = cols - width(pen) - 1
            for compact in (False, True):  # Spanish names are long: shorten before cutting
                line = self._shown_hand(sh, compact, targets)
                if width(line) <= room:
                    break
            lines.append(pad(truncate(line, room), room) + [("", " ")] + pen)
        return lines

    def _shown_hand(self, sh: V.ShownHand, compact: bool,
                    targets: dict[tuple[int, int], int] | None = None) -> Line:
        tr = self.tr
        line: Line = [("", cell(self.seat_name(sh.seat), 10) + " ")]
        for meld in sh.melds:
            line.append(("class:meld", "["))
            line += self._cards_frags(meld, compact=compact)
            line.append(("class:meld", "] "))
        if sh.laid_off:
            line.append(("class:dim", tr("laid_off") + " "))
            arrow = "→" if self.faces.unicode else "->"
            for i, card in enumerate(sh.laid_off):
                line += self._card_frags(card, compact)
                onto = (targets or {}).get((sh.seat, i))
                if onto is not None:  # onto whose meld
                    line.append(("class:dim", arrow + self.seat_name(onto)))
                line.append(("", " "))
        if sh.deadwood:
            line.append(("class:dim", tr("deadwood") + " "))
            line += self._cards_frags(sh.deadwood, compact=compact)
        return line

    def score_lines(self, cols: int, max_rows: int = 99,
                    view: V.SeatView | None = None) -> list[Line]:
        """The score sheet: one column per seat, one row per hand, then totals. A seat that
        went out gets "✗" after its points of that hand; a re-entry is a row of its own
        ("=43": the total starts again at 43, 000 "Winning the game"), so every column adds
        up to its total; a line per seat says it in words."""
        view, tr = view or self.view, self.tr
        assert view is not None
        if not view.score_history and not any(s.total for s in view.seats):
            return []
        seats = list(view.seats)
        col_of = {s.seat: i for i, s in enumerate(seats)}
        colw = max(5, min(10, (cols - 8) // max(1, len(seats)) - 1))
        cross = "✗" if self.faces.unicode else "x"
        head = cell(tr("hand"), 7) + " " + " ".join(_rcell(s.name or f"#{s.seat}", colw)
                                                  for s in seats)
        rows: list[tuple[int, Line]] = []
        for n, row in enumerate(view.score_history, start=1):
            vals = [str(row[i]) if i < len(row) else "" for i in range(len(seats))]
            for after, seat, kind, _total in self.marks:
                if after == n and kind == "out" and seat in col_of:
                    vals[col_of[seat]] += cross
            rows.append((n, [("", cell(str(n), 7) + " "
                                  + " ".join(_rcell(v, colw) for v in vals))]))
            back = [""] * len(seats)
            for after, seat, kind, total in self.marks:
                if after == n and kind == "in" and seat in col_of:
                    back[col_of[seat]] = f"={total}"
            if any(back):
                rows.append((n, [("class:dim", cell(tr("sheet_reentry"), 7) + " "
                                  + " ".join(_rcell(v, colw) for v in back))]))
        if len(rows) > max_rows:
            rows = rows[-max_rows:]
        tot = [str(s.total) + (cross if s.eliminated else "") for s in seats]
        out = [[("class:label", head)]] + [r for _, r in rows]
        out.append([("class:label", cell(tr("total"), 7) + " "
                     + " ".join(_rcell(v, colw) for v in tot))])
        tonight = self.tonight(seats)
        if tonight:
            vals = [f"{tonight[s.fingerprint][0]}/{tonight[s.fingerprint][1]}" if s.fingerprint in tonight else ""
                    for s in seats]
            out.append([("class:dim", cell(tr("sheet_tonight"), 7) + " " + " ".join(_rcell(v, colw) for v in vals))])
        notes = self.mark_notes(view) + self.near_notes(view) + ([tr("sheet_tonight_note")] if tonight else [])
        return [truncate(r, cols) for r in out + [[("class:dim", t)] for t in notes]]

    def near_notes(self, view: V.SeatView) -> list[str]:
        """Who is near the limit (within a fifth of it, at least 10 points) and whether a bust
        would be bought back (re-entries left while enough players are in): issue 24."""
        rules, tr = view.rules, self.tr
        limit = getattr(rules, "limit", None)
        if limit is None or view.phase == V.OVER or view.winner is not None:
            return []
        near = max(10, limit // 5)
        playing = [s for s in view.seats if not s.eliminated and not getattr(s, "left", False)]
        out = []
        for s in playing:
            left = limit - s.total
            if 0 <= left <= near:
                may = (s.reentries_used < getattr(rules, "reentries", 0)
                       and len(playing) >= getattr(rules, "reentry_min_remaining", 2))
                out.append(tr("sheet_near_buyback" if may else "sheet_near", name=s.name, n=left, limit=limit))
        return out

    def tonight(self, seats: Sequence[V.SeatInfo]) -> dict[str, tuple[int, int]]:
        """This evening's earlier games among these seats' keys (:attr:`evening`), read once
        per set of players."""
        if self.evening is None:
            return {}
        fps = tuple(s.fingerprint for s in seats)
        if self._evening_cache is None or self._evening_cache[0] != fps:
            self._evening_cache = (fps, self.evening(list(fps)))
        return self._evening_cache[1]

    def mark_notes(self, view: V.SeatView | None = None) -> list[str]:
        """One sentence per seat that went out or re-entered ("Carla: out at 104 after hand 5,
        re-entered at 43")."""
        view = view or self.view
        if view is None:
            return []
        notes = []
        for s in view.seats:
            parts = []
            for after, seat, kind, total in self.marks:
                if seat == s.seat:
                    parts.append(self.tr("sheet_out" if kind == "out" else "sheet_in",
                                         total=total, n=after))
            if parts:
                notes.append(self.tr("sheet_note", name=self.seat_name(s.seat),
                                     events=", ".join(parts)))
        return notes

    def outcome_lines(self, view: V.SeatView | None = None) -> list[Line]:
        view, tr = view or self.view, self.tr
        assert view is not None
        lines: list[Line] = []
        for s in view.seats:
            if s.eliminated:
                said = (tr("you_are_out", total=s.total) if s.seat == view.me
                        else tr("is_out", name=s.name, total=s.total))
                lines.append([("class:seat.out", said)])
        if view is self.view and view.reentry_offer and self.reentry_answered != view.hand_no:
            lines.append([("class:prompt", tr("reentry_question"))])
        if view.winner is not None:
            lines.append([("class:winner", self.winner_text(view.winner))])
        return lines

    def help_lines(self) -> list[Line]:
        lines = [[("class:label" if i == 0 else "", t)]
                 for i, t in enumerate(self.tr("help_text").split("\n"))]
        rules = self.view.rules if self.view is not None else None
        turn = getattr(rules, "turn_time", None)
        if turn is not None:  # this table's turn clock (issue 24), before "any key closes"
            import textwrap

            # a sentence, not a key line: wrapped at 76 so 80 columns show it whole
            clock = self.tr("help_clock", s=turn) if turn else self.tr("help_no_clock")
            lines[len(lines) - 1:len(lines) - 1] = [[("", "  " * (i > 0) + part)]
                                                    for i, part in enumerate(textwrap.wrap(clock, 76))]
        return lines

    def keybar(self) -> Line:
        view, tr = self.view, self.tr
        if self.mode == FINAL:
            return [("class:prompt", tr("press_any_key_l" if self.shown is not None else "press_any_key"))]
        if self.mode == PICKER:
            return [("class:dim", tr("keys_picker"))]
        if self.mode in (CONFIRM_QUIT, ASK):
            return [("class:prompt", tr("keys_yes_no"))]
        if self.mode == RECALL or self.holding():
            return [("class:prompt", tr("keys_showdown"))]
        if self.typed:
            return [("class:prompt", tr("typing") + " " + self.typed + "_")]
        if view is None:
            return [("class:dim", tr("keys_idle"))]
        if view.phase == V.LOBBY:
            return [("class:dim", tr("keys_idle" if self.i_agreed() else "keys_lobby"))]
        if view.reentry_offer and self.reentry_answered != view.hand_no:
            return [("class:prompt", tr("keys_yes_no"))]
        if view.my_turn and view.step == "draw":
            return [("class:dim", tr("keys_draw"))]
        if view.my_turn and view.step == "discard":
            return [("class:dim", tr("keys_discard"))]
        return [("class:dim", tr("keys_wait" if view.hand else "keys_idle"))]

    def message_line(self) -> Line:
        if self.mode == FINAL:
            return [("class:label", self.final_text)]
        if self.mode == ASK:
            return [("class:prompt", self.ask_question)]
        if self.message:
            return [(self.message_style, self.message)]
        return []

    def message_lines(self, cols: int, most: int = NOTICE_LINES) -> list[Line]:
        """The message line; the node's notices wrapped over at most ``most`` lines (the
        newest kept), every other message cut to one line."""
        import textwrap

        notices = bool(self._notices) and self.message == "\n".join(self._notices)
        if self.mode == FINAL and notices:  # e.g. how the rematch vote ended, above the last line
            return [truncate([(self.message_style, self._notices[-1])], cols),
                    truncate(self.message_line(), cols)][-max(most, 1):]
        if self.mode == ASK:  # a question is read whole: its keys come last (b: refuse ...)
            parts = textwrap.wrap(self.ask_question, max(cols, 1)) or [""]
            return [truncate([("class:prompt", part)], cols) for part in parts[:max(most, 1)]]
        if self.mode == FINAL or not notices:
            return [truncate(self.message_line(), cols)]
        out = [[(self.message_style, part)] for notice in self._notices
               for part in textwrap.wrap(notice, max(cols, 1)) or [""]]
        return [truncate(line, cols) for line in out[-max(most, 1):]]

    def body_blocks(self, cols: int) -> list[tuple[list[Line], int, bool]]:
        """``(lines, priority, flexible)`` in display order; lower priority numbers are kept
        first when space is short; the flexible block (the log) shows its last lines. The
        node's status (:meth:`set_status`: waits, who is offline and for how long) is the
        last body line, kept before anything else, so a message never hides it."""
        blocks = self._body_blocks(cols)
        if self.status and self.view is not None and self.mode not in (HELP, PICKER):
            import textwrap

            # whom and how long we wait is read whole: wrapped over at most STATUS_LINES lines
            parts = textwrap.wrap(self.status, max(cols, 1)) or [self.status]
            blocks.append(([[("class:status", part)] for part in parts[:STATUS_LINES]], 0, False))
        return blocks

    def _body_blocks(self, cols: int) -> list[tuple[list[Line], int, bool]]:
        view, tr = self.view, self.tr
        if self.mode == HELP:
            return [(self.help_lines(), 0, False)]
        if self.mode == PILE and view is not None:
            return [(self.pile_lines(cols), 0, True)]
        if self.mode == PICKER and self.picker is not None:
            return [(self.picker.lines(cols, self.tr), 0, True)]
        if view is None:
            return []
        if self.shown is not None and (self.mode == RECALL or self.holding()):
            said = tr("showdown_of", n=len(self.shown.score_history))
            return [([[("class:label", said)]], 0, False)] + self.showdown_blocks(self.shown, cols)
        blocks: list[tuple[list[Line], int, bool]] = []
        prog = self.progress_line(cols)
        if view.fault is not None:
            f = view.fault
            # leaving is a choice, not a cheat: the reason already says who left
            who = ("" if f.seat is None or f.rule == "left"
                   else tr("blame", name=self.seat_name(f.seat), rule=f.rule))
            blocks.append(([[("class:error", self.stopped_text())]]
                           + ([[("class:error", who)]] if who else []), 0, False))
        if view.phase == V.LOBBY:
            from .lobby import rules_in_words

            if view.provisional or not view.seats:  # the seating is not signed yet
                said = [[("class:prompt", tr("lobby_waiting_seat", table=view.table_name or "?"))]]
                if view.provisional and view.max_seats:
                    free = view.max_seats - len(view.seats)
                    said.append([("class:prompt", tr("lobby_waiting_more", n=free, taken=len(view.seats),
                                                     max=view.max_seats) if free > 0 else tr("lobby_full"))])
                blocks.append((said, 0, False))
            blocks.append((self.seat_lines(cols), 1, False))
            rules = [[("", "• " + s)] for s in rules_in_words(view.rules, tr)]
            if rules:
                blocks.append(([[("class:label", tr("proposed_rules"))]] + rules, 3, False))
            if view.me is not None and not view.provisional:
                agree = tr("agreed_waiting") if self.i_agreed() else tr("press_a_to_agree")
                blocks.append(([[("class:prompt", agree)]], 0, False))
        elif view.phase in AFTER_CLOSE or (view.phase in (V.STOPPED, V.SHUFFLING)
                                           and view.showdown and view.score_history):
            # while the next hand is shuffled the last showdown stays up, so a person can read it
            if view.phase == V.SHUFFLING:
                blocks.append(([[("class:label", tr("last_hand", n=len(view.score_history)))]],
                               1, False))
            blocks += self.showdown_blocks(view, cols)
        else:
            blocks.append((self.seat_lines(cols), 3, False))
            if view.phase in (V.PLAYING, V.RESTOCKING):
                blocks.append(([self.pile_line()], 1, False))
            if view.hand:
                blocks.append((self.hand_lines(cols), 0, False))
            close = self.close_line()
            if close is not None:
                blocks.append(([close], 1, False))
        if prog is not None:
            blocks.append(([prog], 0, False))
        blocks.append(([self.log_line(ev, view) for ev in view.events], 9, True))
        return blocks

    def showdown_blocks(self, view: V.SeatView, cols: int) -> list[tuple[list[Line], int, bool]]:
        """A showdown, its score sheet and what came of it, as :meth:`body_blocks` blocks."""
        return [(self.showdown_lines(cols, view), 1, False),
                (self.score_lines(cols, view=view), 2, False),
                (self.outcome_lines(view), 0, False)]

    def _render(self, cols: int, rows: int) -> list[Line]:
        if rows <= 0 or cols <= 0:
            return []
        head = truncate(self.header(), cols)
        foot = [truncate(self.message_line(), cols), truncate(self.keybar(), cols)]
        if rows <= 3:
            return ([head] + foot)[-rows:] if rows < 3 else [head] + foot
        foot = self.message_lines(cols, min(NOTICE_LINES, rows // 3)) + foot[1:]
        budget = rows - 1 - len(foot)
        blocks = self.body_blocks(cols)
        alloc = [0] * len(blocks)
        for i in sorted(range(len(blocks)), key=lambda i: blocks[i][1]):
            lines, _, flex = blocks[i]
            if flex:
                continue
            alloc[i] = min(len(lines), budget)
            budget -= alloc[i]
        for i, (lines, _, flex) in enumerate(blocks):
            if flex:
                alloc[i] = min(len(lines), budget)
                budget -= alloc[i]
        body: list[Line] = []
        scrolled = False  # the first cut block scrolls (the lobby: rules a person must read)
        for (lines, _, flex), n in zip(blocks, alloc, strict=True):
            if n <= 0:
                continue
            chosen = lines[-n:] if flex else lines[:n]
            if not flex and n < len(lines):
                if not scrolled and n >= 2 and self.view is not None and self.view.phase == V.LOBBY:
                    scrolled = True
                    self._scroll_max = len(lines) - (n - 1)
                    start = max(0, min(self.scroll, self._scroll_max))
                    below = start + n - 1 < len(lines)
                    chosen = lines[start:start + n - 1] + [
                        [("class:dim", self.tr("more_below" if below else "more_above"))]]
                else:
                    chosen = chosen[:-1] + [[("class:dim", "…")]]
            body += [truncate(l, cols) for l in chosen]
        if not scrolled:
            self._scroll_max = 0
        body += [[] for _ in range(rows - 1 - len(foot) - len(body))]
        return [head] + body + foot

    def render(self, cols: int, rows: int) -> list[Line]:
        """The whole screen: exactly ``rows`` lines (fewer only below 3 rows), none wider than
        ``cols`` cells. Header, body (see :meth:`body_blocks`), message line, key bar. Without
        Unicode every character is ASCII."""
        lines = self._render(cols, rows)
        if not self._faces_base.unicode:
            lines = [truncate(asciify(l), cols, "...") for l in lines]
        return lines

    def render_text(self, cols: int = 80, rows: int = 24) -> str:
        """:meth:`render` as plain text, one line per row (for tests and line mode)."""
        return "\n".join(plain(l) for l in self.render(cols, rows))


def lay_off_targets(showdown: Sequence[V.ShownHand], rules: Any) -> dict[tuple[int, int], int]:
    """``(seat, i) -> owner``: whose meld the ``i``-th card laid off by ``seat`` extends, when
    exactly one player's meld takes it (display only: the view lists laid-off cards without
    their target; 000 "Laying off"). Cards are tried in order, each growing the meld it joined."""
    try:
        from ..engine import make_meld
    except ImportError:
        return {}
    if rules is None:
        return {}
    melds = [(sh.seat, list(m)) for sh in showdown for m in sh.melds]
    out: dict[tuple[int, int], int] = {}
    for sh in showdown:
        for i, card in enumerate(sh.laid_off):
            fits = []
            for owner, cards in melds:
                try:
                    if owner != sh.seat and make_meld(cards + [card], rules) is not None:
                        fits.append((owner, cards))
                except Exception:  # a display helper never takes the table down
                    continue
            if len({o for o, _ in fits}) == 1:
                out[(sh.seat, i)] = fits[0][0]
                fits[0][1].append(card)
    return out


# the table's step kinds while a hand is prepared (table.py Step.kind) -> what a player calls them
PROGRESS_KEYS = {
    "key_commit": "progress_key", "key_share": "progress_key", "shuffle": "progress_shuffle",
    "deal_shares": "progress_deal", "draw_share": "progress_deal", "secret": "progress_check",
    "hand_digest": "progress_check", "show": "progress_check", "toss": "progress_toss",
}
AFTER_CLOSE = frozenset({V.SHOWDOWN, V.HAND_OVER, V.REENTRY, V.OVER})


def new_game(old: V.SeatView | None, view: V.SeatView) -> bool:
    """Whether ``view`` is another game's lobby after ``old``'s game (a rematch: issue 24)."""
    return old is not None and view.phase == V.LOBBY and old.phase != V.LOBBY
V_PHASES = frozenset({V.LOBBY, V.SHUFFLING, V.PLAYING, V.RESTOCKING, V.SHOWDOWN, V.HAND_OVER,
                      V.REENTRY, V.OVER, V.STOPPED})
