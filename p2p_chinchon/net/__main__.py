"""mDNS debugging tool (also used by the network-namespace tests).

    python -m p2p_chinchon.net advertise --name T --preset classic --seats 1/4 --fp abcd1234 \\
        --port 4000 [--address 10.0.0.1]... [--update-seats 2 --update-after 1.0] [--duration S]
    python -m p2p_chinchon.net browse [--timeout 3] [--json]

``advertise`` prints ``registered <instance>`` once the ad is up (and ``updated`` after an
update), then runs until ``--duration`` elapses or stdin closes. ``browse`` prints one line per
table, or a JSON list with ``--json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

import trio

from .discovery import TableAd, advertise, browse


async def _advertise(args: argparse.Namespace) -> int:
    taken, _, max_seats = args.seats.partition("/")
    ad = TableAd(args.name, args.preset, int(taken), int(max_seats), args.fp)
    async with advertise(ad, args.port, args.address or None) as adv:
        print(f"registered {adv.instance}", flush=True)
        with trio.move_on_after(args.duration if args.duration is not None else float("inf")):
            async with trio.open_nursery() as nursery:
                if args.update_seats is not None:

                    async def later() -> None:
                        await trio.sleep(args.update_after)
                        await adv.update(args.update_seats)
                        print("updated", flush=True)

                    nursery.start_soon(later)
                # stdin EOF ends the ad (the parent test closes our stdin)
                await trio.to_thread.run_sync(sys.stdin.read, abandon_on_cancel=True)
                nursery.cancel_scope.cancel()
    print("closed", flush=True)
    return 0


async def _browse(args: argparse.Namespace) -> int:
    tables = await browse(args.timeout)
    if args.json:
        print(json.dumps([dataclasses.asdict(t) for t in tables]), flush=True)
    else:
        for t in tables:
            print(f"{t.name}\t{t.host}:{t.port}\t{t.preset}\t{t.seats_taken}/{t.max_seats}\t{t.fingerprint}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m p2p_chinchon.net", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("advertise")
    a.add_argument("--name", required=True)
    a.add_argument("--preset", default="classic")
    a.add_argument("--seats", default="1/4", help="taken/max")
    a.add_argument("--fp", required=True, help="host key fingerprint")
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--address", action="append", help="IPv4 to advertise (repeatable)")
    a.add_argument("--update-seats", type=int)
    a.add_argument("--update-after", type=float, default=0.5)
    a.add_argument("--duration", type=float)
    b = sub.add_parser("browse")
    b.add_argument("--timeout", type=float, default=3.0)
    b.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    return trio.run(_advertise if args.cmd == "advertise" else _browse, args)


if __name__ == "__main__":
    sys.exit(main())
