"""Command line: ``p2p-chinchon COMMAND ...``.

Each subcommand lives in ``p2p_chinchon/commands/<name>.py`` and exposes
``add_arguments(parser)`` and ``run(args) -> int``; they are imported lazily so that
``p2p-chinchon melds`` does not pay for trio or prompt_toolkit.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import NoReturn

# name -> one-line help; module p2p_chinchon.commands.<name>
COMMANDS: dict[str, str] = {
    "play": "play a whole game on this laptop against local bot peers (real protocol)",
    "host": "open a table on the LAN and advertise it by mDNS (or --code: friends anywhere join by a code word)",
    "join": "find a table on the LAN (or --connect HOST:PORT, or --code WORD from anywhere) and sit down",
    "resume": "come back to an unfinished game after a crash or a drop (same identity and transcript)",
    "audit": "replay a signed transcript: who won, or which seat cheated and where",
    "replay": "audit a transcript, then step through it in the browser: every card it reveals, the scores",
    "melds": "best arrangement of a hand: melds, deadwood, may it close",
    "score": "score a closed hand: melds, lay-offs and penalties",
    "rules": "list the rule presets and their fields",
    "bench": "run a benchmark (bots, melds, deck, wire, net, game, audit, soak, faults, play_start)",
}


class UsageError(Exception):
    """Bad command-line input: ``main`` prints ``p2p-chinchon COMMAND: message`` as one line on
    stderr and exits with 2. Commands raise it (or return 2 after printing the same line)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (its default prints the whole usage block)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _load(name: str) -> ModuleType:
    return importlib.import_module(f"p2p_chinchon.commands.{name}")


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="p2p-chinchon",
        description="Chinchón between laptops on a LAN: no server, no trusted dealer.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Only import the module of the command being run (keeps start-up fast).
    chosen = _command_of(argv)
    for name, help_ in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        if name == chosen:
            try:
                _load(name).add_arguments(p)
            except ModuleNotFoundError as exc:  # pragma: no cover - during development only
                if exc.name != f"p2p_chinchon.commands.{name}":
                    raise
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except UsageError as exc:  # the one place that prints usage errors
        chosen = _command_of(argv)
        prog = f"p2p-chinchon {chosen}" if chosen in COMMANDS else "p2p-chinchon"
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2


def _command_of(argv: list[str]) -> str | None:
    return next((a for a in argv if not a.startswith("-")), None)


LOG_ENV = "P2P_CHINCHON_LOG"  # debug, info or warning: log lines on stderr (troubleshooting, tests)


def _setup_logging() -> None:
    import logging
    import os

    level = os.environ.get(LOG_ENV, "").upper()
    if level in ("DEBUG", "INFO", "WARNING", "ERROR"):
        logging.basicConfig(level=getattr(logging, level), stream=sys.stderr,
                            format="%(asctime)s %(name)s %(levelname)s %(message)s")


def _main(argv: list[str]) -> int:
    _setup_logging()
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not args.command:
        raise UsageError(f"a COMMAND is needed: {', '.join(COMMANDS)} (see p2p-chinchon --help)")
    try:
        module = _load(args.command)
    except ModuleNotFoundError as exc:
        if exc.name == f"p2p_chinchon.commands.{args.command}":
            raise UsageError("this command is not built yet") from None
        raise
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:  # e.g. `p2p-chinchon rules | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:  # Ctrl-C means leave: say so in one line, no traceback
        print(f"p2p-chinchon {args.command}: interrupted (Ctrl-C): left", file=sys.stderr)
        return 130
