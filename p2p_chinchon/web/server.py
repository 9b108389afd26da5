"""The seat's web server on loopback: the security checks, the static page and the WebSocket hub.

:func:`serve` binds ``127.0.0.1`` only (a free port, or the one asked for), makes a secret token
(``secrets.token_urlsafe(32)``), announces ``http://127.0.0.1:PORT/?token=TOKEN`` and serves the
application :func:`make_app` builds with hypercorn's trio worker, in the caller's trio run, until
cancelled. :class:`Guard` wraps every request: the Host header must name this loopback address
(DNS rebinding), a page needs the token once (it becomes an HttpOnly, SameSite=Strict cookie and the
browser is sent to ``/``, so the token leaves the address bar) and the cookie after; a WebSocket
needs the cookie and an Origin of this address. Every response carries a content security policy
with nothing from elsewhere and no inline script. :class:`Hub` is the one live connection per tab:
the whole page state on connect and on every change (coalesced), one-off messages, and the page's
messages handed to a callback. The contract with the page is docs/web.md.
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import socket
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

STATIC = Path(__file__).parent / "static"
LOOPBACK = "127.0.0.1"
MAX_FRAME = 4096  # bytes of one page message; a longer one is answered "rejected"
MAX_WS_MESSAGE = 65536  # bytes: hypercorn closes the connection (1009) on a longer message
POLICY_VIOLATION = 1008  # WebSocket close code for a refused connection
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
log = logging.getLogger("p2p_chinchon.web")


def cookie_name(port: int) -> str:
    """The session cookie's name: per port, since a browser keeps cookies per host, not per
    port (two seats on one laptop must not overwrite each other's)."""
    return f"p2pc-{port}"


def _same(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


class Guard:
    """ASGI middleware: the checks every request passes before ``app`` sees it (module doc).

    ``token``: the secret; ``port``: the port the server listens on (the Host and Origin it
    accepts name it). Refusals: HTTP 403 with a one-line body; a WebSocket is closed with code
    1008 before it is accepted (hypercorn answers the upgrade with 403)."""

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.cookie = cookie_name(port)
        self.hosts = {f"{LOOPBACK}:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if headers.get("host") not in self.hosts:
            await self._refuse(kind, send, "wrong host")
            return
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie header is no cookie
            jar = SimpleCookie()
        morsel = jar.get(self.cookie)
        has_cookie = morsel is not None and _same(morsel.value, self.token)
        if kind == "websocket":
            if headers.get("origin") not in self.origins or not has_cookie:
                await self._refuse(kind, send, "origin or cookie")
                return
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if "token" in query:
            if not _same(query["token"][0], self.token):
                await self._refuse(kind, send, "wrong token")
                return
            cookie = f"{self.cookie}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            await _respond(send, 303, b"", [(b"location", scope.get("path", "/").encode() or b"/"),
                                             (b"set-cookie", cookie.encode())])
            return
        if not has_cookie:
            await self._refuse(kind, send, "no token")
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                own = {k for k, _ in SECURITY_HEADERS}
                message["headers"] = [(k, v) for k, v in message.get("headers", []) if k.lower() not in own]
                message["headers"] += list(SECURITY_HEADERS)
            await send(message)

        await self.app(scope, receive, secured)

    async def _refuse(self, kind: str, send: Send, why: str) -> None:
        log.info("refused a %s request: %s", kind, why)
        if kind == "websocket":
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})
            return
        await _respond(send, 403, b"403 Forbidden: open the address with its token the table printed\n",
                       [(b"content-type", b"text/plain; charset=utf-8")])


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, *SECURITY_HEADERS, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def make_app(*, token: str, port: int, routes: Sequence[BaseRoute] = (), index: str = "index.html",
             static: Path = STATIC) -> ASGIApp:
    """The whole application behind :class:`Guard`: ``/`` serves ``static/index`` (an HTML
    file's name), ``/static/NAME`` the files of ``static``, then ``routes`` (e.g. the hub's
    ``WebSocketRoute("/ws", hub.endpoint)``). ``token``/``port`` as for :class:`Guard`."""

    async def page(request: Request) -> Response:
        return FileResponse(static / index, media_type="text/html; charset=utf-8")

    app = Starlette(routes=[Route("/", page), *routes,
                            Mount("/static", app=StaticFiles(directory=static, check_dir=False), name="static")])
    return Guard(app, token=token, port=port)


class Hub:
    """The live connections of one page (several tabs at once).

    ``state()`` builds the page state (a JSON-able dict), called at most once per change;
    ``on_message(obj)`` handles one page message (the parsed JSON) and may return a reply for
    that connection only (e.g. ``{"type": "rejected", ...}``); it must not raise, but if it does
    the connection gets ``rejected`` and lives on. :meth:`changed` marks the state new: every
    connection sends it once it can (changes coalesce). :meth:`tell` sends a one-off message to
    every connection, before the next state."""

    def __init__(self, state: Callable[[], dict[str, Any]],
                 on_message: Callable[[Any], dict[str, Any] | None]) -> None:
        self.state = state
        self.on_message = on_message
        self.version = 0
        self._cache: tuple[int, str] = (-1, "")
        self._wake = trio.Event()
        self._queues: list[deque[str]] = []
        self._sent: dict[int, int] = {}  # id(queue) -> the version that connection sent last
        self._progress = trio.Event()
        self.ever_connected = False  # a page connected at least once

    @property
    def connections(self) -> int:
        """How many pages are connected now."""
        return len(self._queues)

    def changed(self) -> None:
        self.version += 1
        self._ping()

    def tell(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False)
        for q in self._queues:
            q.append(text)
        self._ping()

    async def delivered(self) -> None:
        """Return once at least one page is connected and every connected page was sent the
        current state."""
        while not (self._sent and all(v == self.version for v in self._sent.values())):
            await self._progress.wait()

    def _sent_version(self, queue: deque[str], version: int) -> None:
        self._sent[id(queue)] = version
        self._progress.set()
        self._progress = trio.Event()

    def _ping(self) -> None:
        self._wake.set()
        self._wake = trio.Event()

    def state_text(self) -> str:
        """The current state message, as sent (built once per version)."""
        if self._cache[0] != self.version:
            self._cache = (self.version, json.dumps({"type": "state", "state": self.state()}, ensure_ascii=False))
        return self._cache[1]

    def handle(self, text: str | None) -> dict[str, Any] | None:
        """One page frame (None: a binary frame) -> the reply for that connection, if any."""
        if text is None:
            return {"type": "rejected", "reason": "binary frames are not understood"}
        if len(text.encode()) > MAX_FRAME:
            return {"type": "rejected", "reason": f"message over {MAX_FRAME} bytes"}
        try:
            obj = json.loads(text)
        except ValueError:
            return {"type": "rejected", "reason": "not JSON"}
        try:
            return self.on_message(obj)
        except Exception:  # a page's message never takes the node down
            log.exception("page message %r", text[:200])
            return {"type": "rejected", "reason": "message not understood"}

    async def endpoint(self, websocket: WebSocket) -> None:
        """The ``/ws`` route: accept, send the state at once, then every change."""
        await websocket.accept()
        queue: deque[str] = deque()
        self._queues.append(queue)
        self._sent[id(queue)] = -1
        self.ever_connected = True
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._writer, websocket, queue)
                while True:
                    message = await websocket.receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    reply = self.handle(message.get("text"))
                    if reply is not None:
                        queue.append(json.dumps(reply, ensure_ascii=False))
                        self._ping()
                nursery.cancel_scope.cancel()
        except (WebSocketDisconnect, RuntimeError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the tab went away: the table plays on
        finally:
            self._queues.remove(queue)
            self._sent.pop(id(queue), None)
            self._progress.set()
            self._progress = trio.Event()

    async def _writer(self, websocket: WebSocket, queue: deque[str]) -> None:
        sent = -1
        while True:
            wake = self._wake
            while queue:
                await websocket.send_text(queue.popleft())
            if self.version != sent:
                sent = self.version
                await websocket.send_text(self.state_text())
                self._sent_version(queue, sent)
                continue
            await wake.wait()


@dataclass(frozen=True)
class Served:
    """Where :func:`serve` listens: ``url`` (with the token), ``port``, ``token``."""

    url: str
    port: int
    token: str


def open_loopback(port: int = 0) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 only (``port`` 0: a free one). Raises OSError
    (e.g. the port is taken)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOOPBACK, port))
        sock.listen(100)
    except OSError:
        sock.close()
        raise
    return sock


async def serve(app_factory: Callable[[int, str], ASGIApp], *, port: int = 0, open_browser: bool = False,
                announce: Callable[[str], None] | None = None,
                task_status: trio.TaskStatus[Served] = trio.TASK_STATUS_IGNORED) -> None:
    """Serve ``app_factory(port, token)`` (e.g. ``lambda p, t: make_app(token=t, port=p, ...)``)
    on 127.0.0.1:``port`` (0: a free port) until cancelled. Once listening: ``announce(url)``,
    the browser opened on the URL (``open_browser``; :mod:`webbrowser`, through a file only this
    user reads: :func:`_browser_file`), and ``task_status.started(Served)``. Raises RuntimeError
    (one line naming ``--web-port``) when the port cannot be bound."""
    from hypercorn.config import Config
    from hypercorn.trio import serve as hypercorn_serve

    try:
        sock = open_loopback(port)
    except OSError as exc:  # one line from the command (run_reporting), naming the flag
        raise RuntimeError(f"the page cannot listen on 127.0.0.1:{port} (--web-port): {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(32)
    app = app_factory(port, token)
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # hypercorn owns the socket from here
    config.errorlog = log
    config.accesslog = None
    config.include_server_header = False
    config.websocket_max_message_size = MAX_WS_MESSAGE
    url = f"http://{LOOPBACK}:{port}/?token={token}"
    if announce is not None:
        announce(url)
    opener = _browser_file(url) if open_browser else None
    try:
        if opener is not None:
            await trio.to_thread.run_sync(_open_browser, opener.as_uri(), abandon_on_cancel=True)
        task_status.started(Served(url, port, token))
        await hypercorn_serve(app, config)  # type: ignore[arg-type]  # an ASGI 3 application
    finally:
        if opener is not None:
            opener.unlink(missing_ok=True)


def _browser_file(url: str) -> Path:
    """A file only this user can read that sends the browser on to ``url``: the browser is
    opened on it, so the token never shows in the process list other local users can read
    (as Jupyter does). It lies in the user's data folder, not /tmp, which a sandboxed browser
    (snap, flatpak) may not see."""
    import html
    import os
    import tempfile

    import platformdirs

    folder = Path(platformdirs.user_data_dir("p2p-chinchon", appauthor=False))
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="open-", suffix=".html", dir=folder)  # mode 0600
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        safe = html.escape(url, quote=True)
        f.write(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={safe}">'
                f'<title>p2p-chinchon</title><a href="{safe}">p2p-chinchon</a>\n')
    return Path(name)


def _open_browser(uri: str) -> None:
    import webbrowser

    try:
        webbrowser.open(uri)
    except Exception:  # noqa: BLE001 - no browser: the address is printed
        log.warning("could not open a browser", exc_info=True)


def hub_routes(hub: Hub) -> list[BaseRoute]:
    """The routes of a live page: its WebSocket at ``/ws``."""
    return [WebSocketRoute("/ws", hub.endpoint)]
