"""``p2p-chinchon host``: open a table on the LAN, advertise it by mDNS, play when it is full."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from typing import Any

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    # Here --name is the table's name (issue 5: `host [--name TABLE]`); the player's is --player.
    p.add_argument("--name", dest="table", default=None, metavar="TABLE", help="table name shown on the LAN")
    C.add_rules_arguments(p)
    p.add_argument("--seats", type=int, default=2, metavar="N", help="players at the table, you included (2-8; starts when full)")
    p.add_argument("--port", type=int, default=0, help="TCP port for joiners (default: any free port)")
    p.add_argument("--bind", default="0.0.0.0", help="address to listen on (default all)")
    p.add_argument("--no-mdns", action="store_true", help="do not advertise; joiners use --connect")
    p.add_argument("--player", default=None, metavar="NAME", help="your name at the table")
    p.add_argument("--seed", default=None, help="reproducible randomness (NOT secret: tests only)")
    p.add_argument("--proof-rounds", type=int, default=64, metavar="K", help="shadow shuffles per shuffle proof")
    C.add_play_arguments(_WithoutName(p))


class _WithoutName:
    """Passes ``add_argument`` through, except the shared "your name" ``--name`` (taken above)."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self._parser = parser

    def add_argument(self, *flags: str, **kwargs: Any) -> Any:
        if "--name" in flags:
            return None
        return self._parser.add_argument(*flags, **kwargs)


MAX_TABLE_NAME_BYTES = 64  # the offer's wire limit (protocol/schema.json), also fits the mDNS TXT


def _table_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a table (offer and mDNS ad), or None."""
    if not 1 <= len(name.encode()) <= MAX_TABLE_NAME_BYTES:
        return f"a table name is 1..{MAX_TABLE_NAME_BYTES} bytes of UTF-8"
    if any(unicodedata.category(c).startswith("C") for c in name):
        return "a table name may not contain control characters"
    return None


def _default_table_name(player: str) -> str:
    name = f"{player}'s table"
    while len(name.encode()) > MAX_TABLE_NAME_BYTES:  # cut the player's name, keep the suffix
        player = player[:-1]
        name = f"{player}'s table"
    return name


def run(args: argparse.Namespace) -> int:
    import trio

    if not 2 <= args.seats <= 8:
        print("p2p-chinchon host: --seats must be 2-8", file=sys.stderr)
        return 2
    rules = C.make_rules(args)
    C.check_seats(rules, args.seats, "host")
    player = args.player or ("bot" if args.bot else "host")
    table_name = args.table or _default_table_name(player)
    problem = _table_name_problem(table_name)
    if problem is not None:
        print(f"p2p-chinchon host: --name: {problem}", file=sys.stderr)
        return 2
    path = args.transcript or C.default_transcript("host")
    human = not args.bot
    [level] = C.bot_levels(args, 1, "host")

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        from p2p_chinchon.identity import Identity, load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.session import host_game

        identity = load_or_create_identity() if human else Identity.generate()
        rng = seat_rng(args.seed, "host")
        glue = C.SeatGlue(bridge, bot=not human, rules=rules, rng=rng, printer=on_update, level=level)

        def listening(port: int) -> None:
            glue.status(f"table '{table_name}' open on port {port}; fingerprint {identity.fingerprint}; "
                        f"waiting for {args.seats - 1} more")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(glue.forward)
            result = await host_game(
                identity=identity, rng=rng, rules=rules, seats=args.seats, name=table_name, player_name=player,
                transcript_path=path, timeouts=C.make_timeouts(args), proof_rounds=args.proof_rounds,
                bind=args.bind, port=args.port, advertise=not args.no_mdns, on_listening=listening,
                **glue.kwargs(),
            )
            nursery.cancel_scope.cancel()
        return result

    return C.finish(C.run_reporting(main, args, human, "host"), args)

