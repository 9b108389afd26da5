"""The browser table as the node's front end: views, status and questions to the page, intents back.

:class:`WebFrontend` is a :class:`~p2p_chinchon.ui.bridge.Frontend` beside the full screen and line
mode. It keeps the same front-end state the terminal keeps (a
:class:`~p2p_chinchon.ui.screen.TableScreen`: the hand's order and pick, the pile, the showdown held,
the question, the close and leave confirmations, the hint) and publishes it to every connected tab
through a :class:`~.server.Hub` as the page state of :mod:`.model`. A page message
(docs/web.md "Page -> server") becomes what the matching key does in the terminal; a malformed one
is answered ``rejected`` and changes nothing. :func:`run_with_web` runs a node with it: the server
on loopback, the node, and once the node is done the page told how it ended.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

from .. import view as V
from ..i18n import Translator
from ..ui.bridge import UiBridge, leave_on_interrupt
from ..ui.render import COURTS, Faces
from ..ui.screen import ASK, CONFIRM_QUIT, HOLD, PICKER, RECALL, EveningFn, HintFn, TableScreen
from .model import Extras, card_id, page_state
from .server import Hub, hub_routes, make_app, serve

if TYPE_CHECKING:
    from ..engine import Card
    from ..ui.bridge import ToNode
    from ..ui.lobby import TablePicker

WEB_LINGER = 30.0  # seconds the page stays served after the node is done, to show how it ended


class PageError(ValueError):
    """A page message that cannot be used (its reason is sent back as ``rejected``)."""


def _rejected(reason: str) -> dict[str, Any]:
    return {"type": "rejected", "reason": reason}


class WebFrontend:
    """The node's front end for the browser page (module doc). All calls come from trio.

    ``tr``/``faces``/``hint`` as for the terminal's screen; ``clock``: seconds, monotonic (the
    showdown's hold)."""

    def __init__(self, bridge: UiBridge, tr: Translator, faces: Faces, *, hint: HintFn | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bridge = bridge
        self.screen = TableScreen(tr, faces, send=self._send, hint=hint, clock=clock)
        self.extras = Extras()
        self.hub = Hub(self.state, self.handle)
        self._question_key: object = None
        self._hold_changed = trio.Event()

    # ------------------------------------------------------------ the page state
    def state(self) -> dict[str, Any]:
        """STATE of docs/web.md now."""
        self.screen.holding()  # a hold whose time is up is over
        self._sync_question()
        return page_state(self.screen, self.extras)

    def _sync_question(self) -> None:
        """A new question (or the leave confirmation) gets a new id; an answer must name it."""
        scr = self.screen
        key = (scr.mode, id(scr._ask_answer), scr.ask_question) if scr.mode in (ASK, CONFIRM_QUIT) else None
        if key != self._question_key:
            self._question_key = key
            if key is not None:
                self.extras.question_id += 1

    def _changed(self) -> None:
        self._sync_question()
        self.hub.changed()

    def _send(self, intent: ToNode) -> None:
        self.bridge.submit(intent)

    # ------------------------------------------------------------ Frontend protocol
    def view_changed(self, view: V.SeatView) -> None:
        self.screen.set_view(view)
        self.screen.take_bells()  # the page rings its own way: from the state
        self.extras.hint = None
        if self.screen.mode == HOLD:
            self._hold_changed.set()
        self._changed()

    def status_changed(self, text: str) -> None:
        self.screen.set_status(text)
        self.extras.status = self.bridge.node_status
        self._changed()

    def rejected(self, reason: str) -> None:
        self.screen.rejected(reason)
        self._changed()

    def noticed(self, text: str, topic: str = "") -> None:
        key, fields = self.bridge.said
        if key == "code_word":
            self.extras.code, self.extras.code_met = (str(fields.get("code")), str(fields.get("join"))), None
        elif key == "code_met":
            self.extras.code_met = str(fields.get("code"))
        elif key == "code_mailbox_down":  # no code word holds while the mailbox is down
            self.extras.code, self.extras.code_met = None, None
        self.screen.noticed(text, topic)
        self._changed()

    def start_ask(self, question: str, answer: Callable[[bool | str], None], *, block: bool = False) -> None:
        self.screen.start_ask(question, answer, block=block)
        self._changed()

    def end_ask(self) -> None:
        self.screen.end_ask()
        self._changed()

    def start_picker(self, picker: TablePicker) -> None:
        self.screen.start_picker(picker)
        self._changed()

    def picker_changed(self) -> None:
        self._changed()

    def end_picker(self) -> None:
        self.screen.end_picker()
        self._changed()

    def node_done(self, how: str, *, transcript: str | None = None, exit_code: int = 0,
                  error: bool = False) -> None:
        """The node ended: the page is told ``how`` (one line), the transcript's path and the
        command's exit code."""
        self.extras.ended = {"how": how, "transcript": transcript, "exit_code": exit_code, "error": error}
        self.screen.node_done(how)
        self._changed()

    # ------------------------------------------------------------ page -> node
    def handle(self, obj: Any) -> dict[str, Any] | None:
        """One page message (parsed JSON) -> what the terminal's key does; the reply for that
        tab (``rejected``) or None. Never raises for bad input."""
        try:
            self._handle(obj)
        except PageError as exc:
            return _rejected(str(exc))
        finally:
            self._changed()
        return None

    def _handle(self, obj: Any) -> None:
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise PageError("a message is a JSON object with a type")
        kind = obj["type"]
        scr = self.screen
        if kind == "intent":
            self._intent(obj)
        elif kind == "answer":
            self._answer(obj)
        elif kind == "pick":
            scr.picked = self._card(obj.get("card"))
        elif kind == "order":
            self._order(obj.get("cards"))
        elif kind == "regroup":
            scr.order = None
        elif kind == "hint":
            if scr.view is None:
                raise PageError("no table yet")
            scr._hint()
            if "hint" in scr.message_style:
                self.extras.hint = (scr.message, scr.picked)
        elif kind == "pick_table":
            self._pick_table(obj.get("index"))
        else:
            raise PageError(f"unknown message type {kind[:40]!r}")

    def _view(self) -> V.SeatView:
        if self.screen.view is None:
            raise PageError("no table yet")
        return self.screen.view

    def _card(self, cid: Any) -> Card:
        view = self._view()
        if not isinstance(cid, str):
            raise PageError("a card is named by its id")
        for card in view.hand:
            if card_id(card) == cid:
                return card  # type: ignore[no-any-return]  # the view's hand holds engine Cards
        raise PageError(f"no card {cid[:12]!r} in the hand")

    def _intent(self, obj: dict[str, Any]) -> None:
        scr = self.screen
        what = obj.get("intent")
        if what == "leave":
            if scr.leave_sent:
                raise PageError("already leaving")
            scr.mode = scr._after_showdown() if scr.mode in (HOLD, RECALL) else scr.mode
            scr._key_normal("q")  # the confirmation, as q asks it
            return
        if what == "showdown_seen":
            if scr.mode in (HOLD, RECALL):
                scr.key("escape")  # any key puts it away (HOLD: the turn clock starts now)
            return
        view = self._view()
        if scr.mode == HOLD and what in ("draw", "discard", "close", "agree", "reenter"):
            scr.key("escape")  # a move puts the held showdown away first (its turn clock starts now)
        if what == "draw":
            source = obj.get("source")
            if source not in ("stock", "discard"):
                raise PageError("draw from the stock or the discard")
            scr._draw(source)
        elif what in ("discard", "close"):
            scr.picked = self._card(obj.get("card"))
            scr._discard(close=what == "close")
        elif what == "agree":
            if view.phase != V.LOBBY:
                raise PageError("not in the lobby")
            scr._key_normal("a")
        elif what == "reenter":
            accept = obj.get("accept")
            if not isinstance(accept, bool):
                raise PageError("reenter needs accept: true or false")
            if view.reentry_offer and scr.reentry_answered != view.hand_no:
                scr.reentry_answered = view.hand_no
                scr._send(V.Reenter(accept))
            else:
                scr._say(scr.tr("not_offered_reentry"), "class:error")
        else:
            raise PageError(f"unknown intent {str(what)[:40]!r}")

    def _answer(self, obj: dict[str, Any]) -> None:
        scr = self.screen
        value = obj.get("value")
        if scr.mode not in (ASK, CONFIRM_QUIT) or obj.get("id") != self.extras.question_id:
            raise PageError("that question is no longer asked")
        if value is True:
            scr.key("y")
        elif value is False:
            scr.key("n")
        elif value == "block" and scr.mode == ASK and scr._ask_block:
            scr.key("b")
        else:
            raise PageError("an answer is true, false, or block where the question allows it")

    def _order(self, ids: Any) -> None:
        view = self._view()
        if not isinstance(ids, list) or len(ids) != len(view.hand):
            raise PageError("order names every card of the hand once")
        rest = list(view.hand)
        cards = []
        for cid in ids:
            card = next((c for c in rest if card_id(c) == cid), None)
            if card is None:
                raise PageError("order names every card of the hand once")
            rest.remove(card)
            cards.append(card)
        self.screen.order = cards

    def _pick_table(self, index: Any) -> None:
        scr = self.screen
        picker = scr.picker
        if scr.mode != PICKER or picker is None:
            raise PageError("no table to choose now")
        if index is None:
            picker.choose(None)
        elif isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(picker.tables):
            picker.choose(picker.tables[index])
        else:
            raise PageError("no such table")

    # ------------------------------------------------------------ tasks
    async def watch_hold(self) -> None:
        """Run in a nursery: a held showdown leaves the page when its time is up (the state
        changes then, with no view from the node)."""
        while True:
            left = self.screen.hold_left()
            if left > 0:
                await trio.sleep(left + 0.05)
                self._changed()
                continue
            self._hold_changed = trio.Event()
            await self._hold_changed.wait()

    def interrupt(self) -> bool:
        """Ctrl-C on the terminal: leave the table, as the confirmed ``q`` (True); False when
        there is no table to leave (the caller stops at once)."""
        scr = self.screen
        if scr.picker is not None:
            scr.picker.choose(None)
            return True
        if scr.mode == ASK and scr._ask_answer is not None:
            scr.key("n")
            self._changed()
            return True
        if scr.view is None or scr.view.me is None or scr.leave_sent:
            return False
        scr.leave_sent = True
        scr._say(scr.tr("leaving"))
        self._send(V.Leave())
        self._changed()
        return True


Ending = Callable[[Any], tuple[str, str | None, int]]  # a node's result -> (how, transcript, exit code)


def describe_end(result: Any, tr: Translator) -> tuple[str, str | None, int]:
    """How a node's result (``NodeResult``-like: ``fault``, ``winner``, ``names``, ``seat``,
    ``transcript``, ``error``) ended, in one line; its transcript; exit code 0 (the command
    computes the real one, see :func:`run_with_web`'s ``ending``)."""
    from ..i18n import own_stop_text

    transcript = getattr(result, "transcript", None)
    transcript = str(transcript) if transcript else None
    if result is None:
        return tr("game_finished"), None, 0
    if getattr(result, "error", None):
        return tr("node_failed", error=result.error), transcript, 1
    fault = getattr(result, "fault", None)
    names = list(getattr(result, "names", None) or [])
    own = own_stop_text(fault, getattr(result, "seat", None), tr)
    if own is not None:
        return own, transcript, 0
    if fault is not None:
        return tr("stopped", reason=fault.reason), transcript, 1
    winner = getattr(result, "winner", None)
    if winner is not None and winner < len(names):
        return (tr("you_win") if winner == getattr(result, "seat", None)
                else tr("winner", name=names[winner])), transcript, 0
    return tr("game_finished"), transcript, 0


async def run_with_web_async(node_main: Callable[[UiBridge], Awaitable[Any]], *, lang: str | None = None,
                             hint: HintFn | None = None, deck: str | None = None,
                             evening: EveningFn | None = None, port: int = 0, open_browser: bool = True,
                             linger: float = WEB_LINGER, announce: Callable[[str], None] | None = None,
                             ending: Ending | None = None, on_front: Callable[[WebFrontend], None] | None = None,
                             task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> Any:
    """Run ``node_main(bridge)`` with the browser page as its front end, in this trio run.

    ``lang``, ``hint``, ``deck`` (``--faces``), ``evening``: as for the terminal's screen; ``port``
    (0: free), ``open_browser``: see :func:`.server.serve`; ``announce(line)``: where the address
    and the linger are said (default: stderr); ``ending(result)``: ``(how, transcript, exit
    code)`` for the page (default :func:`describe_end`). Once the node is done the page is
    served ``linger`` more seconds, or until every open tab was sent the end (at least one).
    ``task_status.started(Served)`` once listening. Ctrl-C leaves the table (asks nothing: the
    terminal's Ctrl-C is an explicit act), a second one stops at once. Returns what
    ``node_main`` returns; re-raises what it raises, after the page was told."""
    tr = Translator(lang)
    say = announce or (lambda line: print(line, file=sys.stderr, flush=True))
    faces = Faces(deck or "french", True, True, COURTS.get(tr.lang, "JQK"), fixed=deck is not None)
    bridge = UiBridge()
    front = WebFrontend(bridge, tr, faces, hint=hint)
    front.screen.evening = evening
    bridge.attach(front)
    bridge.bind_trio()
    if on_front is not None:
        on_front(front)

    def app(p: int, token: str) -> Any:
        return make_app(token=token, port=p, routes=hub_routes(front.hub))

    async with trio.open_nursery() as nursery:
        served = await nursery.start(partial(serve, app, port=port, open_browser=open_browser,
                                             announce=lambda url: say(tr("web_served", url=url))))
        task_status.started(served)
        nursery.start_soon(front.watch_hold)
        keys = trio.CancelScope()  # Ctrl-C leaves the table while the node runs

        async def ctrl_c() -> None:
            with keys:
                await leave_on_interrupt(front.interrupt)

        nursery.start_soon(ctrl_c)
        try:
            result = await node_main(bridge)
        except Exception as exc:
            from ..net.status import error_text

            keys.cancel()
            front.node_done(tr("node_failed", error=error_text(exc)), exit_code=1, error=True)
            await _linger(front, linger, say, tr)
            raise
        keys.cancel()
        how, transcript, code = (ending or (lambda r: describe_end(r, tr)))(result)
        front.node_done(how, transcript=transcript, exit_code=code, error=bool(getattr(result, "error", None)))
        await _linger(front, linger, say, tr)
        nursery.cancel_scope.cancel()
    return result


async def _linger(front: WebFrontend, linger: float, say: Callable[[str], None], tr: Translator) -> None:
    """Once the node is done: when a page was ever open, serve on until a connected tab (one
    at least: a closed one may be reloaded) was sent the last state, at most ``linger`` seconds;
    Ctrl-C ends it at once. With no page ever open the terminal has said it all."""
    if linger <= 0 or not front.hub.ever_connected:
        return
    say(tr("web_lingers", s=f"{linger:g}"))
    with trio.move_on_after(linger) as scope:
        async with trio.open_nursery() as nursery:

            async def ctrl_c() -> None:
                try:
                    receiver = trio.open_signal_receiver(signal.SIGINT)
                except (RuntimeError, ValueError):  # not the main thread (tests): no Ctrl-C to hear
                    return
                with receiver as signals:
                    async for _ in signals:
                        scope.cancel()

            nursery.start_soon(ctrl_c)
            await front.hub.delivered()
            nursery.cancel_scope.cancel()


def run_with_web(node_main: Callable[[UiBridge], Awaitable[Any]], **kw: Any) -> Any:
    """:func:`run_with_web_async` under ``trio.run``."""
    return trio.run(partial(run_with_web_async, node_main, **kw))
