"""The magic-wormhole mailbox from trio: a code word, a SPAKE2 key, one message each
way. The ``magic-wormhole`` library is Twisted: its reactor runs in one daemon thread of this
process, started on first use; every call is handed to that thread and its Deferred's result
handed back to trio, so trio never blocks on it.

:class:`CodeSession` is one wormhole: the host :meth:`~CodeSession.allocate`\\ s a code word and
the joiner :meth:`~CodeSession.use`\\ s it; then each :meth:`~CodeSession.send`\\ s its hello and
:meth:`~CodeSession.receive`\\ s the other's, and both :meth:`~CodeSession.derive` the lobby
relay key. Errors: :class:`MailboxDown` (no mailbox at the URL), :class:`WrongCode` (the two
codes differ: SPAKE2 found no common key), :class:`MailboxError` for anything else.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import trio

from p2p_chinchon.net.rendezvous import APPID

__all__ = ["CodeSession", "MailboxDown", "MailboxError", "WrongCode"]

log = logging.getLogger(__name__)

WATCH_EVERY = 5.0  # seconds between checks that the mailbox still takes connections, while we wait on it


class MailboxError(Exception):
    """The mailbox exchange failed (message: one sentence for a person)."""


class MailboxDown(MailboxError):
    """No mailbox answered at the URL."""


class WrongCode(MailboxError):
    """The code word typed is not the one the other side holds."""


_lock = threading.Lock()
_reactor: Any = None


def _start_reactor() -> Any:
    """Twisted's reactor, running in a daemon thread (started once per process)."""
    global _reactor
    with _lock:
        if _reactor is None:
            from twisted.internet import reactor as installed

            # the module stands for the installed reactor (twisted types it by its interfaces
            # only, "always slightly inaccurate" by its own doc): used as the object it is
            reactor: Any = installed
            threading.Thread(target=reactor.run, kwargs={"installSignalHandlers": False},
                             name="wormhole-reactor", daemon=True).start()
            _reactor = reactor
    return _reactor


def _translate(exc: BaseException, url: str) -> MailboxError:
    from wormhole import errors

    if isinstance(exc, errors.ServerConnectionError):
        reason = getattr(exc, "reason", None)
        value = getattr(reason, "value", reason)
        why = str(value or exc).rstrip(".").rsplit(": ", 1)[-1]  # Twisted's long form
        if type(value).__name__ == "DNSLookupError":  # Twisted's text is then the bare name
            why = f"the name {why} does not resolve: no internet here, or a mistyped --mailbox"
        return MailboxDown(f"cannot reach the mailbox at {url} ({why})")
    if isinstance(exc, errors.WrongPasswordError):
        return WrongCode("wrong code word: it does not match the host's (check it and try again)")
    if isinstance(exc, errors.LonelyError):
        return MailboxError("the other side left before the code word was used")
    if isinstance(exc, errors.WelcomeError):
        return MailboxError(f"the mailbox at {url} refuses us: {exc}")
    return MailboxError(f"the mailbox exchange failed: {type(exc).__name__}: {exc}")


class CodeSession:
    """One wormhole on the mailbox at ``url`` under :data:`.rendezvous.APPID`. Create it with
    ``await CodeSession.open(url)``; always ``await session.close()``."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._w: Any = None
        self._down = False  # :meth:`watch` found the mailbox gone: closing does not wait for it

    @classmethod
    async def open(cls, url: str) -> CodeSession:
        self = cls(url)

        def create() -> Any:
            import wormhole

            return wormhole.create(APPID, url, _start_reactor())

        self._w = await self._call(create)
        return self

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the reactor thread; its value (or its Deferred's result) here.
        Raises :class:`MailboxError`. Cancelling abandons the result (close the session)."""
        from twisted.internet import defer

        reactor = _start_reactor()
        token = trio.lowlevel.current_trio_token()
        done = trio.Event()
        box: dict[str, Any] = {}

        def settle(key: str, value: Any) -> None:
            box[key] = value
            done.set()

        def back(key: str, value: Any) -> None:
            try:
                token.run_sync_soon(settle, key, value)
            except trio.RunFinishedError:
                pass  # trio is gone: nobody waits for it

        def start() -> None:
            d = defer.maybeDeferred(fn, *args)
            d.addCallbacks(lambda v: back("ok", v), lambda f: back("err", f.value))

        reactor.callFromThread(start)
        await done.wait()
        if "err" in box:
            raise _translate(box["err"], self.url)
        return box["ok"]

    async def allocate(self) -> str:
        """A fresh code word (``7-crossover-clockwork``): a nameplate the mailbox gives us and
        two words."""
        await self._call(self._w.allocate_code, 2)
        return str(await self._call(self._w.get_code))

    async def use(self, code: str) -> None:
        """Use the code word a person typed (checked by :func:`.rendezvous.check_code`)."""
        await self._call(self._w.set_code, code)

    async def send(self, data: bytes) -> None:
        """Queue ``data`` for the other side (sent, encrypted, once the key is agreed)."""
        await self._call(self._w.send_message, data)

    async def receive(self, watch: float = WATCH_EVERY) -> bytes:
        """The other side's message. Raises :class:`WrongCode` when the codes differ, and
        :class:`MailboxDown` as soon as the mailbox stops taking connections (checked every
        ``watch`` s; the wormhole itself only reconnects quietly, so a wait would never end)."""
        got: list[bytes] = []
        try:
            async with trio.open_nursery() as nursery:
                async def message() -> None:
                    got.append(bytes(await self._call(self._w.get_message)))
                    nursery.cancel_scope.cancel()

                nursery.start_soon(message)
                nursery.start_soon(self.watch, watch)
        except BaseExceptionGroup as group:  # the one error (or cancellation) of either task
            raise group.exceptions[0] from None
        return got[0]

    async def watch(self, every: float = WATCH_EVERY) -> None:
        """Return never; raise :class:`MailboxDown` once a TCP connection to the mailbox's host
        and port (of its ``ws://``/``wss://`` URL) fails or gets no answer in ``every`` s."""
        from urllib.parse import urlsplit

        place = urlsplit(self.url)
        host = place.hostname or ""
        port = place.port or (443 if place.scheme == "wss" else 80)
        while True:
            await trio.sleep(every)
            why = None
            try:
                with trio.fail_after(every):
                    stream = await trio.open_tcp_stream(host, port)
                await trio.aclose_forcefully(stream)
            except trio.TooSlowError:
                why = "no answer"
            except OSError as exc:
                why = exc.strerror or str(exc)
            if why is not None:
                self._down = True
                raise MailboxDown(f"cannot reach the mailbox at {self.url} ({why})")

    async def derive(self, purpose: str) -> bytes:
        """32 bytes both sides derive from the agreed key for ``purpose`` (after a message)."""
        return bytes(await self._call(self._w.derive_key, purpose, 32))

    async def close(self) -> None:
        """Release the nameplate and the mailbox; never raises (the wormhole reports its
        earlier error again on close: already told)."""
        if self._w is None:
            return
        w, self._w = self._w, None
        with trio.move_on_after(0.5 if self._down else 5) as scope:
            scope.shield = True
            try:
                await self._call(w.close)
            except MailboxError:
                pass
