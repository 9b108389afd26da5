"""The full-screen table: prompt_toolkit on the asyncio loop, the node in trio guest mode.

asyncio is the host loop running a prompt_toolkit ``Application`` (``app.run_async()``); trio
runs ``node_main(bridge)`` as a guest on the same thread
(``trio.lowlevel.start_guest_run(..., run_sync_soon_threadsafe=loop.call_soon_threadsafe,
host_uses_signal_set_wakeup_fd=True)``; DESIGN.md "Net"). Views reach the screen through
:class:`p2p_chinchon.ui.bridge.UiBridge` calls made by trio code; keys reach trio as intents
through ``TrioToken.run_sync_soon``. The layout is one control that asks
:meth:`p2p_chinchon.ui.screen.TableScreen.render` for exactly the window's size, so a resize
or an 80x24 terminal never overlaps or wraps.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from prompt_toolkit.application import Application
from prompt_toolkit.application.current import set_app
from prompt_toolkit.data_structures import Point
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import UIContent, UIControl
from prompt_toolkit.layout.mouse_handlers import MouseHandlers
from prompt_toolkit.layout.screen import Screen, WritePosition
from prompt_toolkit.output import ColorDepth, Output
from prompt_toolkit.styles import Style

from ..i18n import Translator
from ..view import SeatView
from .bridge import UiBridge
from .quiet import quiet_terminal
from .render import Faces, resolve_faces
from .screen import EveningFn, HintFn, TableScreen
from .screen_state import stops_as_one_line

if TYPE_CHECKING:
    from outcome import Outcome

    from .lobby import TablePicker

STYLE = Style.from_dict({
    "title": "bold reverse",
    "title.table": "bold",
    "phase": "bold",
    "label": "bold",
    "dim": "#888888",
    "fp": "#888888",
    "flags": "italic",
    "seat.turn": "bold",
    "seat.out": "#888888 strike",
    "card.red": "#d70000 bold",
    "card.black": "bold",
    "card.oros": "#d7af00 bold",
    "card.copas": "#d70000 bold",
    "card.espadas": "#0087d7 bold",
    "card.bastos": "#00af00 bold",
    "card.joker": "#af00af bold",
    "card.picked": "reverse",
    "card.top": "underline",
    "meld": "#888888",
    "close": "bold #00af00",
    "error": "#d70000",
    "prompt": "bold",
    "hint": "#0087d7",
    "status": "italic",
    "progress": "#00af00",
    "penalty": "bold",
    "winner": "bold reverse",
    "log": "",
})

LOG_NOTICE_EVERY = 60.0  # seconds between two "connection refused" notices

_KEY_NAMES = {
    Keys.Left: "left", Keys.Right: "right", Keys.Up: "up", Keys.Down: "down",
    Keys.Enter: "enter", Keys.ControlM: "enter", Keys.Backspace: "backspace",
    Keys.ControlH: "backspace", Keys.Escape: "escape", Keys.ControlC: "c-c",
}


class _ScreenControl(UIControl):
    """Asks the screen model for exactly the window's size on every redraw."""

    def __init__(self, screen: TableScreen) -> None:
        self.screen = screen

    def create_content(self, width: int, height: int) -> UIContent:
        lines = self.screen.render(width, height)

        def get_line(i: int) -> StyleAndTextTuples:
            return list(lines[i])  # (style, text) pairs: fragments without a mouse handler

        return UIContent(get_line=get_line, line_count=len(lines),
                         cursor_position=Point(0, 0), show_cursor=False)

    def is_focusable(self) -> bool:
        return True


class TableApp:
    """The prompt_toolkit application around a :class:`TableScreen`; the bridge's front end.

    ``cancel_node`` is set by :func:`run_with_ui_async` (second Ctrl-C after leaving);
    ``bell``: ring the terminal bell when it becomes your turn and when someone closes."""

    def __init__(self, bridge: UiBridge, tr: Translator, faces: Faces, *,
                 hint: HintFn | None = None, pt_input: Input | None = None,
                 pt_output: Output | None = None, bell: bool = True) -> None:
        self.bridge = bridge
        self.bell = bell
        self.loop: asyncio.AbstractEventLoop | None = None  # the host loop, set when running
        self.log_file: Path | None = None  # where log records go while the screen runs
        self._log_said = -LOG_NOTICE_EVERY
        self.cancel_node: Callable[[], None] = lambda: None
        self.screen = TableScreen(tr, faces, send=bridge.submit, hint=hint, exit=self._exit,
                                  force_quit=lambda: self.cancel_node())
        kb = KeyBindings()

        @kb.add(Keys.Any)
        def _any(event: KeyPressEvent) -> None:
            for kp in event.key_sequence:
                self.screen.key(kp.data)

        for key, name in _KEY_NAMES.items():
            kb.add(key)(self._named(name))

        @kb.add(Keys.ControlL)
        def _repaint(event: KeyPressEvent) -> None:
            self.repaint()

        @kb.add(Keys.ControlZ)
        def _suspend(event: KeyPressEvent) -> None:
            # the terminal is raw (no ISIG): Ctrl-Z is a key; suspend like a shell job would,
            # prompt_toolkit leaves raw mode first and redraws after fg
            self.app.suspend_to_background()
        self.window = Window(_ScreenControl(self.screen), wrap_lines=False)
        self.app: Application[None] = Application(
            layout=Layout(self.window), key_bindings=kb, full_screen=True, style=STYLE,
            input=pt_input, output=pt_output, mouse_support=False,
            color_depth=None if faces.color else ColorDepth.DEPTH_1_BIT)
        self.app.ttimeoutlen = 0.05  # a lone Escape should not feel slow

    def _named(self, name: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            self.screen.key(name)

        return handler

    def repaint(self) -> None:
        """Ctrl-L: clear the terminal and draw the whole screen again (whatever scribbled on
        it is gone)."""
        self.app.renderer.clear()
        self.app.invalidate()

    def resumed(self) -> None:
        """SIGCONT (fg after a stop from outside, e.g. the shell's Ctrl-Z or kill -STOP): the
        shell may have put the terminal back in cooked mode; make it raw again and repaint,
        or the table would neither redraw nor read a key."""
        if self.app.is_running:
            try:
                self.app.input.raw_mode().__enter__()  # left by the app's own raw mode at exit
            except Exception:  # noqa: BLE001 - not a terminal (tests): nothing to restore
                pass
            self.repaint()

    def log_noticed(self, record: logging.LogRecord) -> None:
        """A network warning (any thread): a refused connection is told on the message line,
        at most once a minute, pointing at the log file; the raw line never reaches the screen."""
        if "refused" not in record.getMessage() or self.loop is None:
            return

        def say() -> None:
            now = time.monotonic()
            if now - self._log_said < LOG_NOTICE_EVERY:
                return
            self._log_said = now
            self.noticed(self.screen.tr("log_refused", path=self.log_file or "-"))

        try:
            self.loop.call_soon_threadsafe(say)
        except RuntimeError:  # the loop is closed: the screen is gone
            pass

    def _exit(self) -> None:
        if not self.app.is_done:
            self.app.exit()

    # ---------------------------------------------------------------- Frontend protocol
    def view_changed(self, view: SeatView) -> None:
        self.screen.set_view(view)
        if self.screen.take_bells() and self.bell:
            self.app.output.bell()
        if self.screen.holding() and self.loop is not None:  # redraw when its time is up
            self.loop.call_later(self.screen.hold_left() + 0.05, self.app.invalidate)
        self.app.invalidate()

    def status_changed(self, text: str) -> None:
        self.screen.set_status(text)
        self.app.invalidate()

    def rejected(self, reason: str) -> None:
        self.screen.rejected(reason)
        self.app.invalidate()

    def noticed(self, text: str, topic: str = "") -> None:
        self.screen.noticed(text, topic)
        self.app.invalidate()

    def start_ask(self, question: str, answer: Callable[[bool | str], None], *,
                  block: bool = False) -> None:
        self.screen.start_ask(question, answer, block=block)
        self.app.invalidate()

    def end_ask(self) -> None:
        self.screen.end_ask()
        self.app.invalidate()

    def start_picker(self, picker: TablePicker) -> None:
        self.screen.start_picker(picker)
        self.app.invalidate()

    def picker_changed(self) -> None:
        self.app.invalidate()

    def end_picker(self) -> None:
        self.screen.end_picker()
        self.app.invalidate()

    def node_finished(self, outcome: Outcome[Any]) -> None:
        error = getattr(outcome, "error", None)
        if error is None and self.screen.view is None:
            self._exit()  # e.g. quit from the table list: no table was shown, so no final
            return        # screen either (it would swallow the next key typed at the shell)
        if error is not None and stops_as_one_line(self.screen.view):
            self._exit()  # a wrong code word, a refused joiner: the command says it in one line
            return
        tr = self.screen.tr
        if error is not None:
            from p2p_chinchon.net.status import error_text  # trio's groups unwrapped: the one line

            error = error_text(error)
        text = tr("game_finished") if error is None else tr("node_failed", error=error)
        self.screen.node_done(text)
        self.app.invalidate()

    # ---------------------------------------------------------------- headless inspection
    def snapshot(self, cols: int = 80, rows: int = 24) -> str:
        """The layout drawn by prompt_toolkit onto a ``cols`` x ``rows`` screen, as text (one
        line per row, trailing spaces stripped). For tests and bug reports."""
        screen = Screen()
        with set_app(self.app):
            self.app.layout.container.write_to_screen(
                screen, MouseHandlers(), WritePosition(0, 0, cols, rows), "", False, None)
            screen.draw_all_floats()
        rows_text = []
        for y in range(rows):
            row = screen.data_buffer[y]
            rows_text.append("".join(row[x].char for x in range(cols)).rstrip())
        return "\n".join(rows_text)


async def run_with_ui_async(node_main: Callable[[UiBridge], Awaitable[Any]], *,
                            lang: str | None = None, charset: str = "auto",
                            pt_input: Input | None = None, pt_output: Output | None = None,
                            hint: HintFn | None = None,
                            on_app: Callable[[TableApp], None] | None = None,
                            bell: bool = True, log_file: Path | None = None,
                            deck: str | None = None, evening: EveningFn | None = None) -> Any:
    """:func:`run_with_ui` inside an already running asyncio loop; ``log_file``: where log
    records and stderr go meanwhile (default :func:`p2p_chinchon.ui.quiet.log_path`)."""
    tr = Translator(lang)
    encoding = pt_output.encoding() if pt_output is not None else None
    faces = resolve_faces(None, charset, encoding=encoding, deck=deck)
    bridge = UiBridge()
    ui = TableApp(bridge, tr, faces, hint=hint, pt_input=pt_input, pt_output=pt_output,
                  bell=bell)
    ui.screen.evening = evening
    bridge.attach(ui)
    if on_app is not None:
        on_app(ui)
    with quiet_terminal(log_file, notice=ui.log_noticed) as ui.log_file:
        return await _run(ui, bridge, node_main)


async def _run(ui: TableApp, bridge: UiBridge, node_main: Callable[[UiBridge], Awaitable[Any]]) -> Any:
    loop = ui.loop = asyncio.get_running_loop()
    finished: asyncio.Future[Outcome[Any]] = loop.create_future()

    async def trio_main() -> Any:
        bridge.bind_trio()
        token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            ui.cancel_node = lambda: token.run_sync_soon(scope.cancel)
            return await node_main(bridge)
        return None  # cancelled by a forced quit

    def done(outcome: Outcome[Any]) -> None:
        if not finished.done():
            finished.set_result(outcome)
        ui.node_finished(outcome)

    trio.lowlevel.start_guest_run(trio_main, run_sync_soon_threadsafe=loop.call_soon_threadsafe,
                                  done_callback=done, host_uses_signal_set_wakeup_fd=True)
    cont = getattr(signal, "SIGCONT", None)
    if cont is not None:
        try:
            loop.add_signal_handler(cont, ui.resumed)
        except (RuntimeError, ValueError, NotImplementedError):  # not the main thread
            cont = None
    try:
        await ui.app.run_async()
    finally:
        if cont is not None:
            loop.remove_signal_handler(cont)
        if not finished.done():
            try:
                ui.cancel_node()
            except trio.RunFinishedError:
                pass
            await finished
    return finished.result().unwrap()


def run_with_ui(node_main: Callable[[UiBridge], Awaitable[Any]], *, lang: str | None = None,
                charset: str = "auto", pt_input: Input | None = None, pt_output: Output | None = None,
                hint: HintFn | None = None, bell: bool = True, deck: str | None = None,
                evening: EveningFn | None = None) -> Any:
    """Run ``node_main(bridge)`` under the full-screen table UI and return its result.

    ``lang``: "en"/"es"/"fr" (None: the locale); ``charset``: "auto", "unicode", "mono" or
    "ascii" (see :func:`p2p_chinchon.ui.render.detect_charset`); ``pt_input``/``pt_output``:
    prompt_toolkit input and output (headless tests: ``create_pipe_input()`` and
    ``DummyOutput()``); ``hint(view)``: the hint key's provider (the bot's suggestion, an
    intent or a str); ``bell``: ring on your turn and on a close (``--no-bell`` turns it off);
    ``deck``: "french" or "spanish" faces whatever the table's deck (``--faces``; None: the table's);
    ``evening(fingerprints) -> {fingerprint: (wins, games)}``: the score sheet's "tonight" row.
    When ``node_main`` returns the final screen stays until a key is pressed; an exception
    from ``node_main`` is shown, then re-raised here. Raises ValueError for a bad ``lang`` or
    ``charset``."""
    return asyncio.run(run_with_ui_async(node_main, lang=lang, charset=charset,
                                         pt_input=pt_input, pt_output=pt_output, hint=hint,
                                         bell=bell, deck=deck, evening=evening))
