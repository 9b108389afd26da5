"""``p2p-chinchon join [TABLE] [--connect HOST:PORT]``: find a table on the LAN and sit down."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", nargs="?", default=None, help="name of the table to join (default: list them / pick)")
    p.add_argument("--connect", default=None, metavar="HOST:PORT", help="join this address directly (no mDNS)")
    p.add_argument("--browse", type=float, default=3.0, metavar="S", help="seconds to listen for tables (default 3)")
    p.add_argument("--bind", default="0.0.0.0", help="address to accept peers on (default all)")
    p.add_argument("--seed", default=None, help="reproducible randomness (NOT secret: tests only)")
    p.add_argument("--min-proof-rounds", type=int, default=40, metavar="K",
                   help="refuse tables whose shuffle proofs use fewer rounds (default 40; tests use less)")
    C.add_play_arguments(p)


def run(args: argparse.Namespace) -> int:
    import trio

    human = not args.bot
    player = args.name or ("bot" if args.bot else "guest")
    [level] = C.bot_levels(args, 1, "join")

    async def find() -> tuple[str, int, str] | None:
        from p2p_chinchon.net import discovery

        tables = await discovery.browse(args.browse)
        if args.table:
            tables = [t for t in tables if t.name == args.table]
        if not tables:
            print("no table found on the LAN" + (f" named {args.table!r}" if args.table else ""), file=sys.stderr)
            return None
        if len(tables) > 1 and not args.table and not args.bot:
            for i, t in enumerate(tables):
                print(f"  {i + 1}. {t.name}  [{t.preset}]  {t.seats_taken}/{t.max_seats}  host {t.fingerprint}  {t.host}:{t.port}", file=sys.stderr)
            print("several tables: name one (p2p-chinchon join TABLE) or use --connect", file=sys.stderr)
            return None
        t = tables[0]
        print(f"joining '{t.name}' at {t.host}:{t.port} (host {t.fingerprint})", file=sys.stderr)
        return t.host, t.port, t.fingerprint

    async def pick(bridge: Any) -> tuple[str, int, str] | None:
        """A person without a table name picks one from the live list heard on the LAN."""
        from p2p_chinchon.net import discovery

        async with discovery.browse_tables() as browser:
            t = await bridge.pick_table(browser)
        return None if t is None else (t.host, t.port, t.fingerprint)

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        from p2p_chinchon.identity import Identity, load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.lobby import parse_addr
        from p2p_chinchon.net.session import join_game

        fp = None  # the host fingerprint the LAN advertised: the offer must carry that key
        if args.connect:
            host, port = parse_addr(args.connect)
        else:
            found = await (pick(bridge) if bridge is not None and not args.table else find())
            if found is None:
                return None
            host, port, fp = found
        identity = load_or_create_identity() if human else Identity.generate()
        rng = seat_rng(args.seed, f"join/{player}")
        glue = C.SeatGlue(bridge, bot=not human, rng=rng, printer=on_update, level=level)

        def path_for(table: Any) -> Any:
            return args.transcript or C.default_transcript(f"seat{table.me}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(glue.forward)
            result = await join_game(
                identity=identity, rng=rng, host=host, port=port, player_name=player,
                transcript_path=path_for, timeouts=C.make_timeouts(args), auto_agree=not human,
                bind=args.bind, min_proof_rounds=args.min_proof_rounds, expect_fingerprint=fp,
                **glue.kwargs(),
            )
            nursery.cancel_scope.cancel()
        return result

    return C.finish(C.run_reporting(main, args, human, "join"), args)
