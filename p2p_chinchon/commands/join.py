"""``p2p-chinchon join [TABLE] [--connect HOST:PORT]``: find a table on the LAN and sit down."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", nargs="?", default=None, help="name of the table to join (default: list them / pick)")
    p.add_argument("--connect", default=None, metavar="HOST:PORT", help="join this address directly (no mDNS)")
    p.add_argument("--browse", type=float, default=3.0, metavar="S", help="seconds to listen for tables (default 3)")
    p.add_argument("--wait", type=float, default=30.0, metavar="S",
                   help="seconds to keep looking when the table is not up yet (default 30)")
    p.add_argument("--bind", default="0.0.0.0", help="address to accept peers on (default all)")
    p.add_argument("--seed", default=None, help="reproducible randomness (NOT secret: tests only)")
    p.add_argument("--min-proof-rounds", type=int, default=40, metavar="K",
                   help="refuse tables whose shuffle proofs use fewer rounds (default 40; tests use less)")
    C.add_play_arguments(p)


def run(args: argparse.Namespace) -> int:
    import trio

    human = not args.bot
    player = args.name or ("bot" if args.bot else "guest")
    if C.check_transcript_path(args.transcript or C.default_transcript("seat0"), "join"):
        return C.resume(args, args.transcript, human, "join")  # the same command again: back to that game

    async def find() -> tuple[str, int, str] | None:
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
            print(f"no table found on the LAN{named} yet: still looking for {int(left + 0.5)} s", file=sys.stderr)
        if not tables:
            print(f"no table found on the LAN{named}", file=sys.stderr)
            return None
        if len(tables) > 1 and (args.table or not args.bot):
            # two tables of one name (or none named): never take one silently
            for i, t in enumerate(tables):
                print(f"  {i + 1}. {t.name}  [{t.preset}]  {t.seats_taken}/{t.max_seats}  host {t.fingerprint}  {t.host}:{t.port}", file=sys.stderr)
            print(("several tables share that name: " if args.table else "several tables: name one (p2p-chinchon join TABLE) or ")
                  + "pick one with --connect HOST:PORT", file=sys.stderr)
            return None
        t = tables[0]
        print(f"joining '{t.name}' at {t.host}:{t.port} (host {t.fingerprint})", file=sys.stderr)
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
        from p2p_chinchon.identity import Identity, load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.lobby import parse_addr
        from p2p_chinchon.net.session import JoinConfig, join_game

        fp = None  # the host fingerprint the LAN advertised: the offer must carry that key
        if args.connect:
            host, port = parse_addr(args.connect)
        else:
            found = await find() if bridge is None or (args.table and not await _two_named(args)) else await pick(bridge)
            if found is None:
                return None
            host, port, fp = found
        identity = load_or_create_identity() if human else Identity.generate()
        rng = seat_rng(args.seed, f"join/{player}")
        glue = C.SeatGlue(bridge, bot=not human, rng=rng, printer=on_update, live=C.want_tui(args))

        def path_for(table: Any) -> Any:
            return args.transcript or C.default_transcript(f"seat{table.me}")

        config = JoinConfig(
            identity=identity, rng=rng, player_name=player, transcript_path=path_for,
            timeouts=C.make_timeouts(args), bind=args.bind, keep_identity=not human, auto_agree=not human, host=host, port=port,
            min_proof_rounds=args.min_proof_rounds, expect_fingerprint=fp, wait=args.wait,
        )
        async with trio.open_nursery() as nursery:
            nursery.start_soon(glue.forward)
            result = await join_game(config, glue.events())
            nursery.cancel_scope.cancel()
        return result

    return C.finish(C.run_reporting(main, args, human, "join"), args)


async def _two_named(args: argparse.Namespace) -> bool:
    """Whether more than one table on the LAN has the name asked for (then a person picks)."""
    from p2p_chinchon.net import discovery

    return len([t for t in await discovery.browse(args.browse) if t.name == args.table]) > 1
