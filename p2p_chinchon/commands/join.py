"""``p2p-chinchon join [TABLE] [--connect HOST:PORT] [--code WORD]``: find a table (on the LAN, at an
address, or by code word) and sit down."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", nargs="?", default=None, help="name of the table to join (default: list them / pick)")
    p.add_argument("--connect", default=None, metavar="HOST:PORT", help="join this address directly (no mDNS)")
    p.add_argument("--code", default=None, metavar="WORD",
                   help="join the table whose host showed this code word (7-crossover-clockwork), from any network")
    p.add_argument("--code-wait", type=float, default=60.0, metavar="S", help=argparse.SUPPRESS)  # tests
    C.add_code_arguments(p, host=False)
    p.add_argument("--browse", type=float, default=3.0, metavar="S", help="seconds to listen for tables (default 3)")
    p.add_argument("--list", action="store_true", help="print the tables heard on the LAN and exit")
    p.add_argument("--json", action="store_true", help="with --list: one JSON array, for scripts")
    p.add_argument("--wait", type=float, default=30.0, metavar="S",
                   help="seconds to keep looking when the table is not up yet (default 30)")
    p.add_argument("--bind", default="0.0.0.0", help="address to accept peers on (default all)")
    p.add_argument("--port", type=int, default=0, metavar="PORT",
                   help="TCP port the other seats dial you on (default: any free port; fix it to forward it "
                        "on your router)")
    C.add_advertise_argument(p, "you (the port defaults to --port)")
    p.add_argument("--seed", default=None, help="reproducible randomness (NOT secret: tests only)")
    p.add_argument("--bot-identity", type=Path, default=None, help=argparse.SUPPRESS)  # play's bots: a
    # key folder of their own, so that an evening's games among the same bots add up
    C.add_rematch_argument(p, default=C.REMATCH_ALWAYS)  # a joining bot says yes: the people decide
    p.add_argument("--min-proof-rounds", type=int, default=None, metavar="K",
                   help="refuse tables whose cut-and-choose shuffle proofs use fewer rounds (default 64; tests use less)")
    C.add_play_arguments(p)
    C.add_comeback_argument(p)


TABLE_FIELDS = ("name", "host", "port", "preset", "seats_taken", "max_seats", "fingerprint", "version", "reach")


def list_tables(args: argparse.Namespace) -> int:
    """``join --list [--json]``, and ``join`` without a terminal: the tables heard on the LAN
    (exit 0), or none (exit 1; ``--json`` prints ``[]``)."""
    import json

    import trio

    from p2p_chinchon.net import discovery

    tables = trio.run(discovery.browse, args.browse)
    if args.table:
        tables = [t for t in tables if t.name == args.table]
    if args.json:
        print(json.dumps([{k: _plain(getattr(t, k)) for k in TABLE_FIELDS} for t in tables], ensure_ascii=False))
    elif tables:
        for i, t in enumerate(tables):
            print(f"{i + 1:>2}. {t.name}  [{t.preset}]  {t.seats_taken}/{t.max_seats} seats  "
                  f"host {t.fingerprint}  {t.host}:{t.port}" + "".join(f", {a}" for a in t.reach))
        print("join one: p2p-chinchon join TABLE (or --connect HOST:PORT)", file=sys.stderr)
    else:
        print("no table heard on the LAN" + (f" named {args.table!r}" if args.table else ""), file=sys.stderr)
    return 0 if tables else 1


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def run(args: argparse.Namespace) -> int:
    import trio

    if not C.check_advertise(args, "join"):
        return 2
    if not 0 <= args.port < 65536:
        print("p2p-chinchon join: --port must be 0-65535", file=sys.stderr)
        return 2
    human = not args.bot
    player = args.name or ("bot" if args.bot else "guest")
    [level] = C.bot_levels(args, 1, "join")
    if args.connect:
        from p2p_chinchon.net.lobby import parse_addr

        try:
            parse_addr(args.connect)
        except ValueError as exc:
            print(f"p2p-chinchon join: --connect: {exc}", file=sys.stderr)
            return 2
    if args.code is not None:
        from p2p_chinchon.net.rendezvous import CodeError, check_code

        try:
            args.code = check_code(args.code)
        except CodeError as exc:
            print(f"p2p-chinchon join: --code: {exc}", file=sys.stderr)
            return 2
        if args.connect or args.table or args.list:
            print("p2p-chinchon join: --code finds the table by itself: give no TABLE, --connect or --list",
                  file=sys.stderr)
            return 2
        if C.wormhole_missing("join"):
            return 2
    if args.list or args.json:
        return list_tables(args)
    if (human and not args.connect and not args.code and not args.table and not args.lines
            and not C.want_web(args) and not sys.stdin.isatty()):
        return list_tables(args)  # nobody to pick one: print the list for the script that ran us
    bot_identity = None if human else C.bot_seat_identity(args, player)
    back = C.comeback(args, args.transcript or C.default_transcript("seat0"), human, "join", table=args.table,
                      key=None if bot_identity is None else bot_identity.public_bytes)
    if back is not None:  # the same command again: back to that game
        return back

    def to_stderr(text: str) -> None:
        print(text, file=sys.stderr)

    untold: list[str] = []  # why no table was joined, printed once a full screen is gone

    def give_up(text: str) -> None:
        if C.want_tui(args):
            untold.append(text)
        else:
            to_stderr(text)

    async def find(say: Callable[[str], None]) -> tuple[str, int, str] | None:
        """The table to join, browsed on the LAN; ``say`` takes each progress line (a
        full-screen UI's status line: a print would land over its layout)."""
        from p2p_chinchon.net import discovery

        deadline = time.monotonic() + max(args.wait, 0.0)
        named = f" named {args.table!r}" if args.table else ""
        while True:
            tables = await discovery.browse(args.browse)
            if args.table:
                tables = [t for t in tables if t.name == args.table]
            left = deadline - time.monotonic()
            if tables or left <= 0:
                break
            say(f"no table found on the LAN{named} yet: still looking for {int(left + 0.5)} s")
        if not tables:
            give_up(f"p2p-chinchon join: no table found on the LAN{named}"
                    + (" (a table already playing is not advertised: come back to your game with "
                       "p2p-chinchon resume)" if args.table else ""))
            return None
        if len(tables) > 1 and (args.table or not args.bot):
            # two tables of one name (or none named): never take one silently
            for i, t in enumerate(tables):
                give_up(f"  {i + 1}. {t.name}  [{t.preset}]  {t.seats_taken}/{t.max_seats}  host {t.fingerprint}  {t.host}:{t.port}")
            give_up(("several tables share that name: " if args.table else "several tables: name one (p2p-chinchon join TABLE) or ")
                    + "pick one with --connect HOST:PORT")
            return None
        t = tables[0]
        say(f"joining '{t.name}' at {t.host}:{t.port} (host {t.fingerprint})")
        return t.host, t.port, t.fingerprint

    async def pick(bridge: Any) -> tuple[str, int, str] | None:
        """A person picks a table from the live list heard on the LAN (only those of the
        name asked for, when two share it: the list shows their host fingerprints)."""
        from p2p_chinchon.net import discovery

        async def named(browser: Any) -> Any:
            async for tables in browser:
                yield [t for t in tables if t.name == args.table] if args.table else tables

        async with discovery.browse_tables() as browser:
            t = await bridge.pick_table(named(browser) if args.table else browser)
        return None if t is None else (t.host, t.port, t.fingerprint)

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        from p2p_chinchon.identity import fingerprint, load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.lobby import parse_addr
        from p2p_chinchon.net.session import JoinConfig, join_game

        fp = None  # the host fingerprint the LAN advertised: the offer must carry that key
        if args.code:
            host, port = "", 0  # found through the mailbox
        elif args.connect:
            host, port = parse_addr(args.connect)
        else:
            say = bridge.set_status if bridge is not None else to_stderr
            found = await find(say) if bridge is None or (args.table and not await _two_named(args)) else await pick(bridge)
            if found is None:
                return None
            host, port, fp = found
        identity = bot_identity or load_or_create_identity()
        rng = seat_rng(args.seed, f"join/{player}")
        glue = C.SeatGlue(bridge, bot=not human, rng=rng, printer=on_update, live=C.live_screen(args), level=level,
                          lang=args.lang, rematch=0 if args.code else 1 if human else args.rematch,  # as host --code
                          no_rematch="code" if args.code else "one_game")

        def path_for(table: Any) -> Any:
            return args.transcript or C.default_transcript(f"seat{table.lobby.me}")

        config = JoinConfig(
            identity=identity, rng=rng, player_name=player, transcript_path=path_for,
            timeouts=C.make_timeouts(args), bind=args.bind, keep_identity=not human, auto_agree=not human, host=host, port=port,
            min_proof_rounds=args.min_proof_rounds, expect_fingerprint=fp, wait=args.wait,
            mdns=not args.connect and not args.code, mesh_port=args.port, reach=tuple(args.advertise),
            code=args.code, mailbox=args.mailbox, code_wait=args.code_wait,
        )
        events = glue.events()
        if bridge is not None:  # "connecting to HOST:PORT…" until the table shows
            from p2p_chinchon.i18n import Translator
            from p2p_chinchon.net.lobby import format_addr

            tr = Translator(args.lang)
            bridge.set_status(tr("status_joining_code", code=args.code, s=f"{args.code_wait:g}") if args.code
                              else tr("status_joining", addr=format_addr(host, port)))
            connecting = [True]
            shown = events.update

            def on_update(view: Any) -> None:
                if connecting:
                    connecting.clear()
                    bridge.set_status("")
                shown(view)

            events.update = on_update  # type: ignore[method-assign]  # this instance's callback, wrapped

        async def game(n: int, last: Any) -> Any:
            """Game 1 as typed; a rematch: the same host address, and the offer must be the
            same host key, rules and seats (then this seat agrees by itself: it said yes)."""
            if last is None:
                return await join_game(config, events)
            return await join_game(dataclasses.replace(
                config, rng=seat_rng(args.seed, f"join/{player}/{n}"), auto_agree=True, rematch_of=last,
                expect_fingerprint=fingerprint(last.lobby.players[0].key), wait=max(args.wait, 60.0),
                transcript_path=C.rematch_path(args.transcript, n) if args.transcript else path_for), events)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(glue.forward)
            result = await C.play_evening(game, human, glue)
            nursery.cancel_scope.cancel()
        return result

    result = C.run_reporting(main, args, human, "join")
    for line in untold:  # the full screen has gone: say why nothing was joined
        to_stderr(line)
    from p2p_chinchon.net.session import CodeWordError

    if result is None and isinstance(getattr(args, "failure", None), CodeWordError):
        return 2  # a wrong or expired code word is a usage error: one line, exit 2
    return C.finish(result, args)


async def _two_named(args: argparse.Namespace) -> bool:
    """Whether more than one table on the LAN has the name asked for (then a person picks)."""
    from p2p_chinchon.net import discovery

    return len([t for t in await discovery.browse(args.browse) if t.name == args.table]) > 1
