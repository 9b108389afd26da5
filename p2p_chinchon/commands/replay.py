"""``p2p-chinchon replay FILE [--no-browser] [--web-port P]``: a recorded game in the browser.

The transcript is audited first (as ``p2p-chinchon audit``), then served on 127.0.0.1 with the
live table's server and its security (a token, then a cookie; Host and Origin checks; the
content security policy: docs/web.md): a page to step through the game hand by hand and move by
move, every card the record reveals, each showdown's melds and lay-offs and a plot of the scores.
A record that fails the audit is shown up to the envelope where it fails, with the verdict there.

Prints the audit's summary and the page's address, opens the browser (unless ``--no-browser``)
and serves until Ctrl-C. Exit code: the audit's (0 a complete game, 1 a cheat, an accusation or
a corrupt file, 3 valid but incomplete); 2 when the file cannot be read or the port not bound.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a transcript (.chn) saved by host, join or play")
    p.add_argument("--no-browser", action="store_true", help="print the page's address only; open no browser")
    p.add_argument("--web-port", type=int, default=0, metavar="P",
                   help="serve on 127.0.0.1:P (default: a free port)")


def run(args: argparse.Namespace) -> int:
    import trio
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from p2p_chinchon.audit import default_jobs
    from p2p_chinchon.web import server
    from p2p_chinchon.web.replay import replay_model

    print(f"auditing {args.file} ...", flush=True)
    try:
        model = replay_model(args.file, jobs=default_jobs())
    except OSError as exc:
        print(f"p2p-chinchon replay: {exc}", file=sys.stderr)
        return 2
    body = json.dumps(model, ensure_ascii=False, separators=(",", ":")).encode()
    print(model["verdict"]["summary"], flush=True)

    async def replay_json(request: Request) -> Response:
        return Response(body, media_type="application/json")

    routes = [Route("/replay.json", replay_json)]

    def announce(url: str) -> None:
        print(f"replay of {args.file} at {url}", flush=True)
        print("Ctrl-C stops the page", flush=True)

    try:
        trio.run(lambda: server.serve(lambda port, token: server.make_app(
            token=token, port=port, routes=routes, index="replay.html"),
            port=args.web_port, open_browser=not args.no_browser, announce=announce))
    except OSError as exc:
        print(f"p2p-chinchon replay: cannot serve on 127.0.0.1:{args.web_port}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("p2p-chinchon replay: stopped (Ctrl-C)", file=sys.stderr)
    return int(model["verdict"]["exit_code"])
