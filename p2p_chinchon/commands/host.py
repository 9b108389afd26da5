"""``p2p-chinchon host``: open a table on the LAN, advertise it by mDNS, play when it is full (``--code``:
friends on other networks join by a code word)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import unicodedata
from typing import Any

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    # --name is the player's name in every command; the table's has its own flag.
    p.add_argument("--table-name", dest="table", default=None, metavar="TABLE",
                   help="table name shown on the LAN (default: NAME's table)")
    C.add_rules_arguments(p)
    p.add_argument("--seats", type=int, default=2, metavar="N", help="players at the table, you included (2-8; starts when full)")
    p.add_argument("--port", type=int, default=0, help="TCP port for joiners (default: any free port)")
    p.add_argument("--bind", default="0.0.0.0", help="address to listen on (default all)")
    p.add_argument("--no-mdns", action="store_true", help="do not advertise; joiners use --connect")
    C.add_advertise_argument(p, "the table's lobby (shown by join --list; the port defaults to --port)")
    p.add_argument("--code", action="store_true",
                   help="friends on other networks join by a code word shown here (p2p-chinchon join --code WORD), "
                        "through their home routers: no port to forward, no VPN (docs/friends.md)")
    C.add_code_arguments(p, host=True)
    p.add_argument("--player", dest="name", default=None, help=argparse.SUPPRESS)  # the old spelling of --name
    p.add_argument("--seed", default=None, help="reproducible randomness (NOT secret: tests only)")
    p.add_argument("--proof-rounds", type=int, default=64, metavar="K", help="shadow shuffles per shuffle proof")
    p.add_argument("--open", action="store_true",
                   help="seat the first comers without asking (bots, demos, tests); by default you approve "
                        "each joiner, shown with name and key fingerprint (a --bot host is always open)")
    C.add_play_arguments(p)
    C.add_comeback_argument(p)
    C.add_rematch_argument(p)


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
    if not 2 <= args.seats <= 8:
        print("p2p-chinchon host: --seats must be 2-8", file=sys.stderr)
        return 2
    rules = C.make_rules(args)
    C.check_seats(rules, args.seats, "host")
    player = args.name or ("bot" if args.bot else "host")
    table_name = args.table or _default_table_name(player)
    problem = _table_name_problem(table_name)
    if problem is not None:
        print(f"p2p-chinchon host: --table-name: {problem}", file=sys.stderr)
        return 2
    if not C.check_advertise(args, "host"):
        return 2
    if args.code:
        from p2p_chinchon.net.rendezvous import CodeError, parse_relay

        try:
            parse_relay(args.relay)
        except CodeError as exc:
            print(f"p2p-chinchon host: {exc}", file=sys.stderr)
            return 2
        if C.wormhole_missing("host"):
            return 2
    path = args.transcript or C.default_transcript("host")
    human = not args.bot
    [level] = C.bot_levels(args, 1, "host")
    bot_identity = None if human else C.bot_seat_identity(args, player)
    back = C.comeback(args, path, human, "host", table=table_name,
                      key=None if bot_identity is None else bot_identity.public_bytes)
    if back is not None:  # the same command again: back to that game
        return back
    # The lobby listens before trio, the table and the crypto load: joiners start meanwhile.
    sockets = C.open_lobby(args.bind, args, "host")
    if sockets is None:
        return 1
    from p2p_chinchon.i18n import Translator

    tr = Translator(args.lang if human else "en")  # a bot's stderr is read by scripts
    lobby = _Lobby()
    if bot_identity is not None:  # a bot host says where it listens at once (as it does below)
        lobby.said = tr("status_host_open", port=sockets[0].getsockname()[1],
                        fp=bot_identity.fingerprint, n=args.seats - 1)
        print(lobby.said, file=sys.stderr, flush=True)

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        import trio

        from p2p_chinchon.identity import load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.session import HostConfig, host_game

        identity = bot_identity or load_or_create_identity()
        rng = seat_rng(args.seed, "host")
        glue = C.SeatGlue(bridge, bot=not human, rules=rules, rng=rng, printer=on_update, live=C.live_screen(args),
                          level=level, lang=args.lang,
                          # a rematch reopens the lobby at the same address: a code-word table's
                          # friends come through the mailbox and relay, so it offers none (yet)
                          rematch=0 if args.code else 1 if human else args.rematch,
                          no_rematch="code" if args.code else "one_game")
        events = glue.events()

        from p2p_chinchon import view as v

        def waiting_status(n: int) -> None:
            text = tr("status_host_open", port=lobby.port, fp=identity.fingerprint, n=n)
            if text != lobby.said:  # not twice the line printed before loading
                lobby.said = text
                glue.status(text)

        approve = None
        if human and not args.open and bridge is not None:
            approve = _approver(bridge, args.lang)

        def listening(port: int) -> None:
            lobby.port = lobby.first = port
            waiting_status(args.seats - 1)

        shown, ready = events.update, events.table_ready
        tables: list[Any] = []

        def table_ready(table: Any) -> None:
            tables.append(table)
            ready(table)

        def count_seats(view: Any) -> None:
            """host_game shows the table once, then once per seat taken or freed: count the
            seats in the status line until the seating is signed (then the seats are shown)."""
            if view.phase == v.LOBBY and (view.provisional or not view.seats):
                if lobby.port and tables:
                    waiting_status(max(0, args.seats - len(tables[-1].lobby.pending_players)))
            elif lobby.port:
                lobby.port = 0
                if glue.bridge is not None:
                    glue.status("")
            shown(view)

        # this seat's Events, with its callbacks wrapped (assigned on the instance)
        events.update, events.table_ready = count_seats, table_ready  # type: ignore[method-assign]
        events.listening = listening  # type: ignore[method-assign]
        config = HostConfig(
            identity=identity, rng=rng, player_name=player, transcript_path=path, timeouts=C.make_timeouts(args),
            bind=args.bind, rules=rules, seats=args.seats, name=table_name, proof_rounds=args.proof_rounds,
            port=args.port, advertise=not args.no_mdns, keep_identity=not human, approve=approve,
            sockets=sockets, reach=tuple(args.advertise), code=args.code, mailbox=args.mailbox, relay=args.relay,
        )
        async def game(n: int, last: Any) -> Any:
            """Game 1 as typed; a rematch: the same lobby port, seats and rules, a new game id
            and new randomness, and only the last game's players are seated."""
            if last is None:
                return await host_game(config, events)
            return await host_game(dataclasses.replace(
                config, rng=seat_rng(args.seed, f"host/{n}"), transcript_path=C.rematch_path(path, n),
                sockets=None, port=lobby.first, approve=C.same_players(last)), events)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(glue.forward)
            result = await C.play_evening(game, human, glue)
            nursery.cancel_scope.cancel()
        return result

    try:
        return C.finish(C.run_reporting(main, args, human, "host"), args)
    finally:
        for sock in sockets:  # closed by the lobby, unless the node failed before it ran
            sock.close()



@dataclasses.dataclass
class _Lobby:
    """The host's lobby while it seats players: what its status line says."""

    port: int = 0  # the lobby's port once it accepts joiners (0 again once the seating is signed)
    said: str = ""  # the status line printed last
    first: int = 0  # the port it first listened on (a rematch reopens the lobby there)


def _approver(bridge: Any, lang: str | None = None) -> Any:
    """``approve(request, ip, *, came, queued)`` for the lobby (``nd.host_lobby``, which asks
    one at a time): a yes/no question to the host's person, in ``lang`` (None: the locale),
    where ``b`` refuses everyone from that address (``lobby.REFUSE_ADDRESS``)."""
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.identity import fingerprint
    from p2p_chinchon.net.lobby import REFUSE_ADDRESS, RELAYED
    from p2p_chinchon.ui.bridge import BLOCK
    from p2p_chinchon.ui.lobby import seat_request

    tr = Translator(lang)

    async def approve(request: Any, ip: str, *, came: int = 0, queued: int = 0) -> bool | str:
        question = seat_request(request.name, fingerprint(request.public_key), ip, tr, came=came, queued=queued,
                                blockable=ip != RELAYED)  # through the relay, b refuses this joiner only
        answer = await bridge.ask(question, block=True)
        return REFUSE_ADDRESS if answer == BLOCK else answer is True

    return approve
