"""Plain line mode: the table as text lines, commands read from standard input (scriptable).

Used when standard input is not a terminal. Runs under plain ``trio.run`` (no prompt_toolkit
application). The state is printed compactly whenever the game waits for this seat, new log
lines as they happen, the showdown and score table after each hand. Commands (English, the
same in every language; messages follow ``lang``)::

    draw stock | draw discard | s | d      discard CARD|N | CARD | N    close CARD|N
    agree      reenter yes|no              hint | h    l (last showdown, scores)    help | ?    quit

Ctrl-C leaves the table, like quit (a second Ctrl-C stops at once).

A command that acts (draw, discard, close, agree, reenter) waits until the game asks this seat
for that kind of move, so a script can be piped in ahead of time; a command that cannot apply
then gets a one-line message and the next line is read. End of input leaves the table.
``N`` is a card's position (1-8) in the hand as last printed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import trio

from .. import view as V
from ..i18n import Translator
from .bridge import ToNode, UiBridge, leave_on_interrupt
from .render import CardTextError, Faces, card_text, find_card, parse_card_text, resolve_faces
from .screen import EveningFn, HintFn, TableScreen, must_agree, new_game
from .text import plain

if TYPE_CHECKING:
    from ..engine import Card
    from .lobby import TablePicker

ACTIONS = ("draw", "discard", "close", "agree", "reenter")
_YES = {"yes", "y", "si", "sí", "s", "oui", "o", "true", "1"}
_NO = {"no", "n", "non", "false", "0"}
_BLOCK = {"b", "block", "bloquear", "bloquer"}  # no, and no to all from there (a seat question)


class CommandError(ValueError):
    """A command line that cannot be used now; ``key``/``fields`` name the i18n message."""

    def __init__(self, key: str, **fields: Any) -> None:
        super().__init__(key)
        self.key = key
        self.fields = fields


@dataclass(frozen=True)
class Command:
    """One parsed line: ``kind`` in draw, discard, close, agree, reenter, quit, help, hint,
    number, yes, no; ``arg``: "stock"/"discard", the card text, a bool, or a number."""

    kind: str
    arg: Any = None


def parse_command(text: str) -> Command | None:
    """Read one command line (None for a blank line). Raises :class:`CommandError`."""
    words = text.strip().split()
    if not words:
        return None
    head, rest = words[0].lower(), " ".join(words[1:])
    low_rest = rest.lower()
    if head in ("s", "stock") and not rest:
        return Command("draw", "stock")
    if head == "d" and not rest:
        return Command("draw", "discard")
    if head == "draw":
        if low_rest in ("stock", "s", "mazo", "talon"):
            return Command("draw", "stock")
        if low_rest in ("discard", "d", "pile", "descarte", "defausse", "défausse"):
            return Command("draw", "discard")
        raise CommandError("need_source")
    if head in ("discard", "close"):
        if not rest:
            raise CommandError("need_card", cmd=head)
        return Command(head, rest)
    if head in ("agree", "a", "ready", "accept") and not rest:
        return Command("agree")
    if head == "reenter":
        if low_rest in _YES:
            return Command("reenter", True)
        if low_rest in _NO:
            return Command("reenter", False)
        raise CommandError("reentry_yes_no")
    if head in ("quit", "q", "exit", "leave") and not rest:
        return Command("quit")
    if head in ("help", "?") and not rest:
        return Command("help")
    if head in ("hint", "h") and not rest:  # h is the hint, as on the full screen
        return Command("hint")
    if head in ("l", "last", "scores") and not rest:
        return Command("showdown")
    if head.isdigit() and not rest:
        return Command("number", int(head))
    if head in _YES and not rest:
        return Command("yes")
    if head in _NO and not rest:
        return Command("no")
    if head in _BLOCK and not rest:
        return Command("block")
    try:  # a bare card name discards it, as typing it does on the full screen
        parse_card_text(text)
    except CardTextError:
        raise CommandError("unknown_command", text=text.strip()) from None
    return Command("discard", text.strip())


def awaiting(view: V.SeatView | None, agreed: bool = False) -> str | None:
    """What the game waits for from this seat: "lobby", "reentry", "draw", "discard" or None."""
    if view is None or view.me is None:
        return None
    if view.phase == V.LOBBY:
        return "lobby" if must_agree(view, agreed) else None
    if view.reentry_offer:
        return "reentry"
    if view.my_turn and view.step in ("draw", "discard"):
        return view.step
    return None


def to_intent(cmd: Command, view: V.SeatView, deck: str = "french",
              shown: list[Card] | None = None) -> V.Intent:
    """The intent for an acting command at this moment. ``shown``: the hand in the order last
    printed (a number N names its N-th card). Raises :class:`CommandError` when the game does
    not wait for that move, or the card is not in the hand."""
    wait = awaiting(view)
    if cmd.kind == "agree":
        if wait != "lobby":
            raise CommandError("not_in_lobby")
        return V.Agree()
    if cmd.kind == "reenter":
        if wait != "reentry":
            raise CommandError("not_offered_reentry")
        return V.Reenter(bool(cmd.arg))
    if not view.my_turn:
        raise CommandError("not_your_turn")
    if cmd.kind == "draw":
        if wait != "draw":
            raise CommandError("already_drew")
        if cmd.arg == "discard" and view.discard_top is None:
            raise CommandError("discard_empty")
        return V.Draw(cmd.arg)
    if wait != "discard":
        raise CommandError("draw_first")
    arg = str(cmd.arg).strip()
    if arg.isdigit():
        cards = shown if shown is not None else list(view.hand)
        n = int(arg)
        if not 1 <= n <= len(cards) or cards[n - 1] not in view.hand:
            raise CommandError("bad_card_name", text=arg)
        card = cards[n - 1]
    else:
        try:
            card = find_card(arg, view.hand, deck)
        except CardTextError:
            raise CommandError("bad_card_name", text=cmd.arg) from None
    if cmd.kind == "close":
        if not view.close_options:
            raise CommandError("no_close_first_round" if view.first_round else "no_close")
        if not any(o[0] == card for o in view.close_options):
            best = view.close_options[0]
            raise CommandError("close_with_other", card=card_text(best[0], Faces(deck)),
                               points=best[1])
        return V.Close(card)
    return V.Discard(card)


class LineFrontend:
    """Prints what changes and turns command lines into intents (bridge front end)."""

    def __init__(self, bridge: UiBridge, tr: Translator, faces: Faces, out: TextIO, *,
                 hint: HintFn | None = None, bell: bool = False) -> None:
        self.bridge = bridge
        self.tr = tr
        self.out = out
        self.hint = hint
        self.bell = bell  # BEL on your turn and on a close (only ever on a terminal)
        self.screen = TableScreen(tr, faces, hint=hint)  # reused for its line layouts only
        self.view: V.SeatView | None = None
        self.agreed = False
        self.pending: ToNode | None = None  # intent sent and not yet resolved by a new view
        self.ask: tuple[str, Callable[[bool | str], None]] | None = None
        self._ask_block = False
        self.picker: TablePicker | None = None
        self._log_total = 0  # log lines printed so far (SeatView.log_total)
        self._shown_wait: object = None  # what was last printed: each only compared
        self._shown_showdown: object = None
        self._shown_lobby: object = None  # the provisional seats last printed
        self._status = ""
        self.eof = False
        self.left = False  # a Leave was sent
        self._changed = trio.Event()

    # ------------------------------------------------------------ output
    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        await self._changed.wait()

    def waiting_for(self) -> str | None:
        """Like :func:`awaiting`, but None while an intent we sent is unresolved."""
        if self.ask is not None:
            return "ask"
        if self.picker is not None:  # chosen but not yet closed by the node: wait
            return None if self.picker.done else "pick"
        return None if self.pending is not None else awaiting(self.view, self.agreed)

    def _resolved(self, view: V.SeatView) -> bool:
        p = self.pending
        if isinstance(p, V.Draw):
            return not (view.my_turn and view.step == "draw")
        if isinstance(p, (V.Discard, V.Close)):
            return not (view.my_turn and view.step == "discard")
        if isinstance(p, V.Reenter):
            return not view.reentry_offer
        return True

    # ------------------------------------------------------------ Frontend protocol
    def view_changed(self, view: V.SeatView) -> None:
        old, self.view = self.view, view
        if new_game(old, view):  # a rematch: its log and showdowns start again
            self._log_total, self._shown_showdown = 0, None
        if self.eof and old is None and view.me is not None:
            self.send(V.Leave())
        self.screen.set_view(view)
        if self.screen.take_bells() and self.bell:
            self.out.write("\a")
        if view.phase != V.LOBBY:
            self.agreed = False
        if self.pending is not None and self._resolved(view):
            self.pending = None
        self._print_log(view)
        self._print_lobby(view)
        if view.showdown and (view.hand_no, view.closer) != self._shown_showdown and view.phase in (
                V.SHOWDOWN, V.HAND_OVER, V.REENTRY, V.OVER):
            self._shown_showdown = (view.hand_no, view.closer)
            for line in self.screen.showdown_lines(100) + self.screen.score_lines(100):
                self.say("   " + plain(line).rstrip())
            self.bridge.submit(V.ShowdownSeen())  # printed: nothing holds it, the turn clock runs
        if view.phase == V.OVER and view.winner is not None and (old is None or old.phase != V.OVER):
            self.say("** " + self.screen.winner_text(view.winner))
        if view.fault is not None and (old is None or old.fault != view.fault):
            self.say("!! " + self.screen.stopped_text())
        self._prompt_if_new()
        self._wake()

    def _print_log(self, view: V.SeatView) -> None:
        # the log is a sliding window; log_total counts every line ever logged, so the new
        # ones are known exactly (matching texts would repeat or drop identical lines)
        fresh = view.log_total - self._log_total
        if fresh <= 0:
            return
        events = view.events
        for ev in events[-fresh:] if fresh <= len(events) else events:
            self.say("   " + plain(self.screen.log_line(ev, view)))
        self._log_total = view.log_total

    def _print_lobby(self, view: V.SeatView) -> None:
        """Before the seating: the seats taken and free, printed again when they change."""
        key = (tuple((s.name, s.fingerprint) for s in view.seats), view.max_seats) if view.provisional else None
        if key is None or key == self._shown_lobby:
            return
        self._shown_lobby = key
        for line in self.screen.seat_lines(100):
            self.say("   " + plain(line).rstrip())
        free = view.max_seats - len(view.seats)
        self.say(".. " + (self.tr("lobby_waiting_more", n=free, taken=len(view.seats), max=view.max_seats)
                          if free > 0 else self.tr("lobby_full")))

    def _prompt_if_new(self) -> None:
        wait = self.waiting_for()
        view = self.view
        key = (wait, view.hand_no if view else None, view.step if view else None,
               tuple(view.hand) if view else ())
        if wait is None or key == self._shown_wait:
            if wait is None:
                self._shown_wait = None
            return
        self._shown_wait = key
        self.print_state()
        if wait == "ask" and self.ask is not None:
            self.say(">> " + self.tr("line_prompt_ask", question=self.ask[0]))
        elif wait == "pick":
            self.say(">> " + self.tr("line_prompt_pick"))
        else:
            self.say(">> " + self.tr("line_prompt_" + wait))

    def print_state(self) -> None:
        """The table, compactly: header, seats, piles, hand, close options, rules in lobby."""
        view, tr, scr = self.view, self.tr, self.screen
        if view is None or self.picker is not None:
            return
        self.say("== " + plain(scr.header()).strip())
        for line in scr.seat_lines(100):
            self.say("   " + plain(line).rstrip())
        if view.phase == V.LOBBY:
            from .lobby import rules_in_words

            for sentence in rules_in_words(view.rules, tr):
                self.say("   - " + sentence)
            return
        if view.phase in (V.PLAYING, V.RESTOCKING):
            self.say("   " + plain(scr.pile_line()))
        if view.hand:
            title, row, _ = scr.hand_lines(200, keys=False)
            self.say("   " + plain(title) + ": " + plain(row))
        if view.my_turn and view.step == "discard" and view.close_options:
            opts = ", ".join(f"{card_text(c, scr.faces)} ({p})" for c, p, _ in view.close_options)
            self.say("   " + tr("line_close_options", options=opts))

    def status_changed(self, text: str) -> None:
        if text and text != self._status:
            self.say(".. " + text)
        self._status = text

    def noticed(self, text: str, topic: str = "") -> None:
        self.say("!! " + text)  # printed lines stand: a topic replaces nothing
        self._wake()

    def rejected(self, reason: str) -> None:
        self.pending = None
        self.agreed = False  # a refused agree was not given (a signed one shows in the view)
        self.say("!! " + self.tr("refused", reason=reason))
        self._shown_wait = None
        self._prompt_if_new()
        self._wake()

    def start_ask(self, question: str, answer: Callable[[bool | str], None], *,
                  block: bool = False) -> None:
        if self.eof:
            answer(False)
            return
        self.ask, self._ask_block = (question, answer), block
        self._prompt_if_new()
        self._wake()

    def end_ask(self) -> None:
        """The asker withdrew its question (e.g. the joiner it was about left)."""
        if self.ask is not None:
            self.ask = None
            self._shown_wait = None
            self._wake()

    def start_picker(self, picker: TablePicker) -> None:
        if self.eof:
            picker.choose(None)
            return
        self.picker = picker
        self.picker_changed()

    def picker_changed(self) -> None:
        for line in self.picker.lines(100, self.tr) if self.picker else ():
            self.say("   " + plain(line).rstrip())
        self._shown_wait = None
        self._prompt_if_new()
        self._wake()

    def end_picker(self) -> None:
        self.picker = None
        self._wake()

    # ------------------------------------------------------------ input
    def send(self, intent: ToNode) -> None:
        if isinstance(intent, V.Leave):
            if self.left:
                return  # Ctrl-C, quit and the end of input each leave: once is enough
            self.left = True
        self.pending = intent
        if isinstance(intent, V.Agree):
            self.agreed = True
        self.bridge.submit(intent)

    async def handle_line(self, text: str) -> bool:
        """Act on one input line; False once the session should stop reading (quit)."""
        tr = self.tr
        try:
            cmd = parse_command(text)
        except CommandError as exc:
            self.say("!! " + tr(exc.key, **exc.fields))
            return True
        if cmd is None:
            return True
        if cmd.kind == "help":
            self.say(tr("line_help"))
            return True
        if cmd.kind == "quit":
            if self.picker is not None:
                self.picker.choose(None)
            elif self.ask is not None:
                self._answer(False)
            else:
                self.send(V.Leave())
            return False
        if cmd.kind == "showdown":
            scr = self.screen
            if scr.shown is None:
                self.say(tr("no_showdown_yet"))
            for line in (scr.showdown_lines(100, scr.shown) + scr.score_lines(100, view=scr.shown)
                         if scr.shown is not None else []):
                self.say("   " + plain(line).rstrip())
            return True
        if cmd.kind == "hint":
            if self.hint is None or self.view is None:
                self.say(tr("no_hint"))
            else:
                try:
                    self.say(tr("hint", text=self.screen.hint_text(self.hint(self.view))))
                except Exception as exc:  # the hint provider failing is a message
                    self.say(tr("no_hint") + f" ({exc})")
            return True
        while self.waiting_for() is None:  # act when the game (or a question) asks this seat
            await self.wait_changed()
        if self.ask is not None:
            if cmd.kind in ("yes", "no"):
                self._answer(cmd.kind == "yes")
            elif cmd.kind == "block" and self._ask_block:
                self._answer("block")
            else:
                self.say("!! " + tr("line_prompt_ask", question=self.ask[0]))
            return True
        if cmd.kind == "number" and self.waiting_for() == "discard":
            cmd = Command("discard", str(cmd.arg))  # a bare digit discards that card
        if self.picker is not None:
            if cmd.kind == "number" and 1 <= cmd.arg <= len(self.picker.tables):
                self.picker.choose(self.picker.tables[cmd.arg - 1])
            else:
                self.say("!! " + tr("bad_table_number", text=text.strip()))
            return True
        if cmd.kind not in ACTIONS:
            self.say("!! " + tr("unknown_command", text=text.strip()))
            return True
        assert self.view is not None
        try:
            intent = to_intent(cmd, self.view, self.screen.faces.deck,
                               self.screen.display_hand()[0])
        except CommandError as exc:
            self.say("!! " + tr(exc.key, **exc.fields))
            return True
        self.send(intent)
        return True

    def end_of_input(self) -> None:
        """No more commands: quit a picker, answer questions "no" (now and later), and leave
        the table when one is joined."""
        self.eof = True
        if self.picker is not None:
            self.picker.choose(None)  # no-op when already chosen
        elif self.ask is not None:
            self._answer(False)
        elif self.view is not None:
            self.send(V.Leave())

    def interrupt(self) -> bool:
        """Ctrl-C: leave the table like ``quit`` (True), or False when there is no table to
        leave yet (the caller stops the session)."""
        if self.picker is not None:
            self.picker.choose(None)
            return True
        if self.ask is not None:
            self._answer(False)
            return True
        if self.view is None or self.view.me is None:
            return False
        self.say("!! " + self.tr("leaving"))
        self.eof = True  # answer any later question "no"
        self.send(V.Leave())
        return True

    def _answer(self, yes: bool | str) -> None:
        assert self.ask is not None
        answer, self.ask = self.ask[1], None
        answer(yes)
        self._shown_wait = None


async def run_line_mode_async(node_main: Callable[[UiBridge], Awaitable[Any]], *,
                              stdin: TextIO, stdout: TextIO, lang: str | None = None,
                              charset: str = "auto", hint: HintFn | None = None,
                              bell: bool = False, deck: str | None = None, evening: EveningFn | None = None) -> Any:
    """:func:`run_line_mode` inside a running trio loop."""
    tr = Translator(lang)
    faces = resolve_faces(None, charset, encoding=getattr(stdout, "encoding", None) or "utf-8", deck=deck)
    bridge = UiBridge()
    isatty = getattr(stdout, "isatty", None)
    front = LineFrontend(bridge, tr, faces, stdout, hint=hint,
                         bell=bell and bool(isatty and isatty()))
    front.screen.evening = evening
    bridge.attach(front)
    bridge.bind_trio()
    result: list[Any] = []

    async def reader(cancel_scope: trio.CancelScope) -> None:
        while True:
            line = await trio.to_thread.run_sync(stdin.readline, abandon_on_cancel=True)
            if not line:  # end of input: leave cleanly rather than hang the table
                front.end_of_input()
                return
            if not await front.handle_line(line):
                return

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader, nursery.cancel_scope)
        nursery.start_soon(leave_on_interrupt, front.interrupt)  # Ctrl-C leaves (a second one stops at once)
        result.append(await node_main(bridge))
        nursery.cancel_scope.cancel()
    return result[0]


def run_line_mode(node_main: Callable[[UiBridge], Awaitable[Any]], *, stdin: TextIO,
                  stdout: TextIO, lang: str | None = None, charset: str = "auto",
                  hint: HintFn | None = None, bell: bool = False, deck: str | None = None,
                  evening: EveningFn | None = None) -> Any:
    """Run ``node_main(bridge)`` with the plain line front end under ``trio.run``; returns its
    result. ``stdin``/``stdout`` are text streams (``sys.stdin``/``sys.stdout``); ``lang`` and
    ``charset`` as for :func:`p2p_chinchon.ui.app.run_with_ui` (line mode never colours)."""
    return trio.run(lambda: run_line_mode_async(node_main, stdin=stdin, stdout=stdout,
                                                lang=lang, charset=charset, hint=hint,
                                                bell=bell, deck=deck, evening=evening))
