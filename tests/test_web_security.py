"""Who may read or drive a seat's page (web/server.py): the token once, then the cookie; the
Host header (DNS rebinding); the WebSocket's Origin and cookie; loopback only."""

from __future__ import annotations

import http.client
import json
import socket
from functools import partial

import ifaddr
import pytest
import trio
from trio_websocket import open_websocket_url

from p2p_chinchon.web.server import CSP, Hub, Served, cookie_name, hub_routes, make_app, open_loopback, serve


@pytest.fixture
def static(tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>seat-page</title>", encoding="utf-8")
    (tmp_path / "table.js").write_text("export const x = 1;\n", encoding="utf-8")
    return tmp_path


async def started(nursery: trio.Nursery, static) -> Served:
    hub = Hub(lambda: {"phase": "lobby"}, lambda obj: None)
    app = partial(lambda p, t: make_app(token=t, port=p, routes=hub_routes(hub), static=static))
    return await nursery.start(partial(serve, app))


def get(port: int, path: str, headers: dict[str, str] | None = None, host: str = "127.0.0.1"):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


async def aget(*args, **kw):
    return await trio.to_thread.run_sync(partial(get, *args, **kw))


async def test_token_once_then_the_cookie(static):
    async with trio.open_nursery() as nursery:
        s = await started(nursery, static)
        status, headers, body = await aget(s.port, "/")
        assert status == 403 and b"seat-page" not in body and "set-cookie" not in headers
        status, headers, _ = await aget(s.port, "/?token=" + s.token[:-1] + "x")
        assert status == 403 and "set-cookie" not in headers
        status, headers, _ = await aget(s.port, "/static/table.js")
        assert status == 403
        status, headers, _ = await aget(s.port, "/?token=" + s.token)
        assert status == 303 and headers["location"] == "/"  # the token leaves the address bar
        cookie = headers["set-cookie"]
        assert cookie.startswith(f"{cookie_name(s.port)}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        jar = {"Cookie": cookie.split(";")[0]}
        status, headers, body = await aget(s.port, "/", jar)
        assert status == 200 and b"<title>seat-page</title>" in body
        assert headers["content-security-policy"] == CSP and headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer" and headers["cache-control"] == "no-store"
        status, headers, body = await aget(s.port, "/static/table.js", jar)
        assert status == 200 and body.startswith(b"export") and "javascript" in headers["content-type"]
        other = {"Cookie": f"{cookie_name(s.port + 1)}={s.token}"}  # another seat's cookie name
        assert (await aget(s.port, "/", other))[0] == 403
        nursery.cancel_scope.cancel()


async def test_foreign_host_header_is_refused(static):
    async with trio.open_nursery() as nursery:
        s = await started(nursery, static)
        jar = f"{cookie_name(s.port)}={s.token}"
        for host in (f"evil.example:{s.port}", "127.0.0.1", f"127.0.0.1:{s.port + 1}", f"192.0.2.2:{s.port}"):
            status, _, body = await aget(s.port, "/", {"Cookie": jar, "Host": host})
            assert status == 403 and b"seat-page" not in body, host
        status, _, _ = await aget(s.port, "/?token=" + s.token, {"Host": f"evil.example:{s.port}"})
        assert status == 403  # not even the token helps a rebound name
        assert (await aget(s.port, "/", {"Cookie": jar, "Host": f"localhost:{s.port}"}))[0] == 200
        nursery.cancel_scope.cancel()


async def ws_first(port: int, headers: list[tuple[str, str]]) -> dict:
    async with open_websocket_url(f"ws://127.0.0.1:{port}/ws",
                                  extra_headers=[(k.encode(), v.encode()) for k, v in headers]) as ws:
        return json.loads(await ws.get_message())


async def upgrade_status(port: int, headers: list[tuple[str, str]]) -> int:
    """The HTTP status a WebSocket upgrade request gets (101: accepted)."""
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", **dict(headers)}
    return (await aget(port, "/ws", upgrade))[0]


async def test_websocket_needs_the_cookie_and_this_origin(static):
    async with trio.open_nursery() as nursery:
        s = await started(nursery, static)
        jar = ("Cookie", f"{cookie_name(s.port)}={s.token}")
        origin = ("Origin", f"http://127.0.0.1:{s.port}")
        refused = [
            [origin],  # no cookie
            [jar, ("Origin", "http://evil.example")],  # a page the player visits
            [jar, ("Origin", f"http://127.0.0.1:{s.port + 1}")],  # another local page
            [jar, ("Origin", "null")],
            [jar],  # no Origin
            [("Cookie", f"{cookie_name(s.port)}=wrong"), origin],
        ]
        for headers in refused:
            assert await upgrade_status(s.port, headers) == 403, headers
        assert await upgrade_status(s.port, [jar, origin]) == 101  # the same request, right: accepted
        assert await ws_first(s.port, [jar, origin]) == {"type": "state", "state": {"phase": "lobby"}}
        assert (await ws_first(s.port, [jar, ("Origin", f"http://localhost:{s.port}")]))["type"] == "state"
        nursery.cancel_scope.cancel()


def non_loopback_addresses() -> list[str]:
    return [ip.ip for adapter in ifaddr.get_adapters() for ip in adapter.ips
            if isinstance(ip.ip, str) and not ip.ip.startswith("127.")]


async def test_not_served_on_other_addresses_of_this_machine(static):
    async with trio.open_nursery() as nursery:
        s = await started(nursery, static)
        for addr in non_loopback_addresses():
            sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            with sock, pytest.raises(OSError):
                with trio.fail_after(10):
                    await sock.connect((addr, s.port))
        nursery.cancel_scope.cancel()
    probe = open_loopback(0)
    with probe:
        assert probe.getsockname()[0] == "127.0.0.1"


async def test_a_taken_port_is_one_clear_error(static):
    taken = open_loopback(0)
    with taken:
        with pytest.raises(RuntimeError, match="--web-port"):
            await serve(lambda p, t: make_app(token=t, port=p, static=static), port=taken.getsockname()[1])


async def test_the_browser_is_opened_on_a_private_file_not_on_the_token(static, tmp_path, monkeypatch):
    """Another local user reads process command lines: the browser gets a file only this user
    can read, which sends it on to the address with the token; the file goes with the server."""
    import os
    import stat
    import webbrowser
    from pathlib import Path
    from urllib.parse import unquote, urlparse

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    opened: list[str] = []
    def open_uri(uri: str, *a: object, **k: object) -> bool:
        opened.append(uri)
        return True

    monkeypatch.setattr(webbrowser, "open", open_uri)
    async with trio.open_nursery() as nursery:
        s = await nursery.start(partial(serve, lambda p, t: make_app(token=t, port=p, static=static),
                                        open_browser=True))
        [uri] = opened
        assert uri.startswith("file://") and s.token not in uri
        path = Path(unquote(urlparse(uri).path))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and path.is_relative_to(tmp_path / "data")
        assert f'content="0;url={s.url}"' in path.read_text(encoding="utf-8")
        nursery.cancel_scope.cancel()
    assert not path.exists()
