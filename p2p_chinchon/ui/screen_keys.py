"""The table screen's keys (:class:`ScreenKeys`): what each key does in each mode.

A key changes the screen's own state (:mod:`.screen_state`) or becomes an intent sent to the
node (draw, discard, close, agree, re-enter, leave); the table checks every intent with the engine,
so these checks only spare a round trip. Typed card names and position digits pick a card; ``h``
asks the hint provider and words its answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import view as V
from .render import CardTextError, card_text, find_card

if TYPE_CHECKING:
    from ..engine import Card
    from .bridge import ToNode
from .screen_state import ASK, CONFIRM_QUIT, FINAL, HELP, HOLD, NORMAL, PICKER, PILE, RECALL, ScreenState

COMMAND_KEYS = frozenset("sdchqgaynlp?<>")
# One answer key per meaning in every language: "y" is no game action, whereas "s" (sí) draws and
# "o" (oui) could start a card name. Any other key leaves an open question open.
YES_KEYS = frozenset({"y", "Y"})
NO_KEYS = frozenset({"n", "N", "escape"})
BLOCK_KEYS = frozenset({"b", "B"})  # a question that allows it: no, and no to all from there


class ScreenKeys(ScreenState):
    """Keys -> intents and mode changes (:meth:`key` is the one entry)."""

    def _send(self, intent: ToNode) -> None:
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
        if k == "p":  # who threw what this hand: online players read hands from it
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
                self._confirm_close(card, options[0][1], chinchon=options[0][2])
            return
        if not self._busy():
            self._send(V.Discard(card))

    def _confirm_close(self, card: Card, points: int, *, chinchon: bool = False) -> None:
        """A close is signed and cannot be undone: ask first, saying when it is a chinchón (and
        whether that wins the game at once, 000 "Chinchón") and when it puts this seat over the
        limit."""
        view = self.view
        assert view is not None
        me = next((s for s in view.seats if s.seat == view.me), None)
        limit = getattr(view.rules, "limit", None)
        after = me.total + points if me is not None else None
        text = self.tr("confirm_close", card=card_text(card, self.faces), points=points)
        if chinchon:
            wins = bool(getattr(view.rules, "chinchon_wins", False))
            text = (self.tr("confirm_chinchon", card=card_text(card, self.faces)) if wins
                    else self.tr("confirm_chinchon_score", card=card_text(card, self.faces), points=points))
        elif after is not None and limit is not None and after > limit:
            text = self.tr("confirm_close_over", card=card_text(card, self.faces), points=points,
                           total=after, limit=limit)
        hand = view.hand_no

        def answer(yes: bool | str) -> None:  # no block key here: a bool
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

    def hint_text(self, got: object) -> str:
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
