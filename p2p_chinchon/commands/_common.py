"""Shared pieces of the ``play``, ``host`` and ``join`` commands."""

from __future__ import annotations

import argparse
import errno
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from p2p_chinchon import view as v

if TYPE_CHECKING:  # loaded by the commands that run a node only (trio; start-up time)
    from p2p_chinchon.net.node import Events
    from p2p_chinchon.net.status import NodeStatus


def add_rules_arguments(p: argparse.ArgumentParser, default: str | None = "classic") -> None:
    p.add_argument("--rules", default=default, metavar="PRESET", help="rule preset (see `p2p-chinchon rules`)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="table option on top of the preset (repeatable)")


def make_rules(args: argparse.Namespace) -> Any:
    from p2p_chinchon.cli import UsageError
    from p2p_chinchon.engine import RulesError
    from p2p_chinchon.engine.options import rules_from_args

    try:
        return rules_from_args(args.rules, args.option)
    except RulesError as exc:  # one line, exit 2 (cli.main)
        raise UsageError(str(exc)) from None


def add_advertise_argument(p: argparse.ArgumentParser, what: str) -> None:
    """``--advertise HOST[:PORT]``, repeatable (friends on other networks)."""
    p.add_argument("--advertise", action="append", default=[], metavar="HOST[:PORT]",
                   help=f"another address where the others can reach {what} (a VPN address, or your "
                        "router's public address with a forwarded port); repeatable; see docs/friends.md")


def check_advertise(args: argparse.Namespace, command: str) -> bool:
    """True when every ``--advertise`` parses; else says why on stderr (then exit 2)."""
    from p2p_chinchon.net.addresses import parse_advertise

    for text in getattr(args, "advertise", None) or ():
        try:
            parse_advertise(text)
        except ValueError as exc:
            print(f"p2p-chinchon {command}: --advertise: {exc}", file=sys.stderr)
            return False
    return True


def add_play_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--transcript", type=Path, metavar="PATH", help="where to save this seat's signed transcript")
    p.add_argument("--bot", action="store_true", help="let a bot play this seat")
    p.add_argument("--bot-level", default="easy", metavar="LEVEL",
                   help="bot level: easy, normal or hard (play: one for all bots, or one per bot "
                        "seat, e.g. easy,normal,hard; default easy)")
    p.add_argument("--name", default=None, help="your name at the table")
    p.add_argument("--lang", default=None, choices=["en", "es", "fr"], help="language of the UI (default: the locale)")
    p.add_argument("--charset", default="auto", choices=["auto", "unicode", "mono", "ascii"], help="card faces: suits with colour, without, or plain ASCII")
    p.add_argument("--faces", default="auto", choices=["auto", "french", "spanish"],
                   help="card faces: the table's deck (auto), or French/Spanish faces whatever it is")
    p.add_argument("--lines", action="store_true", help="plain line mode even on a terminal")
    p.add_argument("--web", action="store_true",
                   help="play in the browser: this laptop serves the table's page on 127.0.0.1 only (docs/web.md)")
    p.add_argument("--web-port", type=int, default=0, metavar="PORT", help="--web: the page's port (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="--web: print the page's address, open no browser")
    p.add_argument("--no-bell", dest="bell", action="store_false", help="no terminal bell on your turn or a close")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors (bot peers started by play)")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds to wait for a connected peer's automatic step, and after its turn clock ran out (default 90)")


REMATCH_ALWAYS = 1_000_000  # play's bot peers: yes to every rematch (the person decides)


def add_rematch_argument(p: argparse.ArgumentParser, default: int = 0) -> None:
    # a bot seat answers a rematch question: yes N times, then no (play's bot peers and a joining
    # bot: always yes, the people decide; a hosting bot: no, or bots alone would play on forever).
    # People are asked.
    p.add_argument("--rematch", type=int, nargs="?", const=REMATCH_ALWAYS, default=default, metavar="N",
                   help=argparse.SUPPRESS)


def add_comeback_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--new", action="store_true",
                   help="do not resume an unfinished game of yours (by default host and join come back to it)")


def bot_seat_identity(args: argparse.Namespace, name: str) -> Any:
    """The identity of a ``host --bot`` / ``join --bot`` seat named ``name``: kept, as a
    person's, in its config folder (``bot-seats/NAME/identity.key``; play's own bot peers
    keep theirs under ``bots/``), so its games make one evening with the same players, it can
    play a rematch and the same command brings it back. ``--bot-identity DIR`` names the
    folder instead. Raises :class:`~p2p_chinchon.identity.IdentityError`, OSError."""
    import re

    from p2p_chinchon.identity import default_config_dir, load_or_create_identity

    folder = getattr(args, "bot_identity", None)
    if folder is None:
        safe = re.sub(r"[^\w-]", "_", name)[:64] or "bot"  # one plain folder name, whatever the name
        folder = default_config_dir() / "bot-seats" / safe
    return load_or_create_identity(folder)


def comeback(args: argparse.Namespace, path: Path, human: bool, command: str, table: str | None = None,
             key: bytes | None = None) -> int | None:
    """The resume step of ``host`` and ``join``: with ``path`` (the
    transcript asked for) holding a game with its secrets, or an unfinished game of this
    identity (``key``: a bot seat's; None: the person's) found by
    :func:`p2p_chinchon.commands.comeback.find_comeback`, that game is resumed and its exit
    code returned; an int exit code when the person must choose first; None to go on with
    the command as typed."""
    if check_transcript_path(path, command):
        return resume(args, path, human, command)  # the same command again: back to that game
    from p2p_chinchon.commands.comeback import find_comeback

    found = find_comeback(args, command, table=table, key=key)
    if isinstance(found, int):
        return found
    return None if found is None else resume(args, found, human, command)


def rematch_path(path: Path, n: int) -> Path:
    """Where game ``n`` (2, 3, ...) of an evening's rematches keeps its transcript: beside
    ``path`` (the first game's), ``NAME-2.chn`` and so on, never a file holding a game."""
    k = n
    while True:
        cand = path.with_name(f"{path.stem}-{k}{path.suffix}")
        if not (cand.exists() and cand.stat().st_size > 0):
            return cand
        k += 1


def same_players(table: Any) -> Callable[..., Any]:
    """The rematch lobby's ``approve``: seat the players of ``table`` (by key) and nobody else."""
    keys = {p.key for p in table.lobby.players}

    async def approve(request: Any, ip: str, *, came: int = 0, queued: int = 0) -> bool:
        return request.public_key in keys

    return approve


async def play_evening(game: Callable[[int, Any], Any], human: bool, glue: SeatGlue) -> Any:
    """Play game 1 (``await game(1, None)``), then a rematch for as long as every seat agrees at
    game over (``NodeResult.rematch``): ``await game(n, last_table)``. Each finished game is
    recorded in the evening's tally (a person's seat) as it ends; the last result is returned."""
    from p2p_chinchon.commands.tally import after_game

    tables: list[Any] = []
    ready = glue.on_table
    glue.on_table = tables.append
    n = 1
    result = await game(1, None)
    while result is not None and result.rematch and tables:
        if human:
            after_game(result)
        n += 1
        glue.reset()
        glue.status(glue.tr("rematch_waiting", n=n))
        try:
            result = await game(n, tables[-1])
        except Exception as exc:  # noqa: BLE001 - the host gone, a refused offer: the evening ends
            from p2p_chinchon.net.node import error_text

            said = glue.tr("rematch_failed", why=error_text(exc))
            if glue.bridge is not None:
                glue.bridge.set_status("")
                glue.bridge.notify(said)
            else:
                print(said, file=sys.stderr, flush=True)
            break  # the last finished game stands (its summary and the tally follow)
    glue.on_table = ready
    return result


def check_transcript_path(path: Path, command: str) -> bool:
    """Before sitting down: the transcript's folder must take a write (read-only or full disks
    fail here, not mid-game), and an existing file must be empty (a game is never appended to
    another game's transcript) unless this seat's secrets lie beside it: then the same command
    run again resumes that game (True). Exits 2 with one line otherwise."""
    import os

    def refuse(why: str) -> None:
        print(f"p2p-chinchon {command}: {why}", file=sys.stderr)
        raise SystemExit(2)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        probe = path.parent / f".{path.name}.{os.getpid()}.probe"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            room = memoryview(bytes(65536))  # room for a game's first envelopes
            while room:  # a short write is followed by the error that explains it
                room = room[os.write(fd, room):]
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as exc:
        refuse(f"cannot write transcripts in {path.parent}: {exc.strerror or exc}")
    if path.exists() and path.stat().st_size > 0:
        from p2p_chinchon.net.node import secrets_path_for

        if secrets_path_for(path).exists():
            return True
        refuse(f"{path} already holds another game's transcript; choose another --transcript")
    return False


def resume(args: argparse.Namespace, path: Path, human: bool, command: str) -> int:
    """Come back to the unfinished game of ``path``: same identity, same transcript,
    the saved secrets; the other seats are reached at their seating addresses. A person is
    refused (one line, 2) a transcript another seat wrote: with a bot's kept identity it would
    play, and sign, as that bot."""
    if human:
        from p2p_chinchon.commands.comeback import not_yours
        from p2p_chinchon.identity import load_or_create_identity

        why = not_yours(path, load_or_create_identity().public_bytes)
        if why is not None:
            print(f"p2p-chinchon {command}: {why}", file=sys.stderr)
            return 2

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        import trio

        from p2p_chinchon.identity import load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.session import ResumeConfig, resume_game

        rng = seat_rng(getattr(args, "seed", None), f"resume/{path.name}")
        glue = SeatGlue(bridge, bot=not human, rng=rng, printer=on_update, live=live_screen(args),
                        lang=getattr(args, "lang", None), no_rematch="resumed")
        glue.status(f"resuming the game of {path}")
        config = ResumeConfig(transcript=path, identity=load_or_create_identity() if human else None, rng=rng,
                              timeouts=make_timeouts(args), bind=getattr(args, "bind", "0.0.0.0"),
                              auto_agree=not human,
                              # by mDNS unless this seat was told addresses (--no-mdns, --connect)
                              mdns=not getattr(args, "no_mdns", False) and not getattr(args, "connect", None),
                              reach=tuple(getattr(args, "advertise", None) or ()))
        async with trio.open_nursery() as nursery:
            nursery.start_soon(glue.forward)
            events = glue.events()
            result = await resume_game(config, events)
            nursery.cancel_scope.cancel()
        if human and getattr(result, "fault", None) is None and getattr(result, "winner", None) is not None:
            # the others were told this seat cannot play a rematch (R 0x02): say it here too
            events.rematch_said(glue.tr("rematch_none_here"), "rematch_none_here", {})
        return result

    return finish(run_reporting(main, args, human, command), args)


def data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("p2p-chinchon", appauthor=False))


def default_transcript(label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir() / "transcripts" / f"{stamp}-{label}.chn"


class ConsolePrinter:
    """Prints a seat's public log as it grows (``--no-ui``, bots)."""

    def __init__(self, out: Any = None, prefix: str = "", ascii: bool = False) -> None:
        self.out = out or sys.stdout
        self.prefix = prefix
        self.ascii = ascii  # --charset ascii (or a terminal without Unicode): spell suits out
        self.seen = 0

    def __call__(self, view: v.SeatView) -> None:
        fresh = view.log_total - self.seen
        if fresh <= 0:
            return
        events = view.events
        for ev in events[-fresh:] if fresh <= len(events) else events:
            line = ev.text
            if self.ascii:
                from p2p_chinchon.ui.text import asciify, plain

                line = plain(asciify([("", line)]))
            print(f"{self.prefix}{line}", file=self.out, flush=True)
        self.seen = view.log_total


def finish(result: Any, args: argparse.Namespace) -> int:
    """Print a node's result (unless ``--quiet``) and turn it into the command's exit code."""
    if result is None:
        return 1
    if not args.quiet:
        print_result(result, lang=getattr(args, "lang", None))
        print_tally(result, lang=getattr(args, "lang", None))
    print_error(result)
    return exit_code(result)


def print_tally(result: Any, out: Any = None, lang: str | None = None) -> None:
    """Record a finished game in this evening's tally (:mod:`p2p_chinchon.commands.tally`)
    and print the standings among its players once they have played two games or more."""
    from p2p_chinchon.commands.tally import after_game
    from p2p_chinchon.i18n import Translator

    standings = after_game(result)
    games = max((s.games for s in standings), default=0)
    if games < 2:
        return
    tr = Translator(lang)
    rows = ", ".join(tr("exit_tally_row", name=s.name, wins=s.wins, points=s.points) for s in standings)
    print(tr("exit_tally", n=games, rows=rows), file=out or sys.stdout)


def print_error(result: Any) -> None:
    """The one line that says why a node stopped by itself (``result.error``: an internal
    error, a full disk), on stderr; nothing when it did not."""
    if result.error:
        print(f"p2p-chinchon: {result.error}", file=sys.stderr)


EXIT_REMOVED = 4  # the others removed this seat while it was away (a majority's votes)
EXIT_STALLED = 5  # this node stopped waiting, signing nothing: `resume` comes back to the game


def exit_code(result: Any) -> int:
    """0 for a finished game or for leaving it yourself; 1 when the table stopped on a fault;
    :data:`EXIT_REMOVED` when the others removed this seat while it was away;
    :data:`EXIT_STALLED` when this node stopped waiting for a majority (the record resumes)."""
    f = result.fault
    if result.error:
        return 1
    if f is None:
        return 0
    if f.rule == "removed" and f.seat == result.seat:
        # being removed after leaving yourself is no fault, nor is being removed while away
        return 0 if f.detail == "left" else EXIT_REMOVED
    if f.rule == "stalled":
        return EXIT_STALLED
    return 0 if f.rule == "left" and f.seat == result.seat else 1


def print_result(result: Any, names: list[str] | None = None, out: Any = None,
                 lang: str | None = None) -> None:
    """The exit summary, in ``lang`` (None: the locale; p2p_chinchon/i18n.py ``exit_*`` messages)."""
    from p2p_chinchon.i18n import Translator, never_formed_text, own_stop_text

    tr = Translator(lang)
    out = out or sys.stdout
    names = list(result.names or names or [])
    names += [tr("exit_seat", n=i) for i in range(len(names), 8)]
    own = own_stop_text(result.fault, result.seat, tr)  # we left, or were removed: one line
    # a table whose seats never all reached each other: no hand, so no totals
    own = own or never_formed_text(result.fault, bool(result.totals), tr)
    if own is not None:
        print(own, file=out)
    elif result.fault is not None:
        f = result.fault
        who = (tr("exit_who", n=f.seat, name=names[f.seat]) if f.seat is not None and f.seat < len(names)
               else tr("exit_nobody"))
        print(tr("exit_stopped", who=who, rule=f.rule, reason=f.reason), file=out)
    elif result.winner is not None:
        print(tr("exit_winner", name=names[result.winner], n=result.winner), file=out)
    if result.totals:
        print(tr("exit_totals", totals=", ".join(f"{names[i]} {t}" for i, t in enumerate(result.totals))),
              file=out)
    if result.transcript:
        print(tr("exit_transcript", path=result.transcript), file=out)
        print(tr("exit_check", path=result.transcript), file=out)


def make_timeouts(args: argparse.Namespace) -> Any:
    from p2p_chinchon.net.node import Timeouts

    t = Timeouts()
    if getattr(args, "timeout", None):
        t.protocol = args.timeout
    return t


def want_tui(args: argparse.Namespace) -> bool:
    return (not args.bot and not getattr(args, "lines", False) and not want_web(args)
            and sys.stdin.isatty() and sys.stdout.isatty())


def want_web(args: argparse.Namespace) -> bool:
    """``--web``: a person's seat plays in the browser (a bot seat never serves a page)."""
    return bool(getattr(args, "web", False)) and not getattr(args, "bot", False)


def live_screen(args: argparse.Namespace) -> bool:
    """Whether the seat's front end redraws its clocks (the full screen, the browser page): it
    is given every status, where line mode prints each new wait once."""
    return want_tui(args) or want_web(args)


def bot_levels(args: argparse.Namespace, n: int, command: str) -> list[str]:
    """``--bot-level`` as one level per bot (``n`` bots); a bad value exits with one line."""
    from p2p_chinchon.bots import parse_levels

    try:
        return parse_levels(args.bot_level, n)
    except ValueError as exc:
        print(f"p2p-chinchon {command}: --bot-level: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def human_hint() -> Callable[[v.SeatView], Any]:
    """The hint key's provider: the bot's move as an intent (the UI words it and picks its card)."""
    from p2p_chinchon.autoplay import suggest
    from p2p_chinchon.bots import BEST_LEVEL
    from p2p_chinchon.local import make_bot

    cache: dict[int, Any] = {}  # id(rules) -> a bot

    def h(view: v.SeatView) -> Any:
        bot = cache.get(id(view.rules))
        if bot is None:
            import secrets

            bot = cache[id(view.rules)] = make_bot(view.rules, secrets, BEST_LEVEL)
        return suggest(bot, view)

    return h


def check_seats(rules: Any, n: int, command: str) -> None:
    """Refuse a table size the rules do not allow, before anyone sits down."""
    if not rules.min_players <= n <= rules.max_players:
        print(f"p2p-chinchon {command}: the {rules.preset} rules take {rules.min_players}-{rules.max_players} "
              f"players, not {n}", file=sys.stderr)
        raise SystemExit(2)


def run_reporting(main: Callable[..., Any], args: argparse.Namespace, human: bool, command: str) -> Any:
    """:func:`run_main`, turning the expected failures of a network game (refused table,
    nobody listening, no network, a lobby that closed) into one line on stderr; None then."""
    from p2p_chinchon.net.lobby import LobbyError
    from p2p_chinchon.net.session import CodeWordError, ResumeError
    from p2p_chinchon.table import IntentError, ProtocolViolation

    expected = (LobbyError, IntentError, ProtocolViolation, OSError, RuntimeError, ResumeError, CodeWordError,
                *_code_errors())
    try:
        return run_main(main, args, human)
    except BaseException as exc:  # noqa: BLE001 - unwrap trio's exception groups
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if isinstance(leaf, KeyboardInterrupt) or (
                isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt) is not None):
            raise KeyboardInterrupt from None  # Ctrl-C: one line from the command line, no traceback
        if not isinstance(leaf, expected):
            raise
        args.failure = leaf  # the command may give it an exit code of its own (a wrong code word: 2)
        text = _error_text(leaf, args)
        if isinstance(leaf, ProtocolViolation) and leaf.rule == "weak_proofs":
            text += " (join with --min-proof-rounds K to accept it)"
        print(f"p2p-chinchon {command}: {text}", file=sys.stderr)
        return None


def _code_errors() -> tuple[type, ...]:
    """The code-word failures said in one line: loaded only where magic-wormhole is
    installed (the ``internet`` extra)."""
    from p2p_chinchon.net.relay import RelayError
    from p2p_chinchon.net.rendezvous import CodeError

    errors: tuple[type, ...] = (RelayError, CodeError)
    try:
        from p2p_chinchon.net.mailbox import MailboxError
    except ImportError:
        return errors
    return (*errors, MailboxError)


def add_code_arguments(p: argparse.ArgumentParser, host: bool) -> None:
    """``--mailbox`` (and for a host ``--relay``): the magic-wormhole servers of ``--code``."""
    from p2p_chinchon.net.rendezvous import DEFAULT_MAILBOX, DEFAULT_RELAY

    p.add_argument("--mailbox", default=DEFAULT_MAILBOX, metavar="URL",
                   help=f"the magic-wormhole mailbox for code words (default {DEFAULT_MAILBOX}; a group's own: "
                        "docs/friends.md)")
    if host:
        p.add_argument("--relay", default=DEFAULT_RELAY, metavar="HOST:PORT",
                       help=f"the transit relay where links that cannot be made directly meet (default "
                            f"{DEFAULT_RELAY}); the code exchange tells every joiner, so the table uses one")


def wormhole_missing(command: str) -> bool:
    """Whether ``--code`` cannot run here (magic-wormhole not installed), after saying so."""
    import importlib.util

    if importlib.util.find_spec("wormhole") is not None:
        return False
    print(f"p2p-chinchon {command}: --code needs magic-wormhole: pip install 'p2p-chinchon[internet]'",
          file=sys.stderr)
    return True


def _error_text(exc: BaseException, args: argparse.Namespace) -> str:
    if isinstance(exc, socket.gaierror):  # e.g. --connect nohost:5000
        return f"host not found ({exc.strerror})"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        port = getattr(args, "port", None)
        return (f"port {port} is already in use (another table on this laptop? try another --port)"
                if port else "the address is already in use")
    return str(exc)


def open_lobby(bind: str, args: argparse.Namespace, command: str) -> list[socket.socket] | None:
    """The table's lobby sockets, listening before the node loads (see
    :mod:`p2p_chinchon.net.listen`); None after one line on stderr, as :func:`run_reporting`."""
    from p2p_chinchon.net.listen import open_listen_sockets

    try:
        return open_listen_sockets(bind, getattr(args, "port", 0))
    except OSError as exc:
        print(f"p2p-chinchon {command}: {_error_text(exc, args)}", file=sys.stderr)
        return None


def chosen_deck(args: argparse.Namespace) -> str | None:
    """``--faces``: "french" or "spanish" card faces whatever the table's deck; None (auto)."""
    faces = getattr(args, "faces", "auto")
    return None if faces == "auto" else faces


def run_main(main: Callable[..., Any], args: argparse.Namespace, human: bool) -> Any:
    """Run ``main(bridge, on_update)`` under the full-screen UI, the plain line mode, or (bots)
    plain trio with a console printer."""
    import trio

    from p2p_chinchon.commands.tally import wins_tonight

    if human and want_web(args):
        from p2p_chinchon.i18n import Translator
        from p2p_chinchon.web.frontend import describe_end, run_with_web

        def ending(result: Any) -> tuple[str, str | None, int]:
            how, transcript, _ = describe_end(result, Translator(args.lang))
            return how, transcript, exit_code(result)

        return run_with_web(main, lang=args.lang, hint=human_hint(), deck=chosen_deck(args), evening=wins_tonight,
                            port=args.web_port, open_browser=not args.no_browser, ending=ending)
    if human and want_tui(args):
        from p2p_chinchon.ui.app import run_with_ui

        return run_with_ui(main, lang=args.lang, charset=args.charset, hint=human_hint(), bell=args.bell,
                           deck=chosen_deck(args), evening=wins_tonight)
    if human:
        from p2p_chinchon.ui.lines import run_line_mode

        return run_line_mode(main, stdin=sys.stdin, stdout=sys.stdout, lang=args.lang,
                             charset=args.charset, hint=human_hint(), bell=args.bell, deck=chosen_deck(args),
                             evening=wins_tonight)
    from p2p_chinchon.ui.render import detect_charset

    unicode, _ = detect_charset(getattr(args, "charset", "auto"), encoding=getattr(sys.stdout, "encoding", None))
    printer = None if args.quiet else ConsolePrinter(ascii=not unicode)
    return trio.run(main, None, printer)


class SeatGlue:
    """Who plays this seat: a bot (``decide`` answers at once) or a person through a UI bridge
    (intents forwarded to the node, views and refusals sent back). It is the seat's
    :class:`~p2p_chinchon.net.node.Events` (see :meth:`events`): pass ``glue.events()`` to
    :func:`~p2p_chinchon.net.session.host_game` / ``join_game``."""

    def __init__(self, bridge: Any, *, bot: bool, rules: Any = None, rng: Any = None, printer: Any = None,
                 live: bool = True, level: str = "easy", lang: str | None = None,
                 rematch: int = 0, no_rematch: str = "one_game") -> None:
        import trio

        from p2p_chinchon.i18n import Translator

        self.live = live  # a full screen redraws clocks; line mode prints each new wait once
        self._said: tuple[object, ...] | None = None  # the status key a console printed last
        self._back_said: set[int] = set()  # seats whose return the console has printed
        self._relayed: tuple[str, ...] = ()  # the relayed links a console last named
        self.bridge = bridge
        self.bot = bot
        self.rules = rules
        self.rng = rng
        self.printer = printer
        self.level = level
        self.tr = Translator(lang)  # the screen's language; printouts stay English, as the log lines
        self.node: Any = None
        self._got = trio.Event()
        self._left = trio.Event()
        self._decide: Any = None
        # offer a rematch at game over (play, host, join); a bot says yes this many times, then no
        self.rematch_offer, self.rematch_left = bool(rematch), int(rematch)
        self.no_rematch = no_rematch  # why not, told the others (net.node.NO_REMATCH: resumed, code, one_game)
        self.on_table: Any = None  # called with each game's seated Table (play_evening)

    def reset(self) -> None:
        """Before a rematch: the next game's node is not there yet."""
        import trio

        self.node = None
        self._got = trio.Event()
        self._said = None
        if isinstance(self.printer, ConsolePrinter):
            self.printer.seen = 0  # a new table's log starts again

    def offers_rematch(self) -> bool:
        """A rematch is voted on at game over: play, host and join with a person (asked) or
        a bot told to (``--rematch N``); a person needs a screen or line mode to answer."""
        return self.rematch_offer and (self.bot or self.bridge is not None)

    async def ask_rematch(self) -> bool:
        if self.bot:
            self.rematch_left -= 1
            return self.rematch_left >= 0
        return self.bridge is not None and await self.bridge.ask(self.tr("rematch_ask")) is True

    def status(self, text: str) -> None:
        if self.bridge is not None:
            self.bridge.set_status(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def node_ready(self, node: Any) -> None:
        self.node = node
        self._got.set()

    async def forward(self) -> None:
        """Run in a nursery: forward the person's intents to the node. A ``Leave`` before the
        node exists (lobby) leaves the lobby."""
        if self.bridge is None:
            return
        async for intent in self.bridge.intents:
            if self.node is None:
                if isinstance(intent, v.Leave):
                    self._left.set()
                continue
            self.node.submit(intent)

    def decide(self, view: v.SeatView, need: str) -> Any:
        if not self.bot:
            return None  # the person answers through the UI
        if self._decide is None:
            from p2p_chinchon.autoplay import bot_decider
            from p2p_chinchon.local import make_bot

            self._decide = bot_decider(make_bot(self.rules or view.rules, self.rng, self.level))
        return self._decide(view, need)

    def events(self) -> Events:
        """This seat's :class:`~p2p_chinchon.net.node.Events`."""
        from p2p_chinchon.net.node import Events

        glue = self

        class GlueEvents(Events):
            def decide(self, view: v.SeatView, need: str) -> Any:
                return glue.decide(view, need)

            def update(self, view: v.SeatView) -> None:
                if glue.bridge is not None:
                    glue.bridge.update(view)
                elif glue.printer is not None:
                    glue.printer(view)

            def status(self, status: NodeStatus) -> None:
                # the status line names who is awaited and for how long; the UI may
                # render ``status`` (presence per seat, the wait) richer than this text
                text = status.text(glue.tr if glue.bridge is not None else None)
                if not glue.live:
                    if status.key() == glue._said:
                        return
                    glue._said = status.key()
                    if status.relayed() != glue._relayed:  # a console says the relayed links when they change
                        glue._relayed = status.relayed()
                        if glue.bridge is None and glue.printer is not None and glue._relayed:
                            from p2p_chinchon.i18n import Translator

                            said = Translator("en")("st_relayed", names=", ".join(glue._relayed))
                            print(f"[{said}]", file=sys.stderr, flush=True)
                    # a console says a return once, not on every line printed while it is recent
                    back = {p.seat for p in status.seats if p.back}
                    news, glue._back_said = back - glue._back_said, back
                    text = status.text(glue.tr if glue.bridge is not None else None, relayed=glue.bridge is not None,
                                       back=None if glue.bridge is not None else news)
                    from p2p_chinchon.net.node import DECISIONS  # loaded: the node sent this

                    w = status.wait
                    if (glue.bot and glue.bridge is None and w is not None and w.what in DECISIONS
                            and not (w.absent or w.removing)
                            and all(p.connected for p in status.seats) and not news):
                        return  # a bot's console: its log has every move; stalls and absences are news
                if glue.bridge is not None:
                    glue.bridge.node_status = status
                    glue.bridge.set_status(text)
                elif glue.printer is not None and text:
                    print(f"[{text}]", file=sys.stderr, flush=True)

            def notice(self, text: str, key: str = "", fields: dict[str, Any] | None = None,
                       lasting: bool = False) -> None:
                said = glue.tr(key, **(fields or {})) if key and glue.bridge is not None else text
                if lasting and glue.bridge is not None:
                    glue.bridge.notify(said, key, fields)
                else:
                    glue.status(said)

            def reject(self, reason: str) -> None:
                if glue.bridge is not None:
                    glue.bridge.reject(reason)

            def node_ready(self, node: Any) -> None:
                glue.node_ready(node)

            def table_ready(self, table: Any) -> None:
                if glue.on_table is not None:
                    glue.on_table(table)

            def offers_rematch(self) -> bool:
                return glue.offers_rematch()

            def no_rematch(self) -> str:
                return glue.no_rematch

            async def rematch(self, view: v.SeatView) -> bool:
                return await glue.ask_rematch()

            def rematch_said(self, text: str, key: str, fields: dict[str, Any]) -> None:
                if glue.bridge is not None:
                    glue.bridge.notify(glue.tr(key, **fields))
                elif glue.printer is not None or not glue.bot:
                    print(text, file=sys.stderr, flush=True)

            async def wait_leave(self) -> None:
                await glue._left.wait()

        return GlueEvents()
