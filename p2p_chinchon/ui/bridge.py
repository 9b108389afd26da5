"""The meeting point of the node driver (trio) and a front end (full screen or line mode).

The node owns a :class:`UiBridge` for the whole session. Trio side (call from trio code only):
:meth:`UiBridge.update`, :meth:`UiBridge.set_status`, :meth:`UiBridge.reject`,
``await`` :meth:`UiBridge.ask`, ``await`` :meth:`UiBridge.pick_table`, and ``receive()`` on
:attr:`UiBridge.intents`. Front-end side: :meth:`UiBridge.submit` (any thread, any loop) hands an
intent to trio through ``TrioToken.run_sync_soon`` (DESIGN.md "Net": prompt_toolkit runs on the
asyncio host loop while trio runs in guest mode, so key handlers are outside trio's context).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ..view import Intent, SeatView, ShowdownSeen

if TYPE_CHECKING:
    from .lobby import TablePicker

BLOCK = "block"  # an answer to ask(block=True): no, and no to everyone else from there
# what a front end hands the node: a move (an Intent), or ShowdownSeen (local to the seat, never a move)
ToNode = Intent | ShowdownSeen
# about the one code word on show (a new code makes the last one's news stale); "someone typed a
# wrong code word" is news of its own and stands beside the next code
CODE_NOTICES = frozenset({"code_word", "code_met", "code_mailbox_down"})


def notice_topic(key: str) -> str:
    """The topic of the node's notice ``key`` (an i18n key), "" for none: a front end shows
    one notice per topic at a time (:data:`CODE_NOTICES`: the code word on show)."""
    return "code" if key in CODE_NOTICES else ""


class BridgeError(RuntimeError):
    """The bridge was used before a front end and a trio run were attached to it."""


class Frontend(Protocol):
    """What a front end implements (:class:`p2p_chinchon.ui.app.TableApp`,
    :class:`p2p_chinchon.ui.lines.LineFrontend`). All calls come from the trio side."""

    def view_changed(self, view: SeatView) -> None: ...

    def status_changed(self, text: str) -> None: ...

    def rejected(self, reason: str) -> None: ...

    def noticed(self, text: str, topic: str = "") -> None: ...

    def start_ask(self, question: str, answer: Callable[[bool | str], None], *,
                  block: bool = False) -> None: ...

    def end_ask(self) -> None: ...

    def start_picker(self, picker: TablePicker) -> None: ...

    def picker_changed(self) -> None: ...

    def end_picker(self) -> None: ...


class UiBridge:
    """Views flow to the front end; intents flow to the node.

    ``intents`` is an unbounded trio ``MemoryReceiveChannel`` of :data:`p2p_chinchon.view.Intent`
    values (and :class:`~p2p_chinchon.view.ShowdownSeen`: :data:`ToNode`), in the order the person gave them. ``view`` and ``status`` hold the latest values.
    """

    def __init__(self) -> None:
        self._send, self.intents = trio.open_memory_channel[ToNode](math.inf)
        self.view: SeatView | None = None
        self.status: str = ""
        # the node's last NodeStatus (net/status.py: presence per seat, the wait and its clock),
        # and the catalogue key and fields of the last notice: for a front end that shows them
        # richer than a line (the browser page); set before status_changed / noticed are called
        self.node_status: object | None = None
        self.said: tuple[str, dict[str, Any]] = ("", {})
        self._frontend: Frontend | None = None
        self._token: trio.lowlevel.TrioToken | None = None

    # -------------------------------------------------------------- wiring
    def attach(self, frontend: Frontend) -> None:
        self._frontend = frontend

    def bind_trio(self) -> None:
        """Remember the running trio loop (call from inside it, before the node starts)."""
        self._token = trio.lowlevel.current_trio_token()

    # -------------------------------------------------------------- trio side
    def update(self, view: SeatView) -> None:
        """A new snapshot for this seat; the front end redraws. Cheap; call on every change.

        Raises TypeError when ``view`` is not a :class:`SeatView`."""
        if not isinstance(view, SeatView):
            raise TypeError(f"update() needs a SeatView, got {type(view).__name__}")
        self.view = view
        if self._frontend is not None:
            self._frontend.view_changed(view)

    def set_status(self, text: str) -> None:
        """A one-line progress or status message ("" clears it)."""
        self.status = str(text)
        if self._frontend is not None:
            self._frontend.status_changed(self.status)

    def notify(self, text: str, key: str = "", fields: dict[str, Any] | None = None) -> None:
        """A one-line notice that must stay readable (e.g. "time is up: the bot plays for
        you"): unlike the status line, the next status does not replace it. ``key``/``fields``:
        the same notice as an i18n catalogue key (kept in :attr:`said`); a notice whose key has a
        topic (:func:`notice_topic`) replaces the earlier ones of the same topic."""
        self.said = (key, dict(fields or {}))
        if self._frontend is None:
            return
        topic = notice_topic(key)
        if topic:
            self._frontend.noticed(str(text), topic)
        else:  # no topic argument: a front end may predate topics
            self._frontend.noticed(str(text))

    def reject(self, reason: str) -> None:
        """Tell the person the table refused their last intent (``reason``: one sentence)."""
        if self._frontend is not None:
            self._frontend.rejected(str(reason))

    async def ask(self, question: str, *, block: bool = False) -> bool | str:
        """Ask a yes/no question and wait for the answer (Escape or end of input: no). With
        ``block`` the person may also answer :data:`BLOCK` (key ``b``: no, and no to everyone
        else from the same place). Cancelling the call withdraws the question."""
        frontend = self._need_frontend()
        # an asker already cancelled never shows its question: the withdrawal's own
        # checkpoints would let the input reader answer it with a line meant for the next one
        await trio.lowlevel.checkpoint_if_cancelled()
        send, recv = trio.open_memory_channel[bool | str](1)
        frontend.start_ask(question, self._from_ui(send.send_nowait), block=block)
        try:
            async with recv:
                return await recv.receive()
        except BaseException:  # cancelled (the asker gave up): the question leaves the screen
            frontend.end_ask()
            raise

    async def pick_table(self, tables: AsyncIterator[list[Any]]) -> Any:
        """Show the tables heard on the LAN live and return the one chosen, or None on quit.

        ``tables`` yields the whole current list (objects with ``name, host, port, preset,
        seats_taken, max_seats, fingerprint, version``) each time it changes; when it ends the
        last list stays on screen until the person chooses."""
        from .lobby import TablePicker

        frontend = self._need_frontend()
        send, recv = trio.open_memory_channel[Any](1)
        picker = TablePicker(choose=self._from_ui(send.send_nowait))
        frontend.start_picker(picker)
        try:
            async with trio.open_nursery() as nursery:

                async def feed() -> None:
                    async for found in tables:
                        picker.set_tables(found)
                        frontend.picker_changed()

                nursery.start_soon(feed)
                choice = await recv.receive()
                nursery.cancel_scope.cancel()
        finally:
            frontend.end_picker()
        return choice

    # -------------------------------------------------------------- front-end side
    def submit(self, intent: ToNode) -> None:
        """Queue an intent for the node. Safe from any thread or from the asyncio host loop.

        Raises BridgeError before :meth:`bind_trio`; an intent submitted after the trio run
        ended is dropped (the node is gone)."""
        self._from_ui(self._send_nowait)(intent)

    def _send_nowait(self, intent: ToNode) -> None:
        self._send.send_nowait(intent)

    def _from_ui(self, fn: Callable[[Any], None]) -> Callable[[Any], None]:
        def deliver(value: Any) -> None:
            # Runs inside trio: an exception here would crash the whole run, so a second
            # answer to a question already answered, or a closed channel, is dropped.
            try:
                fn(value)
            except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
                pass

        def call(value: Any) -> None:
            if self._token is None:
                raise BridgeError("the bridge is not bound to a trio run (bind_trio)")
            try:
                self._token.run_sync_soon(deliver, value)
            except trio.RunFinishedError:
                pass

        return call

    def _need_frontend(self) -> Frontend:
        if self._frontend is None or self._token is None:
            raise BridgeError("no front end attached to this bridge")
        return self._frontend


async def leave_on_interrupt(interrupt: Callable[[], bool]) -> None:
    """Run in a nursery beside a front end with no keys of its own for Ctrl-C (line mode, the
    browser page): the first Ctrl-C calls ``interrupt()`` (leave the table: True), a second one,
    or one when ``interrupt()`` returns False (no table to leave), raises KeyboardInterrupt."""
    import signal

    try:
        receiver = trio.open_signal_receiver(signal.SIGINT)
    except (RuntimeError, ValueError):  # not the main thread (tests): nothing to catch
        return
    handled = False
    with receiver as signals:
        async for _ in signals:
            if handled or not interrupt():
                raise KeyboardInterrupt
            handled = True
